/* coll_alltoall.c: MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw. Blocks of 0 ints to MiBs
 * in total, in place, every communicator and buffer kind, layouts that differ between
 * sender and receiver (plain ints, ints with a hole after each), uneven counts (some 0)
 * with displacements in reverse order and gaps that must stay untouched, and for
 * alltoallw a different datatype for every peer. */
#include "coll_common.h"

typedef struct {
    MPI_Datatype type;
    int ext; /* ints of extent per int of data */
} lay_t;

static lay_t lay_int, lay_hole;
static uint64_t seq;
static const int GAP = (int)0xA5A5A5A5;

static int val(uint64_t seed, int from, int to, int e) { return tc_int(seed, from * 4096 + to, e); }

enum { KIND_PLAIN, KIND_V, KIND_W };
static const char *const kind_name[] = {"alltoall", "alltoallv", "alltoallw"};

/* Counts (ints) of the block from -> to, in case seed: k, or uneven for v and w (and
 * symmetric, as in place needs). */
static int count_of(int kind, int k, uint64_t seed, int from, int to)
{
    if (kind == KIND_PLAIN)
        return k;
    return (int)((from + to + seed) % 4) == 0 ? 0 : k + from + to;
}

static void alltoall_case(const tc_comm_t *tc, int kind, int k, int inplace, int sk, int rk,
                          int lay_sel)
{
    uint64_t seed = ++seq;
    int n = tc->size, me = tc->rank;
    int sc[64], rc[64], sd[64], rd[64], sdb[64], rdb[64];
    MPI_Datatype st[64], rt[64];
    const lay_t *sl[64], *rl[64];
    long stot = 0, rtot = 0;
    /* reverse order with an element of gap after each block (plain: in order, no gap) */
    for (int j = n - 1; j >= 0; j--) {
        sc[j] = count_of(kind, k, seed, me, j);
        rc[j] = count_of(kind, k, seed, j, me);
        sl[j] = kind == KIND_W ? ((j + me + lay_sel) & 1 ? &lay_hole : &lay_int)
                               : (lay_sel & 1 ? &lay_hole : &lay_int);
        rl[j] = kind == KIND_W ? ((j + lay_sel) & 2 ? &lay_hole : &lay_int)
                               : (lay_sel & 2 ? &lay_hole : &lay_int);
        if (inplace)
            sl[j] = rl[j];
    }
    for (int jj = 0; jj < n; jj++) {
        int j = kind == KIND_PLAIN ? jj : n - 1 - jj;
        sdb[j] = (int)(stot * (long)sizeof(int));
        rdb[j] = (int)(rtot * (long)sizeof(int));
        stot += (long)(sc[j] + (kind != KIND_PLAIN)) * sl[j]->ext;
        rtot += (long)(rc[j] + (kind != KIND_PLAIN)) * rl[j]->ext;
    }
    /* plain and v: one type per side, displacements in its extent */
    for (int j = 0; j < n; j++) {
        sd[j] = sdb[j] / (int)sizeof(int) / sl[0]->ext;
        rd[j] = rdb[j] / (int)sizeof(int) / rl[0]->ext;
        st[j] = sl[j]->type;
        rt[j] = rl[j]->type;
    }
    int *sbuf = tc_alloc(sk, sizeof(int) * (size_t)stot + 4);
    int *rbuf = tc_alloc(rk, sizeof(int) * (size_t)rtot + 4);
    int *src = inplace ? rbuf : sbuf;
    for (int j = 0; j < n; j++)
        for (int e = 0; e < sc[j]; e++)
            src[sdb[j] / (int)sizeof(int) + e * sl[j]->ext] = val(seed, me, j, e);
    const void *s = inplace ? MPI_IN_PLACE : sbuf;
    int err;
    if (kind == KIND_PLAIN)
        err = MPI_Alltoall(s, k, sl[0]->type, rbuf, k, rl[0]->type, tc->comm);
    else if (kind == KIND_V)
        err = MPI_Alltoallv(s, sc, sd, sl[0]->type, rbuf, rc, rd, rl[0]->type, tc->comm);
    else
        err = MPI_Alltoallw(s, sc, sdb, st, rbuf, rc, rdb, rt, tc->comm);
    CHECK(err == MPI_SUCCESS, "%s error %d", kind_name[kind], err);
    for (int j = 0; j < n; j++) {
        for (int e = 0; e < rc[j]; e++) {
            int got = rbuf[rdb[j] / (int)sizeof(int) + e * rl[j]->ext], want = val(seed, j, me, e);
            CHECK(got == want,
                  "%s: comm %s rank %d/%d, block from %d (%d ints, inplace %d, "
                  "send %s, recv %s, layouts %d): int %d is %d, want %d",
                  kind_name[kind], tc->name, me, n, j, rc[j], inplace, tc_buf_name[sk],
                  tc_buf_name[rk], lay_sel, e, got, want);
            if (rl[j]->ext > 1)
                CHECK(rbuf[rdb[j] / (int)sizeof(int) + e * rl[j]->ext + 1] == GAP,
                      "%s: a hole was written", kind_name[kind]);
        }
        if (kind != KIND_PLAIN)
            CHECK(rbuf[rdb[j] / (int)sizeof(int) + rc[j] * rl[j]->ext] == GAP,
                  "%s: a gap was written", kind_name[kind]);
    }
    tc_release();
}

static void run(void)
{
    MPI_Datatype hole;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &hole);
    MPI_Type_commit(&hole);
    lay_int = (lay_t){MPI_INT, 1};
    lay_hole = (lay_t){hole, 2};
    const int ks[] = {0, 1, 5, 200, 3000, 80000};
    int q = 0;
    for (int c = 0; c < tc_ncomms; c++) {
        const tc_comm_t *tc = &tc_comms[c];
        for (int i = 0; i < 6; i++) {
            int big = ks[i] > 10000;
            if (big && c >= 2)
                continue; /* MiBs on world and reversed */
            for (int r = 0; r < (big ? 2 : 4); r++, q++) {
                int lays = big ? 0 : q % 4, inplace = q % 3 == 1;
                for (int kind = 0; kind < 3; kind++)
                    alltoall_case(tc, kind, ks[i], inplace, (q + kind) % BUF_KINDS,
                                  (q / 3 + kind) % BUF_KINDS, lays);
            }
        }
    }
    MPI_Type_free(&hole);
}

int main(int argc, char **argv) { return tc_main(argc, argv, run); }
