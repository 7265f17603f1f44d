/* scan.c: MPI_Scan and MPI_Exscan. On a node member i folds the inputs of members
 * 0..i (0..i-1 for exscan) in rank order straight into its recvbuf, reading them where
 * they lie or from the slots when small: O(n) per member, all in parallel, right for
 * non-commutative ops. A member's input is staged when it works in place, since higher
 * members still read it while its recvbuf is overwritten. Communicators that span
 * nodes pass to the MPI below. */
#include "coll.h"
#include "../core/check.h"
#include "../core/errors.h"

static int scan_team(hmpi_coll_team_t *t, const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype type, MPI_Op op, int exclusive)
{
    hmpi_layout_t one, l;
    int err = hmpi_layout_get(type, 1, &one);
    if (err == MPI_SUCCESS)
        err = hmpi_layout_get(type, count, &l);
    if (err != MPI_SUCCESS)
        return err;
    int me = t->ep.me, n = t->ep.n, inplace = sendbuf == MPI_IN_PLACE;
    int last = exclusive ? me - 1 : me; /* fold inputs 0..last */
    int commute = hmpi_coll_commutative(op);
    const void *in = inplace ? recvbuf : sendbuf;
    uint64_t e = hmpi_coll_begin(t);
    if (count == 0) {
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return MPI_SUCCESS;
    }
    hmpi_coll_half_t *h = hmpi_coll_claim(t, e);
    int direct = 0;
    if (l.span + 16 <= t->cap) {
        hmpi_coll_area_t a = {h->data, t->cap, 0};
        h->addr = (uintptr_t)hmpi_coll_stage_span(&a, in, &l, 16);
    } else if (inplace) {
        hmpi_coll_area_t a = {hmpi_coll_scratch(t, e, hmpi_coll_room(l.span, 64)),
                              hmpi_coll_room(l.span, 64), 0};
        h->addr = (uintptr_t)hmpi_coll_stage_span(&a, in, &l, 64);
        hmpi_stat_add(HMPI_STAT_coll_staged_bytes, l.span);
    } else {
        direct = hmpi_coll_expose_input(t, e, h, in, &l, 0, NULL);
    }
    hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    hmpi_coll_wait_range(t, 0, last + 1, e, HMPI_COLL_ARRIVED);
    if (last >= 0) {
        const void *stack[HMPI_COLL_STACK_INPUTS];
        const void **x = hmpi_coll_inputs(t, e, stack);
        err = hmpi_coll_reduce_slice(recvbuf, x, last + 1, -1, 0, count, type, op, &one, commute);
        hmpi_coll_inputs_free(x, stack);
    }
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    if (direct) /* members above us read our buffer */
        hmpi_coll_wait_range(t, me + 1, n, e, HMPI_COLL_DONE);
    return err;
}

static int scan_entry(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm, int exclusive)
{
    HMPI_ENTER(exclusive ? "MPI_Exscan" : "MPI_Scan");
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    if (s && s->mode != HMPI_COLL_FLAT)
        s = NULL; /* prefixes across nodes: the MPI below */
    if (s && hmpi_op_outside(op, type, 0))
        s = NULL; /* a pair the standard does not define: the MPI below's to take or refuse */
    if (exclusive)
        HMPI_COLL_COUNT(exscan, s != NULL);
    else
        HMPI_COLL_COUNT(scan, s != NULL);
    const char *fn = exclusive ? "MPI_Exscan" : "MPI_Scan";
    if (!s && hmpi_check_comm_null(comm, fn))
        return MPI_ERR_COMM;
    if (!s)
        return exclusive ? PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm)
                         : PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
    /* Exscan's recvbuf means nothing at rank 0. */
    int err = hmpi_check_reduce(sendbuf, exclusive && c->rank == 0 ? MPI_IN_PLACE : recvbuf,
                                count, type, op);
    if (err)
        return hmpi_raise_in(comm, err, fn);
    return hmpi_raise_in(comm, scan_team(&s->team, sendbuf, recvbuf, count, type, op, exclusive),
                         fn);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm)
{
    return scan_entry(sendbuf, recvbuf, count, type, op, comm, 0);
}
HMPI_PMPI(Scan)

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm)
{
    return scan_entry(sendbuf, recvbuf, count, type, op, comm, 1);
}
HMPI_PMPI(Exscan)
