/* tree.c: a large team as a tree, for the collectives whose every member waits for every
 * other (barrier, fence, small allreduce). A flat team makes each member read all n
 * states (n^2 lines move per barrier, and each rank's work grows with n); the tree makes
 * each member read at most `radix` children and its parent, so a member's work is O(radix)
 * and the critical path O(radix * log_radix n).
 *
 * Shape: member i's subtree is a contiguous run of members [i, end); its children split
 * (i, end) into at most radix contiguous parts of near-equal size and are their first
 * members. Member 0 is the root. A reduction folds a subtree as x[i] op r(child 0) op
 * r(child 1) ..., which is the members' order: the canonical order MPI asks for.
 *
 * Protocol, epoch e (the slot protocol of coll.h; a member's half of e is read by its
 * parent for ARRIVED and by its children for DONE):
 *   up    a member waits for each child's ARRIVED(e) (its whole subtree has arrived, and
 *         in a reduction the child's half holds the subtree's fold), then publishes its
 *         own ARRIVED(e);
 *   down  it waits for its parent's DONE(e) (everybody arrived: the root had them all;
 *         in a reduction the parent's half now holds the result), then publishes DONE(e).
 * A half's data changes from the member's fold to the result only after the parent's
 * DONE(e), by which time the parent read the fold. Everybody arrived at e, so everybody
 * finished e-1 (hmpi_coll_seen): consecutive tree collectives claim their halves
 * without loading any peer's line.
 *
 * Wakes: a member's ARRIVED(e) is waited for by its parent only, its DONE(e) by its
 * children only, so each publish wakes those (if they sleep), not every parked rank of
 * the node: a sleeping node pays O(radix) per member and collective, not O(P). */
#include "coll.h"

/* Computes member ep.me's place in the tree of radix k over t->ep.n members. */
void hmpi_coll_tree_shape(hmpi_coll_team_t *t, int k)
{
    int lo = 0, hi = t->ep.n, me = t->ep.me;
    t->tree_parent = -1;
    while (lo != me) {
        /* me lies in one of the parts of (lo, hi): descend into it */
        int m = hi - lo - 1, j = 0;
        while (lo + 1 + (int)((int64_t)m * (j + 1) / k) <= me)
            j++;
        int first = lo + 1 + (int)((int64_t)m * j / k);
        int end = lo + 1 + (int)((int64_t)m * (j + 1) / k);
        t->tree_parent = lo;
        lo = first;
        hi = end;
    }
    int m = hi - lo - 1;
    t->tree_nkids = 0;
    for (int j = 0; j < k; j++) {
        int first = lo + 1 + (int)((int64_t)m * j / k);
        int end = lo + 1 + (int)((int64_t)m * (j + 1) / k);
        if (first < end)
            t->tree_kid[t->tree_nkids++] = first;
    }
}

static void wait_kids(const hmpi_coll_team_t *t, uint64_t e)
{
    for (int j = 0; j < t->tree_nkids; j++)
        hmpi_coll_wait(t, t->tree_kid[j], e, HMPI_COLL_ARRIVED);
}

int hmpi_coll_tree_fence(hmpi_coll_team_t *t, int (*between)(void *), void *arg)
{
    int err = MPI_SUCCESS;
    uint64_t e = hmpi_coll_begin(t);
    wait_kids(t, e);
    if (t->tree_parent >= 0) {
        /* release: what we wrote before the barrier is seen by whoever passes it */
        hmpi_coll_publish_to(t, e, HMPI_COLL_ARRIVED, &t->tree_parent_local, 1);
        hmpi_coll_wait(t, t->tree_parent, e, HMPI_COLL_DONE);
    } else if (between) {
        err = between(arg);
    }
    hmpi_coll_publish_to(t, e, HMPI_COLL_DONE, t->tree_kid_local, t->tree_nkids);
    hmpi_coll_seen(t, e);
    return err;
}

void hmpi_coll_tree_allreduce(hmpi_coll_team_t *t, const void *in, void *recvbuf, int count,
                              size_t bytes, hmpi_op_kernel_t k)
{
    uint64_t e = hmpi_coll_begin(t);
    unsigned char *fold = hmpi_coll_claim(t, e)->data;
    if (t->tree_nkids == 0) {
        memcpy(fold, in, bytes);
    } else {
        /* x[me] op r(kid 0) op r(kid 1) ...: the kernel makes out = a op b with out
         * possibly b, and every op with a kernel is commutative (bit for bit, in IEEE
         * arithmetic too), so r(kid j) op fold is fold op r(kid j). */
        hmpi_coll_wait(t, t->tree_kid[0], e, HMPI_COLL_ARRIVED);
        k(fold, in, hmpi_coll_half(t, t->tree_kid[0], e)->data, (size_t)count);
        for (int j = 1; j < t->tree_nkids; j++) {
            hmpi_coll_wait(t, t->tree_kid[j], e, HMPI_COLL_ARRIVED);
            k(fold, hmpi_coll_half(t, t->tree_kid[j], e)->data, fold, (size_t)count);
        }
    }
    if (t->tree_parent >= 0) {
        hmpi_coll_publish_to(t, e, HMPI_COLL_ARRIVED, &t->tree_parent_local, 1);
        hmpi_coll_wait(t, t->tree_parent, e, HMPI_COLL_DONE);
        const unsigned char *result = hmpi_coll_half(t, t->tree_parent, e)->data;
        if (t->tree_nkids)
            memcpy(fold, result, bytes); /* our parent read our fold: it is DONE */
        memcpy(recvbuf, result, bytes);
    } else {
        memcpy(recvbuf, fold, bytes);
    }
    hmpi_coll_publish_to(t, e, HMPI_COLL_DONE, t->tree_kid_local, t->tree_nkids);
    hmpi_coll_seen(t, e);
}
