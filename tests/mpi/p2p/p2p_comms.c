/* p2p_comms.c: matching is per communicator. The same (source, tag) numbers are used
 * at once on MPI_COMM_WORLD, MPI_COMM_SELF and communicators from Comm_dup,
 * Comm_dup_with_info, Comm_idup, Comm_split (reversed keys: ranks reordered),
 * Comm_split_type(SHARED), Comm_create (a reversed group), Comm_create_group,
 * Cart_create and Intercomm_merge; every message must arrive on its own communicator
 * with the sender's rank in that communicator. Communicators are created and freed
 * in a loop (a recycled handle must not see old traffic), and an intercommunicator
 * carries a ping-pong with remote-group ranks. */
#include "../p2p_common.h"

#define SEED 0xC0335ull
#define TAG 5
#define MAXC 16

typedef struct {
    const char *name;
    MPI_Comm c;
    int gid; /* the same on every rank (indices differ) */
    int size, me, left, right;
    size_t bytes;
} ent_t;

static int rank, nranks;
static ent_t comms[MAXC];
static int ncomms;

/* What every message carries in front of its pattern. */
typedef struct {
    int comm_id, world_from, from, seq;
} head_t;

static const char *gid_name[MAXC];

static void add(const char *name, MPI_Comm c, int gid)
{
    gid_name[gid] = name;
    if (c == MPI_COMM_NULL)
        return;
    ent_t *e = &comms[ncomms];
    e->name = name;
    e->c = c;
    e->gid = gid;
    MPI_Comm_size(c, &e->size);
    MPI_Comm_rank(c, &e->me);
    e->left = (e->me - 1 + e->size) % e->size;
    e->right = (e->me + 1) % e->size;
    e->bytes = sizeof(head_t) + (size_t)gid * 3000; /* 16 B to ~30 KiB */
    ncomms++;
}

static unsigned char *message(int id, int seq)
{
    ent_t *e = &comms[id];
    unsigned char *b = malloc(e->bytes);
    CHECK(b, "out of memory");
    head_t h = {e->gid, rank, e->me, seq};
    memcpy(b, &h, sizeof h);
    p2p_fill(b + sizeof h, e->bytes - sizeof h,
             p2p_key(e->me, TAG, (uint64_t)(e->gid * 10 + seq), SEED));
    return b;
}

/* The world rank of rank r of communicator c. */
static int world_of(MPI_Comm c, int r)
{
    MPI_Group g, w;
    int out = -1;
    MPI_Comm_group(c, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, 1, &r, w, &out);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    return out;
}

static void check_message(int id, const unsigned char *b, const MPI_Status *st, int seq,
                          const char *how)
{
    ent_t *e = &comms[id];
    head_t h;
    memcpy(&h, b, sizeof h);
    CHECK(h.comm_id == e->gid, "%s on %s: got the message sent on %s (from world rank %d)", how,
          e->name,
          h.comm_id >= 0 && h.comm_id < MAXC && gid_name[h.comm_id] ? gid_name[h.comm_id] : "?",
          h.world_from);
    CHECK(st->MPI_SOURCE == e->left && h.from == e->left,
          "%s on %s: status source %d, sender's rank in the communicator %d, expected %d", how,
          e->name, st->MPI_SOURCE, h.from, e->left);
    CHECK(h.world_from == world_of(e->c, e->left),
          "%s on %s: from world rank %d, but rank %d of the communicator is world rank %d", how,
          e->name, h.world_from, e->left, world_of(e->c, e->left));
    CHECK(p2p_count(st, MPI_BYTE) == (int)e->bytes && st->MPI_TAG == TAG,
          "%s on %s: %d B tag %d, expected %zu B tag %d", how, e->name, p2p_count(st, MPI_BYTE),
          st->MPI_TAG, e->bytes, TAG);
    CHECK(h.seq == seq, "%s on %s: message %d arrived, expected %d", how, e->name, h.seq, seq);
    P2P_CHECK_DATA(b + sizeof h, e->bytes - sizeof h,
                   p2p_key(e->left, TAG, (uint64_t)(e->gid * 10 + seq), SEED), "%s on %s", how,
                   e->name);
}

/* Receives posted on every communicator before anything is sent. */
static void expected_traffic(void)
{
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 4 * ncomms);
    unsigned char **rb = malloc(sizeof(void *) * 2 * ncomms),
                  **sb = malloc(sizeof(void *) * 2 * ncomms);
    MPI_Status *st = malloc(sizeof(MPI_Status) * 4 * ncomms);
    for (int i = 0; i < ncomms; i++) {
        for (int s = 0; s < 2; s++) {
            rb[2 * i + s] = malloc(comms[i].bytes);
            /* the first by source, the second from anyone */
            MPI_Irecv(rb[2 * i + s], (int)comms[i].bytes, MPI_BYTE,
                      s ? MPI_ANY_SOURCE : comms[i].left, TAG, comms[i].c, &rq[2 * i + s]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = ncomms - 1; i >= 0; i--)
        for (int s = 0; s < 2; s++) {
            sb[2 * i + s] = message(i, s);
            MPI_Isend(sb[2 * i + s], (int)comms[i].bytes, MPI_BYTE, comms[i].right, TAG, comms[i].c,
                      &rq[2 * ncomms + 2 * i + s]);
        }
    MPI_Waitall(4 * ncomms, rq, st);
    for (int i = 0; i < ncomms; i++)
        for (int s = 0; s < 2; s++) {
            check_message(i, rb[2 * i + s], &st[2 * i + s], s,
                          s ? "pre-posted Irecv(ANY_SOURCE)" : "pre-posted Irecv(left)");
            free(rb[2 * i + s]);
            free(sb[2 * i + s]);
        }
    free(rq);
    free(rb);
    free(sb);
    free(st);
}

/* Everything sent before anything is received; received in the reverse order. */
static void unexpected_traffic(void)
{
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * ncomms);
    unsigned char **sb = malloc(sizeof(void *) * 2 * ncomms);
    for (int i = 0; i < ncomms; i++)
        for (int s = 0; s < 2; s++) {
            sb[2 * i + s] = message(i, s);
            MPI_Isend(sb[2 * i + s], (int)comms[i].bytes, MPI_BYTE, comms[i].right, TAG, comms[i].c,
                      &rq[2 * i + s]);
        }
    p2p_barrier_polite(MPI_COMM_WORLD);
    for (int i = ncomms - 1; i >= 0; i--)
        for (int s = 0; s < 2; s++) {
            unsigned char *b = malloc(comms[i].bytes);
            MPI_Status st;
            if (s == 0)
                MPI_Recv(b, (int)comms[i].bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comms[i].c,
                         &st);
            else {
                MPI_Probe(comms[i].left, TAG, comms[i].c, &st);
                CHECK(p2p_count(&st, MPI_BYTE) == (int)comms[i].bytes, "Probe on %s: %d B",
                      comms[i].name, p2p_count(&st, MPI_BYTE));
                MPI_Recv(b, (int)comms[i].bytes, MPI_BYTE, comms[i].left, TAG, comms[i].c, &st);
            }
            check_message(i, b, &st, s, s ? "Probe+Recv(left)" : "Recv(ANY_SOURCE, ANY_TAG)");
            free(b);
        }
    MPI_Waitall(2 * ncomms, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 2 * ncomms; i++)
        free(sb[i]);
    free(sb);
    free(rq);
    p2p_barrier_polite(MPI_COMM_WORLD);
    for (int i = 0; i < ncomms; i++) {
        int flag;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms[i].c, &flag, &st);
        CHECK(!flag, "a message left on %s from %d tag %d", comms[i].name, st.MPI_SOURCE,
              st.MPI_TAG);
    }
}

/* Dup, one message, free, many times: a new communicator (maybe with a recycled
 * handle or context) sees only its own messages. */
static void churn(void)
{
    int right = (rank + 1) % nranks, left = (rank - 1 + nranks) % nranks;
    for (int it = 0; it < 8; it++) {
        MPI_Comm c;
        if (it % 2)
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        else
            MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c);
        int flag, v = -1;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &st);
        CHECK(!flag, "iteration %d: a new communicator already holds a message from %d tag %d", it,
              st.MPI_SOURCE, st.MPI_TAG);
        p2p_barrier_polite(c); /* nobody sends on c before everyone has looked */
        int out = it * 1000 + rank;
        MPI_Sendrecv(&out, 1, MPI_INT, right, TAG, &v, 1, MPI_INT, left, TAG, c, &st);
        CHECK(v == it * 1000 + left, "iteration %d: got %d", it, v);
        MPI_Comm_free(&c);
        CHECK(c == MPI_COMM_NULL, "Comm_free did not set MPI_COMM_NULL");
    }
}

/* Two halves joined by an intercommunicator: ping-pong with the same-numbered rank
 * of the other group, then the merged intracommunicator. */
static void intercomm(void)
{
    int h = nranks / 2, low = rank < h, color = low ? 0 : 1;
    if (nranks < 2)
        return;
    MPI_Comm half, inter, merged;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? h : 0, 77, &inter);
    int lsize, rsize, me, flag;
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &me);
    MPI_Comm_test_inter(inter, &flag);
    CHECK(flag, "Intercomm_create did not make an intercommunicator");
    static const size_t sizes[3] = {4, 5000, 100000};
    unsigned char *b = malloc(sizes[2]);
    for (int k = 0; k < 3; k++) {
        int peer = me < rsize ? me : -1; /* the other group may be smaller (odd n) */
        if (peer < 0)
            continue;
        MPI_Status st;
        for (int it = 0; it < 4; it++) {
            int tag = 100 + k;
            if (low) {
                p2p_fill(b, sizes[k], p2p_key(rank, tag, (uint64_t)it, SEED));
                MPI_Send(b, (int)sizes[k], MPI_BYTE, peer, tag, inter);
                MPI_Recv(b, (int)sizes[k], MPI_BYTE, it % 2 ? MPI_ANY_SOURCE : peer, tag, inter,
                         &st);
                P2P_CHECK_DATA(b, sizes[k], p2p_key(h + me, tag, (uint64_t)it, SEED),
                               "intercomm pong %d of %zu B", it, sizes[k]);
            } else {
                MPI_Recv(b, (int)sizes[k], MPI_BYTE, it % 2 ? MPI_ANY_SOURCE : peer, tag, inter,
                         &st);
                P2P_CHECK_DATA(b, sizes[k], p2p_key(me, tag, (uint64_t)it, SEED),
                               "intercomm ping %d of %zu B", it, sizes[k]);
                p2p_fill(b, sizes[k], p2p_key(rank, tag, (uint64_t)it, SEED));
                MPI_Send(b, (int)sizes[k], MPI_BYTE, peer, tag, inter);
            }
            CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag,
                  "intercomm: status source %d tag %d, expected remote rank %d tag %d",
                  st.MPI_SOURCE, st.MPI_TAG, peer, tag);
        }
    }
    free(b);
    /* merged: the high group first, so ranks move */
    MPI_Intercomm_merge(inter, low, &merged);
    int mr, ms, v = -1;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    CHECK(ms == nranks && mr == (low ? rank + (nranks - h) : rank - h),
          "Intercomm_merge: rank %d of %d (world rank %d)", mr, ms, rank);
    MPI_Status st;
    MPI_Sendrecv(&rank, 1, MPI_INT, (mr + 1) % ms, TAG, &v, 1, MPI_INT, (mr - 1 + ms) % ms, TAG,
                 merged, &st);
    CHECK(v == world_of(merged, (mr - 1 + ms) % ms) && st.MPI_SOURCE == (mr - 1 + ms) % ms,
          "merged: got world rank %d from %d", v, st.MPI_SOURCE);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double t0 = MPI_Wtime();

    MPI_Comm dup, dupi, idup, split, shared, created, cgroup = MPI_COMM_NULL, cart;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "false");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dupi);
    MPI_Info_free(&info);
    MPI_Request rq;
    MPI_Comm_idup(MPI_COMM_WORLD, &idup, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split); /* reversed ranks */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    /* every rank, in reverse order */
    MPI_Group world, rev, upper;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int *ranks = malloc(sizeof(int) * nranks);
    for (int i = 0; i < nranks; i++)
        ranks[i] = nranks - 1 - i;
    MPI_Group_incl(world, nranks, ranks, &rev);
    MPI_Comm_create(MPI_COMM_WORLD, rev, &created);
    /* the upper half (at least one rank), by its members only */
    int h = nranks / 2, nup = nranks - h;
    for (int i = 0; i < nup; i++)
        ranks[i] = h + i;
    MPI_Group_incl(world, nup, ranks, &upper);
    if (rank >= h)
        MPI_Comm_create_group(MPI_COMM_WORLD, upper, 33, &cgroup);
    int dims[1] = {nranks}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    free(ranks);

    add("MPI_COMM_WORLD", MPI_COMM_WORLD, 0);
    add("MPI_COMM_SELF", MPI_COMM_SELF, 1);
    add("Comm_dup", dup, 2);
    add("Comm_dup_with_info", dupi, 3);
    add("Comm_idup", idup, 4);
    add("Comm_split (reversed keys)", split, 5);
    add("Comm_split_type(SHARED)", shared, 6);
    add("Comm_create (reversed group)", created, 7);
    add("Comm_create_group (upper half)", cgroup, 8);
    add("Cart_create", cart, 9);
    {
        int sr;
        MPI_Comm_rank(split, &sr);
        int want = 0;
        for (int r = rank + 2; r < nranks; r += 2)
            want++;
        CHECK(sr == want, "Comm_split with reversed keys: rank %d, expected %d", sr, want);
        MPI_Comm_rank(created, &sr);
        CHECK(sr == nranks - 1 - rank, "Comm_create (reversed): rank %d", sr);
    }

    double tc = MPI_Wtime();
    int verbose = getenv("P2P_VERBOSE") != NULL;
#define STEP(f)                                             \
    do {                                                    \
        f();                                                \
        if (verbose && rank == 0)                           \
            printf("  %s: %.3f s\n", #f, MPI_Wtime() - tc); \
        tc = MPI_Wtime();                                   \
    } while (0)
    if (verbose && rank == 0)
        printf("  creating: %.3f s\n", tc - t0);
    STEP(expected_traffic);
    STEP(unexpected_traffic);
    STEP(churn);
    STEP(intercomm);

    /* nothing pending: free them all, then the world still works */
    MPI_Comm *mine[8] = {&dup, &dupi, &idup, &split, &shared, &created, &cgroup, &cart};
    for (int i = 0; i < 8; i++)
        if (*mine[i] != MPI_COMM_NULL)
            MPI_Comm_free(mine[i]);
    MPI_Group_free(&world);
    MPI_Group_free(&rev);
    MPI_Group_free(&upper);
    int v = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % nranks, TAG, &v, 1, MPI_INT,
                 (rank - 1 + nranks) % nranks, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(v == (rank - 1 + nranks) % nranks, "after the frees: got %d", v);
    p2p_barrier_polite(MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_comms: OK, %d communicators on %d ranks in %.2f s\n", ncomms, nranks,
               MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
