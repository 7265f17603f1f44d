/* sync_lock.c: passive target synchronization: MPI_Win_lock/unlock, lock_all/unlock_all,
 * flush, flush_all, flush_local, flush_local_all and MPI_Win_sync. On a local window a
 * lock is the target's reader-writer lock word in the control block (ctrl.h); direct
 * operations are complete when they return, so a flush is a memory fence. On a mixed
 * window the below's lock is the one every origin, here or on another node, respects:
 * HMPI takes it, and before touching a local target directly makes sure it is granted
 * (implementations may defer the lock request to the first operation). */
#include "rma.h"
#include "../core/check.h"

#include <stdatomic.h>

/* Makes the below grant a deferred lock on local target t: a one-byte get, flushed,
 * cannot complete before the lock is held. */
static int force_grant(hmpi_win_t *w, int t)
{
    if (w->mem[t].size == 0)
        return MPI_SUCCESS; /* nothing there to touch directly */
    int rc = PMPI_Get(&w->sink, 1, MPI_BYTE, t, 0, 1, MPI_BYTE, w->handle);
    return rc != MPI_SUCCESS ? rc : PMPI_Win_flush(t, w->handle);
}

/* The lock words of local targets only: a local window's members are all local. */
static void lock_word(hmpi_win_t *w, int wl, int exclusive)
{
    HMPI_ASSERT_INTERNAL(!w->mixed && wl >= 0 && wl < w->nlocal);
    hmpi_rma_tsync_t *t = hmpi_rma_tsync(w->ctrl, wl);
    hmpi_rma_wait_t wt = {{0}};
    while (!(exclusive ? hmpi_rw_try_excl(&t->rw) : hmpi_rw_try_shared(&t->rw)))
        hmpi_rma_wait_step(w, &wt);
    hmpi_wait_end(&wt.b, HMPI_WAIT_RMA);
}

static void unlock_word(hmpi_win_t *w, int wl, int exclusive)
{
    HMPI_ASSERT_INTERNAL(!w->mixed && wl >= 0 && wl < w->nlocal);
    hmpi_rma_tsync_t *t = hmpi_rma_tsync(w->ctrl, wl);
    if (exclusive)
        hmpi_rw_release_excl(&t->rw);
    else
        hmpi_rw_release_shared(&t->rw);
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    HMPI_ENTER("MPI_Win_lock");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w)
        return PMPI_Win_lock(lock_type, rank, assert, win);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return hmpi_raise_win(win, MPI_ERR_RANK, "MPI_Win_lock");
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return hmpi_raise_win(win, MPI_ERR_LOCKTYPE, "MPI_Win_lock");
    if (w->lock_all || (w->acc[rank] & HMPI_ACC_LOCKED) || w->started)
        return hmpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_lock");
    int excl = lock_type == MPI_LOCK_EXCLUSIVE, nocheck = (assert &MPI_MODE_NOCHECK) != 0;
    if (w->mixed) {
        int rc = PMPI_Win_lock(lock_type, rank, assert, win);
        if (rc == MPI_SUCCESS && w->mem[rank].path != HMPI_RMA_BELOW && !nocheck)
            rc = force_grant(w, rank);
        if (rc != MPI_SUCCESS)
            return rc;
    } else if (!nocheck) {
        lock_word(w, w->mem[rank].wl, excl);
    }
    w->acc[rank] |=
        (uint8_t)((excl ? HMPI_ACC_EXCL : HMPI_ACC_SHARED) | (nocheck ? HMPI_ACC_NOCHECK : 0));
    w->nlocks++;
    w->fence = 0;
    HMPI_ASSERT_EXPENSIVE(hmpi_rma_win_is_valid(w));
    return MPI_SUCCESS;
}
HMPI_PMPI(Win_lock)

int MPI_Win_unlock(int rank, MPI_Win win)
{
    HMPI_ENTER("MPI_Win_unlock");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w)
        return PMPI_Win_unlock(rank, win);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return hmpi_raise_win(win, MPI_ERR_RANK, "MPI_Win_unlock");
    uint8_t a = w->acc[rank];
    if (!(a & HMPI_ACC_LOCKED))
        return hmpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_unlock");
    HMPI_ASSERT_INTERNAL(w->nlocks > 0); /* it counts the marked targets */
    w->acc[rank] &= (uint8_t) ~(HMPI_ACC_LOCKED | HMPI_ACC_NOCHECK);
    w->nlocks--;
    HMPI_ASSERT_EXPENSIVE(hmpi_rma_win_is_valid(w));
    atomic_thread_fence(memory_order_seq_cst); /* direct operations before the release */
    if (w->mixed)
        return PMPI_Win_unlock(rank, win);
    if (!(a & HMPI_ACC_NOCHECK))
        unlock_word(w, w->mem[rank].wl, (a & HMPI_ACC_EXCL) != 0);
    return MPI_SUCCESS;
}
HMPI_PMPI(Win_unlock)

int MPI_Win_lock_all(int assert, MPI_Win win)
{
    HMPI_ENTER("MPI_Win_lock_all");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w)
        return PMPI_Win_lock_all(assert, win);
    if (w->lock_all || w->nlocks || w->started) /* an exposure epoch may overlap */
        return hmpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all");
    int nocheck = (assert &MPI_MODE_NOCHECK) != 0;
    if (w->mixed) {
        int rc = PMPI_Win_lock_all(assert, win);
        for (int r = 0; r < w->size && rc == MPI_SUCCESS && !nocheck; r++) {
            if (w->mem[r].path != HMPI_RMA_BELOW && w->mem[r].size > 0) /* see force_grant */
                rc = PMPI_Get(&w->sink, 1, MPI_BYTE, r, 0, 1, MPI_BYTE, win);
        }
        if (rc == MPI_SUCCESS && !nocheck)
            rc = PMPI_Win_flush_all(win);
        if (rc != MPI_SUCCESS)
            return rc;
    } else if (!nocheck) {
        /* In one order everywhere; a writer never waits on a second target while holding
         * one unless the program itself locks two targets. */
        for (int t = 0; t < w->nlocal; t++)
            lock_word(w, t, 0);
    }
    w->lock_all = 1;
    w->lock_all_nocheck = nocheck;
    w->fence = 0;
    HMPI_ASSERT_EXPENSIVE(hmpi_rma_win_is_valid(w));
    return MPI_SUCCESS;
}
HMPI_PMPI(Win_lock_all)

int MPI_Win_unlock_all(MPI_Win win)
{
    HMPI_ENTER("MPI_Win_unlock_all");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w)
        return PMPI_Win_unlock_all(win);
    if (!w->lock_all)
        return hmpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all");
    w->lock_all = 0;
    HMPI_ASSERT_EXPENSIVE(hmpi_rma_win_is_valid(w));
    atomic_thread_fence(memory_order_seq_cst);
    if (w->mixed)
        return PMPI_Win_unlock_all(win);
    if (!w->lock_all_nocheck)
        for (int t = 0; t < w->nlocal; t++)
            unlock_word(w, t, 0);
    return MPI_SUCCESS;
}
HMPI_PMPI(Win_unlock_all)

/* ---- flushes ---------------------------------------------------------------------------- */

/* Flushes need a passive epoch: on rank, or (all) on some target. */
static int check_passive(const hmpi_win_t *w, int rank, int all)
{
    if (all)
        return hmpi_rma_in_passive(w) ? MPI_SUCCESS : MPI_ERR_RMA_SYNC;
    return rank == MPI_PROC_NULL ? MPI_SUCCESS : hmpi_rma_check_access(w, rank, 1);
}

/* The four flushes: rank's operations or (all) every target's, complete at the target or
 * (local) at the origin only, where a direct operation's origin buffer is free when it
 * returns (no fence needed). Each entry point passes constants, so this folds away. */
static inline int flush(int rank, MPI_Win win, int all, int local, const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_win_t *w = hmpi_win_get(win);
    if (w) {
        int err = check_passive(w, rank, all);
        if (err != MPI_SUCCESS)
            return hmpi_raise_win(win, err, fn);
        if (!local)
            atomic_thread_fence(memory_order_seq_cst);
        if (!w->mixed || (!all && rank == MPI_PROC_NULL))
            return MPI_SUCCESS;
    }
    if (all)
        return local ? PMPI_Win_flush_local_all(win) : PMPI_Win_flush_all(win);
    return local ? PMPI_Win_flush_local(rank, win) : PMPI_Win_flush(rank, win);
}

int MPI_Win_flush(int rank, MPI_Win win) { return flush(rank, win, 0, 0, "MPI_Win_flush"); }
HMPI_PMPI(Win_flush)

int MPI_Win_flush_all(MPI_Win win) { return flush(0, win, 1, 0, "MPI_Win_flush_all"); }
HMPI_PMPI(Win_flush_all)

int MPI_Win_flush_local(int rank, MPI_Win win)
{
    return flush(rank, win, 0, 1, "MPI_Win_flush_local");
}
HMPI_PMPI(Win_flush_local)

int MPI_Win_flush_local_all(MPI_Win win) { return flush(0, win, 1, 1, "MPI_Win_flush_local_all"); }
HMPI_PMPI(Win_flush_local_all)

/* Public and private copies are one (unified model): a full memory fence is all, plus
 * the below's sync where it has a passive epoch to sync. */
int MPI_Win_sync(MPI_Win win)
{
    HMPI_ENTER("MPI_Win_sync");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w)
        return PMPI_Win_sync(win);
    atomic_thread_fence(memory_order_seq_cst);
    return w->mixed && hmpi_rma_in_passive(w) ? PMPI_Win_sync(win) : MPI_SUCCESS;
}
HMPI_PMPI(Win_sync)
