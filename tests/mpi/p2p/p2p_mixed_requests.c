/* p2p_mixed_requests.c: one request array holding receives and sends to a local peer
 * (rank^1) and a remote one (rank+n/2, on another simulated node with HMPI_NODE_SIZE=2),
 * two MPI_ANY_SOURCE receives, MPI_Ibarrier, MPI_Iallreduce, MPI_Ibcast, a generalized
 * request, a started persistent receive and MPI_REQUEST_NULL entries, completed by
 * Waitall, Waitany, Waitsome, Testall, Testany and Testsome. Every index reported must
 * be a live entry, reported once; statuses and data must belong to that entry. */
#include "../p2p_common.h"

#define SEED 0x313EDull

enum kind {
    R_LOCAL,
    R_REMOTE,
    R_ANY1,
    R_ANY2,
    S_LOCAL,
    S_REMOTE,
    S_ANY_L,
    S_ANY_R,
    C_BARRIER,
    C_ALLREDUCE,
    C_BCAST,
    G_REQ,
    P_RECV,
    NUL1,
    NUL2,
    NKINDS
};
static const char *kind_name[NKINDS] = {"Irecv(local)",
                                        "Irecv(remote)",
                                        "Irecv(ANY_SOURCE) #1",
                                        "Irecv(ANY_SOURCE) #2",
                                        "Isend(local)",
                                        "Isend(remote)",
                                        "Isend(local, any-tag)",
                                        "Isend(remote, any-tag)",
                                        "Ibarrier",
                                        "Iallreduce",
                                        "Ibcast",
                                        "generalized request",
                                        "persistent Irecv",
                                        "MPI_REQUEST_NULL",
                                        "MPI_REQUEST_NULL"};
static const char *method_name[7] = {
    "Waitall", "Waitall(STATUSES_IGNORE)", "Waitany", "Waitsome", "Testall", "Testany", "Testsome"};

static int rank, nranks, local, remote, greq_freed;

static int greq_query(void *extra, MPI_Status *st)
{
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int greq_free(void *extra)
{
    greq_freed++;
    return MPI_SUCCESS;
}
static int greq_cancel(void *extra, int complete) { return MPI_SUCCESS; }

typedef struct {
    MPI_Request rq[NKINDS];
    int pos[NKINDS];      /* kind -> array index */
    enum kind at[NKINDS]; /* array index -> kind */
    unsigned char *buf[NKINDS];
    size_t size;
    int round, done[NKINDS];
    long sum, bc[4];
} round_t;

static int tag_of(round_t *r, enum kind k)
{
    int base = 1000 * (r->round + 1);
    switch (k) {
    case R_LOCAL:
    case S_LOCAL: return base + 1;
    case R_REMOTE:
    case S_REMOTE: return base + 2;
    default: return base + 3; /* the ANY_SOURCE pair */
    }
}

/* Checks what entry i (of kind k) delivered; st is its status or NULL. */
static void check_entry(round_t *r, enum kind k, const MPI_Status *st, int method)
{
    int tag = tag_of(r, k);
    const char *m = method_name[method];
    CHECK(!r->done[k], "%s, round %d: %s reported complete twice", m, r->round, kind_name[k]);
    r->done[k] = 1;
    int src = -1;
    uint64_t idx = 0;
    switch (k) {
    case R_LOCAL: src = local; break;
    case R_REMOTE: src = remote; break;
    case P_RECV:
        src = local;
        idx = 7;
        break;
    case R_ANY1:
    case R_ANY2:
        if (!st) { /* no status: the data must be one of the two messages */
            uint64_t base = 10 * (uint64_t)r->round;
            CHECK(p2p_diff(r->buf[k], r->size, p2p_key(local, tag, base, SEED)) < 0 ||
                      p2p_diff(r->buf[k], r->size, p2p_key(remote, tag, base + 1, SEED)) < 0,
                  "%s, round %d: %s holds neither message", m, r->round, kind_name[k]);
            return;
        }
        src = st->MPI_SOURCE;
        CHECK(src == local || src == remote, "%s: %s matched source %d", m, kind_name[k], src);
        /* the local peer's message has index 0, the remote's 1; with 2 ranks they are one
         * rank, and the first posted receive matches the first sent */
        idx = local == remote ? (k == R_ANY1 ? 0 : 1) : (src == local ? 0 : 1);
        break;
    case C_ALLREDUCE: {
        long want = (long)nranks * (nranks - 1) / 2 + (long)nranks * r->round;
        CHECK(r->sum == want, "%s: Iallreduce gave %ld, expected %ld", m, r->sum, want);
        return;
    }
    case C_BCAST:
        for (int i = 0; i < 4; i++)
            CHECK(r->bc[i] == 31L * r->round + i, "%s: Ibcast element %d is %ld", m, i, r->bc[i]);
        return;
    case G_REQ:
        if (st)
            CHECK(st->MPI_SOURCE == MPI_UNDEFINED && st->MPI_TAG == MPI_UNDEFINED,
                  "%s: the generalized request's status is %d/%d, not what its query_fn set", m,
                  st->MPI_SOURCE, st->MPI_TAG);
        return;
    default: return;
    }
    if (k == P_RECV)
        tag = 999;
    if (st)
        CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag &&
                  p2p_count(st, MPI_BYTE) == (int)r->size,
              "%s, round %d: %s status %d/%d/%d, expected %d/%d/%zu", m, r->round, kind_name[k],
              st->MPI_SOURCE, st->MPI_TAG, p2p_count(st, MPI_BYTE), src, tag, r->size);
    P2P_CHECK_DATA(r->buf[k], r->size, p2p_key(src, tag, idx + 10 * (uint64_t)r->round, SEED),
                   "%s, round %d: %s (%zu B from %d)", m, r->round, kind_name[k], r->size, src);
}

static void run_round(int round, int method, size_t size, MPI_Request *persist, unsigned char *pbuf)
{
    round_t r = {0};
    r.round = round;
    r.size = size;
    /* the same permutation of positions on every rank */
    p2p_rng_t g;
    p2p_rng_init(&g, SEED, (uint64_t)round);
    for (int i = 0; i < NKINDS; i++)
        r.at[i] = (enum kind)i;
    for (int i = NKINDS - 1; i > 0; i--) {
        int j = (int)p2p_rng_below(&g, (uint64_t)i + 1);
        enum kind t = r.at[i];
        r.at[i] = r.at[j];
        r.at[j] = t;
    }
    for (int i = 0; i < NKINDS; i++)
        r.pos[r.at[i]] = i;
    for (int k = 0; k < NKINDS; k++) {
        r.buf[k] = malloc(size + 1);
        CHECK(r.buf[k], "out of memory");
    }
    MPI_Request *rq = r.rq;
    /* receives first, then the collectives (same order on every rank), then sends */
    MPI_Irecv(r.buf[R_LOCAL], (int)size, MPI_BYTE, local, tag_of(&r, R_LOCAL), MPI_COMM_WORLD,
              &rq[r.pos[R_LOCAL]]);
    MPI_Irecv(r.buf[R_REMOTE], (int)size, MPI_BYTE, remote, tag_of(&r, R_REMOTE), MPI_COMM_WORLD,
              &rq[r.pos[R_REMOTE]]);
    MPI_Irecv(r.buf[R_ANY1], (int)size, MPI_BYTE, MPI_ANY_SOURCE, tag_of(&r, R_ANY1),
              MPI_COMM_WORLD, &rq[r.pos[R_ANY1]]);
    MPI_Irecv(r.buf[R_ANY2], (int)size, MPI_BYTE, MPI_ANY_SOURCE, tag_of(&r, R_ANY2),
              MPI_COMM_WORLD, &rq[r.pos[R_ANY2]]);
    r.buf[P_RECV] = pbuf;
    rq[r.pos[P_RECV]] = *persist;
    MPI_Start(&rq[r.pos[P_RECV]]);
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[r.pos[C_BARRIER]]);
    long mine = rank + round;
    MPI_Iallreduce(&mine, &r.sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &rq[r.pos[C_ALLREDUCE]]);
    if (rank == 0)
        for (int i = 0; i < 4; i++)
            r.bc[i] = 31L * round + i;
    MPI_Ibcast(r.bc, 4, MPI_LONG, 0, MPI_COMM_WORLD, &rq[r.pos[C_BCAST]]);
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &rq[r.pos[G_REQ]]);
    rq[r.pos[NUL1]] = MPI_REQUEST_NULL;
    rq[r.pos[NUL2]] = MPI_REQUEST_NULL;
    struct {
        enum kind k;
        int to;
        uint64_t idx;
        int tag;
    } sends[5] = {
        {S_LOCAL, local, 0, tag_of(&r, S_LOCAL)},
        {S_REMOTE, remote, 0, tag_of(&r, S_REMOTE)},
        {S_ANY_L, local, 0, tag_of(&r, S_ANY_L)},
        {S_ANY_R, remote, 1, tag_of(&r, S_ANY_R)},
        {NUL1, local, 7, 999}, /* for the persistent receive; its request is not kept */
    };
    MPI_Request extra;
    for (int i = 0; i < 5; i++) {
        unsigned char *b = r.buf[sends[i].k];
        p2p_fill(b, size, p2p_key(rank, sends[i].tag, sends[i].idx + 10 * (uint64_t)round, SEED));
        if (i < 4)
            MPI_Isend(b, (int)size, MPI_BYTE, sends[i].to, sends[i].tag, MPI_COMM_WORLD,
                      &rq[r.pos[sends[i].k]]);
        else
            MPI_Isend(b, (int)size, MPI_BYTE, sends[i].to, sends[i].tag, MPI_COMM_WORLD, &extra);
    }

    int live = NKINDS - 2, greq_done = 0, spins = 0;
    MPI_Status sts[NKINDS], st;
    int idx[NKINDS], n, flag;
    const char *m = method_name[method];
    /* a blocking method can only see the generalized request complete if it already is */
    if (method <= 3) {
        MPI_Grequest_complete(rq[r.pos[G_REQ]]);
        greq_done = 1;
    }
    while (live > 0) {
        if (!greq_done && ++spins > 3) { /* complete it while Test* is polling */
            MPI_Grequest_complete(rq[r.pos[G_REQ]]);
            greq_done = 1;
        }
        switch (method) {
        case 0:
        case 1:
            MPI_Waitall(NKINDS, rq, method == 0 ? sts : MPI_STATUSES_IGNORE);
            for (int i = 0; i < NKINDS; i++)
                if (r.at[i] != NUL1 && r.at[i] != NUL2)
                    check_entry(&r, r.at[i], method == 0 ? &sts[i] : NULL, method);
            live = 0;
            break;
        case 2:
        case 5:
            if (method == 2)
                MPI_Waitany(NKINDS, rq, &n, &st);
            else {
                MPI_Testany(NKINDS, rq, &n, &flag, &st);
                if (!flag) {
                    CHECK(n == MPI_UNDEFINED, "%s: flag false with index %d", m, n);
                    p2p_nap();
                    break;
                }
            }
            CHECK(n != MPI_UNDEFINED, "%s: MPI_UNDEFINED with %d entries live", m, live);
            CHECK(n >= 0 && n < NKINDS && r.at[n] != NUL1 && r.at[n] != NUL2,
                  "%s: index %d is out of range or an MPI_REQUEST_NULL entry", m, n);
            check_entry(&r, r.at[n], &st, method);
            live--;
            break;
        case 3:
        case 6:
            if (method == 3)
                MPI_Waitsome(NKINDS, rq, &n, idx, sts);
            else
                MPI_Testsome(NKINDS, rq, &n, idx, sts);
            CHECK(n != MPI_UNDEFINED, "%s: MPI_UNDEFINED with %d entries live", m, live);
            if (n == 0)
                p2p_nap();
            for (int i = 0; i < n; i++) {
                CHECK(idx[i] >= 0 && idx[i] < NKINDS && r.at[idx[i]] != NUL1 &&
                          r.at[idx[i]] != NUL2,
                      "%s: index %d is out of range or an MPI_REQUEST_NULL entry", m, idx[i]);
                check_entry(&r, r.at[idx[i]], &sts[i], method);
                live--;
            }
            break;
        default:
            MPI_Testall(NKINDS, rq, &flag, sts);
            if (!flag) {
                p2p_nap();
                break;
            }
            for (int i = 0; i < NKINDS; i++)
                if (r.at[i] != NUL1 && r.at[i] != NUL2)
                    check_entry(&r, r.at[i], &sts[i], method);
            live = 0;
        }
    }
    /* after the last one: the array is all null (the persistent one inactive) */
    for (int i = 0; i < NKINDS; i++)
        CHECK(r.at[i] == P_RECV ? rq[i] != MPI_REQUEST_NULL : rq[i] == MPI_REQUEST_NULL,
              "%s: entry %d (%s) left %s", m, i, kind_name[r.at[i]],
              r.at[i] == P_RECV ? "freed" : "allocated");
    if (method == 2 || method == 3 || method == 5 || method == 6) {
        int n2 = 0;
        if (method == 2)
            MPI_Waitany(NKINDS, rq, &n2, &st);
        else if (method == 5)
            MPI_Testany(NKINDS, rq, &n2, &flag, &st);
        else if (method == 3)
            MPI_Waitsome(NKINDS, rq, &n2, idx, sts);
        else
            MPI_Testsome(NKINDS, rq, &n2, idx, sts);
        CHECK(n2 == MPI_UNDEFINED, "%s on a spent array: %d, expected MPI_UNDEFINED", m, n2);
    }
    /* the ANY_SOURCE receives got one message each from the local and the remote peer,
     * and their data was checked on the status' source when there was a status */
    MPI_Wait(&extra, MPI_STATUS_IGNORE);
    for (int k = 0; k < NKINDS; k++)
        if (k != P_RECV)
            free(r.buf[k]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double t0 = MPI_Wtime();
    CHECK(nranks % 2 == 0, "needs an even number of ranks");
    local = rank ^ 1;
    remote = (rank + nranks / 2) % nranks;

    static const size_t sizes[3] = {64, 9000, 200000};
    unsigned char *pbuf = malloc(sizes[2] + 1);
    int round = 0, rounds = 0;
    for (int method = 0; method < 7; method++)
        for (int s = 0; s < 3; s++, round++) {
            MPI_Request persist;
            MPI_Recv_init(pbuf, (int)sizes[s], MPI_BYTE, local, 999, MPI_COMM_WORLD, &persist);
            run_round(round, method, sizes[s], &persist, pbuf);
            MPI_Request_free(&persist);
            rounds++;
        }
    CHECK(greq_freed == rounds, "the generalized requests' free_fn ran %d times for %d requests",
          greq_freed, rounds);
    free(pbuf);
    p2p_barrier_polite(MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_mixed_requests: OK, %d rounds on %d ranks in %.2f s\n", rounds, nranks,
               MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
