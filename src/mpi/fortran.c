/* fortran.c: Fortran entry points (mpif.h, `use mpi`, `use mpi_f08`) for the calls HMPI
 * intercepts, where the MPI below's Fortran bindings would bypass HMPI. Each converts
 * the Fortran handles and sentinels and calls HMPI's C MPI_* function; no algorithm.
 *
 * Open MPI's libmpi_mpifh and libmpi_usempif08 call PMPI_*, which are HMPI's (core/below.h),
 * but then convert the requests they get as Open MPI's own: HMPI defines their symbols
 * (mpi_send, mpi_send_, mpi_send__, MPI_SEND, the f08 mpi_send_f08_ and the same five
 * profiling names pmpi_send...) itself, ahead of Open MPI's in the symbol search order
 * (FBIND). MPICH's mpif.h and `use mpi` bindings, and its f08 calls with a buffer
 * (mpi_send_f08ts_ through MPIR_Send_cdesc), call the C MPI_* symbols, so HMPI is
 * already under them; its f08 calls without a buffer (mpi_wait_f08_, mpi_init_f08_,
 * ...) call PMPI_*, and HMPI defines those (FBIND_F08). Calls not listed here go to the
 * MPI below's binding, which is correct for every handle they can see (communicators
 * and datatypes are the MPI below's own handles). */
#include "pt2pt.h"
#include "../p2p/p2p.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays pass as int arrays");
/* The Fortran status (MPI_STATUS_SIZE INTEGERs, and the f08 TYPE(MPI_Status)) of both
 * MPIs has the size and layout of the C one. */
#define F_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint))

#ifdef OPEN_MPI
/* Open MPI's Fortran sentinels: common blocks whose addresses mean MPI_BOTTOM,
 * MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE (the f08 module binds the same ones). */
extern int mpi_fortran_bottom_, mpi_fortran_in_place_;
extern int mpi_fortran_status_ignore_, mpi_fortran_statuses_ignore_;
#define F_STATUS_IGNORE ((MPI_Fint *)(void *)&mpi_fortran_status_ignore_)
#define F_STATUSES_IGNORE ((MPI_Fint *)(void *)&mpi_fortran_statuses_ignore_)
#else
/* MPICH's f08 MPI_STATUS(ES)_IGNORE (MPI-3's C names for them): pointers that libmpich
 * defines up to MPICH 4.1 and libmpichfort from 4.2 on. So they are looked up by name when
 * first needed, never linked against: a program that passes one has its Fortran library
 * loaded. Until found (no Fortran library), nothing compares equal to them. */
static MPI_Fint *f08_sentinel(const char *name, _Atomic(MPI_Fint *) *cache)
{
    MPI_Fint *v = atomic_load_explicit(cache, memory_order_relaxed);
    if (v == NULL) {
        MPI_Fint **var = (MPI_Fint **)dlsym(RTLD_DEFAULT, name);
        if (var != NULL && *var != NULL)
            atomic_store_explicit(cache, v = *var, memory_order_relaxed);
    }
    return v;
}
static _Atomic(MPI_Fint *) f08_status_ignore, f08_statuses_ignore;
#define F_STATUS_IGNORE f08_sentinel("MPI_F08_STATUS_IGNORE", &f08_status_ignore)
#define F_STATUSES_IGNORE f08_sentinel("MPI_F08_STATUSES_IGNORE", &f08_statuses_ignore)
#endif

/* ---- conversions ------------------------------------------------------------------- */

static __attribute__((unused)) void *buf_f2c(void *p)
{
#ifdef OPEN_MPI
    if (p == (void *)&mpi_fortran_bottom_)
        return MPI_BOTTOM;
    if (p == (void *)&mpi_fortran_in_place_)
        return MPI_IN_PLACE;
#endif
    return p;
}

static int status_ignored(const MPI_Fint *f)
{
    return f == NULL || f == MPI_F_STATUS_IGNORE || f == F_STATUS_IGNORE;
}

static int statuses_ignored(const MPI_Fint *f)
{
    return f == NULL || f == MPI_F_STATUSES_IGNORE || f == F_STATUSES_IGNORE;
}

/* The C status to pass for Fortran status f: f's contents (its MPI_ERROR must come back
 * as it was, MPI-4.1 §3.2.5), or MPI_STATUS_IGNORE. */
static MPI_Status *status_in(const MPI_Fint *f, MPI_Status *c)
{
    memset(c, 0, sizeof *c);
    if (status_ignored(f))
        return MPI_STATUS_IGNORE;
    PMPI_Status_f2c(f, c);
    return c;
}

static void status_out(MPI_Fint *f, const MPI_Status *c)
{
    if (!status_ignored(f))
        PMPI_Status_c2f(c, f);
}

static void set_ierr(MPI_Fint *ierr, int err)
{
    if (ierr) /* optional in mpi_f08 */
        *ierr = (MPI_Fint)err;
}

#ifdef OPEN_MPI
/* Requests and messages of HMPI point into its request table, which Open MPI's
 * Fortran handle table cannot hold: they travel to Fortran as -1 - (table index), the
 * MPI below's as their (non-negative) Open MPI index. */
static MPI_Fint req_c2f(MPI_Request h)
{
    long i = hmpi_req_index(h);
    return i < 0 ? PMPI_Request_c2f(h) : (MPI_Fint)(-1 - i);
}

static MPI_Request req_f2c(MPI_Fint f)
{
    return f >= 0 ? PMPI_Request_f2c(f) : hmpi_req_at(-1 - (long)f);
}

static MPI_Fint msg_c2f(MPI_Message m)
{
    MPI_Request h = (MPI_Request)(void *)m;
    return hmpi_req_index(h) >= 0 ? req_c2f(h) : PMPI_Message_c2f(m);
}

static MPI_Message msg_f2c(MPI_Fint f)
{
    return f >= 0 ? PMPI_Message_f2c(f) : (MPI_Message)(void *)req_f2c(f);
}
#else
/* MPICH: handles are integers, HMPI's included (p2p/req.h); Fortran's are the same. */
#define req_c2f(h) ((MPI_Fint)(h))
#define req_f2c(f) ((MPI_Request)(f))
#define msg_c2f(h) ((MPI_Fint)(h))
#define msg_f2c(f) ((MPI_Message)(f))
#endif

#if !defined(MPI_Request_c2f)
/* C's conversions of requests and messages, where mpi.h declares them as functions (Open
 * MPI; MPICH from 4.1), give HMPI's handles the Fortran form HMPI's bindings use: a C
 * program that hands a request to Fortran (or mpi4py's py2f) goes through them, and so do
 * Open MPI's bindings of the calls HMPI leaves to them, which convert what HMPI's PMPI_*
 * gave them with PMPI_Request_c2f. Open MPI's own would read one of HMPI's requests as its
 * object (a wrong handle, and a write into HMPI's table). MPICH 4.0's are casts (macros). */
MPI_Fint MPI_Request_c2f(MPI_Request request) { return req_c2f(request); }
HMPI_PMPI(Request_c2f)

MPI_Request MPI_Request_f2c(MPI_Fint request) { return req_f2c(request); }
HMPI_PMPI(Request_f2c)

MPI_Fint MPI_Message_c2f(MPI_Message message) { return msg_c2f(message); }
HMPI_PMPI(Message_c2f)

MPI_Message MPI_Message_f2c(MPI_Fint message) { return msg_f2c(message); }
HMPI_PMPI(Message_f2c)
#endif

#define COMM(f) PMPI_Comm_f2c(*(f))
#define TYPE(f) PMPI_Type_f2c(*(f))
#define OP(f) PMPI_Op_f2c(*(f))

/* Every entry point under the four names of mpif.h/`use mpi` (gfortran and other
 * compilers' manglings) and the f08 name of Open MPI's mpi_f08 module, whose arguments
 * are the same (TYPE(MPI_Comm) etc. hold one INTEGER; ierror may be absent). */
#define FALIAS(name, core) \
    extern __typeof__(core) name __attribute__((alias(#core), visibility("default")));
#ifdef OPEN_MPI
#define FNAMES(lc, UC, core) \
    FALIAS(lc, core)         \
    FALIAS(lc##_, core) FALIAS(lc##__, core) FALIAS(UC, core) FALIAS(lc##_f08_, core)
/* Also the profiling names (pmpi_send_, ...) that a Fortran tool calls: Open MPI's would
 * call HMPI's PMPI_* but convert HMPI's requests as its own. */
#define FBIND(lc, UC) FNAMES(lc, UC, fw_##lc) FNAMES(p##lc, P##UC, fw_##lc)
#define FBIND_F08(lc, UC) FBIND(lc, UC)
#else
#define FBIND(lc, UC)
#define FBIND_F08(lc, UC) FALIAS(lc##_f08_, fw_##lc)
#endif
/* Wrappers that only Open MPI binds are unused with MPICH. */
#define FW static __attribute__((unused)) void

/* ---- init and finalize --------------------------------------------------------------- */

FW fw_mpi_init(MPI_Fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    set_ierr(ierr, MPI_Init(&argc, &argv));
}
FBIND_F08(mpi_init, MPI_INIT)

FW fw_mpi_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int argc = 0, prov = 0;
    char **argv = NULL;
    int err = MPI_Init_thread(&argc, &argv, *required, &prov);
    *provided = prov;
    set_ierr(ierr, err);
}
FBIND_F08(mpi_init_thread, MPI_INIT_THREAD)

FW fw_mpi_finalize(MPI_Fint *ierr) { set_ierr(ierr, MPI_Finalize()); }
FBIND_F08(mpi_finalize, MPI_FINALIZE)

/* ---- point-to-point ------------------------------------------------------------------ */

#define SEND_LIKE(lc, UC, cfn)                                                            \
    FW fw_##lc(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, \
               MPI_Fint *comm, MPI_Fint *ierr)                                            \
    {                                                                                     \
        set_ierr(ierr, cfn(buf_f2c(buf), *count, TYPE(type), *dest, *tag, COMM(comm)));   \
    }                                                                                     \
    FBIND(lc, UC)
SEND_LIKE(mpi_send, MPI_SEND, MPI_Send)
SEND_LIKE(mpi_ssend, MPI_SSEND, MPI_Ssend)
SEND_LIKE(mpi_rsend, MPI_RSEND, MPI_Rsend)
SEND_LIKE(mpi_bsend, MPI_BSEND, MPI_Bsend)

/* Nonblocking sends and the persistent inits share one signature. */
#define ISEND_LIKE(lc, UC, cfn)                                                           \
    FW fw_##lc(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *peer, MPI_Fint *tag, \
               MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)                             \
    {                                                                                     \
        MPI_Request r = MPI_REQUEST_NULL;                                                 \
        int err = cfn(buf_f2c(buf), *count, TYPE(type), *peer, *tag, COMM(comm), &r);     \
        if (err == MPI_SUCCESS)                                                           \
            *req = req_c2f(r);                                                            \
        set_ierr(ierr, err);                                                              \
    }                                                                                     \
    FBIND(lc, UC)
ISEND_LIKE(mpi_isend, MPI_ISEND, MPI_Isend)
ISEND_LIKE(mpi_issend, MPI_ISSEND, MPI_Issend)
ISEND_LIKE(mpi_irsend, MPI_IRSEND, MPI_Irsend)
ISEND_LIKE(mpi_ibsend, MPI_IBSEND, MPI_Ibsend)
ISEND_LIKE(mpi_irecv, MPI_IRECV, MPI_Irecv)
ISEND_LIKE(mpi_send_init, MPI_SEND_INIT, MPI_Send_init)
ISEND_LIKE(mpi_ssend_init, MPI_SSEND_INIT, MPI_Ssend_init)
ISEND_LIKE(mpi_rsend_init, MPI_RSEND_INIT, MPI_Rsend_init)
ISEND_LIKE(mpi_bsend_init, MPI_BSEND_INIT, MPI_Bsend_init)
ISEND_LIKE(mpi_recv_init, MPI_RECV_INIT, MPI_Recv_init)

FW fw_mpi_recv(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag,
               MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status cs;
    int err = MPI_Recv(buf_f2c(buf), *count, TYPE(type), *source, *tag, COMM(comm),
                       status_in(status, &cs));
    status_out(status, &cs);
    set_ierr(ierr, err);
}
FBIND(mpi_recv, MPI_RECV)

FW fw_mpi_sendrecv(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, MPI_Fint *dest, MPI_Fint *stag,
                   void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *source, MPI_Fint *rtag,
                   MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status cs;
    int err =
        MPI_Sendrecv(buf_f2c(sbuf), *scount, TYPE(stype), *dest, *stag, buf_f2c(rbuf), *rcount,
                     TYPE(rtype), *source, *rtag, COMM(comm), status_in(status, &cs));
    status_out(status, &cs);
    set_ierr(ierr, err);
}
FBIND(mpi_sendrecv, MPI_SENDRECV)

FW fw_mpi_sendrecv_replace(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest,
                           MPI_Fint *stag, MPI_Fint *source, MPI_Fint *rtag, MPI_Fint *comm,
                           MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status cs;
    int err = MPI_Sendrecv_replace(buf_f2c(buf), *count, TYPE(type), *dest, *stag, *source, *rtag,
                                   COMM(comm), status_in(status, &cs));
    status_out(status, &cs);
    set_ierr(ierr, err);
}
FBIND(mpi_sendrecv_replace, MPI_SENDRECV_REPLACE)

FW fw_mpi_probe(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status cs;
    int err = MPI_Probe(*source, *tag, COMM(comm), status_in(status, &cs));
    status_out(status, &cs);
    set_ierr(ierr, err);
}
FBIND_F08(mpi_probe, MPI_PROBE)

/* Fortran LOGICAL out: gfortran's .TRUE. is 1, as Open MPI's mpif.h assumes. */
FW fw_mpi_iprobe(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag, MPI_Fint *status,
                 MPI_Fint *ierr)
{
    MPI_Status cs;
    int f = 0;
    int err = MPI_Iprobe(*source, *tag, COMM(comm), &f, status_in(status, &cs));
    *flag = f != 0;
    if (f)
        status_out(status, &cs);
    set_ierr(ierr, err);
}
FBIND_F08(mpi_iprobe, MPI_IPROBE)

FW fw_mpi_improbe(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag,
                  MPI_Fint *message, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status cs;
    MPI_Message m = MPI_MESSAGE_NULL;
    int f = 0;
    int err = MPI_Improbe(*source, *tag, COMM(comm), &f, &m, status_in(status, &cs));
    *flag = f != 0;
    if (f) {
        *message = msg_c2f(m);
        status_out(status, &cs);
    }
    set_ierr(ierr, err);
}
FBIND_F08(mpi_improbe, MPI_IMPROBE)

FW fw_mpi_mprobe(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *message,
                 MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status cs;
    MPI_Message m = MPI_MESSAGE_NULL;
    int err = MPI_Mprobe(*source, *tag, COMM(comm), &m, status_in(status, &cs));
    if (err == MPI_SUCCESS) {
        *message = msg_c2f(m);
        status_out(status, &cs);
    }
    set_ierr(ierr, err);
}
FBIND_F08(mpi_mprobe, MPI_MPROBE)

FW fw_mpi_mrecv(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *message, MPI_Fint *status,
                MPI_Fint *ierr)
{
    MPI_Status cs;
    MPI_Message m = msg_f2c(*message);
    int err = MPI_Mrecv(buf_f2c(buf), *count, TYPE(type), &m, status_in(status, &cs));
    *message = msg_c2f(m);
    status_out(status, &cs);
    set_ierr(ierr, err);
}
FBIND(mpi_mrecv, MPI_MRECV)

FW fw_mpi_imrecv(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *message, MPI_Fint *req,
                 MPI_Fint *ierr)
{
    MPI_Message m = msg_f2c(*message);
    MPI_Request r = MPI_REQUEST_NULL;
    int err = MPI_Imrecv(buf_f2c(buf), *count, TYPE(type), &m, &r);
    *message = msg_c2f(m);
    if (err == MPI_SUCCESS)
        *req = req_c2f(r);
    set_ierr(ierr, err);
}
FBIND(mpi_imrecv, MPI_IMRECV)

/* ---- requests -------------------------------------------------------------------------- */

FW fw_mpi_wait(MPI_Fint *req, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status cs;
    MPI_Request r = req_f2c(*req);
    int err = MPI_Wait(&r, status_in(status, &cs));
    *req = req_c2f(r);
    status_out(status, &cs);
    set_ierr(ierr, err);
}
FBIND_F08(mpi_wait, MPI_WAIT)

FW fw_mpi_test(MPI_Fint *req, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status cs;
    MPI_Request r = req_f2c(*req);
    int f = 0;
    int err = MPI_Test(&r, &f, status_in(status, &cs));
    *req = req_c2f(r);
    *flag = f != 0;
    if (f)
        status_out(status, &cs);
    set_ierr(ierr, err);
}
FBIND_F08(mpi_test, MPI_TEST)

FW fw_mpi_request_get_status(MPI_Fint *req, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status cs;
    int f = 0;
    int err = MPI_Request_get_status(req_f2c(*req), &f, status_in(status, &cs));
    *flag = f != 0;
    if (f)
        status_out(status, &cs);
    set_ierr(ierr, err);
}
FBIND_F08(mpi_request_get_status, MPI_REQUEST_GET_STATUS)

FW fw_mpi_request_free(MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r = req_f2c(*req);
    int err = MPI_Request_free(&r);
    *req = req_c2f(r);
    set_ierr(ierr, err);
}
FBIND_F08(mpi_request_free, MPI_REQUEST_FREE)

FW fw_mpi_cancel(MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r = req_f2c(*req);
    set_ierr(ierr, MPI_Cancel(&r));
}
FBIND_F08(mpi_cancel, MPI_CANCEL)

FW fw_mpi_start(MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r = req_f2c(*req);
    int err = MPI_Start(&r);
    *req = req_c2f(r);
    set_ierr(ierr, err);
}
FBIND_F08(mpi_start, MPI_START)

/* Arrays of requests and statuses: converted through scratch arrays (on the stack up
 * to SMALL entries). */
enum { SMALL = 64 };

typedef struct {
    MPI_Request rs[SMALL];
    MPI_Status ss[SMALL];
    MPI_Request *r;
    MPI_Status *s;
} scratch_t;

/* Fortran statuses fstatuses (n of them, or ignored) come in as they are: a field the
 * call does not write goes back unchanged. */
static int scratch_get(scratch_t *x, int n, const MPI_Fint *freqs, const MPI_Fint *fstatuses)
{
    x->r = x->rs;
    x->s = x->ss;
    if (n > SMALL) {
        x->r = malloc((size_t)n * sizeof *x->r);
        x->s = malloc((size_t)n * sizeof *x->s);
        if (!x->r || !x->s) {
            free(x->r);
            free(x->s);
            return MPI_ERR_NO_MEM;
        }
    }
    for (int i = 0; i < n; i++)
        x->r[i] = req_f2c(freqs[i]);
    memset(x->s, 0, (size_t)(n > 0 ? n : 0) * sizeof *x->s);
    if (fstatuses && !statuses_ignored(fstatuses))
        for (int i = 0; i < n; i++)
            PMPI_Status_f2c(fstatuses + (size_t)i * F_STATUS_SIZE, &x->s[i]);
    return MPI_SUCCESS;
}

/* Requests back to Fortran, and the first nst statuses unless ignored. The calls always
 * fill the scratch statuses (passing MPI_STATUSES_IGNORE, a constant pointer, trips GCC's
 * -O3 array-bounds check on MPICH's prototypes); only this copy-out honours the caller. */
static void scratch_put(scratch_t *x, int n, MPI_Fint *freqs, MPI_Fint *fstatuses, int nst)
{
    for (int i = 0; i < n; i++)
        freqs[i] = req_c2f(x->r[i]);
    if (!statuses_ignored(fstatuses))
        for (int i = 0; i < nst; i++)
            PMPI_Status_c2f(&x->s[i], fstatuses + (size_t)i * F_STATUS_SIZE);
    if (x->r != x->rs) {
        free(x->r);
        free(x->s);
    }
}

FW fw_mpi_waitall(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *statuses, MPI_Fint *ierr)
{
    scratch_t x;
    int n = *count, err = scratch_get(&x, n, reqs, statuses);
    if (err == MPI_SUCCESS) {
        err = MPI_Waitall(n, x.r, x.s);
        scratch_put(&x, n, reqs, statuses, n);
    }
    set_ierr(ierr, err);
}
FBIND_F08(mpi_waitall, MPI_WAITALL)

FW fw_mpi_testall(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *flag, MPI_Fint *statuses,
                  MPI_Fint *ierr)
{
    scratch_t x;
    int n = *count, f = 0, err = scratch_get(&x, n, reqs, statuses);
    if (err == MPI_SUCCESS) {
        err = MPI_Testall(n, x.r, &f, x.s);
        scratch_put(&x, n, reqs, statuses, f ? n : 0);
        *flag = f != 0;
    }
    set_ierr(ierr, err);
}
FBIND_F08(mpi_testall, MPI_TESTALL)

/* Fortran indices count from 1; MPI_UNDEFINED stays as it is. */
FW fw_mpi_waitany(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *status,
                  MPI_Fint *ierr)
{
    scratch_t x;
    MPI_Status cs;
    int n = *count, i = MPI_UNDEFINED, err = scratch_get(&x, n, reqs, NULL);
    if (err == MPI_SUCCESS) {
        err = MPI_Waitany(n, x.r, &i, status_in(status, &cs));
        scratch_put(&x, n, reqs, NULL, 0);
        status_out(status, &cs);
        *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
    }
    set_ierr(ierr, err);
}
FBIND_F08(mpi_waitany, MPI_WAITANY)

FW fw_mpi_testany(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *flag,
                  MPI_Fint *status, MPI_Fint *ierr)
{
    scratch_t x;
    MPI_Status cs;
    int n = *count, i = MPI_UNDEFINED, f = 0, err = scratch_get(&x, n, reqs, NULL);
    if (err == MPI_SUCCESS) {
        err = MPI_Testany(n, x.r, &i, &f, status_in(status, &cs));
        scratch_put(&x, n, reqs, NULL, 0);
        if (f)
            status_out(status, &cs);
        *flag = f != 0;
        *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
    }
    set_ierr(ierr, err);
}
FBIND_F08(mpi_testany, MPI_TESTANY)

#define SOME_LIKE(lc, UC, cfn)                                                         \
    FW fw_##lc(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices, \
               MPI_Fint *statuses, MPI_Fint *ierr)                                     \
    {                                                                                  \
        scratch_t x;                                                                   \
        int n = *count, out = MPI_UNDEFINED;                                           \
        int err = scratch_get(&x, n, reqs, statuses);                                  \
        if (err == MPI_SUCCESS) {                                                      \
            err = cfn(n, x.r, &out, indices, x.s);                                     \
            int m = out == MPI_UNDEFINED ? 0 : out;                                    \
            scratch_put(&x, n, reqs, statuses, m);                                     \
            for (int k = 0; k < m; k++)                                                \
                indices[k] += 1;                                                       \
            *outcount = out;                                                           \
        }                                                                              \
        set_ierr(ierr, err);                                                           \
    }                                                                                  \
    FBIND_F08(lc, UC)
SOME_LIKE(mpi_waitsome, MPI_WAITSOME, MPI_Waitsome)
SOME_LIKE(mpi_testsome, MPI_TESTSOME, MPI_Testsome)

FW fw_mpi_startall(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *ierr)
{
    scratch_t x;
    int n = *count, err = scratch_get(&x, n, reqs, NULL);
    if (err == MPI_SUCCESS) {
        err = MPI_Startall(n, x.r);
        scratch_put(&x, n, reqs, NULL, 0);
    }
    set_ierr(ierr, err);
}
FBIND_F08(mpi_startall, MPI_STARTALL)

/* ---- buffered-send buffer -------------------------------------------------------------- */

FW fw_mpi_buffer_attach(void *buf, MPI_Fint *size, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Buffer_attach(buf, *size));
}
FBIND(mpi_buffer_attach, MPI_BUFFER_ATTACH)

/* mpif.h's buffer argument receives nothing (Fortran has no pointers there); the f08
 * one is a TYPE(C_PTR) and receives the address. */
FW fw_mpi_buffer_detach(void *buf, MPI_Fint *size, MPI_Fint *ierr)
{
    void *addr = NULL;
    int sz = 0;
    int err = MPI_Buffer_detach(&addr, &sz);
    *size = sz;
    set_ierr(ierr, err);
}
#ifdef OPEN_MPI
FALIAS(mpi_buffer_detach, fw_mpi_buffer_detach)
FALIAS(mpi_buffer_detach_, fw_mpi_buffer_detach)
FALIAS(mpi_buffer_detach__, fw_mpi_buffer_detach)
FALIAS(MPI_BUFFER_DETACH, fw_mpi_buffer_detach)
#endif

void mpi_buffer_detach_f08_(void **buf, MPI_Fint *size, MPI_Fint *ierr);
void mpi_buffer_detach_f08_(void **buf, MPI_Fint *size, MPI_Fint *ierr)
{
    void *addr = NULL;
    int sz = 0;
    int err = MPI_Buffer_detach(&addr, &sz);
    if (err == MPI_SUCCESS)
        *buf = addr;
    *size = sz;
    set_ierr(ierr, err);
}

/* ---- communicators and datatypes -------------------------------------------------------- */

/* The end of a wrapper that makes a communicator c: its Fortran handle on success, then
 * the error. */
static void set_comm(MPI_Fint *newcomm, MPI_Comm c, int err, MPI_Fint *ierr)
{
    if (err == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(c);
    set_ierr(ierr, err);
}

FW fw_mpi_comm_dup(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    int err = MPI_Comm_dup(COMM(comm), &c);
    set_comm(newcomm, c, err, ierr);
}
FBIND_F08(mpi_comm_dup, MPI_COMM_DUP)

FW fw_mpi_comm_dup_with_info(MPI_Fint *comm, MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    int err = MPI_Comm_dup_with_info(COMM(comm), PMPI_Info_f2c(*info), &c);
    set_comm(newcomm, c, err, ierr);
}
FBIND_F08(mpi_comm_dup_with_info, MPI_COMM_DUP_WITH_INFO)

FW fw_mpi_comm_idup(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    int err = MPI_Comm_idup(COMM(comm), &c, &r);
    if (err == MPI_SUCCESS) {
        *newcomm = PMPI_Comm_c2f(c);
        *req = req_c2f(r);
    }
    set_ierr(ierr, err);
}
FBIND_F08(mpi_comm_idup, MPI_COMM_IDUP)

FW fw_mpi_comm_split(MPI_Fint *comm, MPI_Fint *color, MPI_Fint *key, MPI_Fint *newcomm,
                     MPI_Fint *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    int err = MPI_Comm_split(COMM(comm), *color, *key, &c);
    set_comm(newcomm, c, err, ierr);
}
FBIND_F08(mpi_comm_split, MPI_COMM_SPLIT)

FW fw_mpi_comm_split_type(MPI_Fint *comm, MPI_Fint *stype, MPI_Fint *key, MPI_Fint *info,
                          MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    int err = MPI_Comm_split_type(COMM(comm), *stype, *key, PMPI_Info_f2c(*info), &c);
    set_comm(newcomm, c, err, ierr);
}
FBIND_F08(mpi_comm_split_type, MPI_COMM_SPLIT_TYPE)

FW fw_mpi_comm_create(MPI_Fint *comm, MPI_Fint *group, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    int err = MPI_Comm_create(COMM(comm), PMPI_Group_f2c(*group), &c);
    set_comm(newcomm, c, err, ierr);
}
FBIND_F08(mpi_comm_create, MPI_COMM_CREATE)

FW fw_mpi_comm_create_group(MPI_Fint *comm, MPI_Fint *group, MPI_Fint *tag, MPI_Fint *newcomm,
                            MPI_Fint *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    int err = MPI_Comm_create_group(COMM(comm), PMPI_Group_f2c(*group), *tag, &c);
    set_comm(newcomm, c, err, ierr);
}
FBIND_F08(mpi_comm_create_group, MPI_COMM_CREATE_GROUP)

FW fw_mpi_cart_create(MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods,
                      MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    int n = *ndims, p[n > 0 ? n : 1];
    for (int i = 0; i < n; i++)
        p[i] = periods[i] != 0;
    MPI_Comm c = MPI_COMM_NULL;
    int err = MPI_Cart_create(COMM(comm), n, dims, p, *reorder != 0, &c);
    set_comm(newcomm, c, err, ierr);
}
FBIND_F08(mpi_cart_create, MPI_CART_CREATE)

FW fw_mpi_cart_sub(MPI_Fint *comm, MPI_Fint *remain, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    int n = 0;
    MPI_Comm c = COMM(comm), nc = MPI_COMM_NULL;
    int err = PMPI_Cartdim_get(c, &n);
    if (err == MPI_SUCCESS) {
        int r[n > 0 ? n : 1];
        for (int i = 0; i < n; i++)
            r[i] = remain[i] != 0;
        err = MPI_Cart_sub(c, r, &nc);
        if (err == MPI_SUCCESS)
            *newcomm = PMPI_Comm_c2f(nc);
    }
    set_ierr(ierr, err);
}
FBIND_F08(mpi_cart_sub, MPI_CART_SUB)

FW fw_mpi_intercomm_merge(MPI_Fint *comm, MPI_Fint *high, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    int err = MPI_Intercomm_merge(COMM(comm), *high != 0, &c);
    set_comm(newcomm, c, err, ierr);
}
FBIND_F08(mpi_intercomm_merge, MPI_INTERCOMM_MERGE)

#define FREE_LIKE(lc, UC, ctype, f2c, c2f, cfn) \
    FW fw_##lc(MPI_Fint *h, MPI_Fint *ierr)     \
    {                                           \
        ctype c = f2c(*h);                      \
        int err = cfn(&c);                      \
        if (err == MPI_SUCCESS)                 \
            *h = c2f(c);                        \
        set_ierr(ierr, err);                    \
    }                                           \
    FBIND_F08(lc, UC)
FREE_LIKE(mpi_comm_free, MPI_COMM_FREE, MPI_Comm, PMPI_Comm_f2c, PMPI_Comm_c2f, MPI_Comm_free)
FREE_LIKE(mpi_comm_disconnect, MPI_COMM_DISCONNECT, MPI_Comm, PMPI_Comm_f2c, PMPI_Comm_c2f,
          MPI_Comm_disconnect)
FREE_LIKE(mpi_type_free, MPI_TYPE_FREE, MPI_Datatype, PMPI_Type_f2c, PMPI_Type_c2f, MPI_Type_free)
/* Commits and duplicates: HMPI's argument checks keep the set of committed types. */
FREE_LIKE(mpi_type_commit, MPI_TYPE_COMMIT, MPI_Datatype, PMPI_Type_f2c, PMPI_Type_c2f,
          MPI_Type_commit)
FW fw_mpi_type_dup(MPI_Fint *old, MPI_Fint *newtype, MPI_Fint *ierr)
{
    MPI_Datatype c;
    int err = MPI_Type_dup(TYPE(old), &c);
    if (err == MPI_SUCCESS)
        *newtype = PMPI_Type_c2f(c);
    set_ierr(ierr, err);
}
FBIND_F08(mpi_type_dup, MPI_TYPE_DUP)

/* ---- collectives ------------------------------------------------------------------------ */

FW fw_mpi_barrier(MPI_Fint *comm, MPI_Fint *ierr) { set_ierr(ierr, MPI_Barrier(COMM(comm))); }
FBIND_F08(mpi_barrier, MPI_BARRIER)

FW fw_mpi_bcast(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm,
                MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Bcast(buf_f2c(buf), *count, TYPE(type), *root, COMM(comm)));
}
FBIND(mpi_bcast, MPI_BCAST)

FW fw_mpi_reduce(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
                 MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Reduce(buf_f2c(sbuf), buf_f2c(rbuf), *count, TYPE(type), OP(op), *root,
                              COMM(comm)));
}
FBIND(mpi_reduce, MPI_REDUCE)

#define ALLRED_LIKE(lc, UC, cfn)                                                                   \
    FW fw_##lc(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,              \
               MPI_Fint *comm, MPI_Fint *ierr)                                                     \
    {                                                                                              \
        set_ierr(ierr, cfn(buf_f2c(sbuf), buf_f2c(rbuf), *count, TYPE(type), OP(op), COMM(comm))); \
    }                                                                                              \
    FBIND(lc, UC)
ALLRED_LIKE(mpi_allreduce, MPI_ALLREDUCE, MPI_Allreduce)
ALLRED_LIKE(mpi_scan, MPI_SCAN, MPI_Scan)
ALLRED_LIKE(mpi_exscan, MPI_EXSCAN, MPI_Exscan)
ALLRED_LIKE(mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, MPI_Reduce_scatter_block)

FW fw_mpi_reduce_scatter(void *sbuf, void *rbuf, MPI_Fint *counts, MPI_Fint *type, MPI_Fint *op,
                         MPI_Fint *comm, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Reduce_scatter(buf_f2c(sbuf), buf_f2c(rbuf), counts, TYPE(type), OP(op),
                                      COMM(comm)));
}
FBIND(mpi_reduce_scatter, MPI_REDUCE_SCATTER)

#define GATHER_LIKE(lc, UC, cfn)                                                            \
    FW fw_##lc(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount, \
               MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)             \
    {                                                                                       \
        set_ierr(ierr, cfn(buf_f2c(sbuf), *scount, TYPE(stype), buf_f2c(rbuf), *rcount,     \
                           TYPE(rtype), *root, COMM(comm)));                                \
    }                                                                                       \
    FBIND(lc, UC)
GATHER_LIKE(mpi_gather, MPI_GATHER, MPI_Gather)
GATHER_LIKE(mpi_scatter, MPI_SCATTER, MPI_Scatter)

#define ALLGATHER_LIKE(lc, UC, cfn)                                                         \
    FW fw_##lc(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount, \
               MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr)                             \
    {                                                                                       \
        set_ierr(ierr, cfn(buf_f2c(sbuf), *scount, TYPE(stype), buf_f2c(rbuf), *rcount,     \
                           TYPE(rtype), COMM(comm)));                                       \
    }                                                                                       \
    FBIND(lc, UC)
ALLGATHER_LIKE(mpi_allgather, MPI_ALLGATHER, MPI_Allgather)
ALLGATHER_LIKE(mpi_alltoall, MPI_ALLTOALL, MPI_Alltoall)

FW fw_mpi_gatherv(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcounts,
                  MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Gatherv(buf_f2c(sbuf), *scount, TYPE(stype), buf_f2c(rbuf), rcounts, displs,
                               TYPE(rtype), *root, COMM(comm)));
}
FBIND(mpi_gatherv, MPI_GATHERV)

FW fw_mpi_scatterv(void *sbuf, MPI_Fint *scounts, MPI_Fint *displs, MPI_Fint *stype, void *rbuf,
                   MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm,
                   MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Scatterv(buf_f2c(sbuf), scounts, displs, TYPE(stype), buf_f2c(rbuf), *rcount,
                                TYPE(rtype), *root, COMM(comm)));
}
FBIND(mpi_scatterv, MPI_SCATTERV)

FW fw_mpi_allgatherv(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcounts,
                     MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Allgatherv(buf_f2c(sbuf), *scount, TYPE(stype), buf_f2c(rbuf), rcounts,
                                  displs, TYPE(rtype), COMM(comm)));
}
FBIND(mpi_allgatherv, MPI_ALLGATHERV)

FW fw_mpi_alltoallv(void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stype, void *rbuf,
                    MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtype, MPI_Fint *comm,
                    MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Alltoallv(buf_f2c(sbuf), scounts, sdispls, TYPE(stype), buf_f2c(rbuf),
                                 rcounts, rdispls, TYPE(rtype), COMM(comm)));
}
FBIND(mpi_alltoallv, MPI_ALLTOALLV)

/* ---- one-sided communication ------------------------------------------------------------ */

/* A window is the MPI below's handle (rma/rma.h), so its Fortran handle is the below's.
 * With MPICH, the f08 calls with a buffer (mpi_win_create_f08ts_, mpi_put_f08ts_, ...)
 * reach HMPI's C functions through MPICH's descriptor code, the others are bound here.
 * With Open MPI every window call of Fortran is bound here: one left to the below
 * would synchronize its window, which HMPI's local windows never do. MPI_Win_attach,
 * MPI_Win_detach and the attribute, name, group and info calls go to the below as HMPI
 * does in C. */
#define WIN(f) PMPI_Win_f2c(*(f))
#define GROUP(f) PMPI_Group_f2c(*(f))

FW fw_mpi_win_create(void *base, MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info,
                     MPI_Fint *comm, MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win w = MPI_WIN_NULL;
    int err =
        MPI_Win_create(buf_f2c(base), *size, *disp_unit, PMPI_Info_f2c(*info), COMM(comm), &w);
    if (err == MPI_SUCCESS)
        *win = PMPI_Win_c2f(w);
    set_ierr(ierr, err);
}
FBIND(mpi_win_create, MPI_WIN_CREATE)

/* baseptr: an INTEGER(KIND=MPI_ADDRESS_KIND) in mpif.h/`use mpi`, a TYPE(C_PTR) in the
 * f08 and `_cptr` forms; both receive the address. */
#define WIN_ALLOCATE_LIKE(lc, UC, cfn)                                                 \
    FW fw_##lc(MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm,    \
               void **baseptr, MPI_Fint *win, MPI_Fint *ierr)                          \
    {                                                                                  \
        MPI_Win w = MPI_WIN_NULL;                                                      \
        void *base = NULL;                                                             \
        int err = cfn(*size, *disp_unit, PMPI_Info_f2c(*info), COMM(comm), &base, &w); \
        if (err == MPI_SUCCESS) {                                                      \
            *baseptr = base;                                                           \
            *win = PMPI_Win_c2f(w);                                                    \
        }                                                                              \
        set_ierr(ierr, err);                                                           \
    }                                                                                  \
    FBIND_F08(lc, UC)
WIN_ALLOCATE_LIKE(mpi_win_allocate, MPI_WIN_ALLOCATE, MPI_Win_allocate)
WIN_ALLOCATE_LIKE(mpi_win_allocate_shared, MPI_WIN_ALLOCATE_SHARED, MPI_Win_allocate_shared)

FW fw_mpi_win_shared_query(MPI_Fint *win, MPI_Fint *rank, MPI_Aint *size, MPI_Fint *disp_unit,
                           void **baseptr, MPI_Fint *ierr)
{
    MPI_Aint sz = 0;
    int du = 0;
    void *base = NULL;
    int err = MPI_Win_shared_query(WIN(win), *rank, &sz, &du, &base);
    if (err == MPI_SUCCESS) {
        *size = sz;
        *disp_unit = du;
        *baseptr = base;
    }
    set_ierr(ierr, err);
}
FBIND_F08(mpi_win_shared_query, MPI_WIN_SHARED_QUERY)

/* Open MPI's `use mpi` has TYPE(C_PTR) forms of these under their own names. */
#ifdef OPEN_MPI
#define FBIND_CPTR(lc, UC)     \
    FALIAS(lc##_cptr, fw_##lc) \
    FALIAS(lc##_cptr_, fw_##lc) FALIAS(lc##_cptr__, fw_##lc) FALIAS(UC##_CPTR, fw_##lc)
FBIND_CPTR(mpi_win_allocate, MPI_WIN_ALLOCATE)
FBIND_CPTR(mpi_win_allocate_shared, MPI_WIN_ALLOCATE_SHARED)
FBIND_CPTR(mpi_win_shared_query, MPI_WIN_SHARED_QUERY)
#endif

FW fw_mpi_win_create_dynamic(MPI_Fint *info, MPI_Fint *comm, MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win w = MPI_WIN_NULL;
    int err = MPI_Win_create_dynamic(PMPI_Info_f2c(*info), COMM(comm), &w);
    if (err == MPI_SUCCESS)
        *win = PMPI_Win_c2f(w);
    set_ierr(ierr, err);
}
FBIND_F08(mpi_win_create_dynamic, MPI_WIN_CREATE_DYNAMIC)

FW fw_mpi_win_free(MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win w = WIN(win);
    int err = MPI_Win_free(&w);
    if (err == MPI_SUCCESS)
        *win = PMPI_Win_c2f(w);
    set_ierr(ierr, err);
}
FBIND_F08(mpi_win_free, MPI_WIN_FREE)

/* Synchronization: (win), (int, win), (int, int, win), (int, int, int, win). */
#define WIN_SYNC0(lc, UC, cfn)                                                   \
    FW fw_##lc(MPI_Fint *win, MPI_Fint *ierr) { set_ierr(ierr, cfn(WIN(win))); } \
    FBIND_F08(lc, UC)
#define WIN_SYNC1(lc, UC, cfn)                                                                    \
    FW fw_##lc(MPI_Fint *a, MPI_Fint *win, MPI_Fint *ierr) { set_ierr(ierr, cfn(*a, WIN(win))); } \
    FBIND_F08(lc, UC)
WIN_SYNC1(mpi_win_fence, MPI_WIN_FENCE, MPI_Win_fence)
WIN_SYNC1(mpi_win_lock_all, MPI_WIN_LOCK_ALL, MPI_Win_lock_all)
WIN_SYNC1(mpi_win_unlock, MPI_WIN_UNLOCK, MPI_Win_unlock)
WIN_SYNC1(mpi_win_flush, MPI_WIN_FLUSH, MPI_Win_flush)
WIN_SYNC1(mpi_win_flush_local, MPI_WIN_FLUSH_LOCAL, MPI_Win_flush_local)
WIN_SYNC0(mpi_win_unlock_all, MPI_WIN_UNLOCK_ALL, MPI_Win_unlock_all)
WIN_SYNC0(mpi_win_flush_all, MPI_WIN_FLUSH_ALL, MPI_Win_flush_all)
WIN_SYNC0(mpi_win_flush_local_all, MPI_WIN_FLUSH_LOCAL_ALL, MPI_Win_flush_local_all)
WIN_SYNC0(mpi_win_sync, MPI_WIN_SYNC, MPI_Win_sync)
WIN_SYNC0(mpi_win_complete, MPI_WIN_COMPLETE, MPI_Win_complete)
WIN_SYNC0(mpi_win_wait, MPI_WIN_WAIT, MPI_Win_wait)

FW fw_mpi_win_lock(MPI_Fint *type, MPI_Fint *rank, MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Win_lock(*type, *rank, *assert, WIN(win)));
}
FBIND_F08(mpi_win_lock, MPI_WIN_LOCK)

#define WIN_GROUP_LIKE(lc, UC, cfn)                                              \
    FW fw_##lc(MPI_Fint *group, MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr) \
    {                                                                            \
        set_ierr(ierr, cfn(GROUP(group), *assert, WIN(win)));                    \
    }                                                                            \
    FBIND_F08(lc, UC)
WIN_GROUP_LIKE(mpi_win_post, MPI_WIN_POST, MPI_Win_post)
WIN_GROUP_LIKE(mpi_win_start, MPI_WIN_START, MPI_Win_start)

FW fw_mpi_win_test(MPI_Fint *win, MPI_Fint *flag, MPI_Fint *ierr)
{
    int f = 0;
    int err = MPI_Win_test(WIN(win), &f);
    *flag = f != 0;
    set_ierr(ierr, err);
}
FBIND_F08(mpi_win_test, MPI_WIN_TEST)

/* Communication: calls with a buffer, which only Open MPI's bindings would take past
 * HMPI. */
#define PUT_LIKE(lc, UC, cfn)                                                                   \
    FW fw_##lc(void *obuf, MPI_Fint *ocount, MPI_Fint *otype, MPI_Fint *trank, MPI_Aint *tdisp, \
               MPI_Fint *tcount, MPI_Fint *ttype, MPI_Fint *win, MPI_Fint *ierr)                \
    {                                                                                           \
        set_ierr(ierr, cfn(buf_f2c(obuf), *ocount, TYPE(otype), *trank, *tdisp, *tcount,        \
                           TYPE(ttype), WIN(win)));                                             \
    }                                                                                           \
    FBIND(lc, UC)
PUT_LIKE(mpi_put, MPI_PUT, MPI_Put)
PUT_LIKE(mpi_get, MPI_GET, MPI_Get)

#define RPUT_LIKE(lc, UC, cfn)                                                                   \
    FW fw_##lc(void *obuf, MPI_Fint *ocount, MPI_Fint *otype, MPI_Fint *trank, MPI_Aint *tdisp,  \
               MPI_Fint *tcount, MPI_Fint *ttype, MPI_Fint *win, MPI_Fint *req, MPI_Fint *ierr)  \
    {                                                                                            \
        MPI_Request r = MPI_REQUEST_NULL;                                                        \
        int err = cfn(buf_f2c(obuf), *ocount, TYPE(otype), *trank, *tdisp, *tcount, TYPE(ttype), \
                      WIN(win), &r);                                                             \
        if (err == MPI_SUCCESS)                                                                  \
            *req = req_c2f(r);                                                                   \
        set_ierr(ierr, err);                                                                     \
    }                                                                                            \
    FBIND(lc, UC)
RPUT_LIKE(mpi_rput, MPI_RPUT, MPI_Rput)
RPUT_LIKE(mpi_rget, MPI_RGET, MPI_Rget)

FW fw_mpi_accumulate(void *obuf, MPI_Fint *ocount, MPI_Fint *otype, MPI_Fint *trank,
                     MPI_Aint *tdisp, MPI_Fint *tcount, MPI_Fint *ttype, MPI_Fint *op,
                     MPI_Fint *win, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Accumulate(buf_f2c(obuf), *ocount, TYPE(otype), *trank, *tdisp, *tcount,
                                  TYPE(ttype), OP(op), WIN(win)));
}
FBIND(mpi_accumulate, MPI_ACCUMULATE)

FW fw_mpi_raccumulate(void *obuf, MPI_Fint *ocount, MPI_Fint *otype, MPI_Fint *trank,
                      MPI_Aint *tdisp, MPI_Fint *tcount, MPI_Fint *ttype, MPI_Fint *op,
                      MPI_Fint *win, MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int err = MPI_Raccumulate(buf_f2c(obuf), *ocount, TYPE(otype), *trank, *tdisp, *tcount,
                              TYPE(ttype), OP(op), WIN(win), &r);
    if (err == MPI_SUCCESS)
        *req = req_c2f(r);
    set_ierr(ierr, err);
}
FBIND(mpi_raccumulate, MPI_RACCUMULATE)

FW fw_mpi_get_accumulate(void *obuf, MPI_Fint *ocount, MPI_Fint *otype, void *rbuf,
                         MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *trank, MPI_Aint *tdisp,
                         MPI_Fint *tcount, MPI_Fint *ttype, MPI_Fint *op, MPI_Fint *win,
                         MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Get_accumulate(buf_f2c(obuf), *ocount, TYPE(otype), buf_f2c(rbuf), *rcount,
                                      TYPE(rtype), *trank, *tdisp, *tcount, TYPE(ttype), OP(op),
                                      WIN(win)));
}
FBIND(mpi_get_accumulate, MPI_GET_ACCUMULATE)

FW fw_mpi_rget_accumulate(void *obuf, MPI_Fint *ocount, MPI_Fint *otype, void *rbuf,
                          MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *trank, MPI_Aint *tdisp,
                          MPI_Fint *tcount, MPI_Fint *ttype, MPI_Fint *op, MPI_Fint *win,
                          MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int err = MPI_Rget_accumulate(buf_f2c(obuf), *ocount, TYPE(otype), buf_f2c(rbuf), *rcount,
                                  TYPE(rtype), *trank, *tdisp, *tcount, TYPE(ttype), OP(op),
                                  WIN(win), &r);
    if (err == MPI_SUCCESS)
        *req = req_c2f(r);
    set_ierr(ierr, err);
}
FBIND(mpi_rget_accumulate, MPI_RGET_ACCUMULATE)

FW fw_mpi_fetch_and_op(void *obuf, void *rbuf, MPI_Fint *type, MPI_Fint *trank, MPI_Aint *tdisp,
                       MPI_Fint *op, MPI_Fint *win, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Fetch_and_op(buf_f2c(obuf), buf_f2c(rbuf), TYPE(type), *trank, *tdisp,
                                    OP(op), WIN(win)));
}
FBIND(mpi_fetch_and_op, MPI_FETCH_AND_OP)

FW fw_mpi_compare_and_swap(void *obuf, void *cbuf, void *rbuf, MPI_Fint *type, MPI_Fint *trank,
                           MPI_Aint *tdisp, MPI_Fint *win, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Compare_and_swap(obuf, cbuf, rbuf, TYPE(type), *trank, *tdisp, WIN(win)));
}
FBIND(mpi_compare_and_swap, MPI_COMPARE_AND_SWAP)
