/* p2p_lanes.c: a neighbour exchange, the traffic lanes opened on a pair's first message
 * are for. Each rank talks to two peers only, me + 1 and me + 2 (mod n; at 2 ranks the
 * second is itself), in rounds of messages whose sizes alternate between the lane's
 * (small) and the queue's (past the immediate size, and synchronous sends), so the
 * first lane message of a pair lands among queue messages of the same sender:
 *   posted   every receive posted first (named sources, MPI_ANY_TAG), then the sends;
 *   late     the sends first, then blocking MPI_ANY_SOURCE/MPI_ANY_TAG receives;
 *   short    blocking MPI_Send/MPI_Recv of 8 bytes (the short ways), named source.
 * Every message carries its sender and index; a receiver checks that each sender's
 * messages arrive in order, with their tag, their size and their bytes. Under HMPI the
 * test's registration also checks the counters: how many lanes each rank opened (two,
 * or fewer when HMPI_LANE_TOTAL allows fewer; none on 1-rank nodes). Standard MPI. */
#include "../p2p_common.h"

enum { M = 200, PEERS = 2, BIG = 4096 };

/* Size of message i: small ones for the lane, a few past the immediate size. */
static size_t size_of(int i)
{
    static const size_t sizes[] = {16, 8, 100, 4000, 24, 256, 300, 64};
    return sizes[i % 8];
}

static uint64_t key_of(int src, int i) { return p2p_key(src, i % 3, (uint64_t)i, 7); }

/* The bytes of message i of src: its index in the first word, then the pattern. */
static void fill(char *buf, int src, int i)
{
    p2p_fill(buf, size_of(i), key_of(src, i));
    memcpy(buf, &i, sizeof i);
}

static void check(const char *buf, const MPI_Status *st, int src, int i, const char *phase)
{
    int got, count;
    memcpy(&got, buf, sizeof got);
    CHECK(got == i, "%s: message %d of rank %d arrived as its number %d", phase, got, src, i);
    CHECK(st->MPI_TAG == i % 3, "%s: message %d of rank %d: tag %d", phase, i, src, st->MPI_TAG);
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK((size_t)count == size_of(i), "%s: message %d of rank %d: %d bytes, sent %zu", phase, i,
          src, count, size_of(i));
    char want[BIG];
    fill(want, src, i);
    CHECK(memcmp(buf, want, size_of(i)) == 0, "%s: message %d of rank %d: bytes differ", phase, i,
          src);
}

static void isend_all(char *out, MPI_Request *req, int me, int n)
{
    for (int p = 0; p < PEERS; p++)
        for (int i = 0; i < M; i++) {
            char *b = out + ((size_t)p * M + (size_t)i) * BIG;
            fill(b, me, i);
            int dst = (me + 1 + p) % n;
            if (i % 16 == 5)
                P2P_OK(MPI_Issend(b, (int)size_of(i), MPI_BYTE, dst, i % 3, MPI_COMM_WORLD,
                                  &req[p * M + i]));
            else
                P2P_OK(MPI_Isend(b, (int)size_of(i), MPI_BYTE, dst, i % 3, MPI_COMM_WORLD,
                                 &req[p * M + i]));
        }
}

/* My two senders, me - 1 and me - 2 (at 2 ranks the other rank and I). */
static int from(int me, int n, int p) { return ((me - 1 - p) % n + n) % n; }

static void posted(int me, int n, char *out, char *in)
{
    MPI_Request rreq[PEERS * M], sreq[PEERS * M];
    MPI_Status st[PEERS * M];
    for (int p = 0; p < PEERS; p++)
        for (int i = 0; i < M; i++)
            P2P_OK(MPI_Irecv(in + ((size_t)p * M + (size_t)i) * BIG, BIG, MPI_BYTE, from(me, n, p),
                             MPI_ANY_TAG, MPI_COMM_WORLD, &rreq[p * M + i]));
    isend_all(out, sreq, me, n);
    P2P_OK(MPI_Waitall(PEERS * M, rreq, st));
    P2P_OK(MPI_Waitall(PEERS * M, sreq, MPI_STATUSES_IGNORE));
    for (int p = 0; p < PEERS; p++)
        for (int i = 0; i < M; i++)
            check(in + ((size_t)p * M + (size_t)i) * BIG, &st[p * M + i], from(me, n, p), i,
                  "posted");
}

static void late(int me, int n, char *out, char *in)
{
    MPI_Request sreq[PEERS * M];
    isend_all(out, sreq, me, n);
    int next[PEERS] = {0, 0};
    for (int k = 0; k < PEERS * M; k++) {
        MPI_Status st;
        P2P_OK(MPI_Recv(in, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int p = st.MPI_SOURCE == from(me, n, 0) ? 0 : 1; /* two senders, one stream each */
        CHECK(st.MPI_SOURCE == from(me, n, p), "late: a message from rank %d", st.MPI_SOURCE);
        check(in, &st, st.MPI_SOURCE, next[p]++, "late");
    }
    P2P_OK(MPI_Waitall(PEERS * M, sreq, MPI_STATUSES_IGNORE));
}

static void short_way(int me, int n)
{
    for (int i = 0; i < M; i++) {
        uint64_t v = ((uint64_t)me << 32) | (uint64_t)i, got[2];
        MPI_Request r[2];
        for (int p = 0; p < PEERS; p++)
            P2P_OK(MPI_Irecv(&got[p], 1, MPI_UINT64_T, from(me, n, p), 9, MPI_COMM_WORLD, &r[p]));
        for (int p = 0; p < PEERS; p++)
            P2P_OK(MPI_Send(&v, 1, MPI_UINT64_T, (me + 1 + p) % n, 9, MPI_COMM_WORLD));
        P2P_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        for (int p = 0; p < PEERS; p++)
            CHECK(got[p] == (((uint64_t)from(me, n, p) << 32) | (uint64_t)i),
                  "short: round %d from rank %d: got %#llx", i, from(me, n, p),
                  (unsigned long long)got[p]);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char *out = malloc((size_t)PEERS * M * BIG), *in = malloc((size_t)PEERS * M * BIG);
    CHECK(out && in, "out of memory");
    for (int round = 0; round < 3; round++) {
        posted(me, n, out, in);
        MPI_Barrier(MPI_COMM_WORLD);
        late(me, n, out, in);
        MPI_Barrier(MPI_COMM_WORLD);
        short_way(me, n);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(out), free(in);
    if (me == 0)
        printf("p2p_lanes: %d ranks ok\n", n);
    MPI_Finalize();
    return 0;
}
