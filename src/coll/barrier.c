/* barrier.c: MPI_Barrier. On a node: a small team meets in its meeting line (coll.h);
 * larger ones store their state and watch the others' (flat, up to
 * HMPI_COLL_FLAT_MAX members), or fan in to member 0 through a tree and out again (more
 * members: tree.c; each member reads at most HMPI_COLL_RADIX children and its parent).
 * Across nodes: fan in on each node, a barrier of the MPI below among the leaders, fan
 * out. */
#include "coll.h"
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

static int leaders_barrier(void *arg)
{
    return PMPI_Barrier(((hmpi_coll_comm_t *)arg)->leaders);
}

int MPI_Barrier(MPI_Comm comm)
{
    HMPI_ENTER("MPI_Barrier");
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    HMPI_COLL_COUNT(barrier, s != NULL);
    if (!s)
        return hmpi_check_comm_null(comm, "MPI_Barrier") ? MPI_ERR_COMM : PMPI_Barrier(comm);
    if (s->mode == HMPI_COLL_FLAT) {
        team_barrier(&s->team);
        return MPI_SUCCESS;
    }
    return hmpi_raise_in(comm, hmpi_coll_team_fence(&s->team, leaders_barrier, s), "MPI_Barrier");
}
HMPI_PMPI(Barrier)
