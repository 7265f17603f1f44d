/* p2p_handles.c: requests and messages through MPI_Request_c2f/f2c and
 * MPI_Message_c2f/f2c, as a C program that hands them to Fortran (or mpi4py's py2f) does.
 * A handle must come back as itself, distinct requests must get distinct Fortran
 * handles, a live request keeps its Fortran handle, and the operation must complete
 * through the converted handle with its data. Open MPI's own conversions read a request
 * as Open MPI's object: HMPI's requests got one Fortran handle for all and never completed
 * (issue 40's surface table). Each rank exchanges with its partners rank^1 (on the node)
 * and rank^2 (on another simulated node under HMPI_NODE_SIZE=2): nonblocking, persistent
 * and matched-probe operations, a request of the MPI below (MPI_Ibarrier) and the null
 * handles. Data is checked byte for byte. Standard MPI only. */
#include "../p2p_common.h"

#define SEED 0xC2F0ull

enum { N = 3000, NREQ = 4 };
static int rank, nranks;
static unsigned char sbuf[NREQ][N], rbuf[NREQ][N];

static uint64_t key(int from, int tag) { return p2p_key(from, tag, 0, SEED); }

/* Converts every request to Fortran and back, checking that each comes back as itself
 * and that live requests got distinct Fortran handles. */
static void round_trip(int n, MPI_Request *rq, const char *what)
{
    MPI_Fint f[2 * NREQ + 1];
    for (int i = 0; i < n; i++) {
        f[i] = MPI_Request_c2f(rq[i]);
        CHECK(MPI_Request_c2f(rq[i]) == f[i], "%s: request %d: a second c2f differs", what, i);
        CHECK(MPI_Request_f2c(f[i]) == rq[i], "%s: request %d did not come back as itself (%d)",
              what, i, (int)f[i]);
        for (int k = 0; k < i; k++)
            CHECK(rq[k] == rq[i] || f[k] != f[i],
                  "%s: requests %d and %d got one Fortran handle (%d)", what, k, i, (int)f[i]);
    }
    for (int i = 0; i < n; i++) /* complete through the handles made from Fortran's */
        rq[i] = MPI_Request_f2c(f[i]);
}

/* Receives from and sends to peer: two each way, tags 10..13. */
static void exchange(int peer)
{
    MPI_Request rq[2 * NREQ];
    int n = 0;
    for (int t = 0; t < 2; t++)
        P2P_OK(MPI_Irecv(rbuf[t], N, MPI_BYTE, peer, 10 + t, MPI_COMM_WORLD, &rq[n++]));
    for (int t = 0; t < 2; t++) {
        p2p_fill(sbuf[t], N, key(rank, 10 + t));
        P2P_OK(MPI_Isend(sbuf[t], N, MPI_BYTE, peer, 10 + t, MPI_COMM_WORLD, &rq[n++]));
    }
    P2P_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[n++])); /* the MPI below's */
    round_trip(n, rq, "nonblocking");
    MPI_Status st[2 * NREQ];
    P2P_OK(MPI_Waitall(n, rq, st));
    for (int t = 0; t < 2; t++) {
        CHECK(st[t].MPI_SOURCE == peer && st[t].MPI_TAG == 10 + t, "status %d: source %d tag %d", t,
              st[t].MPI_SOURCE, st[t].MPI_TAG);
        P2P_CHECK_DATA(rbuf[t], N, key(peer, 10 + t), "Irecv %d from %d", t, peer);
    }
    for (int i = 0; i < n; i++)
        CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not freed by MPI_Waitall", i);
}

/* A persistent receive and send, each started twice: the Fortran handle stays. */
static void persistent(int peer)
{
    MPI_Request rq[2];
    P2P_OK(MPI_Recv_init(rbuf[2], N, MPI_BYTE, peer, 20, MPI_COMM_WORLD, &rq[0]));
    P2P_OK(MPI_Send_init(sbuf[2], N, MPI_BYTE, peer, 20, MPI_COMM_WORLD, &rq[1]));
    MPI_Fint f0 = MPI_Request_c2f(rq[0]), f1 = MPI_Request_c2f(rq[1]);
    for (int round = 0; round < 2; round++) {
        p2p_fill(sbuf[2], N, key(rank, 20 + round));
        round_trip(2, rq, "persistent");
        P2P_OK(MPI_Startall(2, rq));
        round_trip(2, rq, "persistent, active");
        P2P_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        P2P_CHECK_DATA(rbuf[2], N, key(peer, 20 + round), "persistent round %d from %d", round,
                       peer);
        CHECK(MPI_Request_c2f(rq[0]) == f0 && MPI_Request_c2f(rq[1]) == f1,
              "a persistent request's Fortran handle changed");
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
}

/* A message of MPI_Improbe through MPI_Message_c2f/f2c, then MPI_Mrecv. */
static void message(int peer)
{
    p2p_fill(sbuf[3], N, key(rank, 30));
    MPI_Request sr;
    P2P_OK(MPI_Isend(sbuf[3], N, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &sr));
    MPI_Message m;
    MPI_Status st;
    int flag = 0;
    while (!flag)
        P2P_OK(MPI_Improbe(peer, 30, MPI_COMM_WORLD, &flag, &m, &st));
    MPI_Fint f = MPI_Message_c2f(m);
    MPI_Message back = MPI_Message_f2c(f);
    CHECK(back == m, "a message did not come back as itself (%d)", (int)f);
    P2P_OK(MPI_Mrecv(rbuf[3], N, MPI_BYTE, &back, &st));
    CHECK(back == MPI_MESSAGE_NULL, "MPI_Mrecv left the message");
    P2P_CHECK_DATA(rbuf[3], N, key(peer, 30), "Mrecv from %d", peer);
    P2P_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL,
          "MPI_REQUEST_NULL did not come back");
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL,
          "MPI_MESSAGE_NULL did not come back");
    int peers[2] = {rank ^ 1, rank ^ 2};
    for (int p = 0; p < 2; p++) {
        if (peers[p] >= nranks) {
            MPI_Request rq;
            P2P_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq)); /* exchange()'s, in step */
            P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            continue;
        }
        exchange(peers[p]);
        persistent(peers[p]);
        message(peers[p]);
    }
    p2p_barrier_polite(MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_handles: ok (%d ranks)\n", nranks);
    MPI_Finalize();
    return 0;
}
