/* coll_gather.c: MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v). Blocks of 0 ints to
 * MiBs in total, every root, in place, every communicator and buffer kind, and layouts
 * that differ between sender and receiver: plain ints, ints with a hole after each
 * (a non-contiguous type), or k ints as one contiguous derived element. The v variants
 * use uneven counts (some 0) and displacements in reverse order with gaps, which must
 * stay untouched. */
#include "coll_common.h"

/* An element layout: `ints` ints of data per element, `ext` ints of extent. */
typedef struct {
    MPI_Datatype type;
    int ints, ext;
} lay_t;

static lay_t lay_int, lay_hole;
static uint64_t seq;

static const int GAP = (int)0xA5A5A5A5; /* what tc_alloc leaves everywhere */

/* Value e of the block that rank `from` sends to rank `to` in case seed. */
static int val(uint64_t seed, int from, int to, int e) { return tc_int(seed, from * 4096 + to, e); }

/* Writes/checks k ints (k / l->ints elements of l) at element displacement d of buf. */
static void put(const lay_t *l, int *buf, long d, int k, uint64_t seed, int from, int to)
{
    for (int e = 0; e < k; e++)
        buf[(d + e / l->ints) * l->ext + e % l->ints] = val(seed, from, to, e);
}

static void check(const char *what, const tc_comm_t *tc, const lay_t *l, const int *buf, long d,
                  int k, uint64_t seed, int from, int to)
{
    for (int e = 0; e < k; e++) {
        int got = buf[(d + e / l->ints) * l->ext + e % l->ints], want = val(seed, from, to, e);
        CHECK(got == want,
              "%s: comm %s rank %d/%d, block from %d to %d (%d ints): int %d is %d, "
              "want %d",
              what, tc->name, tc->rank, tc->size, from, to, k, e, got, want);
        if (l->ext > l->ints)
            CHECK(buf[(d + e / l->ints) * l->ext + l->ints] == GAP,
                  "%s: comm %s rank %d: a hole was written", what, tc->name, tc->rank);
    }
}

/* Where block i starts, in elements of l: displs[i] for v (ints = 1), else i blocks of k ints. */
static long at(const lay_t *l, int v, const int *displs, int i, int k)
{
    return v ? displs[i] : (long)i * (k / l->ints);
}

/* The v layout: counts (ints) and displacements (elements) in reverse order with gaps. */
static long v_layout(int n, int k, int *counts, int *displs, int seedk)
{
    long at = 0;
    for (int i = n - 1; i >= 0; i--) {
        counts[i] = (i + seedk) % 3 == 0 ? 0 : k + i;
        displs[i] = (int)at;
        at += counts[i] + 1; /* one element of gap */
    }
    return at;
}

static void gather_case(const tc_comm_t *tc, int k, int root, const lay_t *sl, const lay_t *rl,
                        int v, int inplace, int sk, int rk)
{
    uint64_t seed = ++seq;
    int n = tc->size, me = tc->rank, counts[64], displs[64];
    long elems = (long)n * k;
    if (v)
        elems = v_layout(n, k, counts, displs, (int)seed);
    else
        for (int i = 0; i < n; i++)
            counts[i] = k, displs[i] = i * k;
    int mine = counts[me];
    int *sbuf = tc_alloc(sk, sizeof(int) * (size_t)mine * (size_t)sl->ext + 4);
    int *rbuf = me == root ? tc_alloc(rk, sizeof(int) * (size_t)elems * (size_t)rl->ext + 4) : NULL;
    inplace = inplace && me == root;
    put(inplace ? rl : sl, inplace ? rbuf : sbuf, inplace ? at(rl, v, displs, me, k) : 0, mine,
        seed, me, root);
    int rcounts[64];
    for (int i = 0; i < n; i++)
        rcounts[i] = counts[i] / rl->ints;
    const void *s = inplace ? MPI_IN_PLACE : sbuf;
    int err =
        v ? MPI_Gatherv(s, mine / sl->ints, sl->type, rbuf, rcounts, displs, rl->type, root,
                        tc->comm)
          : MPI_Gather(s, mine / sl->ints, sl->type, rbuf, k / rl->ints, rl->type, root, tc->comm);
    CHECK(err == MPI_SUCCESS, "gather error %d", err);
    if (me == root) {
        for (int i = 0; i < n; i++)
            check(v ? "gatherv" : "gather", tc, rl, rbuf, at(rl, v, displs, i, k), counts[i], seed,
                  i, root);
        if (v) /* the gaps stay */
            for (int i = 0; i < n; i++)
                CHECK(rbuf[(displs[i] + counts[i]) * rl->ext] == GAP, "gatherv wrote a gap");
    }
    tc_release();
}

static void scatter_case(const tc_comm_t *tc, int k, int root, const lay_t *sl, const lay_t *rl,
                         int v, int inplace, int sk, int rk)
{
    uint64_t seed = ++seq;
    int n = tc->size, me = tc->rank, counts[64], displs[64];
    long elems = (long)n * k;
    if (v)
        elems = v_layout(n, k, counts, displs, (int)seed);
    else
        for (int i = 0; i < n; i++)
            counts[i] = k, displs[i] = i * k;
    int mine = counts[me];
    int *sbuf = me == root ? tc_alloc(sk, sizeof(int) * (size_t)elems * (size_t)sl->ext + 4) : NULL;
    int *rbuf = tc_alloc(rk, sizeof(int) * (size_t)mine * (size_t)rl->ext + 4);
    inplace = inplace && me == root;
    if (me == root)
        for (int i = 0; i < n; i++)
            put(sl, sbuf, at(sl, v, displs, i, k), counts[i], seed, root, i);
    int scounts[64];
    for (int i = 0; i < n; i++)
        scounts[i] = counts[i] / sl->ints;
    void *r = inplace ? MPI_IN_PLACE : rbuf;
    int err =
        v ? MPI_Scatterv(sbuf, scounts, displs, sl->type, r, mine / rl->ints, rl->type, root,
                         tc->comm)
          : MPI_Scatter(sbuf, k / sl->ints, sl->type, r, mine / rl->ints, rl->type, root, tc->comm);
    CHECK(err == MPI_SUCCESS, "scatter error %d", err);
    if (inplace)
        check("scatter in place (root's block untouched)", tc, sl, sbuf, at(sl, v, displs, me, k),
              mine, seed, root, me);
    else
        check(v ? "scatterv" : "scatter", tc, rl, rbuf, 0, mine, seed, root, me);
    tc_release();
}

static void allgather_case(const tc_comm_t *tc, int k, const lay_t *sl, const lay_t *rl, int v,
                           int inplace, int sk, int rk)
{
    uint64_t seed = ++seq;
    int n = tc->size, me = tc->rank, counts[64], displs[64];
    long elems = (long)n * k;
    if (v)
        elems = v_layout(n, k, counts, displs, (int)seed);
    else
        for (int i = 0; i < n; i++)
            counts[i] = k, displs[i] = i * k;
    int mine = counts[me];
    int *sbuf = tc_alloc(sk, sizeof(int) * (size_t)mine * (size_t)sl->ext + 4);
    int *rbuf = tc_alloc(rk, sizeof(int) * (size_t)elems * (size_t)rl->ext + 4);
    put(inplace ? rl : sl, inplace ? rbuf : sbuf, inplace ? at(rl, v, displs, me, k) : 0, mine,
        seed, me, 0);
    int rcounts[64];
    for (int i = 0; i < n; i++)
        rcounts[i] = counts[i] / rl->ints;
    const void *s = inplace ? MPI_IN_PLACE : sbuf;
    int err =
        v ? MPI_Allgatherv(s, mine / sl->ints, sl->type, rbuf, rcounts, displs, rl->type, tc->comm)
          : MPI_Allgather(s, mine / sl->ints, sl->type, rbuf, k / rl->ints, rl->type, tc->comm);
    CHECK(err == MPI_SUCCESS, "allgather error %d", err);
    for (int i = 0; i < n; i++)
        check(v ? "allgatherv" : "allgather", tc, rl, rbuf, at(rl, v, displs, i, k), counts[i],
              seed, i, 0);
    if (v)
        for (int i = 0; i < n; i++)
            CHECK(rbuf[(displs[i] + counts[i]) * rl->ext] == GAP, "allgatherv wrote a gap");
    tc_release();
}

static void run(void)
{
    MPI_Datatype hole;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &hole);
    MPI_Type_commit(&hole);
    lay_int = (lay_t){MPI_INT, 1, 1};
    lay_hole = (lay_t){hole, 1, 2};
    const lay_t *lays[2] = {&lay_int, &lay_hole};
    const int ks[] = {0, 1, 5, 300, 3000, 100000};
    int q = 0;
    for (int c = 0; c < tc_ncomms; c++) {
        const tc_comm_t *tc = &tc_comms[c];
        for (int i = 0; i < 6; i++) {
            int big = ks[i] > 10000;
            if (big && c >= 2)
                continue; /* MiBs on world and reversed */
            for (int r = 0; r < (big ? 2 : 4); r++, q++) {
                const lay_t *sl = lays[(q >> 1) & 1], *rl = lays[q & 1];
                if (big)
                    sl = rl = &lay_int; /* memcpy speed; the layouts are covered above */
                int root = (q / 2 + c) % tc->size, sk = q % BUF_KINDS, rk = (q / 4) % BUF_KINDS;
                int v = r & 1, inplace = (q % 3) == 2;
                gather_case(tc, ks[i], root, sl, rl, v, inplace, sk, rk);
                scatter_case(tc, ks[i], root, sl, rl, v, inplace, rk, sk);
                allgather_case(tc, ks[i], sl, rl, v, inplace, sk, rk);
            }
        }
        /* k ints against one contiguous element of k ints */
        for (int i = 1; i < 5; i++, q++) {
            MPI_Datatype blk = tc_block_ints(ks[i]);
            lay_t lb = {blk, ks[i], ks[i]};
            gather_case(tc, ks[i], q % tc->size, &lay_int, &lb, 0, 0, BUF_HEAP, q % BUF_KINDS);
            scatter_case(tc, ks[i], q % tc->size, &lb, &lay_int, 0, 0, q % BUF_KINDS, BUF_HEAP);
            allgather_case(tc, ks[i], &lb, &lay_int, 0, 0, BUF_HEAP, q % BUF_KINDS);
            MPI_Type_free(&blk);
        }
    }
    MPI_Type_free(&hole);
}

int main(int argc, char **argv) { return tc_main(argc, argv, run); }
