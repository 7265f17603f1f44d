/* p2p_buffers.c: MPI 4.1's buffers for buffered sends under HMPI, whose buffered messages
 * to local peers count against the attached buffers:
 *  - a communicator's own buffer (MPI_Comm_attach_buffer), no process buffer: MPI_Bsend on
 *    it must succeed (passed through, HMPI saw no room and answered MPI_ERR_BUFFER, and
 *    the receiver hung);
 *  - MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC): sends of far more than any buffer, before
 *    the receiver receives, must succeed; its detach gives MPI_BUFFER_AUTOMATIC back;
 *  - MPI_Buffer_flush and MPI_Buffer_iflush: once complete the buffer is empty, so a
 *    message that needs the whole buffer fits, though the receiver takes the earlier one
 *    only later (passed through, the flush did not wait for HMPI's local message and the
 *    big send failed);
 *  - a session's buffer: attach, a buffered send on the session's communicator, detach.
 * Senders are the even ranks of each pair (rank^1, on the node; rank^2, on another node
 * under HMPI_NODE_SIZE=2, when there). Data checked byte for byte. Standard MPI only. */
#include "../p2p_common.h"

#include <unistd.h>

#define SEED 0xBF5Dull

enum { SMALL = 1000, ROOM = 1 << 16, MANY = 40, BIG = 100000 };
static int rank, nranks;
static unsigned char payload[BIG];

static uint64_t key(int from, int tag) { return p2p_key(from, tag, 0, SEED); }

static void bsend(int peer, int tag, size_t n, MPI_Comm comm)
{
    p2p_fill(payload, n, key(rank, tag));
    P2P_OK(MPI_Bsend(payload, (int)n, MPI_BYTE, peer, tag, comm));
}

static void recv(int peer, int tag, size_t n, MPI_Comm comm)
{
    static unsigned char in[BIG];
    MPI_Status st;
    P2P_OK(MPI_Recv(in, (int)n, MPI_BYTE, peer, tag, comm, &st));
    CHECK(p2p_count(&st, MPI_BYTE) == (int)n, "tag %d: count %d", tag, p2p_count(&st, MPI_BYTE));
    P2P_CHECK_DATA(in, n, key(peer, tag), "tag %d from %d", tag, peer);
}

/* A communicator's buffer, and nothing else attached. */
static void comm_buffer(int peer, int sender)
{
    MPI_Comm c;
    P2P_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    void *buf = malloc(ROOM), *back = NULL;
    P2P_OK(MPI_Comm_attach_buffer(c, buf, ROOM));
    if (sender)
        for (int t = 0; t < 4; t++)
            bsend(peer, 10 + t, SMALL, c);
    else
        for (int t = 0; t < 4; t++)
            recv(peer, 10 + t, SMALL, c);
    P2P_OK(MPI_Comm_flush_buffer(c));
    int size = 0;
    P2P_OK(MPI_Comm_detach_buffer(c, &back, &size));
    CHECK(back == buf && size == ROOM, "MPI_Comm_detach_buffer gave %p, %d", back, size);
    free(buf);
    MPI_Comm_free(&c);
}

/* MPI_BUFFER_AUTOMATIC: MANY x BIG bytes outstanding before the receiver starts. */
static void automatic(int peer, int sender)
{
    P2P_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    if (sender) {
        for (int t = 0; t < MANY; t++)
            bsend(peer, 100 + t, BIG, MPI_COMM_WORLD);
    } else {
        p2p_sleep_ms(50);
        for (int t = 0; t < MANY; t++)
            recv(peer, 100 + t, BIG, MPI_COMM_WORLD);
    }
    void *back = NULL;
    int size = -1;
    P2P_OK(MPI_Buffer_detach(&back, &size));
    CHECK(back == MPI_BUFFER_AUTOMATIC, "MPI_Buffer_detach of MPI_BUFFER_AUTOMATIC gave %p", back);
}

/* A flush (blocking, then nonblocking) empties the buffer: then a message of the whole
 * buffer fits, while the receiver takes the first message only after a pause. */
static void flush(int peer, int sender, int nonblocking)
{
    size_t whole = ROOM - MPI_BSEND_OVERHEAD;
    void *buf = malloc(ROOM), *back;
    P2P_OK(MPI_Buffer_attach(buf, ROOM));
    int tag = nonblocking ? 200 : 210;
    if (sender) {
        bsend(peer, tag, SMALL, MPI_COMM_WORLD);
        if (nonblocking) {
            MPI_Request rq;
            P2P_OK(MPI_Buffer_iflush(&rq));
            P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            P2P_OK(MPI_Buffer_flush());
        }
        bsend(peer, tag + 1, whole, MPI_COMM_WORLD);
    } else {
        p2p_sleep_ms(100);
        recv(peer, tag, SMALL, MPI_COMM_WORLD);
        recv(peer, tag + 1, whole, MPI_COMM_WORLD);
    }
    int size = 0;
    P2P_OK(MPI_Buffer_detach(&back, &size));
    CHECK(back == buf && size == ROOM, "MPI_Buffer_detach gave %p, %d", back, size);
    free(buf);
}

/* A session's buffer, used by a buffered send on a communicator of the session. */
static void session_buffer(int peer, int sender)
{
    MPI_Session s;
    MPI_Group g;
    MPI_Comm c;
    P2P_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    P2P_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    P2P_OK(MPI_Comm_create_from_group(g, "p2p_buffers", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_Group_free(&g);
    void *buf = malloc(ROOM), *back = NULL;
    P2P_OK(MPI_Session_attach_buffer(s, buf, ROOM));
    if (sender)
        bsend(peer, 300, SMALL, c);
    else
        recv(peer, 300, SMALL, c);
    P2P_OK(MPI_Session_flush_buffer(s));
    int size = 0;
    P2P_OK(MPI_Session_detach_buffer(s, &back, &size));
    CHECK(back == buf && size == ROOM, "MPI_Session_detach_buffer gave %p, %d", back, size);
    free(buf);
    MPI_Comm_free(&c);
    P2P_OK(MPI_Session_finalize(&s));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int bit = 1; bit <= 2; bit <<= 1) {
        int peer = rank ^ bit, sender = !(rank & bit);
        if (peer >= nranks)
            continue;
        comm_buffer(peer, sender);
        automatic(peer, sender);
        flush(peer, sender, 0);
        flush(peer, sender, 1);
        p2p_barrier_polite(MPI_COMM_WORLD);
    }
    session_buffer(rank ^ 1, !(rank & 1));
    p2p_barrier_polite(MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_buffers: ok (%d ranks)\n", nranks);
    MPI_Finalize();
    return 0;
}
