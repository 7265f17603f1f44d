/* p2p_get_status.c: MPI_Request_get_status makes progress, and so do the probes.
 * MPI-4.1 §3.7.3 sets it beside MPI_Test ("sets flag = true if the operation is
 * complete, and, if so, returns in status the request status. However, unlike test or wait, it does not deallocate or inactivate
 * the request"), and the progress rule (§3.7.4) holds for it as for MPI_Test: a loop
 * that polls it until the flag is set must end once the operation can complete, even
 * when completing it needs this process to move other operations along. Each scenario
 * polls nothing but MPI_Request_get_status:
 *  - a nonblocking barrier, while the partner first sends synchronously to this rank
 *    (its MPI_Ssend needs this rank to match the receive posted before);
 *  - a receive from the partner, and a synchronous send to it, on both sides at once;
 *  - a started persistent receive, and an inactive one (flag set at once);
 *  - a receive from, and a send to, a rank of the other half (another simulated node
 *    under HMPI_NODE_SIZE=2).
 * After each the request is still there: a second call gives the same status, MPI_Wait
 * frees it. Then MPI_Iprobe, MPI_Improbe (polled) and MPI_Probe, MPI_Mprobe (blocking)
 * for a message from the other half, which that rank sends only once this rank's local
 * partner got through an MPI_Ssend to this rank: the progress rule (§3.5: a matching
 * send and receive both initiated complete) holds while the rank waits in a probe.
 * Data is checked byte for byte. Partners: rank^1. */
#include "../p2p_common.h"

#define SEED 0x6E75ull

static int rank, nranks;
static MPI_Comm comm;

static uint64_t key(int from, int tag) { return p2p_key(from, tag, 0, SEED); }

/* Polls rq with MPI_Request_get_status alone until complete; returns its status. Only
 * a receive's status says something (recv: compare the second answer's fields). */
static MPI_Status poll_as(MPI_Request rq, const char *what, int recv)
{
    MPI_Status st;
    int flag = 0;
    while (!flag)
        P2P_OK(MPI_Request_get_status(rq, &flag, &st));
    /* Not freed, not inactivated: asked again, the same answer. */
    MPI_Status again;
    flag = 0;
    P2P_OK(MPI_Request_get_status(rq, &flag, &again));
    CHECK(flag, "%s: a second MPI_Request_get_status says incomplete", what);
    /* MPICH 4.2.1 alone answers the second call on a completed persistent request with
     * an empty status, as if the first had made it inactive: the MPI below's habit is
     * accepted where HMPI is off. */
    int below_empty = !(HMPI_Active && HMPI_Active()) && again.MPI_SOURCE == MPI_ANY_SOURCE &&
                      again.MPI_TAG == MPI_ANY_TAG && p2p_count(&again, MPI_BYTE) == 0;
    CHECK(!recv || below_empty ||
              (again.MPI_SOURCE == st.MPI_SOURCE && again.MPI_TAG == st.MPI_TAG &&
               p2p_count(&again, MPI_BYTE) == p2p_count(&st, MPI_BYTE)),
          "%s: a second MPI_Request_get_status gives source %d tag %d count %d, the first %d %d %d",
          what, again.MPI_SOURCE, again.MPI_TAG, p2p_count(&again, MPI_BYTE), st.MPI_SOURCE,
          st.MPI_TAG, p2p_count(&st, MPI_BYTE));
    return st;
}

static MPI_Status poll(MPI_Request rq, const char *what) { return poll_as(rq, what, 1); }

enum { N = 20000 };
static unsigned char sbuf[N], rbuf[N], pbuf[64];

/* The barrier needs the partner, whose MPI_Ssend needs this rank's match first. */
static void barrier_behind_ssend(int peer, int even)
{
    int tag = 1;
    if (even) {
        MPI_Request rr, bq;
        P2P_OK(MPI_Irecv(rbuf, N, MPI_BYTE, peer, tag, comm, &rr));
        P2P_OK(MPI_Ibarrier(comm, &bq));
        poll_as(bq, "MPI_Ibarrier behind the partner's MPI_Ssend", 0);
        P2P_OK(MPI_Wait(&bq, MPI_STATUS_IGNORE));
        CHECK(bq == MPI_REQUEST_NULL, "MPI_Wait left the barrier's request");
        MPI_Status st;
        P2P_OK(MPI_Wait(&rr, &st));
        CHECK(st.MPI_SOURCE == peer && p2p_count(&st, MPI_BYTE) == N, "the receive's status");
        P2P_CHECK_DATA(rbuf, N, key(peer, tag), "the message before the barrier");
    } else {
        p2p_fill(sbuf, N, key(rank, tag));
        P2P_OK(MPI_Ssend(sbuf, N, MPI_BYTE, peer, tag, comm));
        MPI_Request bq; /* (a nonblocking collective matches no blocking one) */
        P2P_OK(MPI_Ibarrier(comm, &bq));
        P2P_OK(MPI_Wait(&bq, MPI_STATUS_IGNORE));
    }
}

/* Each side polls its own request only: the send needs the partner's receive. */
static void both_sides(int peer, int even, int n)
{
    int tag = 2;
    MPI_Request rq;
    if (even) {
        p2p_fill(sbuf, (size_t)n, key(rank, tag));
        P2P_OK(MPI_Issend(sbuf, n, MPI_BYTE, peer, tag, comm, &rq));
        poll_as(rq, "MPI_Issend", 0);
        P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        P2P_OK(MPI_Irecv(rbuf, n, MPI_BYTE, peer, tag, comm, &rq));
        MPI_Status st = poll(rq, "MPI_Irecv");
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag && p2p_count(&st, MPI_BYTE) == n,
              "MPI_Irecv: status source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG,
              p2p_count(&st, MPI_BYTE));
        P2P_OK(MPI_Wait(&rq, &st));
        CHECK(st.MPI_SOURCE == peer && p2p_count(&st, MPI_BYTE) == n, "MPI_Wait's status");
        P2P_CHECK_DATA(rbuf, (size_t)n, key(peer, tag), "MPI_Irecv of %d bytes", n);
    }
}

static void persistent(int peer, int even)
{
    int tag = 3;
    MPI_Request pr;
    if (even) {
        P2P_OK(MPI_Recv_init(rbuf, 64, MPI_BYTE, peer, tag, comm, &pr));
        MPI_Status st = poll(pr, "an inactive persistent receive");
        CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
              "an inactive persistent request: not an empty status");
        for (int round = 0; round < 3; round++) {
            P2P_OK(MPI_Start(&pr));
            P2P_OK(MPI_Send(&round, 1, MPI_INT, peer, tag + 1, comm)); /* go */
            st = poll(pr, "a started persistent receive");
            CHECK(st.MPI_SOURCE == peer && p2p_count(&st, MPI_BYTE) == 64, "its status");
            P2P_CHECK_DATA(rbuf, 64, key(peer, tag + 10 * round), "persistent round %d", round);
            P2P_OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
            CHECK(pr != MPI_REQUEST_NULL, "MPI_Wait freed a persistent request");
        }
        P2P_OK(MPI_Request_free(&pr));
    } else {
        for (int round = 0; round < 3; round++) {
            int go;
            P2P_OK(MPI_Recv(&go, 1, MPI_INT, peer, tag + 1, comm, MPI_STATUS_IGNORE));
            p2p_fill(sbuf, 64, key(rank, tag + 10 * round));
            P2P_OK(MPI_Ssend(sbuf, 64, MPI_BYTE, peer, tag, comm));
        }
    }
}

/* A receive from a rank of the other half, and the send to it: the MPI below's
 * requests under HMPI_NODE_SIZE=2. */
static void across(void)
{
    int half = nranks / 2, tag = 5;
    int peer = (rank + half) % nranks;
    MPI_Request rq;
    if (rank < half) {
        P2P_OK(MPI_Irecv(rbuf, 5000, MPI_BYTE, peer, tag, comm, &rq));
        MPI_Status st = poll(rq, "MPI_Irecv from the other half");
        CHECK(st.MPI_SOURCE == peer && p2p_count(&st, MPI_BYTE) == 5000, "its status");
        P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        P2P_CHECK_DATA(rbuf, 5000, key(peer, tag), "the message from the other half");
    } else {
        p2p_fill(sbuf, 5000, key(rank, tag));
        P2P_OK(MPI_Isend(sbuf, 5000, MPI_BYTE, peer, tag, comm, &rq));
        poll_as(rq, "MPI_Isend to the other half", 0);
        P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
}

/* Ranks 4k (prober), 4k+1 (its local partner under HMPI_NODE_SIZE=2), and the prober's
 * opposite in the other half (remote): the remote rank sends to the prober only after
 * the partner's MPI_Ssend to the prober completed, which needs the prober's receive,
 * posted before its probe, to match. */
static void probe_behind_ssend(int how)
{
    static const char *const names[4] = {"MPI_Iprobe", "MPI_Improbe", "MPI_Probe", "MPI_Mprobe"};
    int half = nranks / 2, tag = 20 + 3 * how;
    int lower = rank < half, base = lower ? rank : rank - half;
    if (nranks < 4 || base % 2 != 0 || base + 1 >= half) {
        if (nranks >= 4 && base % 2 == 1 && lower) { /* the partner */
            p2p_fill(sbuf, N, key(rank, tag));
            P2P_OK(MPI_Ssend(sbuf, N, MPI_BYTE, rank - 1, tag, comm));
            P2P_OK(MPI_Send(&tag, 1, MPI_INT, rank - 1 + half, tag + 1, comm)); /* go */
        }
        return;
    }
    if (!lower) { /* the remote sender */
        int go = -1;
        P2P_OK(MPI_Recv(&go, 1, MPI_INT, rank - half + 1, tag + 1, comm, MPI_STATUS_IGNORE));
        p2p_fill(sbuf, 64, key(rank, tag + 2));
        P2P_OK(MPI_Send(sbuf, 64, MPI_BYTE, rank - half, tag + 2, comm));
        return;
    }
    int from = rank + half;
    MPI_Request rr;
    MPI_Status st;
    MPI_Message msg = MPI_MESSAGE_NULL;
    P2P_OK(MPI_Irecv(rbuf, N, MPI_BYTE, rank + 1, tag, comm, &rr));
    int flag = 0;
    switch (how) {
    case 0:
        while (!flag)
            P2P_OK(MPI_Iprobe(from, tag + 2, comm, &flag, &st));
        break;
    case 1:
        while (!flag)
            P2P_OK(MPI_Improbe(from, tag + 2, comm, &flag, &msg, &st));
        break;
    case 2: P2P_OK(MPI_Probe(from, tag + 2, comm, &st)); break;
    default: P2P_OK(MPI_Mprobe(from, tag + 2, comm, &msg, &st));
    }
    CHECK(st.MPI_SOURCE == from && p2p_count(&st, MPI_BYTE) == 64, "%s: source %d count %d",
          names[how], st.MPI_SOURCE, p2p_count(&st, MPI_BYTE));
    if (how % 2)
        P2P_OK(MPI_Mrecv(pbuf, 64, MPI_BYTE, &msg, MPI_STATUS_IGNORE));
    else
        P2P_OK(MPI_Recv(pbuf, 64, MPI_BYTE, from, tag + 2, comm, MPI_STATUS_IGNORE));
    P2P_CHECK_DATA(pbuf, 64, key(from, tag + 2), "%s: the probed message", names[how]);
    P2P_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    P2P_CHECK_DATA(rbuf, N, key(rank + 1, tag), "%s: the partner's MPI_Ssend", names[how]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(nranks % 2 == 0, "needs an even number of ranks");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int peer = rank ^ 1, even = rank % 2 == 0;
    for (int i = 0; i < 3; i++)
        barrier_behind_ssend(peer, even);
    const int sizes[4] = {8, 300, 9000, N};
    for (int i = 0; i < 4; i++) {
        both_sides(peer, even, sizes[i]);
        both_sides(peer, !even, sizes[i]);
    }
    persistent(peer, even);
    persistent(peer, !even);
    across();
    for (int how = 0; how < 4; how++) {
        MPI_Barrier(comm);
        probe_behind_ssend(how);
    }
    MPI_Barrier(comm);
    MPI_Comm_free(&comm);
    if (rank == 0)
        printf("p2p_get_status: OK\n");
    MPI_Finalize();
    return 0;
}
