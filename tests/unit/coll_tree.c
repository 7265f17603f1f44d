/* coll_tree.c: the shape of the collectives' trees (coll/tree.c) on made-up machines.
 * For every team size to 80, radixes 2 to 32, and domains of every kind (none, equal L3
 * caches, sockets of L3 caches, uneven random ones, a domain per member): every member
 * but member 0 has one parent below it that lists it, no member has more than radix
 * children, every subtree is a contiguous run of members (the order reductions fold in),
 * and at each level each domain but member 0's has exactly one member whose parent lies
 * outside it. Without domains the tree is the plain one, as it was before domains. */
#include "../check.h"
#include "coll/coll.h"

#include <stdlib.h>
#include <string.h>

enum { NMAX = 80 };

/* The plain tree as coll/tree.c made it before domains, for comparison. */
static int plain(int n, int me, int k, int *parent, int kid[])
{
    int lo = 0, hi = n;
    *parent = -1;
    while (lo != me) {
        int m = hi - lo - 1, j = 0;
        while (lo + 1 + (int)((long long)m * (j + 1) / k) <= me)
            j++;
        *parent = lo;
        int first = lo + 1 + (int)((long long)m * j / k);
        hi = lo + 1 + (int)((long long)m * (j + 1) / k);
        lo = first;
    }
    int m = hi - lo - 1, nk = 0;
    for (int j = 0; j < k; j++) {
        int first = lo + 1 + (int)((long long)m * j / k);
        if (first < lo + 1 + (int)((long long)m * (j + 1) / k))
            kid[nk++] = first;
    }
    return nk;
}

static void check_tree(int n, int k, const uint8_t *cut, const char *what)
{
    int parent[NMAX], nkids[NMAX], kid[NMAX][HMPI_COLL_RADIX_MAX], size[NMAX];
    for (int me = 0; me < n; me++) {
        nkids[me] = hmpi_coll_tree_place(n, me, k, cut, &parent[me], kid[me]);
        CHECK(nkids[me] >= 0 && nkids[me] <= k, "%s n=%d k=%d: member %d has %d children", what, n,
              k, me, nkids[me]);
        CHECK(me == 0 ? parent[me] == -1 : parent[me] >= 0 && parent[me] < me,
              "%s n=%d k=%d: member %d's parent is %d", what, n, k, me, parent[me]);
    }
    for (int me = 0; me < n; me++)
        for (int j = 0; j < nkids[me]; j++)
            CHECK(kid[me][j] > me && kid[me][j] < n && parent[kid[me][j]] == me,
                  "%s n=%d k=%d: member %d lists child %d", what, n, k, me, kid[me][j]);
    /* sizes bottom-up (a parent is below its children); the children of a member tile
     * the run after it in order */
    for (int me = n - 1; me >= 0; me--) {
        int next = me + 1;
        for (int j = 0; j < nkids[me]; j++) {
            CHECK(kid[me][j] == next, "%s n=%d k=%d: member %d's subtree is not contiguous", what,
                  n, k, me);
            next += size[kid[me][j]];
        }
        size[me] = next - me;
    }
    CHECK(size[0] == n, "%s n=%d k=%d: the tree holds %d of %d members", what, n, k, size[0], n);
    for (int level = 0; level < HMPI_NODE_LEVELS && cut; level++) {
        int domains = 1, outside = 0;
        for (int i = 1; i < n; i++)
            domains += cut[i] <= level;
        for (int me = 1; me < n; me++) {
            int across = 0;
            for (int i = parent[me] + 1; i <= me; i++)
                across |= cut[i] <= level;
            outside += across;
        }
        CHECK(outside == domains - 1,
              "%s n=%d k=%d: %d members have a parent outside their level-%d domain, "
              "%d domains",
              what, n, k, outside, level, domains);
    }
    if (!cut)
        for (int me = 0; me < n; me++) {
            int p, kk[HMPI_COLL_RADIX_MAX], nk = plain(n, me, k, &p, kk);
            CHECK(p == parent[me] && nk == nkids[me] &&
                      !memcmp(kk, kid[me], sizeof *kk * (size_t)nk),
                  "n=%d k=%d: member %d differs from the plain tree", n, k, me);
        }
}

int main(void)
{
    static const int radix[] = {2, 3, 4, 8, 32};
    uint8_t cut[NMAX];
    srand(7);
    for (int n = 1; n <= NMAX; n++)
        for (size_t r = 0; r < sizeof radix / sizeof *radix; r++) {
            int k = radix[r];
            check_tree(n, k, NULL, "plain");
            memset(cut, HMPI_NODE_LEVELS, sizeof cut);
            check_tree(n, k, cut, "one domain");
            for (int d = 1; d <= 9; d++) {
                for (int i = 1; i < n; i++)
                    cut[i] = i % d ? HMPI_NODE_LEVELS : HMPI_NODE_L3;
                check_tree(n, k, cut, "L3 domains");
                for (int i = 1; i < n; i++)
                    cut[i] = i % (3 * d) == 0 ? HMPI_NODE_PACKAGE
                             : i % d == 0     ? HMPI_NODE_L3
                                              : HMPI_NODE_LEVELS;
                check_tree(n, k, cut, "sockets of 3 L3 domains");
            }
            for (int t = 0; t < 20; t++) {
                for (int i = 1; i < n; i++)
                    cut[i] = rand() % 5 ? HMPI_NODE_LEVELS : (uint8_t)(rand() % HMPI_NODE_LEVELS);
                check_tree(n, k, cut, "random domains");
            }
        }
    printf("coll_tree: ok\n");
    return 0;
}
