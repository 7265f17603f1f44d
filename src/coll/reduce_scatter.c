/* reduce_scatter.c: MPI_Reduce_scatter_block and MPI_Reduce_scatter. On a node every
 * member folds its own block of all inputs (read where they lie, or from the members'
 * slots when small) straight into its recvbuf: the work is parallel by nature. In
 * place, a member's recvbuf is also an input that others read, so it folds into a
 * temporary and writes it after everybody finished reading. Communicators that span
 * nodes pass to the MPI below. */
#include "coll.h"
#include "nbc.h"
#include "../core/check.h"
#include "../core/errors.h"
#include "../heap/heap.h"

#include <stdlib.h>
#include <string.h>

/* counts[i] elements of member i's block; displs are their prefix sums. */
static int rs_team(hmpi_coll_team_t *t, const void *sendbuf, void *recvbuf, const int *counts,
                   int block, MPI_Datatype type, MPI_Op op)
{
    int n = t->ep.n, me = t->ep.me;
    long total = 0, displ = 0;
    for (int i = 0; i < n; i++) {
        int k = counts ? counts[i] : block;
        if (k < 0)
            return MPI_ERR_COUNT;
        if (i == me)
            displ = total;
        total += k;
    }
    if (total > 0x7fffffff)
        return MPI_ERR_COUNT;
    int mine = counts ? counts[me] : block;
    hmpi_layout_t one, lin;
    int err = hmpi_coll_layouts(type, (int)total, &one, &lin);
    if (err != MPI_SUCCESS)
        return err;
    int commute = hmpi_coll_commutative(op), inplace = sendbuf == MPI_IN_PLACE;
    const void *in = inplace ? recvbuf : sendbuf;
    /* our block's result goes to recvbuf[0..mine): its base, in input element numbers */
    void *dst = hmpi_coll_at(recvbuf, -(MPI_Aint)displ * one.extent);
    uint64_t e;
    hmpi_coll_half_t *h = hmpi_coll_open(t, total == 0, &e);
    if (!h)
        return MPI_SUCCESS;
    const void *stack[HMPI_COLL_STACK_INPUTS], **x;

    if (lin.span + 16 <= t->cap) {
        x = hmpi_coll_small_inputs(t, e, h, in, &lin, stack);
        if (mine > 0)
            err = hmpi_coll_reduce_slice(dst, x, n, -1, displ, mine, type, op, &one, commute);
        hmpi_coll_inputs_free(x, stack);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return err;
    }

    int direct = hmpi_coll_expose_input(t, e, h, in, &lin, 0, NULL);
    hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    hmpi_coll_wait_all(t, e, HMPI_COLL_ARRIVED);
    x = hmpi_coll_inputs(t, e, stack);
    if (inplace && direct) {
        /* recvbuf is an input others still read: fold aside, write after MID */
        hmpi_layout_t lm = hmpi_layout_n(&one, mine);
        void *tmp = hmpi_coll_alloc(lm.span);
        void *base = hmpi_coll_at(tmp, -lm.lo);
        if (mine > 0)
            err = hmpi_coll_reduce_slice(hmpi_coll_at(base, -(MPI_Aint)displ * one.extent), x, n,
                                         -1, displ, mine, type, op, &one, commute);
        hmpi_coll_publish(t, e, HMPI_COLL_MID);
        hmpi_coll_wait_all(t, e, HMPI_COLL_MID);
        if (err == MPI_SUCCESS)
            err = hmpi_coll_copy_typed(recvbuf, base, mine, type, &lm);
        hmpi_heap_free(tmp);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    } else {
        if (mine > 0)
            err = hmpi_coll_reduce_slice(dst, x, n, -1, displ, mine, type, op, &one, commute);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        if (direct)
            hmpi_coll_wait_all(t, e, HMPI_COLL_DONE);
    }
    hmpi_coll_inputs_free(x, stack);
    return err;
}

/* MPI_Reduce_scatter (v: recvcounts) and MPI_Reduce_scatter_block (block elements each).
 * Inline: each entry point passes v as a constant. */
static inline int rs_entry(const void *sendbuf, void *recvbuf, const int *counts, int block,
                           MPI_Datatype type, MPI_Op op, MPI_Comm comm, int v)
{
    const char *fn = v ? "MPI_Reduce_scatter" : "MPI_Reduce_scatter_block";
    HMPI_ENTER(fn);
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    if (s && (s->mode != HMPI_COLL_FLAT || hmpi_op_outside(op, type, 0)))
        s = NULL; /* (a pair the standard does not define: the MPI below's to say) */
    if (v)
        HMPI_COLL_COUNT(reduce_scatter, s != NULL);
    else
        HMPI_COLL_COUNT(reduce_scatter_block, s != NULL);
    if (!s && hmpi_check_comm_null(comm, fn))
        return MPI_ERR_COMM;
    if (!s && v)
        HMPI_COLL_RETURN_BELOW(PMPI_Reduce_scatter, PMPI_Ireduce_scatter, comm, sendbuf, recvbuf,
                               counts, type, op, comm);
    if (!s)
        HMPI_COLL_RETURN_BELOW(PMPI_Reduce_scatter_block, PMPI_Ireduce_scatter_block, comm, sendbuf,
                               recvbuf, block, type, op, comm);
    /* The v form's counts are checked with the blocks (rs_team). */
    int err = hmpi_check_reduce(MPI_IN_PLACE, v ? MPI_IN_PLACE : recvbuf, block, type, op);
    if (err == MPI_SUCCESS && v && !counts)
        err = hmpi_err_what(MPI_ERR_ARG, "recvcounts is NULL");
    if (err == MPI_SUCCESS)
        err = rs_team(&s->team, sendbuf, recvbuf, counts, block, type, op);
    return hmpi_raise_in(comm, err, fn);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm)
{
    return rs_entry(sendbuf, recvbuf, NULL, recvcount, type, op, comm, 0);
}
HMPI_PMPI(Reduce_scatter_block)

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return rs_entry(sendbuf, recvbuf, recvcounts, 0, type, op, comm, 1);
}
HMPI_PMPI(Reduce_scatter)

/* ---- nonblocking and persistent (nbc.h) --------------------------------------------------
 * MPI_Ireduce_scatter(_block) and their _init forms: rs_team's algorithm with each wait a
 * test that keeps its step (op->l: the whole input, op->first and op->m: this member's
 * block). Communicators that span nodes go to the MPI below's call. */

/* Every member's input folded into this member's block at dst (a base in input element
 * numbers). */
static int rs_fold(hmpi_coll_op_t *op, void *dst)
{
    if (op->m == 0)
        return MPI_SUCCESS;
    hmpi_coll_team_t *t = &op->s->team;
    const void *stack[HMPI_COLL_STACK_INPUTS];
    const void **x = hmpi_coll_inputs(t, op->e, stack);
    int err = hmpi_coll_reduce_slice(dst, x, t->ep.n, -1, op->first, op->m, op->type, op->mop,
                                     &op->one, op->commute);
    hmpi_coll_inputs_free(x, stack);
    return err;
}

static int phase_reduce_scatter(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    uint64_t e = hmpi_coll_op_epoch(op);
    int small = op->l.span + 16 <= t->cap, inplace = op->sendbuf == MPI_IN_PLACE;
    /* our block's result goes to recvbuf[0..m): its base, in input element numbers */
    void *dst = hmpi_coll_at(op->recvbuf, -op->first * op->one.extent);
    switch (op->step) {
    case 0: {
        int ret;
        hmpi_coll_half_t *h = hmpi_coll_op_open(t, e, op->l.size == 0, &ret);
        if (!h)
            return ret;
        if (small) {
            hmpi_coll_stage_slot(t, h, op->in, &op->l);
            op->direct = 0;
        } else if (!hmpi_coll_op_expose(op, h, e, 0)) {
            return 0;
        }
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        op->step = 1;
    } /* fall through */
    case 1:
        if (!hmpi_coll_op_all(op, HMPI_COLL_ARRIVED))
            return 0;
        if (inplace && op->direct) {
            /* recvbuf is an input the others still read: fold aside, write after MID */
            hmpi_layout_t lm = hmpi_layout_n(&op->one, op->m);
            op->tmp = hmpi_coll_alloc(lm.span);
            void *base = hmpi_coll_at(op->tmp, -lm.lo);
            op->err = rs_fold(op, hmpi_coll_at(base, -op->first * op->one.extent));
            hmpi_coll_publish(t, e, HMPI_COLL_MID);
            op->step = 2;
            return phase_reduce_scatter(op);
        }
        op->err = rs_fold(op, dst);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        if (!op->direct)
            return 1;
        op->step = 3; /* the others read our input in place */
        return hmpi_coll_op_all(op, HMPI_COLL_DONE);
    case 2: {
        if (!hmpi_coll_op_all(op, HMPI_COLL_MID))
            return 0;
        hmpi_layout_t lm = hmpi_layout_n(&op->one, op->m);
        if (op->err == MPI_SUCCESS)
            op->err = hmpi_coll_copy_typed(op->recvbuf, hmpi_coll_at(op->tmp, -lm.lo), op->m,
                                           op->type, &lm);
        hmpi_heap_free(op->tmp);
        op->tmp = NULL;
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return 1;
    }
    default: return hmpi_coll_op_all(op, HMPI_COLL_DONE);
    }
}

static int below_ireduce_scatter(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Ireduce_scatter(op->sendbuf, op->recvbuf, op->rcounts, op->type, op->mop,
                                op->c->handle, req);
}
static int below_ireduce_scatter_block(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Ireduce_scatter_block(op->sendbuf, op->recvbuf, op->count, op->type, op->mop,
                                      op->c->handle, req);
}

/* The MPI below's call of the whole reduce-scatter (ccounts: the _c form's counts). */
static int rs_below(const void *sendbuf, void *recvbuf, int v, const int *counts,
                    const MPI_Count *ccounts, int block, MPI_Datatype type, MPI_Op mop,
                    MPI_Comm comm, int persistent, MPI_Request *request)
{
#if MPI_VERSION >= 4
    if (ccounts)
        return persistent
                   ? PMPI_Reduce_scatter_init_c(sendbuf, recvbuf, ccounts, type, mop, comm,
                                                MPI_INFO_NULL, request)
                   : PMPI_Ireduce_scatter_c(sendbuf, recvbuf, ccounts, type, mop, comm, request);
#else
    (void)ccounts;
#endif
#if HMPI_MPI4_CALLS
    if (persistent)
        return v ? PMPI_Reduce_scatter_init(sendbuf, recvbuf, counts, type, mop, comm,
                                            MPI_INFO_NULL, request)
                 : PMPI_Reduce_scatter_block_init(sendbuf, recvbuf, block, type, mop, comm,
                                                  MPI_INFO_NULL, request);
#endif
    return v ? PMPI_Ireduce_scatter(sendbuf, recvbuf, counts, type, mop, comm, request)
             : PMPI_Ireduce_scatter_block(sendbuf, recvbuf, block, type, mop, comm, request);
}

/* Every nonblocking and persistent reduce-scatter: the blocking calls' checks, then the
 * team's program on one node, else the MPI below's call (across nodes, or a pair of op
 * and type the standard does not define). v: MPI_Ireduce_scatter's counts, else each
 * member's block is `block` elements. ccounts: the counts of a _c call, of which counts
 * is a copy made for the int call (all fit), which this takes over: the operation keeps
 * it until its release, since it reads it after its start; the MPI below gets the
 * program's own array, which lives as long as its call needs (MPI-4.1 §6.12). */
static int rs_start(const void *sendbuf, void *recvbuf, int v, const int *counts,
                    const MPI_Count *ccounts, int block, MPI_Datatype type, MPI_Op mop,
                    MPI_Comm comm, int persistent, MPI_Request *request, const char *fn)
{
    HMPI_ENTER(fn);
    void *owned = ccounts ? (void *)counts : NULL;
    hmpi_comm_t *c = NULL;
    hmpi_coll_comm_t *s = hmpi_coll_get_nb(comm, &c);
    /* Across nodes, or a pair of op and type the standard does not define, the MPI below's
     * call; a persistent one runs it at each start under a request of HMPI's
     * (hmpi_coll_phase_below_call). */
    int below = s && (s->mode == HMPI_COLL_HIER || hmpi_op_outside(mop, type, 0));
    s = hmpi_coll_nb_route(s, below, persistent);
    if (!s) {
        hmpi_heap_free(owned);
        if (hmpi_check_comm_null(comm, fn))
            return MPI_ERR_COMM;
        return rs_below(sendbuf, recvbuf, v, counts, ccounts, block, type, mop, comm, persistent,
                        request);
    }
    int err = hmpi_check_reduce(MPI_IN_PLACE, v ? MPI_IN_PLACE : recvbuf, v ? 0 : block, type, mop);
    if (!err && v && !counts)
        err = hmpi_err_what(MPI_ERR_ARG, "recvcounts is NULL");
    if (!err && !request)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    /* the blocks: every count, their sum (an int), and this member's place */
    long total = 0, displ = 0;
    for (int i = 0; !err && i < c->size; i++) {
        int k = v ? counts[i] : block;
        if (k < 0)
            err = MPI_ERR_COUNT;
        if (i == c->rank)
            displ = total;
        total += k;
    }
    if (!err && total > 0x7fffffff)
        err = MPI_ERR_COUNT;
    hmpi_coll_phase_fn phase = below ? hmpi_coll_phase_below_call : phase_reduce_scatter;
    hmpi_coll_op_t *op = err ? NULL : hmpi_coll_op_new(s, c, 1, &phase);
    if (!err && !op)
        err = MPI_ERR_NO_MEM;
    if (err) {
        hmpi_heap_free(owned);
        return hmpi_raise_in(comm, err, fn);
    }
    op->own[0] = owned;
    op->rcounts = counts;
    op->below_start = v ? below_ireduce_scatter : below_ireduce_scatter_block;
    op->in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    op->first = (MPI_Aint)displ;
    op->m = v ? counts[c->rank] : block;
    err = hmpi_coll_op_reduction(op, sendbuf, recvbuf, block, type, mop, (int)total, persistent);
    return hmpi_coll_op_go(op, err, request, comm, fn);
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return rs_start(sendbuf, recvbuf, 0, NULL, NULL, recvcount, type, op, comm, 0, request,
                    "MPI_Ireduce_scatter_block");
}
HMPI_PMPI(Ireduce_scatter_block)

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return rs_start(sendbuf, recvbuf, 1, recvcounts, NULL, 0, type, op, comm, 0, request,
                    "MPI_Ireduce_scatter");
}
HMPI_PMPI(Ireduce_scatter)

#if HMPI_MPI4_CALLS
int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                  MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    (void)info;
    return rs_start(sendbuf, recvbuf, 0, NULL, NULL, recvcount, type, op, comm, 1, request,
                    "MPI_Reduce_scatter_block_init");
}
HMPI_PMPI(Reduce_scatter_block_init)

int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                            MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request)
{
    (void)info;
    return rs_start(sendbuf, recvbuf, 1, recvcounts, NULL, 0, type, op, comm, 1, request,
                    "MPI_Reduce_scatter_init");
}
HMPI_PMPI(Reduce_scatter_init)
#endif

#if MPI_VERSION >= 4
/* The _c forms of MPI_Ireduce_scatter and its _init form (the others are mpi/large.c's):
 * here, since the int copy of the counts must live as long as the operation that reads
 * it. Counts that all fit an int (the same on every member) run HMPI's int call, others
 * go to the MPI below's _c call, as the blocking MPI_Reduce_scatter_c does. */
static int rs_start_c(const void *sendbuf, void *recvbuf, const MPI_Count *counts,
                      MPI_Datatype type, MPI_Op mop, MPI_Comm comm, int persistent,
                      MPI_Request *request, const char *fn)
{
    int n = 0, inter = 1;
    if (comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter)
        PMPI_Comm_size(comm, &n);
    int fits = !inter && counts && n > 0;
    for (int i = 0; fits && i < n; i++)
        fits = counts[i] >= 0 && counts[i] <= 0x7fffffff;
    if (!fits)
        return rs_below(sendbuf, recvbuf, 1, NULL, counts, 0, type, mop, comm, persistent, request);
    int *ic = hmpi_coll_alloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        ic[i] = (int)counts[i];
    return rs_start(sendbuf, recvbuf, 1, ic, counts, 0, type, mop, comm, persistent, request, fn);
}

int MPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return rs_start_c(sendbuf, recvbuf, recvcounts, type, op, comm, 0, request,
                      "MPI_Ireduce_scatter_c");
}
HMPI_PMPI(Ireduce_scatter_c)

int MPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request)
{
    (void)info;
    return rs_start_c(sendbuf, recvbuf, recvcounts, type, op, comm, 1, request,
                      "MPI_Reduce_scatter_init_c");
}
HMPI_PMPI(Reduce_scatter_init_c)
#endif
