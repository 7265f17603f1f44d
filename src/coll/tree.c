/* tree.c: a large team as a tree, for the collectives whose every member waits for every
 * other (barrier, fence, small allreduce). A flat team makes each member read all n
 * states (n^2 lines move per barrier, and each rank's work grows with n); the tree makes
 * each member read at most `radix` children and its parent, so a member's work is O(radix)
 * and the critical path O(radix * log_radix n).
 *
 * Shape: member i's subtree is a contiguous run of members [i, end); its children split
 * (i, end) into at most radix contiguous parts and are their first members. Member 0 is
 * the root. A reduction folds a subtree as x[i] op r(child 0) op r(child 1) ..., which is
 * the members' order: the canonical order MPI asks for. The parts are of near-equal size,
 * except where (i, end) holds members of several domains of the machine (sockets, NUMA
 * nodes, L3 caches: node/topo.c; HMPI_COLL_TOPOLOGY): then they are the domains of the
 * coarsest level there, grouped evenly, so each domain's first member is the only one
 * whose parent lies outside it and a collective moves one line each way per domain
 * across the domain's edge. Member order is kept, so domains are cut where the ranks are
 * bound in order (a core each, by rank); ranks spread round-robin over the sockets make
 * a domain of every member, and the tree is the plain one.
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

#include <string.h>

/* Splits the members (lo, hi) under member lo into at most k contiguous parts, writing
 * each part's first member to first[] and its end to end[]; returns their number. Where
 * a domain's edge lies among [lo, hi) (cut, below), the parts are the runs of the
 * coarsest such level's domains, grouped evenly by count of runs (one part when lo + 1
 * begins the only other domain: its first member alone links it to lo); else parts of
 * near-equal size. */
static int split(int lo, int hi, int k, const uint8_t *cut, int first[], int end[])
{
    int a = lo + 1, m = hi - a, level = HMPI_NODE_LEVELS, runs = 1;
    for (int i = a; cut && i < hi; i++)
        level = cut[i] < level ? cut[i] : level;
    if (level == HMPI_NODE_LEVELS) {
        int n = 0;
        for (int j = 0; j < k; j++) {
            int f = a + (int)((int64_t)m * j / k), e = a + (int)((int64_t)m * (j + 1) / k);
            if (f < e)
                first[n] = f, end[n++] = e;
        }
        return n;
    }
    for (int i = a + 1; i < hi; i++)
        runs += cut[i] == level;
    int g = runs < k ? runs : k, j = 0, r = 0;
    first[0] = a;
    for (int i = a + 1; i < hi; i++)
        if (cut[i] == level && ++r == (int)((int64_t)runs * (j + 1) / g)) {
            end[j++] = i;
            first[j] = i;
        }
    end[j] = hi;
    return j + 1;
}

int hmpi_coll_tree_place(int n, int me, int k, const uint8_t *cut, int *parent, int kid[])
{
    /* split writes up to k parts into arrays of HMPI_COLL_RADIX_MAX */
    HMPI_ASSERT(k >= 2 && k <= HMPI_COLL_RADIX_MAX && me >= 0 && me < n);
    int first[HMPI_COLL_RADIX_MAX], end[HMPI_COLL_RADIX_MAX], lo = 0, hi = n;
    *parent = -1;
    while (lo != me) { /* me lies in one of the parts under lo: descend into it */
        int j = 0;
        split(lo, hi, k, cut, first, end);
        while (end[j] <= me)
            j++;
        *parent = lo;
        lo = first[j];
        hi = end[j];
    }
    int nkids = split(lo, hi, k, cut, first, end);
    HMPI_ASSERT_INTERNAL(nkids <= k &&
                         (nkids == 0 || (first[0] == me + 1 && end[nkids - 1] == hi)));
    memcpy(kid, first, sizeof *first * (size_t)nkids);
    return nkids;
}

static void wait_kids(const hmpi_coll_team_t *t, uint64_t e)
{
    for (int j = 0; j < t->tree_nkids; j++)
        hmpi_coll_wait(t, t->tree_kid[j], e, HMPI_COLL_ARRIVED);
}

int hmpi_coll_tree_fence(hmpi_coll_team_t *t, int (*between)(void *), void *arg)
{
    /* A flat team has no tree: its zeroed parent would be member 0, waiting for itself. */
    HMPI_ASSERT_INTERNAL(t->ep.n > t->flat_max);
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
    HMPI_ASSERT_INTERNAL(t->ep.n > t->flat_max && bytes <= t->cap); /* the fold is inline */
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
