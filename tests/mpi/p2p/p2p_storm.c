/* p2p_storm.c: a seeded random message storm. Every rank knows the whole plan
 * (who sends what to whom, derived from the seed) and receives its share with a
 * random mix of Iprobe/Probe/Mprobe/Improbe, wildcard and specific Irecv, and
 * Irecv+MPI_Cancel. Each received message must be the next one of its (sender, tag)
 * stream, byte for byte; a cancelled receive must not have consumed one. The sums of
 * all payloads sent and received are compared at the end.
 *   p2p_storm [--seed=N]     (or P2P_SEED=N; the seed is printed)   */
#include "../p2p_common.h"

#define DEFAULT_SEED 20240601ull
#define ROUNDS 12
#define PER_ROUND 48 /* messages each rank sends per round */
#define NTAGS 8
#define NEVER_TAG 999 /* never sent: a receive for it must cancel */
#define MAX_MSG (256u << 10)
#define PRE_ARENA (8u << 20)

typedef struct {
    int dest, tag, round;
    size_t size;
} plan_t;

/* The receiver's view of one (sender, tag) stream: message indices in send order. */
typedef struct {
    int *idx, n, next;
} stream_t;

static int rank, nranks;
static uint64_t seed;
static plan_t **plan;                       /* plan[s][i]: message i of sender s */
static stream_t *streams;                   /* streams[s * NTAGS + t] */
static unsigned char *pre_arena, *pre_recv; /* malloc'ed before MPI_Init */
static size_t pre_used;
static unsigned char static_recv[MAX_MSG];
static uint64_t sum_sent, sum_recv, n_recv, n_cancelled, n_uncancelled, n_ops[8];
static const char *op_name[8] = {"Iprobe+Recv",  "Probe+Recv",    "Irecv(any,any)",
                                 "Irecv(s,t)",   "Irecv(any,t)",  "Irecv+Cancel",
                                 "Mprobe+Mrecv", "Improbe+Imrecv"};

static void make_plan(void)
{
    plan = malloc(sizeof *plan * nranks);
    CHECK(plan, "out of memory");
    for (int s = 0; s < nranks; s++) {
        p2p_rng_t r;
        p2p_rng_init(&r, seed, (uint64_t)s);
        plan[s] = malloc(sizeof(plan_t) * ROUNDS * PER_ROUND);
        CHECK(plan[s], "out of memory");
        for (int i = 0; i < ROUNDS * PER_ROUND; i++) {
            plan_t *m = &plan[s][i];
            m->round = i / PER_ROUND;
            m->dest = (int)p2p_rng_below(&r, nranks);
            m->tag = (int)p2p_rng_below(&r, NTAGS);
            int e = (int)p2p_rng_below(&r, 19); /* log-distributed: 0, [1,2), ..., [128K,256K) */
            m->size =
                e == 0 ? 0 : ((size_t)1 << (e - 1)) + p2p_rng_below(&r, (uint64_t)1 << (e - 1));
        }
    }
    streams = calloc((size_t)nranks * NTAGS, sizeof *streams);
    CHECK(streams, "out of memory");
    for (int s = 0; s < nranks; s++)
        for (int i = 0; i < ROUNDS * PER_ROUND; i++)
            if (plan[s][i].dest == rank) {
                stream_t *st = &streams[s * NTAGS + plan[s][i].tag];
                st->idx = realloc(st->idx, sizeof(int) * (st->n + 1));
                CHECK(st->idx, "out of memory");
                st->idx[st->n++] = i;
            }
}

/* Messages to this rank sent in rounds <= round. */
static uint64_t due(int round)
{
    uint64_t n = 0;
    for (int s = 0; s < nranks; s++)
        for (int i = 0; i < (round + 1) * PER_ROUND; i++)
            n += plan[s][i].dest == rank;
    return n;
}

/* The next message of stream (s, t) if it was sent in a round <= round, else -1. */
static int pending(int s, int t, int round)
{
    stream_t *st = &streams[s * NTAGS + t];
    if (st->next >= st->n)
        return -1;
    int i = st->idx[st->next];
    return plan[s][i].round <= round ? i : -1;
}

static uint64_t key_of(int s, int i) { return p2p_key(s, plan[s][i].tag, (uint64_t)i, seed); }

/* A message arrived from s with tag t: it must be the next of that stream. */
static void accept(const char *how, const MPI_Status *st, const unsigned char *buf)
{
    int s = st->MPI_SOURCE, t = st->MPI_TAG, count = p2p_count(st, MPI_BYTE);
    CHECK(s >= 0 && s < nranks && t >= 0 && t < NTAGS, "seed %llu, %s: status has source %d tag %d",
          (unsigned long long)seed, how, s, t);
    stream_t *sm = &streams[s * NTAGS + t];
    CHECK(sm->next < sm->n, "seed %llu, %s: one message too many from %d with tag %d (%d B)",
          (unsigned long long)seed, how, s, t, count);
    int i = sm->idx[sm->next++];
    CHECK(count == (int)plan[s][i].size,
          "seed %llu, %s: from %d tag %d expected message %d of %zu B, got %d B",
          (unsigned long long)seed, how, s, t, i, plan[s][i].size, count);
    P2P_CHECK_DATA(buf, (size_t)count, key_of(s, i), "seed %llu, %s: from %d tag %d message %d",
                   (unsigned long long)seed, how, s, t, i);
    sum_recv += p2p_sum(buf, (size_t)count);
    n_recv++;
}

/* A receive buffer of MAX_MSG: heap, pre-init or static, at random. */
static unsigned char *any_buffer(p2p_rng_t *r, unsigned char **to_free)
{
    *to_free = NULL;
    switch (p2p_rng_below(r, 3)) {
    case 0:
        *to_free = malloc(MAX_MSG);
        CHECK(*to_free, "out of memory");
        return *to_free;
    case 1: return pre_recv;
    default: return static_recv;
    }
}

/* A receive of exactly the probed size, on the heap (malloc(0) may be NULL). */
static unsigned char *exact_buffer(const MPI_Status *st)
{
    unsigned char *b = malloc((size_t)p2p_count(st, MPI_BYTE) + 1);
    CHECK(b, "out of memory");
    return b;
}

/* One random receive operation; may receive nothing (Iprobe miss, cancel). */
static void receive_one(p2p_rng_t *r, int round)
{
    /* a stream with a message due, to aim specific receives at */
    int s = -1, t = -1;
    for (int tries = 0; tries < 4 * nranks * NTAGS && s < 0; tries++) {
        int cs = (int)p2p_rng_below(r, nranks), ct = (int)p2p_rng_below(r, NTAGS);
        if (pending(cs, ct, round) >= 0)
            s = cs, t = ct;
    }
    for (int x = 0; x < nranks * NTAGS && s < 0; x++)
        if (pending(x / NTAGS, x % NTAGS, round) >= 0)
            s = x / NTAGS, t = x % NTAGS;
    int op = (int)p2p_rng_below(r, 8);
    if (s < 0 && (op == 1 || op == 3 || op == 4 || op == 7))
        op = 2; /* nothing aimable is due (only later rounds' messages are left) */
    n_ops[op]++;
    MPI_Status st, st2;
    MPI_Request rq;
    MPI_Message msg;
    unsigned char *buf, *to_free;
    int flag;
    switch (op) {
    case 0: /* Iprobe anything, receive exactly what was probed */
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag)
            return;
        buf = exact_buffer(&st);
        MPI_Recv(buf, p2p_count(&st, MPI_BYTE), MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                 &st2);
        CHECK(st2.MPI_SOURCE == st.MPI_SOURCE && st2.MPI_TAG == st.MPI_TAG &&
                  p2p_count(&st2, MPI_BYTE) == p2p_count(&st, MPI_BYTE),
              "seed %llu: Iprobe saw %d/%d/%d B, Recv got %d/%d/%d B", (unsigned long long)seed,
              st.MPI_SOURCE, st.MPI_TAG, p2p_count(&st, MPI_BYTE), st2.MPI_SOURCE, st2.MPI_TAG,
              p2p_count(&st2, MPI_BYTE));
        accept(op_name[op], &st2, buf);
        free(buf);
        return;
    case 1: /* Probe a source with something due, any tag */
        MPI_Probe(s, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK(st.MPI_SOURCE == s, "seed %llu: Probe(%d) says source %d", (unsigned long long)seed,
              s, st.MPI_SOURCE);
        buf = exact_buffer(&st);
        MPI_Recv(buf, p2p_count(&st, MPI_BYTE), MPI_BYTE, s, st.MPI_TAG, MPI_COMM_WORLD, &st2);
        CHECK(st2.MPI_TAG == st.MPI_TAG && p2p_count(&st2, MPI_BYTE) == p2p_count(&st, MPI_BYTE),
              "seed %llu: Probe saw tag %d %d B, Recv got tag %d %d B", (unsigned long long)seed,
              st.MPI_TAG, p2p_count(&st, MPI_BYTE), st2.MPI_TAG, p2p_count(&st2, MPI_BYTE));
        accept(op_name[op], &st2, buf);
        free(buf);
        return;
    case 2:
    case 3:
    case 4: /* Irecv (any, any), (s, t) or (any, t) into a buffer of the largest size */
        buf = any_buffer(r, &to_free);
        MPI_Irecv(buf, MAX_MSG, MPI_BYTE, op == 3 ? s : MPI_ANY_SOURCE, op == 2 ? MPI_ANY_TAG : t,
                  MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, &st);
        CHECK(op == 2 || st.MPI_TAG == t, "seed %llu: %s for tag %d got tag %d",
              (unsigned long long)seed, op_name[op], t, st.MPI_TAG);
        CHECK(op != 3 || st.MPI_SOURCE == s, "seed %llu: %s for source %d got source %d",
              (unsigned long long)seed, op_name[op], s, st.MPI_SOURCE);
        accept(op_name[op], &st, buf);
        free(to_free);
        return;
    case 5: { /* Irecv then cancel: (any, any), a due stream, or a tag never sent */
        int kind = (int)p2p_rng_below(r, 3);
        int src = kind == 0 || s < 0 ? MPI_ANY_SOURCE : s;
        int tag = kind == 0 ? MPI_ANY_TAG : kind == 1 && s >= 0 ? t : NEVER_TAG;
        buf = any_buffer(r, &to_free);
        MPI_Irecv(buf, MAX_MSG, MPI_BYTE, src, tag, MPI_COMM_WORLD, &rq);
        int spins = (int)p2p_rng_below(r, 4);
        for (int i = 0, done = 0; i < spins && !done; i++) {
            MPI_Test(&rq, &done, &st);
            if (done) {
                accept("Irecv+Test before Cancel", &st, buf);
                free(to_free);
                return;
            }
        }
        MPI_Cancel(&rq);
        MPI_Wait(&rq, &st);
        CHECK(rq == MPI_REQUEST_NULL, "seed %llu: Wait after Cancel left the request",
              (unsigned long long)seed);
        MPI_Test_cancelled(&st, &flag);
        if (flag) {
            n_cancelled++;
        } else {
            CHECK(tag != NEVER_TAG,
                  "seed %llu: a receive for a tag nobody sends was not "
                  "cancelled (status source %d tag %d)",
                  (unsigned long long)seed, st.MPI_SOURCE, st.MPI_TAG);
            accept("Irecv matched before Cancel", &st, buf);
            n_uncancelled++;
        }
        free(to_free);
        return;
    }
    case 6: /* Mprobe anything, Mrecv it */
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
        buf = exact_buffer(&st);
        MPI_Mrecv(buf, p2p_count(&st, MPI_BYTE), MPI_BYTE, &msg, &st2);
        CHECK(msg == MPI_MESSAGE_NULL, "seed %llu: Mrecv left the message handle",
              (unsigned long long)seed);
        CHECK(st2.MPI_SOURCE == st.MPI_SOURCE && st2.MPI_TAG == st.MPI_TAG &&
                  p2p_count(&st2, MPI_BYTE) == p2p_count(&st, MPI_BYTE),
              "seed %llu: Mprobe saw %d/%d/%d B, Mrecv got %d/%d/%d B", (unsigned long long)seed,
              st.MPI_SOURCE, st.MPI_TAG, p2p_count(&st, MPI_BYTE), st2.MPI_SOURCE, st2.MPI_TAG,
              p2p_count(&st2, MPI_BYTE));
        accept(op_name[op], &st2, buf);
        free(buf);
        return;
    default: /* Improbe a due source with any tag, Imrecv it */
        MPI_Improbe(s, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
        if (!flag)
            return;
        buf = exact_buffer(&st);
        MPI_Imrecv(buf, p2p_count(&st, MPI_BYTE), MPI_BYTE, &msg, &rq);
        MPI_Wait(&rq, &st2);
        CHECK(st2.MPI_SOURCE == s && st2.MPI_TAG == st.MPI_TAG &&
                  p2p_count(&st2, MPI_BYTE) == p2p_count(&st, MPI_BYTE),
              "seed %llu: Improbe saw %d/%d/%d B, Imrecv got %d/%d/%d B", (unsigned long long)seed,
              st.MPI_SOURCE, st.MPI_TAG, p2p_count(&st, MPI_BYTE), st2.MPI_SOURCE, st2.MPI_TAG,
              p2p_count(&st2, MPI_BYTE));
        accept(op_name[op], &st2, buf);
        free(buf);
        return;
    }
}

/* Outstanding sends and their heap buffers (NULL for pre-init ones). */
static MPI_Request *sreq;
static unsigned char **sbuf;
static int nsend;

static void reap_sends(int all)
{
    int *idx = malloc(sizeof(int) * (nsend + 1)), outcount = 0;
    CHECK(idx, "out of memory");
    if (all) {
        MPI_Waitall(nsend, sreq, MPI_STATUSES_IGNORE);
        outcount = nsend;
        for (int i = 0; i < nsend; i++)
            idx[i] = i;
    } else {
        MPI_Testsome(nsend, sreq, &outcount, idx, MPI_STATUSES_IGNORE);
        if (outcount == MPI_UNDEFINED)
            outcount = 0;
    }
    for (int i = 0; i < outcount; i++) {
        CHECK(sreq[idx[i]] == MPI_REQUEST_NULL, "a completed send request was not freed");
        free(sbuf[idx[i]]);
        sbuf[idx[i]] = NULL;
    }
    free(idx);
}

static void send_round(int round, p2p_rng_t *r)
{
    for (int i = round * PER_ROUND; i < (round + 1) * PER_ROUND; i++) {
        plan_t *m = &plan[rank][i];
        unsigned char *b = NULL;
        if (p2p_rng_below(r, 10) < 3 && pre_used + m->size <= PRE_ARENA) {
            b = pre_arena + pre_used; /* not on the shared heap */
            pre_used += m->size;
        } else {
            b = malloc(m->size + 1);
            CHECK(b, "out of memory");
            sbuf[i] = b;
        }
        p2p_fill(b, m->size, key_of(rank, i));
        sum_sent += p2p_sum(b, m->size);
        MPI_Isend(b, (int)m->size, MPI_BYTE, m->dest, m->tag, MPI_COMM_WORLD, &sreq[i]);
        nsend = i + 1;
    }
}

int main(int argc, char **argv)
{
    pre_arena = malloc(PRE_ARENA);
    pre_recv = malloc(MAX_MSG);
    CHECK(pre_arena && pre_recv, "malloc before MPI_Init failed");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double t0 = MPI_Wtime();
    seed = p2p_seed(argc, argv, DEFAULT_SEED);
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_storm: seed %llu (rerun with P2P_SEED=%llu), %d ranks x %d messages\n",
               (unsigned long long)seed, (unsigned long long)seed, nranks, ROUNDS * PER_ROUND);
    make_plan();
    sreq = malloc(sizeof *sreq * ROUNDS * PER_ROUND);
    sbuf = calloc(ROUNDS * PER_ROUND, sizeof *sbuf);
    CHECK(sreq && sbuf, "out of memory");

    p2p_rng_t r;
    p2p_rng_init(&r, seed, 1000 + (uint64_t)rank);
    for (int round = 0; round < ROUNDS; round++) {
        send_round(round, &r);
        /* every message of rounds <= round will be sent before its sender blocks, so
         * blocking receives aimed at them cannot deadlock */
        for (uint64_t goal = due(round); n_recv < goal;) {
            receive_one(&r, round);
            if (p2p_rng_below(&r, 4) == 0)
                reap_sends(0);
        }
    }
    reap_sends(1);
    int flag;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CHECK(!flag, "seed %llu: a message left over from %d tag %d", (unsigned long long)seed,
          st.MPI_SOURCE, st.MPI_TAG);

    uint64_t mine[4] = {sum_sent, sum_recv, (uint64_t)ROUNDS * PER_ROUND, n_recv}, all[4];
    MPI_Allreduce(mine, all, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all[0] == all[1] && all[2] == all[3],
          "seed %llu: sent %llu messages (checksum %016llx), received %llu (checksum %016llx)",
          (unsigned long long)seed, (unsigned long long)all[2], (unsigned long long)all[0],
          (unsigned long long)all[3], (unsigned long long)all[1]);
    uint64_t ops[10], allops[10];
    memcpy(ops, n_ops, sizeof n_ops);
    ops[8] = n_cancelled;
    ops[9] = n_uncancelled;
    MPI_Reduce(ops, allops, 10, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("p2p_storm: OK, %llu messages, checksum %016llx, in %.2f s; ops:",
               (unsigned long long)all[2], (unsigned long long)all[0], MPI_Wtime() - t0);
        for (int i = 0; i < 8; i++)
            printf(" %s %llu,", op_name[i], (unsigned long long)allops[i]);
        printf(" cancelled %llu, matched before cancel %llu\n", (unsigned long long)allops[8],
               (unsigned long long)allops[9]);
    }
    for (int s = 0; s < nranks; s++) {
        free(plan[s]);
        for (int t = 0; t < NTAGS; t++)
            free(streams[s * NTAGS + t].idx);
    }
    free(plan);
    free(streams);
    free(sreq);
    free(sbuf);
    MPI_Finalize();
    free(pre_arena);
    free(pre_recv);
    return 0;
}
