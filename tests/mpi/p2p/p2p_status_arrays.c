/* p2p_status_arrays.c: MPI 4.1's MPI_Request_get_status_any, _all and _some over arrays
 * that mix HMPI's requests (a receive from a local peer), the MPI below's (a receive from
 * a rank of another simulated node, an MPI_Ibarrier), MPI_REQUEST_NULL and an inactive
 * persistent request. They answer as MPI_Testany, _all and _some do but free and
 * inactivate nothing (MPI-4.1 §3.7.5), and a loop polling them alone ends (the progress
 * rule): the partners send with MPI_Issend, which completes only once this rank matched.
 * Passed through, the MPI below refused HMPI's requests as invalid handles (issue 40's
 * surface table). Partners rank^1 (local) and rank^2 (another node under
 * HMPI_NODE_SIZE=2), when there. Data checked byte for byte. Standard MPI only, but not
 * for the MPI below alone: MPICH 4.2.1's MPI_Request_get_status_some makes no progress (at
 * 4 ranks its loop here never ends; an MPI_Iprobe in the loop ends it). */
#include "../p2p_common.h"

#define SEED 0x5A11ull

enum { N = 30000, MAXP = 2 };
static int rank, nranks, np, partner[MAXP];
static unsigned char sbuf[MAXP][N], rbuf[MAXP][N];

static uint64_t key(int from, int tag) { return p2p_key(from, tag, 0, SEED); }

/* Posts a receive from each partner into rq[0..np) and an MPI_Issend to each into sq. */
static void post(int tag, MPI_Request *rq, MPI_Request *sq)
{
    for (int p = 0; p < np; p++)
        P2P_OK(MPI_Irecv(rbuf[p], N, MPI_BYTE, partner[p], tag, MPI_COMM_WORLD, &rq[p]));
    for (int p = 0; p < np; p++) {
        p2p_fill(sbuf[p], N, key(rank, tag));
        P2P_OK(MPI_Issend(sbuf[p], N, MPI_BYTE, partner[p], tag, MPI_COMM_WORLD, &sq[p]));
    }
}

static void expect(const MPI_Status *st, int p, int tag, const char *what)
{
    CHECK(st->MPI_SOURCE == partner[p] && st->MPI_TAG == tag,
          "%s: source %d tag %d, expected %d %d", what, st->MPI_SOURCE, st->MPI_TAG, partner[p],
          tag);
    CHECK(p2p_count(st, MPI_BYTE) == N, "%s: count %d", what, p2p_count(st, MPI_BYTE));
}

/* Completes the receives (and the sends) and checks the data. */
static void finish(int tag, MPI_Request *rq, MPI_Request *sq)
{
    P2P_OK(MPI_Waitall(np, rq, MPI_STATUSES_IGNORE));
    P2P_OK(MPI_Waitall(np, sq, MPI_STATUSES_IGNORE));
    for (int p = 0; p < np; p++)
        P2P_CHECK_DATA(rbuf[p], N, key(partner[p], tag), "tag %d from %d", tag, partner[p]);
}

/* _any: [NULL, the receives]; the one it names is complete, and is there still after. */
static void any(void)
{
    MPI_Request rq[1 + MAXP], sq[MAXP];
    rq[0] = MPI_REQUEST_NULL;
    post(1, rq + 1, sq);
    int idx = -1, flag = 0;
    MPI_Status st;
    while (!flag)
        P2P_OK(MPI_Request_get_status_any(1 + np, rq, &idx, &flag, &st));
    CHECK(idx >= 1 && idx <= np, "get_status_any: index %d", idx);
    expect(&st, idx - 1, 1, "get_status_any");
    CHECK(rq[idx] != MPI_REQUEST_NULL, "get_status_any freed request %d", idx);
    flag = 0;
    P2P_OK(MPI_Request_get_status(rq[idx], &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "request %d complete for get_status_any, not for get_status", idx);
    finish(1, rq + 1, sq);
    /* Only inactive entries: flag set, index MPI_UNDEFINED. */
    P2P_OK(MPI_Request_get_status_any(1 + np, rq, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "get_status_any of nulls: flag %d index %d", flag, idx);
}

/* _all: [the receives, an MPI_Ibarrier, NULL, an inactive persistent receive]. */
static void all(void)
{
    MPI_Request rq[MAXP + 3], sq[MAXP], bar;
    post(2, rq, sq);
    P2P_OK(MPI_Ibarrier(MPI_COMM_WORLD, &bar));
    rq[np] = bar;
    rq[np + 1] = MPI_REQUEST_NULL;
    unsigned char spare[8];
    P2P_OK(MPI_Recv_init(spare, 8, MPI_BYTE, partner[0], 99, MPI_COMM_WORLD, &rq[np + 2]));
    MPI_Request pers = rq[np + 2];
    MPI_Status st[MAXP + 3];
    int flag = 0;
    while (!flag)
        P2P_OK(MPI_Request_get_status_all(np + 3, rq, &flag, st));
    for (int p = 0; p < np; p++) {
        expect(&st[p], p, 2, "get_status_all");
        CHECK(rq[p] != MPI_REQUEST_NULL, "get_status_all freed request %d", p);
    }
    CHECK(rq[np] == bar && rq[np + 2] == pers, "get_status_all changed a handle");
    CHECK(st[np + 2].MPI_SOURCE == MPI_ANY_SOURCE && st[np + 2].MPI_TAG == MPI_ANY_TAG,
          "an inactive request's status: source %d tag %d", st[np + 2].MPI_SOURCE,
          st[np + 2].MPI_TAG);
    finish(2, rq, sq);
    P2P_OK(MPI_Wait(&bar, MPI_STATUS_IGNORE));
    P2P_OK(MPI_Request_free(&pers));
}

/* _some: polled until it names every receive, each once per call. */
static void some(void)
{
    MPI_Request rq[MAXP + 1], sq[MAXP];
    post(3, rq, sq);
    rq[np] = MPI_REQUEST_NULL;
    int out = 0, idx[MAXP + 1];
    MPI_Status st[MAXP + 1];
    while (out < np) {
        P2P_OK(MPI_Request_get_status_some(np + 1, rq, &out, idx, st));
        CHECK(out >= 0 && out <= np, "get_status_some: outcount %d", out);
    }
    for (int k = 0; k < out; k++) {
        CHECK(idx[k] >= 0 && idx[k] < np && (k == 0 || idx[k] > idx[k - 1]),
              "get_status_some: index %d is %d", k, idx[k]);
        expect(&st[k], idx[k], 3, "get_status_some");
    }
    finish(3, rq, sq);
    P2P_OK(MPI_Request_get_status_some(np + 1, rq, &out, idx, st));
    CHECK(out == MPI_UNDEFINED, "get_status_some of nulls: outcount %d", out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if ((rank ^ 1) < nranks)
        partner[np++] = rank ^ 1;
    if ((rank ^ 2) < nranks)
        partner[np++] = rank ^ 2;
    CHECK(np > 0 || nranks == 1, "no partner");
    any();
    all();
    some();
    p2p_barrier_polite(MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_status_arrays: ok (%d ranks)\n", nranks);
    MPI_Finalize();
    return 0;
}
