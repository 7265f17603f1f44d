/* ops.c: MPI_Put, MPI_Get, MPI_Rput, MPI_Rget. A local target is written or read by the
 * origin itself (move.c), at once and without the target's help: the operation is
 * complete on return, so the request forms hand back a completed request. Any other
 * target goes through the MPI below's window. Runs on the hot path: no allocation for
 * contiguous data. */
#include "rma.h"
#include "../core/check.h"
#include "../p2p/p2p.h"

#include <string.h>

typedef struct {
    const void *addr;
    int count;
    MPI_Datatype type;
} side_t;

/* Checks, then moves data between an origin buffer and local target m. */
static int move_local(hmpi_win_t *w, int kind, const side_t *o, int target, MPI_Aint disp,
                      int count, MPI_Datatype type)
{
    HMPI_ASSERT_INTERNAL(w->mem[target].path != HMPI_RMA_BELOW); /* the callers' test */
    hmpi_rma_buf_t b;
    hmpi_rma_region_t r;
    int err = hmpi_rma_buf(o->addr, o->count, o->type, &b);
    if (err == MPI_SUCCESS)
        err = hmpi_rma_region(w, &w->mem[target], disp, count, type, &r);
    if (err == MPI_SUCCESS && b.l.size != r.l.size)
        err = MPI_ERR_TYPE; /* type signatures of origin and target differ */
    if (err != MPI_SUCCESS)
        return err;
    err = kind == HMPI_RMA_PUT ? hmpi_rma_put(&b, &r) : hmpi_rma_get(&b, &r);
    if (err == MPI_SUCCESS)
        hmpi_rma_count_local(kind, r.l.size, r.path == HMPI_RMA_CMA);
    return err;
}

/* The common case, checked in one pass without a call: a target in the shared heap,
 * the same committed contiguous type and count on both sides, inside an access epoch
 * and inside the window. Anything else (zero bytes, every error, CMA, the MPI below, a
 * dynamic window, MPI_BOTTOM) returns 0 and takes the full path, which gives the same
 * answer. The type cache is never filled under MPI_THREAD_MULTIPLE, so then neither is
 * this path taken. */
typedef struct {
    char *target; /* the first byte in the target */
    MPI_Aint lb;  /* the first byte in the origin buffer is at addr + lb */
    size_t bytes;
} direct_t;

static inline int direct(const hmpi_win_t *w, const void *oaddr, int count, MPI_Datatype otype,
                         int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, direct_t *d)
{
    if (otype != ttype || count != tcount || count <= 0 || !oaddr ||
        (unsigned)target >= (unsigned)w->size || w->dynamic)
        return 0;
    if (!w->lock_all && !w->fence && !w->acc[target]) /* hmpi_rma_check_access, active */
        return 0;
    const hmpi_rma_member_t *m = &w->mem[target];
    const hmpi_type_entry_t *e = hmpi_type_slot(otype);
    if (m->path != HMPI_RMA_DIRECT || e->handle != otype || !e->valid ||
        !(count == 1 ? e->dense : e->packed))
        return 0;
    size_t bytes = e->size * (size_t)count;
    MPI_Aint off = disp * m->disp_unit + e->lb; /* hmpi_rma_region's range check */
    if (bytes == 0 || disp < 0 || off < 0 || off + (MPI_Aint)bytes > (MPI_Aint)m->size)
        return 0;
    *d = (direct_t){m->base + off, e->lb, bytes};
    return 1;
}

/* A direct operation's copy: the sizes of one or two basic elements inline (the 8-byte put
 * costs about a third less than through memcpy's call), memcpy otherwise. */
static inline void copy(void *dst, const void *src, size_t n)
{
    switch (n) {
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, n);
    }
}

/* What sets one call apart from the other three: its name, its direction, and for the
 * request forms where the request goes. */
typedef struct {
    const char *fn;
    int kind;             /* HMPI_RMA_PUT or HMPI_RMA_GET */
    int request_form;     /* MPI_Rput or MPI_Rget */
    MPI_Request *request; /* theirs */
} call_t;

/* The call itself, made to the MPI below. */
static int below(const call_t *c, const side_t *o, int target_rank, MPI_Aint target_disp,
                 int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    void *addr = (void *)o->addr; /* an MPI_Get's origin is theirs to write */
    if (c->kind == HMPI_RMA_PUT)
        return c->request_form ? PMPI_Rput(addr, o->count, o->type, target_rank, target_disp,
                                           target_count, target_datatype, win, c->request)
                               : PMPI_Put(addr, o->count, o->type, target_rank, target_disp,
                                          target_count, target_datatype, win);
    return c->request_form ? PMPI_Rget(addr, o->count, o->type, target_rank, target_disp,
                                       target_count, target_datatype, win, c->request)
                           : PMPI_Get(addr, o->count, o->type, target_rank, target_disp,
                                      target_count, target_datatype, win);
}

/* A request form's request once the operation is complete (MPI_SUCCESS, or the error). */
static int done(const call_t *c, int err)
{
    if (err == MPI_SUCCESS && c->request_form &&
        (*c->request = hmpi_req_done(0)) == MPI_REQUEST_NULL)
        err = MPI_ERR_NO_MEM;
    return err;
}

/* Any of the four calls past the direct case: checks, MPI_PROC_NULL, the MPI below, CMA,
 * derived types. */
__attribute__((noinline)) static int full(const call_t *c, hmpi_win_t *w, const side_t *o,
                                          int target_rank, MPI_Aint target_disp, int target_count,
                                          MPI_Datatype target_datatype, MPI_Win win)
{
    int check = w ? hmpi_check_rma(o->addr, o->count, o->type, target_rank, w->size, target_count,
                                   target_datatype)
                  : MPI_SUCCESS;
    if (!check && w && c->request_form && !c->request)
        check = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    if (check)
        return hmpi_raise_win(win, check, c->fn);
    if (!w)
        return below(c, o, target_rank, target_disp, target_count, target_datatype, win);
    if (target_rank == MPI_PROC_NULL)
        return hmpi_raise_win(win, done(c, MPI_SUCCESS), c->fn);
    int err = hmpi_rma_check_access(w, target_rank, c->request_form);
    if (err == MPI_SUCCESS && w->mem[target_rank].path == HMPI_RMA_BELOW) {
        err = hmpi_rma_check_below(w, target_rank, target_disp, target_count, target_datatype);
        if (err != MPI_SUCCESS)
            return hmpi_raise_win(win, err, c->fn);
        hmpi_rma_count_below(c->kind, o->count, o->type);
        return below(c, o, target_rank, target_disp, target_count, target_datatype, win);
    }
    if (err == MPI_SUCCESS)
        err = done(
            c, move_local(w, c->kind, o, target_rank, target_disp, target_count, target_datatype));
    return hmpi_raise_win(win, err, c->fn);
}

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
            MPI_Win win)
{
    HMPI_ENTER("MPI_Put");
    hmpi_win_t *w = hmpi_win_get(win);
    direct_t d;
    if (__builtin_expect(w && direct(w, origin_addr, origin_count, origin_datatype, target_rank,
                                     target_disp, target_count, target_datatype, &d),
                         1)) {
        copy(d.target, (const char *)origin_addr + d.lb, d.bytes);
        hmpi_rma_count_local(HMPI_RMA_PUT, d.bytes, 0);
        return MPI_SUCCESS;
    }
    static const call_t c = {"MPI_Put", HMPI_RMA_PUT, 0, NULL};
    side_t o = {origin_addr, origin_count, origin_datatype};
    return full(&c, w, &o, target_rank, target_disp, target_count, target_datatype, win);
}
HMPI_PMPI(Put)

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    HMPI_ENTER("MPI_Get");
    hmpi_win_t *w = hmpi_win_get(win);
    direct_t d;
    if (__builtin_expect(w && direct(w, origin_addr, origin_count, origin_datatype, target_rank,
                                     target_disp, target_count, target_datatype, &d),
                         1)) {
        copy((char *)origin_addr + d.lb, d.target, d.bytes);
        hmpi_rma_count_local(HMPI_RMA_GET, d.bytes, 0);
        return MPI_SUCCESS;
    }
    static const call_t c = {"MPI_Get", HMPI_RMA_GET, 0, NULL};
    side_t o = {origin_addr, origin_count, origin_datatype};
    return full(&c, w, &o, target_rank, target_disp, target_count, target_datatype, win);
}
HMPI_PMPI(Get)

int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win, MPI_Request *request)
{
    HMPI_ENTER("MPI_Rput");
    call_t c = {"MPI_Rput", HMPI_RMA_PUT, 1, request};
    side_t o = {origin_addr, origin_count, origin_datatype};
    return full(&c, hmpi_win_get(win), &o, target_rank, target_disp, target_count, target_datatype,
                win);
}
HMPI_PMPI(Rput)

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request *request)
{
    HMPI_ENTER("MPI_Rget");
    call_t c = {"MPI_Rget", HMPI_RMA_GET, 1, request};
    side_t o = {origin_addr, origin_count, origin_datatype};
    return full(&c, hmpi_win_get(win), &o, target_rank, target_disp, target_count, target_datatype,
                win);
}
HMPI_PMPI(Rget)
