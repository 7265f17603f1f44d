/* context.c: what OPI's calls stand on: setup when HMPI sets itself up (hmpi_opi_init)
 * and teardown at its end, the shadow communicators that keep OPI traffic apart from the
 * program's, OPI's error codes, datatype layouts.
 * Shadows: MPI_COMM_WORLD's is made at MPI_Init (collective there anyway) and goes at
 * MPI_Finalize (hmpi_opi_world_start/end: sessions may keep OPI up past it), MPI_COMM_SELF's
 * on first use (a dup of SELF involves no other rank), any other communicator's by
 * OPI_Comm_enable, collective over it, and freed with it (attribute delete callback).
 * Making shadows for every communicator would cost every program, OPI or not, a dup
 * per communicator; making them on first use cannot work, since OPI calls are not
 * collective. */
#include "opi.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../core/check.h"
#include "../core/errors.h"
#include "../node/node.h"
#include "../p2p/p2p.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

hmpi_opi_state_t hmpi_opi;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER; /* over common_init */
static int codes[OPI_E_COUNT];
static int shadow_keyval = MPI_KEYVAL_INVALID; /* on user comms: their hmpi_opi_comm_t */
static int final_keyval = MPI_KEYVAL_INVALID;  /* on MPI_COMM_SELF under pass-through */
static hmpi_opi_comm_t world_oc, self_oc;
static int world_ok; /* written at MPI_Init and MPI_Finalize only */
static _Atomic int self_ok;
static int threaded; /* the thread level HMPI was set up with is MPI_THREAD_MULTIPLE */
static int shut;     /* shutdown_once ran since the last common_init */

void hmpi_opi_lock_slow(void) { pthread_mutex_lock(&lock); }
void hmpi_opi_unlock_slow(void) { pthread_mutex_unlock(&lock); }

static const struct {
    int cls;
    const char *msg;
} errs[OPI_E_COUNT] = {
    [OPI_E_ARG_NULL] = {MPI_ERR_ARG, "OPI: the buffer argument (void **ptr) is NULL"},
    [OPI_E_BUF_NULL] = {MPI_ERR_BUFFER, "OPI: *ptr is NULL: there is no buffer to free or give"},
    [OPI_E_FOREIGN] = {MPI_ERR_BUFFER, "OPI: *ptr is not a buffer of OPI_Alloc or OPI_Take"},
    [OPI_E_FREED] = {MPI_ERR_BUFFER,
                     "OPI: the buffer was already freed (double OPI_Free, or use after free)"},
    [OPI_E_NOT_HELD] = {MPI_ERR_BUFFER, "OPI: the buffer is not this rank's (it was given away)"},
    [OPI_E_TOO_SMALL] = {MPI_ERR_COUNT,
                         "OPI: count elements of the datatype do not fit in the buffer"},
    [OPI_E_TOO_LARGE] = {MPI_ERR_ARG, "OPI: OPI_Alloc length too large (limit 2^46 bytes)"},
    [OPI_E_COMM] = {MPI_ERR_COMM, "OPI: communicator not enabled for ownership passing: "
                                  "call OPI_Comm_enable (collective) first"},
    [OPI_E_TYPE] = {MPI_ERR_TYPE, "OPI: datatype with a negative lower bound or extent"},
    [OPI_E_NO_INIT] = {MPI_ERR_OTHER, "OPI: not set up at MPI_Init (HMPI's OPI hook did not run)"},
};

int hmpi_opi_code(hmpi_opi_err_t e)
{
    hmpi_err_what(0, "%s", errs[e].msg); /* for the message of a fatal handler */
    if (atomic_load_explicit(&hmpi_opi.ready, memory_order_acquire) && codes[e])
        return codes[e];
    if (hmpi_knobs.VERBOSE >= 1) /* the MPI below cannot carry the message: say it here */
        hmpi_log_info("%s", errs[e].msg);
    return errs[e].cls;
}

int hmpi_opi_raise(MPI_Comm comm, int code)
{
    int fin = 0;
    if (code == MPI_SUCCESS)
        return code;
    PMPI_Finalized(&fin);
    return fin ? code : hmpi_raise(comm, code);
}

static int null_query(void *extra, MPI_Status *st)
{
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_PROC_NULL;
    st->MPI_TAG = MPI_ANY_TAG;
    return MPI_SUCCESS;
}

static int null_free(void *extra) { return MPI_SUCCESS; }
static int null_cancel(void *extra, int complete) { return MPI_SUCCESS; }

int hmpi_opi_req_done(const hmpi_opi_comm_t *oc, int proc_null, MPI_Request *req)
{
    if (oc->hs) {
        MPI_Request h = hmpi_req_done(proc_null);
        if (h == MPI_REQUEST_NULL)
            return MPI_ERR_NO_MEM;
        *req = h;
        return MPI_SUCCESS;
    }
    if (!proc_null)
        return PMPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, oc->shadow, req);
    /* A generalized request: MPICH 4.0.2's own MPI_Irecv from MPI_PROC_NULL completes
     * with source 0 and tag 0. */
    int err = PMPI_Grequest_start(null_query, null_free, null_cancel, NULL, req);
    return err ? err : PMPI_Grequest_complete(*req);
}

/* ---- setup ------------------------------------------------------------------------------ */

static void shutdown_once(void);

static int shadow_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    hmpi_opi_comm_t *oc = val;
    hmpi_comm_free(&oc->shadow); /* HMPI forgets its state */
    free(oc);
    return MPI_SUCCESS;
}

static int final_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    if (atomic_load(&hmpi_mpi_sessions) == 0) /* else OPI lives on with the sessions */
        shutdown_once();
    return MPI_SUCCESS;
}

static void common_init(void)
{
    /* A code of the standard class that carries OPI's message, where the MPI below
     * renders such codes faithfully (Open MPI does; MPICH 4.0.2 prints an unrelated
     * message for them, so there the plain class is used). */
    for (int e = 0; e < OPI_E_COUNT; e++) {
        int code, len = 0;
        char text[MPI_MAX_ERROR_STRING];
        if (PMPI_Add_error_code(errs[e].cls, &code) == MPI_SUCCESS &&
            PMPI_Add_error_string(code, errs[e].msg) == MPI_SUCCESS &&
            PMPI_Error_string(code, text, &len) == MPI_SUCCESS && strstr(text, errs[e].msg))
            codes[e] = code;
    }
    int *ub = NULL, flag = 0, provided = MPI_THREAD_SINGLE;
    PMPI_Comm_get_attr(hmpi_node.world, MPI_TAG_UB, &ub, &flag);
    hmpi_opi.tag_ub = flag && ub ? *ub : 32767;
    if (hmpi_mpi_world)
        PMPI_Query_thread(&provided); /* (not under sessions: Open MPI 5 answers SINGLE) */
    hmpi_opi.threaded = threaded || provided == MPI_THREAD_MULTIPLE;
    hmpi_opi.active = hmpi_node.active;
    hmpi_opi.me = hmpi_opi.active ? hmpi_node.rank : 0;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, shadow_delete, &shadow_keyval, NULL);
    if (!hmpi_opi.active && hmpi_mpi_world) {
        /* Pass-through: HMPI's finalize does not run, so MPI_COMM_SELF's attribute
         * delete callback (the first thing MPI_Finalize does) finishes OPI's sends.
         * (Under sessions HMPI's end calls hmpi_opi_finalize itself: mpi/init.c.) */
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, final_delete, &final_keyval, NULL);
        PMPI_Comm_set_attr(MPI_COMM_SELF, final_keyval, NULL);
    }
    shut = 0;
    atomic_store_explicit(&hmpi_opi.ready, 1, memory_order_release);
}

/* OPI runs while MPI does with a world to stand on: MPI_COMM_WORLD, or the one HMPI
 * made for itself under sessions (none under sessions with HMPI_DISABLE=1). */
int hmpi_opi_ready_slow(void)
{
    if (hmpi_mpi_state != HMPI_STATE_RUNNING ||
        (!hmpi_mpi_world && hmpi_node.world == MPI_COMM_WORLD))
        return hmpi_opi_code(OPI_E_NO_INIT);
    pthread_mutex_lock(&setup_lock);
    if (!atomic_load_explicit(&hmpi_opi.ready, memory_order_acquire))
        common_init();
    pthread_mutex_unlock(&setup_lock);
    return MPI_SUCCESS;
}

/* Dups comm (collective over it) into oc. The dup goes through HMPI's MPI_Comm_dup,
 * which gives the shadow its own matching context and local-rank tables. Its errors
 * return: OPI raises them on the user's communicator. */
static int make_shadow(MPI_Comm comm, hmpi_opi_comm_t *oc)
{
    MPI_Comm sh;
    int err = hmpi_comm_dup(comm, &sh);
    if (err)
        return err;
    PMPI_Comm_set_errhandler(sh, MPI_ERRORS_RETURN);
    int inter = 0;
    PMPI_Comm_test_inter(sh, &inter);
    if (inter)
        PMPI_Comm_remote_size(sh, &oc->peers);
    else
        PMPI_Comm_size(sh, &oc->peers);
    oc->shadow = sh;
    oc->hs = inter ? NULL : hmpi_comm_get(sh);
    if (oc->hs) /* its point-to-point waits are OPI's, for the statistics */
        oc->hs->wait_as = 1 + HMPI_WAIT_OPI;
    return MPI_SUCCESS;
}

/* The shadow OPI_Comm_enable attached to comm, or NULL; MPI_ERR_COMM for a bad comm. */
static int shadow_of(MPI_Comm comm, hmpi_opi_comm_t **oc_p)
{
    void *val = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, shadow_keyval, &val, &flag) != MPI_SUCCESS)
        return MPI_ERR_COMM;
    *oc_p = flag ? val : NULL;
    return MPI_SUCCESS;
}

int hmpi_opi_comm_get(MPI_Comm comm, hmpi_opi_comm_t **oc_p)
{
    if (comm == MPI_COMM_WORLD) {
        if (!world_ok)
            return hmpi_opi_code(OPI_E_NO_INIT);
        *oc_p = &world_oc;
        return MPI_SUCCESS;
    }
    if (comm == MPI_COMM_NULL)
        return MPI_ERR_COMM;
    if (comm == MPI_COMM_SELF) {
        /* Made outside hmpi_opi_lock (MPI_Comm_dup may take the engine lock); a thread that
         * loses the race frees its copy. */
        if (!atomic_load_explicit(&self_ok, memory_order_acquire)) {
            hmpi_opi_comm_t mine;
            int err = make_shadow(MPI_COMM_SELF, &mine);
            if (err)
                return err;
            hmpi_opi_lock();
            int lost = atomic_load_explicit(&self_ok, memory_order_relaxed);
            if (!lost) {
                self_oc = mine;
                atomic_store_explicit(&self_ok, 1, memory_order_release);
            }
            hmpi_opi_unlock();
            if (lost)
                hmpi_comm_free(&mine.shadow);
        }
        *oc_p = &self_oc;
        return MPI_SUCCESS;
    }
    hmpi_opi_comm_t *oc;
    int err = shadow_of(comm, &oc);
    if (err)
        return err;
    if (!oc)
        return hmpi_opi_code(OPI_E_COMM);
    *oc_p = oc;
    return MPI_SUCCESS;
}

int OPI_Comm_enable(MPI_Comm comm)
{
    HMPI_ENTER("OPI_Comm_enable");
    int err = hmpi_opi_ready();
    if (err)
        return hmpi_opi_raise(comm, err);
    if (comm == MPI_COMM_NULL)
        return hmpi_opi_raise(
            MPI_COMM_NULL, hmpi_err_what(MPI_ERR_COMM, "OPI_Comm_enable: comm is MPI_COMM_NULL"));
    hmpi_opi_comm_t *oc;
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF)
        return hmpi_opi_raise(comm, hmpi_opi_comm_get(comm, &oc));
    if ((err = shadow_of(comm, &oc)) != MPI_SUCCESS || oc)
        return hmpi_opi_raise(comm, err); /* a bad communicator, or enabled before */
    oc = malloc(sizeof *oc);
    if (!oc)
        return hmpi_opi_raise(comm, MPI_ERR_NO_MEM);
    err = make_shadow(comm, oc);
    if (!err && (err = PMPI_Comm_set_attr(comm, shadow_keyval, oc)) != MPI_SUCCESS)
        hmpi_comm_free(&oc->shadow);
    if (err)
        free(oc);
    return hmpi_opi_raise(comm, err);
}

int hmpi_opi_world_start(void)
{
    if (make_shadow(MPI_COMM_WORLD, &world_oc) != 0) {
        hmpi_log_error("OPI: cannot make the shadow of MPI_COMM_WORLD");
        return -1;
    }
    world_ok = 1;
    return 0;
}

void hmpi_opi_world_end(void)
{
    if (world_ok) {
        world_ok = 0;
        hmpi_comm_free(&world_oc.shadow);
    }
}

/* A later init asked for MPI_THREAD_MULTIPLE (mpi/init.c): OPI takes its lock from now
 * on (only the calling thread is inside MPI then). */
void hmpi_opi_threads(void)
{
    threaded = 1;
    hmpi_opi.threaded = 1;
}

/* HMPI's set-up hook (mpi/init.c). */
int hmpi_opi_init(int multiple)
{
    threaded = multiple;
    if (hmpi_opi_ready_slow() != MPI_SUCCESS) {
        hmpi_log_error("OPI: cannot set up");
        return -1;
    }
    return hmpi_mpi_world ? hmpi_opi_world_start() : 0;
}

static void shutdown_once(void)
{
    if (shut)
        return;
    shut = 1;
    hmpi_opi_give_shutdown();
    hmpi_opi_world_end();
    if (atomic_exchange(&self_ok, 0))
        hmpi_comm_free(&self_oc.shadow);
}

/* HMPI's end (its last finalize, mpi/init.c): after the final barrier, before p2p and
 * the communicators go. Buffers stay valid (the region is never unmapped); OPI_Free
 * still works. A later set-up (MPI_Session_init after every finalize) starts OPI anew:
 * the MPI below forgot its keyvals and error codes. */
void hmpi_opi_finalize(void)
{
    shutdown_once();
    atomic_store_explicit(&hmpi_opi.ready, 0, memory_order_release);
}

/* ---- datatypes ---------------------------------------------------------------------------- */

int hmpi_opi_layout(MPI_Datatype type, int count, hmpi_layout_t *l)
{
    hmpi_layout_t one; /* one element: its true lower bound, extent and true extent */
    if (hmpi_layout_get(type, 1, &one) != MPI_SUCCESS ||
        hmpi_layout_get(type, count, l) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    if (one.lo < 0 || one.extent < 0 || (MPI_Aint)one.span < 0)
        return hmpi_opi_code(OPI_E_TYPE);
    return MPI_SUCCESS;
}

int hmpi_opi_check_msg(void **ptr, int count, MPI_Datatype type, MPI_Comm comm,
                       hmpi_opi_comm_t **oc_p, hmpi_layout_t *l, const char *fn)
{
    HMPI_ENTER(fn);
    int err = hmpi_opi_ready();
    if (!err)
        err = hmpi_opi_comm_get(comm, oc_p);
    if (!err && !ptr)
        err = hmpi_opi_code(OPI_E_ARG_NULL);
    if (!err && count < 0)
        err = hmpi_err_what(MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
    if (!err && type == MPI_DATATYPE_NULL)
        err = hmpi_err_what(MPI_ERR_TYPE, "%s: datatype is MPI_DATATYPE_NULL", fn);
    if (!err && hmpi_check_type(type, "datatype"))
        err = hmpi_err_what(MPI_ERR_TYPE, "%s: datatype is not committed", fn);
    if (!err)
        err = hmpi_opi_layout(type, count, l);
    return err;
}
