/* p2p_type_free.c: a datatype freed while operations use it. MPI-4.1 §5.1.9: "Any
 * communication that is currently using this datatype will complete normally", and
 * freeing a datatype does not affect any other datatype built from it; the handle goes
 * back to MPI_DATATYPE_NULL. So a program may free a derived type right after posting
 * MPI_Irecv/MPI_Isend with it, or after making a persistent request with it, and the
 * operations still move the data by the type's layout. After each free the test makes
 * new types of other layouts (an MPI hands the freed handle out again), then lets the
 * data flow and checks every byte: the ones the type selects hold the message, the
 * gaps are untouched. Peers: rank^1 (same node), rank^2 (another simulated node under
 * HMPI_NODE_SIZE=2), and MPI_ANY_SOURCE receives. */
#include "../p2p_common.h"

#define SEED 0x7F4EEull

static int rank, nranks;
static MPI_Comm comm;

enum { NBLK = 300, BL = 5, STRIDE = 9 }; /* the freed type's layout */
enum { MSG = NBLK * BL, SPAN = (NBLK - 1) * STRIDE + BL, GAP = 0xEE };
static unsigned char rbuf[4][SPAN], sbuf[4][SPAN];

static uint64_t key(int from, int tag) { return p2p_key(from, tag, 0, SEED); }

static MPI_Datatype vector_type(void)
{
    MPI_Datatype t;
    MPI_Type_vector(NBLK, BL, STRIDE, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* A contiguous derived type of the same signature: 3 * 500 bytes. */
static MPI_Datatype contig_type(void)
{
    MPI_Datatype t;
    MPI_Type_contiguous(MSG / 3, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* New committed types of other layouts, made while the freed ones may still be used. */
typedef struct {
    MPI_Datatype t[6];
} decoys_t;

static void decoys_make(decoys_t *d)
{
    for (int i = 0; i < 6; i++) {
        MPI_Type_vector(3 + i, 1 + i % 2, 4 + i, i % 2 ? MPI_INT : MPI_SHORT, &d->t[i]);
        MPI_Type_commit(&d->t[i]);
    }
}

static void decoys_free(decoys_t *d)
{
    for (int i = 0; i < 6; i++)
        MPI_Type_free(&d->t[i]);
}

/* buf holds the message of key laid out by the vector type, the gaps untouched. */
static void check_vector(const unsigned char *buf, uint64_t k, const char *what)
{
    unsigned char msg[MSG];
    p2p_fill(msg, MSG, k);
    for (int b = 0; b < NBLK; b++)
        for (int j = 0; j < STRIDE && b * STRIDE + j < SPAN; j++) {
            int at = b * STRIDE + j;
            int want = j < BL ? msg[b * BL + j] : GAP;
            CHECK(buf[at] == want, "%s: byte %d is 0x%02x, expected 0x%02x (%s)", what, at, buf[at],
                  want, j < BL ? "data" : "gap");
        }
}

/* A vector laid out into sbuf from the message of key. */
static void fill_vector(unsigned char *buf, uint64_t k)
{
    unsigned char msg[MSG];
    p2p_fill(msg, MSG, k);
    memset(buf, GAP, SPAN);
    for (int b = 0; b < NBLK; b++)
        memcpy(buf + b * STRIDE, msg + b * BL, BL);
}

/* "Go ahead" messages, on tags of their own. */
enum { GO = 50000 };
static void go(int peer, int tag) { P2P_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, GO + tag, comm)); }
static void wait_go(int peer, int tag)
{
    P2P_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, GO + tag, comm, MPI_STATUS_IGNORE));
}

/* Receives posted with a type freed at once, then the sends. src: a rank or
 * MPI_ANY_SOURCE (then peer alone sends to this rank on this tag). */
static void recv_then_free(int peer, int src, int tag, int receiver)
{
    char what[96];
    snprintf(what, sizeof what, "MPI_Irecv from %d (peer %d) with a freed type", src, peer);
    if (receiver) {
        MPI_Datatype v = vector_type(), c = contig_type();
        MPI_Request rq[2];
        memset(rbuf[0], GAP, SPAN);
        memset(rbuf[1], GAP, SPAN);
        P2P_OK(MPI_Irecv(rbuf[0], 1, v, src, tag, comm, &rq[0]));
        P2P_OK(MPI_Irecv(rbuf[1], 3, c, src, tag + 1, comm, &rq[1]));
        P2P_OK(MPI_Type_free(&v));
        P2P_OK(MPI_Type_free(&c));
        CHECK(v == MPI_DATATYPE_NULL && c == MPI_DATATYPE_NULL,
              "MPI_Type_free did not set the handle to MPI_DATATYPE_NULL");
        decoys_t d;
        decoys_make(&d);
        go(peer, tag);
        MPI_Status st[2];
        P2P_OK(MPI_Waitall(2, rq, st));
        decoys_free(&d);
        CHECK(st[0].MPI_SOURCE == peer && p2p_count(&st[0], MPI_BYTE) == MSG,
              "%s: source %d count %d", what, st[0].MPI_SOURCE, p2p_count(&st[0], MPI_BYTE));
        check_vector(rbuf[0], key(peer, tag), what);
        P2P_CHECK_DATA(rbuf[1], MSG, key(peer, tag + 1), "%s (contiguous type)", what);
        CHECK(rbuf[1][MSG] == GAP, "%s: the contiguous type wrote past its end", what);
    } else {
        wait_go(peer, tag);
        p2p_fill(sbuf[0], MSG, key(rank, tag));
        p2p_fill(sbuf[1], MSG, key(rank, tag + 1));
        P2P_OK(MPI_Send(sbuf[0], MSG, MPI_BYTE, peer, tag, comm));
        P2P_OK(MPI_Send(sbuf[1], MSG, MPI_BYTE, peer, tag + 1, comm));
    }
}

/* A send posted with a type freed at once; the receive comes later. */
static void send_then_free(int peer, int tag, int sender)
{
    if (sender) {
        MPI_Datatype v = vector_type();
        MPI_Request rq;
        fill_vector(sbuf[0], key(rank, tag));
        P2P_OK(MPI_Isend(sbuf[0], 1, v, peer, tag, comm, &rq));
        P2P_OK(MPI_Type_free(&v));
        decoys_t d;
        decoys_make(&d);
        go(peer, tag);
        P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        decoys_free(&d);
    } else {
        wait_go(peer, tag);
        P2P_OK(MPI_Recv(rbuf[0], MSG, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE));
        P2P_CHECK_DATA(rbuf[0], MSG, key(peer, tag), "MPI_Isend from %d with a freed type", peer);
    }
}

/* Persistent requests made with types freed at once, started in several rounds, with
 * new types made between the rounds. */
static void persistent_then_free(int peer, int tag, int receiver)
{
    MPI_Datatype v = vector_type();
    MPI_Request pr;
    if (receiver)
        P2P_OK(MPI_Recv_init(rbuf[2], 1, v, peer, tag, comm, &pr));
    else
        P2P_OK(MPI_Send_init(sbuf[2], 1, v, peer, tag, comm, &pr));
    P2P_OK(MPI_Type_free(&v));
    decoys_t d[3];
    for (int round = 0; round < 3; round++) {
        decoys_make(&d[round]);
        if (receiver) {
            memset(rbuf[2], GAP, SPAN);
            P2P_OK(MPI_Start(&pr));
            go(peer, tag);
            P2P_OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
            char what[96];
            snprintf(what, sizeof what, "persistent receive from %d, round %d", peer, round);
            check_vector(rbuf[2], key(peer, tag + 100 * round), what);
        } else {
            fill_vector(sbuf[2], key(rank, tag + 100 * round));
            wait_go(peer, tag);
            P2P_OK(MPI_Start(&pr));
            P2P_OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        }
    }
    for (int round = 0; round < 3; round++)
        decoys_free(&d[round]);
    P2P_OK(MPI_Request_free(&pr));
}

/* The same against one peer, each side in each role. */
static void with_peer(int peer, int tag)
{
    int lo = rank < peer;
    for (int role = 0; role < 2; role++) {
        int mine = lo ^ role;
        recv_then_free(peer, peer, tag, mine);
        MPI_Barrier(comm);
        recv_then_free(peer, MPI_ANY_SOURCE, tag + 10, mine);
        MPI_Barrier(comm);
        send_then_free(peer, tag + 20, mine);
        persistent_then_free(peer, tag + 30, mine);
        MPI_Barrier(comm);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(nranks % 2 == 0, "needs an even number of ranks");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    with_peer(rank ^ 1, 1000);
    if (nranks % 4 == 0)
        with_peer(rank ^ 2, 2000);
    MPI_Comm_free(&comm);
    if (rank == 0)
        printf("p2p_type_free: OK\n");
    MPI_Finalize();
    return 0;
}
