/* barrier.c: MPI_Barrier. On a node: a small team meets in its meeting line (coll.h);
 * larger ones store their state and watch the others' (flat, up to
 * HMPI_COLL_FLAT_MAX members), or fan in to member 0 through a tree and out again (more
 * members: tree.c; each member reads at most HMPI_COLL_RADIX children and its parent).
 * Across nodes: fan in on each node, a barrier of the MPI below among the leaders, fan
 * out. */
#include "coll.h"
#include "nbc.h"
#include "../core/check.h"
#include "../common/knobs.h"
#include "../core/errors.h"

int hmpi_coll_team_fence(hmpi_coll_team_t *t, int (*between)(void *), void *arg)
{
    if (t->ep.n > t->flat_max)
        return hmpi_coll_tree_fence(t, between, arg);
    int err = MPI_SUCCESS;
    uint64_t e = hmpi_coll_begin(t);
    if (t->ep.me == 0) {
        hmpi_coll_wait_all(t, e, HMPI_COLL_ARRIVED);
        if (between)
            err = between(arg);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    } else {
        /* release: what we wrote before the barrier is seen by whoever passes it; only
         * member 0 waits for it */
        hmpi_coll_publish_to(t, e, HMPI_COLL_ARRIVED, &t->root_local, 1);
        hmpi_coll_wait(t, 0, e, HMPI_COLL_DONE);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    }
    return err;
}

static void team_barrier(hmpi_coll_team_t *t)
{
    if (t->line.line) {
        hmpi_coll_line_meet(t, NULL, 0);
        return;
    }
    if (t->ep.n > t->flat_max) {
        hmpi_coll_tree_fence(t, NULL, NULL);
        return;
    }
    uint64_t e = hmpi_coll_begin(t);
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    hmpi_coll_wait_all(t, e, HMPI_COLL_DONE);
}

static int leaders_barrier(void *arg) { return PMPI_Barrier(((hmpi_coll_comm_t *)arg)->leaders); }

int MPI_Barrier(MPI_Comm comm)
{
    HMPI_ENTER("MPI_Barrier");
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    HMPI_COLL_COUNT(barrier, s != NULL);
    if (!s && hmpi_check_comm_null(comm, "MPI_Barrier"))
        return MPI_ERR_COMM;
    if (!s)
        HMPI_COLL_RETURN_BELOW(PMPI_Barrier, PMPI_Ibarrier, comm, comm);
    if (s->mode == HMPI_COLL_FLAT) {
        team_barrier(&s->team);
        return MPI_SUCCESS;
    }
    return hmpi_raise_in(comm, hmpi_coll_team_fence(&s->team, leaders_barrier, s), "MPI_Barrier");
}
HMPI_PMPI(Barrier)

/* ---- nonblocking and persistent (nbc.h) -------------------------------------------------- */

/* The flat barrier without its wait: DONE at once, then every member's DONE. */
int hmpi_coll_phase_barrier(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    if (t->line.line)
        return hmpi_coll_op_meet(op, NULL, 0);
    uint64_t e = hmpi_coll_op_epoch(op);
    if (op->step == 0) {
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        op->step = 1;
    }
    return hmpi_coll_op_all(op, HMPI_COLL_DONE);
}

static int leaders_ibarrier(hmpi_coll_op_t *op)
{
    return PMPI_Ibarrier(op->s->leaders, &op->below);
}

/* hmpi_coll_team_fence's flat form without its waits, the leaders' barrier between: the
 * members arrive at member 0, which runs it, then releases them. */
int hmpi_coll_phase_fence(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    uint64_t e = hmpi_coll_op_epoch(op);
    if (t->ep.me != 0) {
        if (op->step == 0) {
            hmpi_coll_publish_to(t, e, HMPI_COLL_ARRIVED, &t->root_local, 1);
            op->step = 1;
        }
        if (!hmpi_epoch_reached(&t->ep, 0, e, HMPI_COLL_DONE))
            return 0;
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return 1;
    }
    if (op->step == 0) {
        if (!hmpi_coll_op_all(op, HMPI_COLL_ARRIVED))
            return 0;
        op->step = 1;
        int err = leaders_ibarrier(op);
        if (err != MPI_SUCCESS) {
            op->err = err;
            op->below = MPI_REQUEST_NULL;
        }
    }
    if (!hmpi_coll_phase_below_wait(op))
        return 0;
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return 1;
}

static int below_ibarrier(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Ibarrier(op->c->handle, req);
}

static int start_barrier(MPI_Comm comm, int persistent, MPI_Request *request, const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = NULL;
    hmpi_coll_comm_t *s = hmpi_coll_nb_route(hmpi_coll_get_nb(comm, &c), 0, 0);
    if (!s) {
        if (hmpi_check_comm_null(comm, fn))
            return MPI_ERR_COMM;
#if HMPI_MPI4_CALLS
        if (persistent)
            return PMPI_Barrier_init(comm, MPI_INFO_NULL, request);
#endif
        return PMPI_Ibarrier(comm, request);
    }
    if (!request)
        return hmpi_raise_in(comm, hmpi_err_what(MPI_ERR_ARG, "request is NULL"), fn);
    /* In the meeting line with nothing before it: the last to meet makes no operation. */
    uint64_t meet = 0;
    int at = 0;
    if (!persistent && s->mode == HMPI_COLL_FLAT && s->team.line.line && hmpi_coll_alone(s) &&
        hmpi_coll_meet_now(&s->team, NULL, 0, &meet, &at)) {
        *request = hmpi_req_handle(hmpi_req_coll_done());
        return MPI_SUCCESS;
    }
    hmpi_coll_phase_fn phase =
        s->mode == HMPI_COLL_HIER ? hmpi_coll_phase_fence : hmpi_coll_phase_barrier;
    hmpi_coll_op_t *op = hmpi_coll_op_new(s, c, 1, &phase);
    if (!op)
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    hmpi_coll_op_tried(op, 0, meet, 1, at);
    op->persistent = (uint8_t)persistent;
    op->below_start = below_ibarrier;
    return hmpi_coll_op_go(op, MPI_SUCCESS, request, comm, fn);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    return start_barrier(comm, 0, request, "MPI_Ibarrier");
}
HMPI_PMPI(Ibarrier)

#if HMPI_MPI4_CALLS
int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return start_barrier(comm, 1, request, "MPI_Barrier_init");
}
HMPI_PMPI(Barrier_init)
#endif
