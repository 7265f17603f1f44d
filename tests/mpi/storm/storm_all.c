/* storm_all.c: the seeded storm of every part of HMPI at once. Each round, all ranks
 * derive the same plan from the seed and then, with their point-to-point sends still in
 * flight, run a random collective on a random communicator, pass OPI buffers along a
 * random shift, do one RMA epoch in a random synchronization mode, and only then receive
 * their point-to-point messages. Every byte is checked against the plan, and the
 * checksums of everything sent and received are compared at the end.
 *   storm_all [--seed=N] [--rounds=N | --seconds=S]      (the seed is printed) */
#include "../p2p_common.h"

#include "hmpi.h"

#include <time.h>

#define DEFAULT_SEED 20261122ull
#define DEFAULT_ROUNDS 100
#define NTAGS 4
#define P2P_PER_ROUND 12
#define MAX_P2P (64u << 10)
#define SLOT (16u << 10) /* RMA: each origin's slot in every rank's window */
#define MAX_COLL 4096    /* ints per rank in a collective */
#define OPI_TAG 77

enum { NCOMMS = 4 };
static MPI_Comm comms[NCOMMS]; /* world, a dup, reversed ranks, two halves */
static MPI_Comm opi_comm;      /* OPI traffic keeps to a communicator of its own */
/* Point-to-point traffic of even and odd rounds on distinct communicators: a sender may
 * run one round ahead of a receiver still probing for the previous round's messages. */
static MPI_Comm p2p_comms[2][2];
static const char *const comm_name[NCOMMS] = {"world", "dup", "reversed", "halves"};
static int rank, nranks;
static uint64_t seed;
static unsigned char global_buf[MAX_P2P];
static struct {
    uint64_t p2p_msgs, p2p_bytes, colls, rma_ops, opi_passes, sent_sum, recv_sum;
} tally;

/* ---- point-to-point ------------------------------------------------------------------ */

typedef struct {
    int dest, tag, comm;
    size_t size;
} msg_t;

/* Message i of sender s in round: the same on every rank. */
static msg_t plan_msg(int round, int s, int i)
{
    p2p_rng_t r;
    p2p_rng_init(&r, seed ^ ((uint64_t)round << 32), (uint64_t)s * 1000 + (uint64_t)i);
    msg_t m;
    m.dest = (int)p2p_rng_below(&r, (uint64_t)nranks);
    m.tag = (int)p2p_rng_below(&r, NTAGS);
    m.comm = (int)p2p_rng_below(&r, 2); /* world or its dup: the same ranks */
    int e = (int)p2p_rng_below(&r, 17); /* 0, [1,2), ..., [32K,64K): up to MAX_P2P */
    m.size = e == 0 ? 0 : ((size_t)1 << (e - 1)) + p2p_rng_below(&r, (uint64_t)1 << (e - 1));
    return m;
}

static uint64_t msg_key(int round, int s, int i) { return p2p_key(s, round, (uint64_t)i, seed); }

static int post_sends(int round, MPI_Request *rq, void **bufs)
{
    int n = 0;
    for (int i = 0; i < P2P_PER_ROUND; i++) {
        msg_t m = plan_msg(round, rank, i);
        /* one send a round from a global buffer: outside the heap, another protocol */
        int global = i == round % P2P_PER_ROUND;
        void *b = global ? global_buf : malloc(m.size ? m.size : 1);
        CHECK(b, "out of memory");
        p2p_fill(b, m.size, msg_key(round, rank, i));
        tally.sent_sum += p2p_sum(b, m.size);
        bufs[n] = global ? NULL : b;
        P2P_OK(MPI_Isend(b, (int)m.size, MPI_BYTE, m.dest, m.tag, p2p_comms[round % 2][m.comm],
                         &rq[n]));
        n++;
    }
    return n;
}

/* Receives this round's messages for this rank with wildcard probes; each must be the
 * next message of its (sender, communicator, tag) stream. */
static void receive_all(int round)
{
    int expect[2] = {0, 0};
    int next[2][64][NTAGS]; /* next message index per stream, searched forward */
    memset(next, 0, sizeof next);
    for (int s = 0; s < nranks; s++)
        for (int i = 0; i < P2P_PER_ROUND; i++) {
            msg_t m = plan_msg(round, s, i);
            if (m.dest == rank)
                expect[m.comm]++;
        }
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < expect[c]; k++) {
            MPI_Status st;
            P2P_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, p2p_comms[round % 2][c], &st));
            int s = st.MPI_SOURCE, tag = st.MPI_TAG;
            int *nx = &next[c][s][tag], i = *nx;
            msg_t m = {0, 0, 0, 0};
            for (; i < P2P_PER_ROUND; i++) {
                m = plan_msg(round, s, i);
                if (m.dest == rank && m.comm == c && m.tag == tag)
                    break;
            }
            CHECK(i < P2P_PER_ROUND, "round %d: unplanned message from %d tag %d on %s", round, s,
                  tag, comm_name[c]);
            *nx = i + 1;
            CHECK(p2p_count(&st, MPI_BYTE) == (int)m.size,
                  "round %d: message %d from %d probed with %d bytes, planned %zu", round, i, s,
                  p2p_count(&st, MPI_BYTE), m.size);
            unsigned char stackbuf[1024];
            void *b = m.size <= sizeof stackbuf && i % 2 ? (void *)stackbuf : malloc(m.size + 1);
            CHECK(b, "out of memory");
            P2P_OK(MPI_Recv(b, (int)m.size, MPI_BYTE, s, tag, p2p_comms[round % 2][c], &st));
            P2P_CHECK_DATA(b, m.size, msg_key(round, s, i), "round %d: message %d from %d", round,
                           i, s);
            tally.recv_sum += p2p_sum(b, m.size);
            tally.p2p_msgs++;
            tally.p2p_bytes += m.size;
            if (b != stackbuf)
                free(b);
        }
}

/* ---- collectives --------------------------------------------------------------------- */

/* Element i of the input of the rank with rank r in communicator c. */
static int in_val(int round, int c, int r, int i)
{
    return (int)(p2p_mix(seed ^ ((uint64_t)round << 40) ^ ((uint64_t)c << 36) ^
                         ((uint64_t)r << 24) ^ (uint64_t)i) &
                 0xFFFF) -
           0x8000;
}

static int fold(MPI_Op op, int a, int b)
{
    return op == MPI_SUM ? a + b : op == MPI_MAX ? (a > b ? a : b) : a ^ b;
}

/* The reduction over ranks [0, upto) of element i. */
static int reduced(int round, int c, int upto, MPI_Op op, int i)
{
    int v = in_val(round, c, 0, i);
    for (int r = 1; r < upto; r++)
        v = fold(op, v, in_val(round, c, r, i));
    return v;
}

static void run_collective(int round, p2p_rng_t *r)
{
    int c = (int)p2p_rng_below(r, NCOMMS), kind = (int)p2p_rng_below(r, 9);
    MPI_Comm comm = comms[c];
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int count = (int)p2p_rng_below(r, (uint64_t)MAX_COLL / (uint64_t)n + 1);
    int root = (int)p2p_rng_below(r, (uint64_t)n);
    MPI_Op ops[3] = {MPI_SUM, MPI_MAX, MPI_BXOR};
    MPI_Op op = ops[p2p_rng_below(r, 3)];
    size_t all = (size_t)count * (size_t)n;
    int *in = malloc((all + 1) * sizeof *in), *out = malloc((all + 1) * sizeof *out);
    CHECK(in && out, "out of memory");
    for (size_t i = 0; i < all; i++)
        in[i] = in_val(round, c, me, (int)i);
    switch (kind) {
    case 0: P2P_OK(MPI_Barrier(comm)); break;
    case 1:
        if (me != root)
            for (int i = 0; i < count; i++)
                in[i] = in_val(round, c, root, i);
        P2P_OK(MPI_Bcast(in, count, MPI_INT, root, comm));
        for (int i = 0; i < count; i++)
            CHECK(in[i] == in_val(round, c, root, i), "round %d bcast[%d]", round, i);
        break;
    case 2:
        P2P_OK(MPI_Reduce(in, out, count, MPI_INT, op, root, comm));
        for (int i = 0; me == root && i < count; i++)
            CHECK(out[i] == reduced(round, c, n, op, i), "round %d reduce[%d]", round, i);
        break;
    case 3:
        P2P_OK(MPI_Allreduce(MPI_IN_PLACE, in, count, MPI_INT, op, comm));
        for (int i = 0; i < count; i++)
            CHECK(in[i] == reduced(round, c, n, op, i), "round %d allreduce[%d]", round, i);
        break;
    case 4:
        P2P_OK(MPI_Allgather(in, count, MPI_INT, out, count, MPI_INT, comm));
        for (size_t i = 0; i < all; i++)
            CHECK(out[i] == in_val(round, c, (int)(i / (size_t)count), (int)(i % (size_t)count)),
                  "round %d allgather[%zu]", round, i);
        break;
    case 5:
        P2P_OK(MPI_Alltoall(in, count, MPI_INT, out, count, MPI_INT, comm));
        for (size_t i = 0; i < all; i++) {
            int from = (int)(i / (size_t)count), j = (int)(i % (size_t)count);
            CHECK(out[i] == in_val(round, c, from, me * count + j), "round %d alltoall[%zu]", round,
                  i);
        }
        break;
    case 6:
        P2P_OK(MPI_Reduce_scatter_block(in, out, count, MPI_INT, op, comm));
        for (int i = 0; i < count; i++)
            CHECK(out[i] == reduced(round, c, n, op, me * count + i), "round %d rsb[%d]", round, i);
        break;
    case 7:
        P2P_OK(MPI_Scan(in, out, count, MPI_INT, op, comm));
        for (int i = 0; i < count; i++)
            CHECK(out[i] == reduced(round, c, me + 1, op, i), "round %d scan[%d]", round, i);
        break;
    default: {
        MPI_Request rq[2];
        int *b = out;
        for (int i = 0; i < count; i++)
            b[i] = in_val(round, c, root, i) * (me == root);
        P2P_OK(MPI_Ibcast(b, count, MPI_INT, root, comm, &rq[0]));
        P2P_OK(MPI_Iallreduce(MPI_IN_PLACE, in, count, MPI_INT, op, comm, &rq[1]));
        P2P_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < count; i++)
            CHECK(b[i] == in_val(round, c, root, i) && in[i] == reduced(round, c, n, op, i),
                  "round %d ibcast/iallreduce[%d]", round, i);
    }
    }
    tally.colls++;
    free(in);
    free(out);
}

/* ---- RMA ----------------------------------------------------------------------------- */

/* Each origin puts into its own slot of one target, reads it back, and adds o+1 to the
 * counter of rank 0; every rank checks the slots written into its window. */
static void rma_epoch(int round, p2p_rng_t *r, MPI_Win win, unsigned char *base,
                      int64_t *counter_expect)
{
    int mode = (int)p2p_rng_below(r, 3);
    int target[64];
    size_t size[64];
    for (int o = 0; o < nranks; o++) {
        target[o] = (int)p2p_rng_below(r, (uint64_t)nranks);
        size[o] = 1 + p2p_rng_below(r, SLOT);
    }
    size_t len = size[rank];
    unsigned char *src = malloc(len), *back = malloc(len);
    CHECK(src && back, "out of memory");
    uint64_t key = p2p_key(rank, 1000 + round, 0, seed);
    p2p_fill(src, len, key);
    int64_t one = rank + 1;
    MPI_Aint disp = (MPI_Aint)rank * SLOT, cdisp = (MPI_Aint)nranks * SLOT;
    int t = target[rank];

    if (mode == 0) {
        P2P_OK(MPI_Win_fence(0, win));
        P2P_OK(MPI_Put(src, (int)len, MPI_BYTE, t, disp, (int)len, MPI_BYTE, win));
        P2P_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, cdisp, 1, MPI_INT64_T, MPI_SUM, win));
        P2P_OK(MPI_Win_fence(0, win));
        P2P_OK(MPI_Get(back, (int)len, MPI_BYTE, t, disp, (int)len, MPI_BYTE, win));
        P2P_OK(MPI_Win_fence(0, win));
    } else {
        if (mode == 1)
            P2P_OK(MPI_Win_lock_all(0, win));
        else
            P2P_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        P2P_OK(MPI_Put(src, (int)len, MPI_BYTE, t, disp, (int)len, MPI_BYTE, win));
        P2P_OK(MPI_Win_flush(t, win));
        P2P_OK(MPI_Get(back, (int)len, MPI_BYTE, t, disp, (int)len, MPI_BYTE, win));
        if (mode == 1) {
            P2P_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, cdisp, 1, MPI_INT64_T, MPI_SUM, win));
            P2P_OK(MPI_Win_unlock_all(win));
        } else {
            P2P_OK(MPI_Win_unlock(t, win));
            P2P_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            P2P_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, cdisp, 1, MPI_INT64_T, MPI_SUM, win));
            P2P_OK(MPI_Win_unlock(0, win));
        }
        P2P_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    P2P_CHECK_DATA(back, len, key, "round %d: get back from %d (mode %d)", round, t, mode);
    for (int o = 0; o < nranks; o++) {
        *counter_expect += o + 1;
        if (target[o] == rank)
            P2P_CHECK_DATA(base + (size_t)o * SLOT, size[o], p2p_key(o, 1000 + round, 0, seed),
                           "round %d: slot of origin %d (mode %d)", round, o, mode);
    }
    if (rank == 0) {
        int64_t got;
        P2P_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        memcpy(&got, base + (size_t)nranks * SLOT, sizeof got);
        P2P_OK(MPI_Win_unlock(0, win));
        CHECK(got == *counter_expect, "round %d: counter %lld, expected %lld", round,
              (long long)got, (long long)*counter_expect);
    }
    P2P_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the slots are checked before they are reused */
    tally.rma_ops += 4;
    free(src);
    free(back);
}

/* ---- OPI ----------------------------------------------------------------------------- */

static void opi_pass(int round, p2p_rng_t *r)
{
    int shift = nranks > 1 ? 1 + (int)p2p_rng_below(r, (uint64_t)nranks - 1) : 0;
    int wild = (int)p2p_rng_below(r, 2);
    size_t len = 1 + p2p_rng_below(r, 256u << 10);
    int to = (rank + shift) % nranks, from = (rank - shift + nranks) % nranks;
    void *p = NULL;
    P2P_OK(OPI_Alloc(&p, len));
    p2p_fill(p, len, p2p_key(rank, 2000 + round, 0, seed));
    tally.sent_sum += p2p_sum(p, len);
    MPI_Request rq;
    P2P_OK(OPI_Igive(&p, (int)len, MPI_BYTE, to, OPI_TAG, opi_comm, &rq));
    CHECK(p == NULL, "OPI_Igive left the pointer set");
    void *q = NULL;
    MPI_Status st;
    P2P_OK(OPI_Take(&q, (int)len, MPI_BYTE, wild ? MPI_ANY_SOURCE : from, OPI_TAG, opi_comm, &st));
    CHECK(st.MPI_SOURCE == from, "round %d: OPI buffer from %d, expected %d", round, st.MPI_SOURCE,
          from);
    P2P_CHECK_DATA(q, len, p2p_key(from, 2000 + round, 0, seed), "round %d: OPI from %d", round,
                   from);
    tally.recv_sum += p2p_sum(q, len);
    P2P_OK(OPI_Free(&q));
    P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    tally.opi_passes++;
}

/* ---- the storm ----------------------------------------------------------------------- */

static long arg_long(int argc, char **argv, const char *name, long dflt)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
            return strtol(argv[i] + n + 1, NULL, 10);
    return dflt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(nranks <= 64, "at most 64 ranks");
    seed = p2p_seed(argc, argv, DEFAULT_SEED);
    long rounds = arg_long(argc, argv, "--rounds", DEFAULT_ROUNDS);
    long seconds = arg_long(argc, argv, "--seconds", 0);

    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, nranks - rank, &comms[2]);
    MPI_Comm_split(MPI_COMM_WORLD, rank < nranks / 2, rank, &comms[3]);
    for (int c = 0; c < NCOMMS; c++)
        MPI_Comm_set_errhandler(comms[c], MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &opi_comm);
    P2P_OK(OPI_Comm_enable(opi_comm));
    p2p_comms[0][0] = MPI_COMM_WORLD;
    p2p_comms[0][1] = comms[1];
    MPI_Comm_dup(MPI_COMM_WORLD, &p2p_comms[1][0]);
    MPI_Comm_dup(comms[1], &p2p_comms[1][1]);

    unsigned char *base;
    MPI_Win win;
    P2P_OK(MPI_Win_allocate((MPI_Aint)nranks * SLOT + 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                            &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(base, 0, (size_t)nranks * SLOT + 64);
    P2P_OK(MPI_Barrier(MPI_COMM_WORLD));
    int64_t counter = 0;

    if (rank == 0)
        printf("storm_all: seed %llu, %d ranks, %s %ld\n", (unsigned long long)seed, nranks,
               seconds ? "seconds" : "rounds", seconds ? seconds : rounds);
    double t0 = MPI_Wtime();
    int round = 0;
    for (;; round++) {
        int go = seconds ? MPI_Wtime() - t0 < (double)seconds : round < rounds;
        P2P_OK(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD)); /* rank 0's clock decides */
        if (!go)
            break;
        p2p_rng_t r;
        p2p_rng_init(&r, seed, 0xC0FFEEull + (uint64_t)round);
        MPI_Request rq[P2P_PER_ROUND];
        void *bufs[P2P_PER_ROUND];
        int n = post_sends(round, rq, bufs);
        run_collective(round, &r);
        opi_pass(round, &r);
        rma_epoch(round, &r, win, base, &counter);
        receive_all(round);
        P2P_OK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; i++)
            free(bufs[i]);
    }

    uint64_t mine[2] = {tally.sent_sum, tally.recv_sum}, sums[2];
    P2P_OK(MPI_Allreduce(mine, sums, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sums[0] == sums[1], "checksums differ: sent %016llx, received %016llx",
          (unsigned long long)sums[0], (unsigned long long)sums[1]);
    uint64_t counts[5] = {tally.p2p_msgs, tally.p2p_bytes, tally.colls, tally.rma_ops,
                          tally.opi_passes},
             total[5];
    P2P_OK(MPI_Reduce(counts, total, 5, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0)
        printf("storm_all: %d rounds in %.1f s: %llu messages (%llu bytes), %llu collective "
               "calls, %llu RMA operations, %llu OPI passes; checksums equal, nothing lost\n",
               round, MPI_Wtime() - t0, (unsigned long long)total[0], (unsigned long long)total[1],
               (unsigned long long)total[2], (unsigned long long)total[3],
               (unsigned long long)total[4]);
    MPI_Win_free(&win);
    for (int c = 1; c < NCOMMS; c++)
        MPI_Comm_free(&comms[c]);
    MPI_Comm_free(&opi_comm);
    MPI_Comm_free(&p2p_comms[1][0]);
    MPI_Comm_free(&p2p_comms[1][1]);
    MPI_Finalize();
    return 0;
}
