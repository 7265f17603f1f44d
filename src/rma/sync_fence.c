/* sync_fence.c: MPI_Win_fence. On a local window a fence is the members' barrier in the
 * control block, whose release/acquire chain makes every direct put and local store
 * before it visible to every member after it; the MPI below is not involved. On a mixed
 * window the below's fence runs between two such barriers: the first gathers the local
 * members while moving HMPI's point-to-point along (a local peer may wait for this rank
 * to match its message before it can reach the fence, and inside the below this rank
 * would not), the second keeps the next epoch's direct puts from landing before every
 * local target has left the below's fence, which may still be applying the last
 * epoch's operations from other nodes. */
#include "rma.h"
#include "../core/check.h"

int MPI_Win_fence(int assert, MPI_Win win)
{
    HMPI_ENTER("MPI_Win_fence");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w)
        return PMPI_Win_fence(assert, win);
    if (w->lock_all || w->nlocks || w->started || w->posted)
        return hmpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_fence");
    /* Both assertions are given by every member or by none: then no epoch ends and none
     * begins, and there is nothing to order here. */
    int order = (assert &(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)) !=
                (MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED);
    if (order)
        hmpi_rma_barrier(w);
    if (w->mixed) {
        int rc = PMPI_Win_fence(assert, win);
        if (rc != MPI_SUCCESS)
            return rc;
        if (order)
            hmpi_rma_barrier(w);
    }
    w->fence = !(assert &MPI_MODE_NOSUCCEED);
    HMPI_ASSERT_EXPENSIVE(hmpi_rma_win_is_valid(w));
    return MPI_SUCCESS;
}
HMPI_PMPI(Win_fence)
