/* reduce_scatter.c: MPI_Reduce_scatter_block and MPI_Reduce_scatter. On a node every
 * member folds its own block of all inputs (read where they lie, or from the members'
 * slots when small) straight into its recvbuf: the work is parallel by nature. In
 * place, a member's recvbuf is also an input that others read, so it folds into a
 * temporary and writes it after everybody finished reading. Communicators that span
 * nodes pass to the MPI below. */
#include "coll.h"
#include "../core/check.h"
#include "../core/errors.h"

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
    int err = hmpi_layout_get(type, 1, &one);
    if (err == MPI_SUCCESS)
        err = hmpi_layout_get(type, (int)total, &lin);
    if (err != MPI_SUCCESS)
        return err;
    int commute = hmpi_coll_commutative(op), inplace = sendbuf == MPI_IN_PLACE;
    const void *in = inplace ? recvbuf : sendbuf;
    /* our block's result goes to recvbuf[0..mine): its base, in input element numbers */
    void *dst = hmpi_coll_at(recvbuf, -(MPI_Aint)displ * one.extent);
    uint64_t e = hmpi_coll_begin(t);
    if (total == 0) {
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return MPI_SUCCESS;
    }
    const void *stack[HMPI_COLL_STACK_INPUTS], **x;
    hmpi_coll_half_t *h = hmpi_coll_claim(t, e);

    if (lin.span + 16 <= t->cap) {
        hmpi_coll_area_t a = {h->data, t->cap, 0};
        h->addr = (uintptr_t)hmpi_coll_stage_span(&a, in, &lin, 16);
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        hmpi_coll_wait_all(t, e, HMPI_COLL_ARRIVED);
        x = hmpi_coll_inputs(t, e, stack);
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

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    HMPI_ENTER("MPI_Reduce_scatter_block");
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    if (s && (s->mode != HMPI_COLL_FLAT || hmpi_op_outside(op, type, 0)))
        s = NULL; /* (a pair the standard does not define: the MPI below's to say) */
    HMPI_COLL_COUNT(reduce_scatter_block, s != NULL);
    if (!s && hmpi_check_comm_null(comm, "MPI_Reduce_scatter_block"))
        return MPI_ERR_COMM;
    if (!s)
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
    int err = hmpi_check_reduce(MPI_IN_PLACE, recvbuf, recvcount, type, op);
    if (err == MPI_SUCCESS)
        err = rs_team(&s->team, sendbuf, recvbuf, NULL, recvcount, type, op);
    return hmpi_raise_in(comm, err, "MPI_Reduce_scatter_block");
}
HMPI_PMPI(Reduce_scatter_block)

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    HMPI_ENTER("MPI_Reduce_scatter");
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    if (s && (s->mode != HMPI_COLL_FLAT || hmpi_op_outside(op, type, 0)))
        s = NULL; /* (a pair the standard does not define: the MPI below's to say) */
    HMPI_COLL_COUNT(reduce_scatter, s != NULL);
    if (!s && hmpi_check_comm_null(comm, "MPI_Reduce_scatter"))
        return MPI_ERR_COMM;
    if (!s)
        return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
    int err = hmpi_check_reduce(MPI_IN_PLACE, MPI_IN_PLACE, 0, type, op);
    if (err == MPI_SUCCESS && !recvcounts)
        err = hmpi_err_what(MPI_ERR_ARG, "recvcounts is NULL");
    if (err == MPI_SUCCESS)
        err = rs_team(&s->team, sendbuf, recvbuf, recvcounts, 0, type, op);
    return hmpi_raise_in(comm, err, "MPI_Reduce_scatter");
}
HMPI_PMPI(Reduce_scatter)
