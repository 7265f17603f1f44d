/* acc.c: the accumulate family: MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op,
 * MPI_Compare_and_swap, MPI_Raccumulate, MPI_Rget_accumulate. On a local target of a
 * local window the origin applies the operation itself, under the target's accumulate
 * lock (ctrl.h), which makes it atomic per element against every other local origin.
 * In a mixed window every accumulate goes to the MPI below, whose atomicity is the only
 * one origins on other nodes also respect. */
#include "rma.h"
#include "../core/check.h"
#include "../heap/heap.h"
#include "../node/node.h"
#include "../p2p/p2p.h"

#include <limits.h>
#include <string.h>

void hmpi_rma_acc_lock(hmpi_win_t *w, int wl)
{
    HMPI_ASSERT_INTERNAL(wl >= 0 && wl < w->nlocal); /* a local target's */
    hmpi_rma_tsync_t *t = hmpi_rma_tsync(w->ctrl, wl);
    hmpi_rma_wait_t wt = {{0}};
    while (!hmpi_tas_try(&t->acc))
        hmpi_rma_wait_step(w, &wt);
    hmpi_wait_end(&wt.b, HMPI_WAIT_RMA);
}

void hmpi_rma_acc_unlock(hmpi_win_t *w, int wl)
{
    hmpi_tas_release(&hmpi_rma_tsync(w->ctrl, wl)->acc);
}

static int predefined_op(MPI_Op op)
{
    return op == MPI_SUM || op == MPI_PROD || op == MPI_MAX || op == MPI_MIN || op == MPI_LAND ||
           op == MPI_LOR || op == MPI_LXOR || op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR ||
           op == MPI_MAXLOC || op == MPI_MINLOC || op == MPI_REPLACE || op == MPI_NO_OP;
}

/* The predefined type that type is built from (itself when predefined); MPI_ERR_TYPE
 * when it mixes several. Derived types handed out by get_contents are freed. */
static int elem_of(MPI_Datatype type, MPI_Datatype *elem_p)
{
    int ni, na, nd, comb;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    if (comb == MPI_COMBINER_NAMED || nd == 0) {
        *elem_p = type;
        return MPI_SUCCESS;
    }
    int *ints = hmpi_heap_malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *aints = hmpi_heap_malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = hmpi_heap_malloc(sizeof(MPI_Datatype) * (size_t)nd);
    int err = MPI_ERR_NO_MEM;
    if (ints && aints && types &&
        (err = PMPI_Type_get_contents(type, ni, na, nd, ints, aints, types)
                   ? MPI_ERR_TYPE
                   : MPI_SUCCESS) == MPI_SUCCESS) {
        MPI_Datatype elem = MPI_DATATYPE_NULL;
        for (int i = 0; i < nd; i++) {
            MPI_Datatype e;
            if (err == MPI_SUCCESS && (err = elem_of(types[i], &e)) == MPI_SUCCESS) {
                if (elem != MPI_DATATYPE_NULL && e != elem)
                    err = MPI_ERR_TYPE;
                elem = e;
            }
            int i2, a2, d2, c2;
            if (PMPI_Type_get_envelope(types[i], &i2, &a2, &d2, &c2) == MPI_SUCCESS &&
                c2 != MPI_COMBINER_NAMED)
                PMPI_Type_free(&types[i]);
        }
        if (err == MPI_SUCCESS)
            *elem_p = elem;
    }
    hmpi_heap_free(types);
    hmpi_heap_free(aints);
    hmpi_heap_free(ints);
    return err;
}

/* MPI_Reduce_local of the MPI below; MPI_ERR_OP when it refuses op on elem. For a pair
 * the standard does not define (outside: hmpi_op_outside; a derived type's element
 * type, which the entry points' check did not see) the MPI below decides, and its
 * refusal must come back as this accumulate's MPI_ERR_OP on the window. */
static int reduce_local(const void *in, void *inout, int n, MPI_Datatype elem, MPI_Op op,
                        int outside)
{
    int err = outside ? hmpi_reduce_local_quiet(in, inout, n, elem, op)
                      : PMPI_Reduce_local(in, inout, n, elem, op);
    return err ? MPI_ERR_OP : MPI_SUCCESS;
}

/* inout = in op inout over bytes of packed elements of elem (elem_size bytes each). An
 * element type with holes (the pair types of MAXLOC/MINLOC: MPI_DOUBLE_INT is 12 bytes
 * of data in 16) is combined in its own layout, so the packed bytes are unpacked into
 * it and packed back. */
static int apply(MPI_Op op, const void *in, void *inout, size_t bytes, MPI_Datatype elem,
                 size_t elem_size)
{
    if (op == MPI_NO_OP || bytes == 0)
        return MPI_SUCCESS;
    if (op == MPI_REPLACE) {
        memmove(inout, in, bytes);
        return MPI_SUCCESS;
    }
    size_t n = bytes / elem_size;
    if (hmpi_rma_op_apply(op, elem, in, inout, n))
        return MPI_SUCCESS;
    int outside = hmpi_op_outside(op, elem, 1);
    MPI_Aint lb, extent;
    if (n > INT_MAX || bytes > INT_MAX || PMPI_Type_get_extent(elem, &lb, &extent))
        return MPI_ERR_COUNT;
    if ((size_t)extent == elem_size && lb == 0)
        return reduce_local(in, inout, (int)n, elem, op, outside);
    char *a = hmpi_heap_malloc(n * (size_t)extent), *b = hmpi_heap_malloc(n * (size_t)extent);
    int err = a && b ? MPI_SUCCESS : MPI_ERR_NO_MEM, pa = 0, pb = 0, pc = 0;
    char *a0 = err ? NULL : a - lb, *b0 = err ? NULL : b - lb; /* element 0 starts at lb */
    if (err == MPI_SUCCESS &&
        (PMPI_Unpack(in, (int)bytes, &pa, a0, (int)n, elem, hmpi_node.self) ||
         PMPI_Unpack(inout, (int)bytes, &pb, b0, (int)n, elem, hmpi_node.self)))
        err = MPI_ERR_TYPE;
    if (err == MPI_SUCCESS)
        err = reduce_local(a0, b0, (int)n, elem, op, outside);
    if (err == MPI_SUCCESS && PMPI_Pack(b0, (int)n, elem, inout, (int)bytes, &pc, hmpi_node.self))
        err = MPI_ERR_TYPE;
    hmpi_heap_free(b);
    hmpi_heap_free(a);
    return err;
}

/* The element type of an operation and its size, after checking that origin and target
 * are built from the same one (REPLACE and NO_OP only move bytes). */
static int check_elem(MPI_Op op, const hmpi_rma_buf_t *o, const hmpi_rma_region_t *r,
                      MPI_Datatype *elem_p, size_t *size_p)
{
    *elem_p = MPI_DATATYPE_NULL;
    *size_p = 1;
    if (op == MPI_NO_OP || op == MPI_REPLACE || r->l.size == 0)
        return MPI_SUCCESS;
    size_t named;
    if (o->type == r->type && hmpi_rma_op_named(r->type, &named)) { /* the common case */
        *elem_p = r->type;
        *size_p = named;
        return MPI_SUCCESS;
    }
    MPI_Datatype te, oe;
    int err = elem_of(r->type, &te);
    if (err == MPI_SUCCESS)
        err = o->type == r->type ? (oe = te, MPI_SUCCESS) : elem_of(o->type, &oe);
    if (err == MPI_SUCCESS && oe != te)
        err = MPI_ERR_TYPE;
    int size = 0;
    if (err == MPI_SUCCESS && (PMPI_Type_size(te, &size) != MPI_SUCCESS || size <= 0))
        err = MPI_ERR_TYPE;
    if (err == MPI_SUCCESS) {
        *elem_p = te;
        *size_p = (size_t)size;
    }
    return err;
}

/* One accumulate-family operation on local target t, atomic per element: under the
 * target's accumulate lock the result buffer (res, if any) receives the old contents,
 * then the target becomes origin op target. o is ignored for MPI_NO_OP. */
static int acc_local(hmpi_win_t *w, int t, const hmpi_rma_buf_t *o, const hmpi_rma_buf_t *res,
                     MPI_Aint disp, int count, MPI_Datatype type, MPI_Op op)
{
    /* Only in a local window is HMPI's accumulate lock the one every origin takes. */
    HMPI_ASSERT_INTERNAL(!w->mixed);
    if (!predefined_op(op))
        return MPI_ERR_OP;
    hmpi_rma_region_t r;
    int err = hmpi_rma_region(w, &w->mem[t], disp, count, type, &r);
    if (err != MPI_SUCCESS)
        return err;
    if ((op != MPI_NO_OP && o->l.size != r.l.size) || (res && res->l.size != r.l.size))
        return MPI_ERR_TYPE;
    MPI_Datatype elem;
    size_t elem_size;
    if ((err = check_elem(op, o, &r, &elem, &elem_size)) != MPI_SUCCESS)
        return err;

    const void *in = NULL; /* the origin's data, packed */
    void *opacked = NULL, *tpacked = NULL;
    if (op != MPI_NO_OP && r.l.size > 0) {
        if (o->l.contig) {
            in = (const char *)o->addr + o->l.lo;
        } else if ((opacked = hmpi_heap_malloc(r.l.size)) == NULL ||
                   (err = hmpi_rma_pack(o, opacked)) != MPI_SUCCESS) {
            hmpi_heap_free(opacked);
            return err ? err : MPI_ERR_NO_MEM;
        } else {
            in = opacked;
        }
    }
    /* The target's data, packed: in place when it is contiguous in the heap. */
    int in_place = r.path == HMPI_RMA_DIRECT && r.l.contig;
    char *tdata =
        in_place ? r.addr + r.l.lo : (tpacked = hmpi_heap_malloc(r.l.size ? r.l.size : 1));
    if (!tdata) {
        hmpi_heap_free(opacked);
        return MPI_ERR_NO_MEM;
    }
    hmpi_rma_acc_lock(w, w->mem[t].wl);
    if (!in_place)
        err = hmpi_rma_read(&r, tdata);
    if (err == MPI_SUCCESS && res)
        err = hmpi_rma_unpack(tdata, res);
    if (err == MPI_SUCCESS && in)
        err = apply(op, in, tdata, r.l.size, elem, elem_size);
    if (err == MPI_SUCCESS && in && !in_place)
        err = hmpi_rma_write(&r, tdata);
    hmpi_rma_acc_unlock(w, w->mem[t].wl);
    hmpi_heap_free(tpacked);
    hmpi_heap_free(opacked);
    if (err == MPI_SUCCESS)
        hmpi_rma_count_local(HMPI_RMA_ACC, r.l.size, r.path == HMPI_RMA_CMA);
    return err;
}

/* Compare-and-swap of one element on local target t. */
static int cas_local(hmpi_win_t *w, int t, const void *origin, const void *compare, void *result,
                     MPI_Datatype type, MPI_Aint disp)
{
    HMPI_ASSERT_INTERNAL(!w->mixed); /* as acc_local */
    hmpi_rma_region_t r;
    int err = hmpi_rma_region(w, &w->mem[t], disp, 1, type, &r);
    if (err != MPI_SUCCESS)
        return err;
    if (!r.l.contig || r.l.size > 64)
        return MPI_ERR_TYPE; /* one predefined element */
    unsigned char old[64];
    int in_place = r.path == HMPI_RMA_DIRECT;
    hmpi_rma_acc_lock(w, w->mem[t].wl);
    if (in_place)
        memcpy(old, r.addr + r.l.lo, r.l.size);
    else
        err = hmpi_rma_read(&r, old);
    if (err == MPI_SUCCESS && memcmp(old, compare, r.l.size) == 0) {
        if (in_place)
            memcpy(r.addr + r.l.lo, origin, r.l.size);
        else
            err = hmpi_rma_write(&r, origin);
    }
    hmpi_rma_acc_unlock(w, w->mem[t].wl);
    if (err == MPI_SUCCESS) {
        memcpy(result, old, r.l.size);
        hmpi_rma_count_local(HMPI_RMA_ACC, r.l.size, r.path == HMPI_RMA_CMA);
    }
    return err;
}

static int done_request(MPI_Request *request)
{
    *request = hmpi_req_done(0);
    return *request == MPI_REQUEST_NULL ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}

/* The common part of the six entry points: 1 when HMPI does the operation itself or
 * refuses it (err_p tells how it went), 0 when it belongs to the MPI below. */
static int ours(hmpi_win_t *w, int target, int passive, MPI_Aint disp, int count, MPI_Datatype type,
                int *err_p)
{
    *err_p = MPI_SUCCESS;
    if (!w)
        return 0;
    if (target == MPI_PROC_NULL)
        return 1;
    if ((*err_p = hmpi_rma_check_access(w, target, passive)) != MPI_SUCCESS)
        return 1;
    if (!w->mixed)
        return 1;
    return (*err_p = hmpi_rma_check_below(w, target, disp, count, type)) != MPI_SUCCESS;
}

/* Origin and result buffers; the origin is not described for MPI_NO_OP. */
static int describe(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr, int rcount,
                    MPI_Datatype rtype, MPI_Op op, hmpi_rma_buf_t *o, hmpi_rma_buf_t *res)
{
    int err = MPI_SUCCESS;
    *o = (hmpi_rma_buf_t){0};
    if (op != MPI_NO_OP)
        err = hmpi_rma_buf(oaddr, ocount, otype, o);
    if (err == MPI_SUCCESS && res)
        err = hmpi_rma_buf(raddr, rcount, rtype, res);
    return err;
}

/* The argument checks of MPI_Accumulate and MPI_Raccumulate. */
static inline int check_acc(const hmpi_win_t *w, const void *oaddr, int ocount, MPI_Datatype otype,
                            int target, int tcount, MPI_Datatype ttype, MPI_Op op)
{
    int err = hmpi_check_rma(oaddr, ocount, otype, target, w->size, tcount, ttype);
    if (!err)
        err = hmpi_check_acc_op(op, ttype);
    return err;
}

/* The accumulate of MPI_Accumulate and MPI_Raccumulate into a local target. */
static inline int acc_origin(hmpi_win_t *w, int target, const void *oaddr, int ocount,
                             MPI_Datatype otype, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                             MPI_Op op)
{
    hmpi_rma_buf_t o;
    int err = describe(oaddr, ocount, otype, NULL, 0, MPI_DATATYPE_NULL, op, &o, NULL);
    return err == MPI_SUCCESS ? acc_local(w, target, &o, NULL, disp, tcount, ttype, op) : err;
}

/* The argument checks of MPI_Get_accumulate and MPI_Rget_accumulate (MPI_NO_OP reads
 * no origin buffer). */
static int check_get_acc(const hmpi_win_t *w, const void *oaddr, int ocount, MPI_Datatype otype,
                         const void *raddr, int rcount, MPI_Datatype rtype, int target, int tcount,
                         MPI_Datatype ttype, MPI_Op op)
{
    int err = hmpi_check_rma(op == MPI_NO_OP ? MPI_IN_PLACE : oaddr, ocount, otype, target, w->size,
                             tcount, ttype);
    if (!err)
        err = hmpi_check_buf(raddr, rcount, rtype, HMPI_SIDE_RESULT);
    if (!err)
        err = hmpi_check_acc_op(op, ttype);
    return err;
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    HMPI_ENTER("MPI_Accumulate");
    hmpi_win_t *w = hmpi_win_get(win);
    int err;
    if (w) {
        err = check_acc(w, origin_addr, origin_count, origin_datatype, target_rank, target_count,
                        target_datatype, op);
        if (err)
            return hmpi_raise_win(win, err, "MPI_Accumulate");
    }
    if (!ours(w, target_rank, 0, target_disp, target_count, target_datatype, &err)) {
        if (w)
            hmpi_rma_count_below(HMPI_RMA_ACC, origin_count, origin_datatype);
        return PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                               target_count, target_datatype, op, win);
    }
    if (err != MPI_SUCCESS || target_rank == MPI_PROC_NULL)
        return hmpi_raise_win(win, err, "MPI_Accumulate");
    err = acc_origin(w, target_rank, origin_addr, origin_count, origin_datatype, target_disp,
                     target_count, target_datatype, op);
    return hmpi_raise_win(win, err, "MPI_Accumulate");
}
HMPI_PMPI(Accumulate)

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void *result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    HMPI_ENTER("MPI_Get_accumulate");
    hmpi_win_t *w = hmpi_win_get(win);
    int err = MPI_SUCCESS;
    if (w && (err = check_get_acc(w, origin_addr, origin_count, origin_datatype, result_addr,
                                  result_count, result_datatype, target_rank, target_count,
                                  target_datatype, op)))
        return hmpi_raise_win(win, err, "MPI_Get_accumulate");
    if (!ours(w, target_rank, 0, target_disp, target_count, target_datatype, &err)) {
        if (w)
            hmpi_rma_count_below(HMPI_RMA_ACC, target_count, target_datatype);
        return PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                   result_count, result_datatype, target_rank, target_disp,
                                   target_count, target_datatype, op, win);
    }
    if (err != MPI_SUCCESS || target_rank == MPI_PROC_NULL)
        return hmpi_raise_win(win, err, "MPI_Get_accumulate");
    hmpi_rma_buf_t o, res;
    if ((err = describe(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                        result_datatype, op, &o, &res)) == MPI_SUCCESS)
        err = acc_local(w, target_rank, &o, &res, target_disp, target_count, target_datatype, op);
    return hmpi_raise_win(win, err, "MPI_Get_accumulate");
}
HMPI_PMPI(Get_accumulate)

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    HMPI_ENTER("MPI_Fetch_and_op");
    hmpi_win_t *w = hmpi_win_get(win);
    int err;
    if (w) {
        err = hmpi_check_rma(op == MPI_NO_OP ? MPI_IN_PLACE : origin_addr, 1, datatype, target_rank,
                             w->size, 1, datatype);
        if (!err)
            err = hmpi_check_buf(result_addr, 1, datatype, HMPI_SIDE_RESULT);
        if (!err)
            err = hmpi_check_acc_op(op, datatype);
        if (err)
            return hmpi_raise_win(win, err, "MPI_Fetch_and_op");
    }
    if (!ours(w, target_rank, 0, target_disp, 1, datatype, &err)) {
        if (w)
            hmpi_rma_count_below(HMPI_RMA_ACC, 1, datatype);
        return PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op,
                                 win);
    }
    if (err != MPI_SUCCESS || target_rank == MPI_PROC_NULL)
        return hmpi_raise_win(win, err, "MPI_Fetch_and_op");
    hmpi_rma_buf_t o, res;
    if ((err = describe(origin_addr, 1, datatype, result_addr, 1, datatype, op, &o, &res)) ==
        MPI_SUCCESS)
        err = acc_local(w, target_rank, &o, &res, target_disp, 1, datatype, op);
    return hmpi_raise_win(win, err, "MPI_Fetch_and_op");
}
HMPI_PMPI(Fetch_and_op)

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    HMPI_ENTER("MPI_Compare_and_swap");
    hmpi_win_t *w = hmpi_win_get(win);
    int err;
    if (w) {
        err = hmpi_check_rma(origin_addr, 1, datatype, target_rank, w->size, 1, datatype);
        if (!err)
            err = hmpi_check_buf(result_addr, 1, datatype, HMPI_SIDE_RESULT);
        if (err)
            return hmpi_raise_win(win, err, "MPI_Compare_and_swap");
    }
    if (!ours(w, target_rank, 0, target_disp, 1, datatype, &err)) {
        if (w)
            hmpi_rma_count_below(HMPI_RMA_ACC, 1, datatype);
        return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank,
                                     target_disp, win);
    }
    if (err != MPI_SUCCESS || target_rank == MPI_PROC_NULL)
        return hmpi_raise_win(win, err, "MPI_Compare_and_swap");
    return hmpi_raise_win(
        win,
        cas_local(w, target_rank, origin_addr, compare_addr, result_addr, datatype, target_disp),
        "MPI_Compare_and_swap");
}
HMPI_PMPI(Compare_and_swap)

int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    HMPI_ENTER("MPI_Raccumulate");
    hmpi_win_t *w = hmpi_win_get(win);
    int err;
    if (w) {
        err = check_acc(w, origin_addr, origin_count, origin_datatype, target_rank, target_count,
                        target_datatype, op);
        if (!err && !request)
            err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
        if (err)
            return hmpi_raise_win(win, err, "MPI_Raccumulate");
    }
    if (!ours(w, target_rank, 1, target_disp, target_count, target_datatype, &err)) {
        if (w)
            hmpi_rma_count_below(HMPI_RMA_ACC, origin_count, origin_datatype);
        return PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank,
                                target_disp, target_count, target_datatype, op, win, request);
    }
    if (err == MPI_SUCCESS && target_rank != MPI_PROC_NULL)
        err = acc_origin(w, target_rank, origin_addr, origin_count, origin_datatype, target_disp,
                         target_count, target_datatype, op);
    if (err == MPI_SUCCESS)
        err = done_request(request);
    return hmpi_raise_win(win, err, "MPI_Raccumulate");
}
HMPI_PMPI(Raccumulate)

int MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    HMPI_ENTER("MPI_Rget_accumulate");
    hmpi_win_t *w = hmpi_win_get(win);
    int err = MPI_SUCCESS;
    if (w &&
        (err = check_get_acc(w, origin_addr, origin_count, origin_datatype, result_addr,
                             result_count, result_datatype, target_rank, target_count,
                             target_datatype, op)) == MPI_SUCCESS &&
        !request)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    if (w && err)
        return hmpi_raise_win(win, err, "MPI_Rget_accumulate");
    if (!ours(w, target_rank, 1, target_disp, target_count, target_datatype, &err)) {
        if (w)
            hmpi_rma_count_below(HMPI_RMA_ACC, target_count, target_datatype);
        return PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                    result_count, result_datatype, target_rank, target_disp,
                                    target_count, target_datatype, op, win, request);
    }
    hmpi_rma_buf_t o, res;
    if (err == MPI_SUCCESS && target_rank != MPI_PROC_NULL &&
        (err = describe(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                        result_datatype, op, &o, &res)) == MPI_SUCCESS)
        err = acc_local(w, target_rank, &o, &res, target_disp, target_count, target_datatype, op);
    if (err == MPI_SUCCESS)
        err = done_request(request);
    return hmpi_raise_win(win, err, "MPI_Rget_accumulate");
}
HMPI_PMPI(Rget_accumulate)
