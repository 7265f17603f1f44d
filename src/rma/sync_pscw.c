/* sync_pscw.c: generalized active target synchronization: MPI_Win_post, MPI_Win_start,
 * MPI_Win_complete, MPI_Win_wait, MPI_Win_test. Between local members it is pairwise
 * counters in the control block (ctrl.h): a post is one release increment per origin, a
 * start waits for its targets' posts, a complete is one release increment per target,
 * and a wait waits for its origins' completions. No message is sent, and a target that
 * posted never has to be inside MPI for its origins to go on. On a mixed window the
 * below's post/start/complete/wait run too, with the same groups. */
#include "rma.h"
#include "../core/check.h"

/* Window ranks of the members of group, into out; MPI_ERR_GROUP when one is not a
 * member of the window. */
static int translate(hmpi_win_t *w, MPI_Group group, int *out, int *n_p)
{
    int n;
    if (group == MPI_GROUP_NULL || PMPI_Group_size(group, &n) != MPI_SUCCESS || n > w->size)
        return MPI_ERR_GROUP;
    for (int i = 0; i < n; i++)
        w->scratch[i] = i;
    if (n > 0 && PMPI_Group_translate_ranks(group, n, w->scratch, w->group, out) != MPI_SUCCESS)
        return MPI_ERR_GROUP;
    for (int i = 0; i < n; i++)
        if (out[i] == MPI_UNDEFINED)
            return MPI_ERR_GROUP;
    *n_p = n;
    return MPI_SUCCESS;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    HMPI_ENTER("MPI_Win_post");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w)
        return PMPI_Win_post(group, assert, win);
    if (w->posted)
        return hmpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_post");
    int err = translate(w, group, w->post_ranks, &w->npost);
    if (err != MPI_SUCCESS)
        return hmpi_raise_win(win, err, "MPI_Win_post");
    if (w->mixed && (err = PMPI_Win_post(group, assert, win)) != MPI_SUCCESS)
        return err;
    /* NOCHECK: the matching starts are known to come after this post, and are made with
     * NOCHECK too (the standard asks for both or neither): nothing to count. */
    if (!(assert &MPI_MODE_NOCHECK)) {
        for (int i = 0; i < w->npost; i++) {
            int o = w->mem[w->post_ranks[i]].wl;
            if (o >= 0)
                hmpi_count_bump(hmpi_rma_post_cell(w->ctrl, w->wl, o));
        }
    }
    w->posted = 1;
    w->fence = 0;
    HMPI_ASSERT_EXPENSIVE(hmpi_rma_win_is_valid(w));
    return MPI_SUCCESS;
}
HMPI_PMPI(Win_post)

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    HMPI_ENTER("MPI_Win_start");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w)
        return PMPI_Win_start(group, assert, win);
    /* One access epoch at a time (the standard: distinct access epochs of a window at a
     * process are disjoint): a passive one excludes it too. */
    if (w->started || w->lock_all || w->nlocks)
        return hmpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_start");
    int err = translate(w, group, w->start_ranks, &w->nstart);
    if (err != MPI_SUCCESS)
        return hmpi_raise_win(win, err, "MPI_Win_start");
    if (w->mixed && (err = PMPI_Win_start(group, assert, win)) != MPI_SUCCESS)
        return err;
    /* The standard allows start to wait for the posts; waiting here keeps every later
     * direct put free of checks. */
    for (int i = 0; i < w->nstart; i++) {
        int r = w->start_ranks[i], t = w->mem[r].wl;
        w->acc[r] |= HMPI_ACC_START;
        if (t < 0 || (assert &MPI_MODE_NOCHECK))
            continue;
        _Atomic uint32_t *cell = hmpi_rma_post_cell(w->ctrl, t, w->wl);
        hmpi_rma_wait_t wt = {{0}};
        while (!hmpi_count_ahead(cell, w->seen_post[t]))
            hmpi_rma_wait_step(w, &wt);
        hmpi_wait_end(&wt.b, HMPI_WAIT_RMA);
        w->seen_post[t]++;
    }
    w->started = 1;
    w->fence = 0;
    HMPI_ASSERT_EXPENSIVE(hmpi_rma_win_is_valid(w));
    return MPI_SUCCESS;
}
HMPI_PMPI(Win_start)

int MPI_Win_complete(MPI_Win win)
{
    HMPI_ENTER("MPI_Win_complete");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w)
        return PMPI_Win_complete(win);
    if (!w->started)
        return hmpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_complete");
    /* Direct puts are done; each increment publishes them to its target. */
    for (int i = 0; i < w->nstart; i++) {
        int r = w->start_ranks[i], t = w->mem[r].wl;
        w->acc[r] &= (uint8_t)~HMPI_ACC_START;
        if (t >= 0)
            hmpi_count_bump(hmpi_rma_done_cell(w->ctrl, w->wl, t));
    }
    w->started = 0;
    HMPI_ASSERT_EXPENSIVE(hmpi_rma_win_is_valid(w));
    return w->mixed ? PMPI_Win_complete(win) : MPI_SUCCESS;
}
HMPI_PMPI(Win_complete)

/* 1 when every local origin of the exposure epoch has completed (consumes nothing). */
static int all_done(hmpi_win_t *w)
{
    for (int i = 0; i < w->npost; i++) {
        int o = w->mem[w->post_ranks[i]].wl;
        if (o >= 0 && !hmpi_count_ahead(hmpi_rma_done_cell(w->ctrl, o, w->wl), w->seen_done[o]))
            return 0;
    }
    return 1;
}

static void consume_done(hmpi_win_t *w)
{
    HMPI_ASSERT_INTERNAL(w->posted);
    for (int i = 0; i < w->npost; i++) {
        int o = w->mem[w->post_ranks[i]].wl;
        if (o >= 0)
            w->seen_done[o]++;
    }
    w->posted = 0;
    HMPI_ASSERT_EXPENSIVE(hmpi_rma_win_is_valid(w));
}

int MPI_Win_wait(MPI_Win win)
{
    HMPI_ENTER("MPI_Win_wait");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w)
        return PMPI_Win_wait(win);
    if (!w->posted)
        return hmpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_wait");
    hmpi_rma_wait_t wt = {{0}};
    if (w->mixed) { /* the below's test, not its wait: HMPI keeps moving meanwhile */
        int flag = 0, rc;
        while ((rc = PMPI_Win_test(win, &flag)) == MPI_SUCCESS && !flag)
            hmpi_rma_wait_step(w, &wt);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    while (!all_done(w))
        hmpi_rma_wait_step(w, &wt);
    hmpi_wait_end(&wt.b, HMPI_WAIT_RMA);
    consume_done(w);
    return MPI_SUCCESS;
}
HMPI_PMPI(Win_wait)

int MPI_Win_test(MPI_Win win, int *flag)
{
    HMPI_ENTER("MPI_Win_test");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w)
        return PMPI_Win_test(win, flag);
    if (!w->posted)
        return hmpi_raise_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_test");
    *flag = 0;
    if (w->mixed) {
        int below = 0, rc = PMPI_Win_test(win, &below);
        if (rc != MPI_SUCCESS || !below)
            return rc;
        /* The below's epoch is over, so every origin has called complete, and each bumps
         * its local counters before the below's complete: they are there already. */
        hmpi_rma_wait_t wt = {{0}};
        while (!all_done(w))
            hmpi_rma_wait_step(w, &wt);
        hmpi_wait_end(&wt.b, HMPI_WAIT_RMA);
    } else if (!all_done(w)) {
        w->polls.b.no_park = 1;           /* a test never sleeps */
        hmpi_rma_wait_step(w, &w->polls); /* a loop on MPI_Win_test must let origins run */
        return MPI_SUCCESS;
    }
    w->polls = (hmpi_rma_wait_t){{0}};
    consume_done(w);
    *flag = 1;
    return MPI_SUCCESS;
}
HMPI_PMPI(Win_test)
