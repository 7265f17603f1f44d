/* scan.c: MPI_Scan and MPI_Exscan. On a node member i folds the inputs of members
 * 0..i (0..i-1 for exscan) in rank order straight into its recvbuf, reading them where
 * they lie or from the slots when small: O(n) per member, all in parallel, right for
 * non-commutative ops. A member's input is staged when it works in place, since higher
 * members still read it while its recvbuf is overwritten. Communicators that span
 * nodes pass to the MPI below. */
#include "coll.h"
#include "nbc.h"
#include "../core/check.h"
#include "../core/errors.h"

static int scan_team(hmpi_coll_team_t *t, const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype type, MPI_Op op, int exclusive)
{
    hmpi_layout_t one, l;
    int err = hmpi_coll_layouts(type, count, &one, &l);
    if (err != MPI_SUCCESS)
        return err;
    int me = t->ep.me, n = t->ep.n, inplace = sendbuf == MPI_IN_PLACE;
    int last = exclusive ? me - 1 : me; /* fold inputs 0..last */
    int commute = hmpi_coll_commutative(op);
    const void *in = inplace ? recvbuf : sendbuf;
    uint64_t e;
    hmpi_coll_half_t *h = hmpi_coll_open(t, count == 0, &e);
    if (!h)
        return MPI_SUCCESS;
    int direct = 0;
    if (l.span + 16 <= t->cap) {
        hmpi_coll_stage_slot(t, h, in, &l);
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
    int err = hmpi_check_reduce(sendbuf, exclusive && c->rank == 0 ? MPI_IN_PLACE : recvbuf, count,
                                type, op);
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

/* ---- nonblocking and persistent (nbc.h) --------------------------------------------------
 * MPI_Iscan, MPI_Iexscan and their _init forms: scan_team's algorithm with each wait a
 * test that keeps its step (op->k: the last input folded, -1 for none). Communicators
 * that span nodes go to the MPI below's call. */

static int phase_scan(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    uint64_t e = hmpi_coll_op_epoch(op);
    int me = t->ep.me, n = t->ep.n;
    switch (op->step) {
    case 0: {
        int ret;
        hmpi_coll_half_t *h = hmpi_coll_op_open(t, e, op->count == 0, &ret);
        if (!h)
            return ret;
        op->direct = 0;
        if (op->l.span + 16 <= t->cap) {
            hmpi_coll_stage_slot(t, h, op->in, &op->l);
        } else if (op->sendbuf == MPI_IN_PLACE) {
            /* the members above us read our input while we overwrite it: a copy */
            size_t room = hmpi_coll_room(op->l.span, 64);
            hmpi_coll_area_t a = {hmpi_coll_try_scratch(t, e, room), room, 0};
            if (!a.base)
                return 0;
            h->addr = (uintptr_t)hmpi_coll_stage_span(&a, op->in, &op->l, 64);
            hmpi_stat_add(HMPI_STAT_coll_staged_bytes, op->l.span);
        } else if (!hmpi_coll_op_expose(op, h, e, 0)) {
            return 0;
        }
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        op->step = 1;
    } /* fall through */
    case 1:
        if (!hmpi_coll_op_range(op, 0, op->k + 1, HMPI_COLL_ARRIVED))
            return 0;
        if (op->k >= 0) {
            const void *stack[HMPI_COLL_STACK_INPUTS];
            const void **x = hmpi_coll_inputs(t, e, stack);
            op->err = hmpi_coll_reduce_slice(op->recvbuf, x, op->k + 1, -1, 0, op->count, op->type,
                                             op->mop, &op->one, op->commute);
            hmpi_coll_inputs_free(x, stack);
        }
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        if (!op->direct)
            return 1;
        op->step = 2; /* members above us read our buffer */
        /* fall through */
    default: return hmpi_coll_op_range(op, me + 1, n, HMPI_COLL_DONE);
    }
}

static int below_iscan(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Iscan(op->sendbuf, op->recvbuf, op->count, op->type, op->mop, op->c->handle, req);
}
static int below_iexscan(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Iexscan(op->sendbuf, op->recvbuf, op->count, op->type, op->mop, op->c->handle, req);
}

/* Every nonblocking and persistent scan: the team's program on one node, else the MPI
 * below's call (across nodes, or a pair of op and type the standard does not define). */
static int scan_start(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op mop,
                      MPI_Comm comm, int exclusive, int persistent, MPI_Request *request,
                      const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = NULL;
    hmpi_coll_comm_t *s = hmpi_coll_get_nb(comm, &c);
    /* Across nodes, or a pair of op and type the standard does not define, the MPI below's
     * call; a persistent one runs it at each start under a request of HMPI's
     * (hmpi_coll_phase_below_call). */
    int below = s && (s->mode == HMPI_COLL_HIER || hmpi_op_outside(mop, type, 0));
    s = hmpi_coll_nb_route(s, below, persistent);
    if (!s) {
        if (hmpi_check_comm_null(comm, fn))
            return MPI_ERR_COMM;
#if HMPI_MPI4_CALLS
        if (persistent)
            return exclusive ? PMPI_Exscan_init(sendbuf, recvbuf, count, type, mop, comm,
                                                MPI_INFO_NULL, request)
                             : PMPI_Scan_init(sendbuf, recvbuf, count, type, mop, comm,
                                              MPI_INFO_NULL, request);
#endif
        return exclusive ? PMPI_Iexscan(sendbuf, recvbuf, count, type, mop, comm, request)
                         : PMPI_Iscan(sendbuf, recvbuf, count, type, mop, comm, request);
    }
    /* Exscan's recvbuf means nothing at rank 0. */
    int err = hmpi_check_reduce(sendbuf, exclusive && c->rank == 0 ? MPI_IN_PLACE : recvbuf, count,
                                type, mop);
    if (!err && !request)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    if (err)
        return hmpi_raise_in(comm, err, fn);
    hmpi_coll_phase_fn phase = below ? hmpi_coll_phase_below_call : phase_scan;
    hmpi_coll_op_t *op = hmpi_coll_op_new(s, c, 1, &phase);
    if (!op)
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    op->below_start = exclusive ? below_iexscan : below_iscan;
    op->in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    op->k = exclusive ? c->rank - 1 : c->rank; /* fold inputs 0..k (a member is its rank) */
    err = hmpi_coll_op_reduction(op, sendbuf, recvbuf, count, type, mop, count, persistent);
    return hmpi_coll_op_go(op, err, request, comm, fn);
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    return scan_start(sendbuf, recvbuf, count, type, op, comm, 0, 0, request, "MPI_Iscan");
}
HMPI_PMPI(Iscan)

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    return scan_start(sendbuf, recvbuf, count, type, op, comm, 1, 0, request, "MPI_Iexscan");
}
HMPI_PMPI(Iexscan)

#if HMPI_MPI4_CALLS
int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return scan_start(sendbuf, recvbuf, count, type, op, comm, 0, 1, request, "MPI_Scan_init");
}
HMPI_PMPI(Scan_init)

int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return scan_start(sendbuf, recvbuf, count, type, op, comm, 1, 1, request, "MPI_Exscan_init");
}
HMPI_PMPI(Exscan_init)
#endif
