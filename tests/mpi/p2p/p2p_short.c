/* p2p_short.c: blocking MPI_Send/MPI_Recv of small contiguous messages, the calls HMPI
 * serves by a short way (straight from the sender's lane slot into the receive buffer)
 * whenever nothing stands in its way, and by the general engine otherwise. Every case
 * here puts something in the way, or checks what the short way itself must get right.
 * Before most cases the receiver sends a "go" and goes straight into its receive, so
 * the messages land while it waits there (no other call of the receiver takes them in
 * first):
 *   flood     more blocking sends than a lane holds (64 slots by default), once piled up before
 *             the receiver looks, once while it receives: some small messages go by
 *             the queue between lane ones; all received in order, one MPI_Recv each;
 *   tags      the lane's next message is for another tag: a receive for the later tag
 *             gets the later message, then the first one is still there for its tag;
 *   posted    an MPI_Irecv is pending when a blocking MPI_ANY_TAG receive runs: the
 *             first message is the MPI_Irecv's, the blocking receive gets the second;
 *   status    MPI_ANY_TAG fills the tag, the source and the count;
 *   truncate  a 16-byte message into 8 bytes: MPI_ERR_TRUNCATE, 8 bytes landed, the
 *             bytes after the buffer untouched;
 *   empty     zero elements from and into NULL;
 *   types     a contiguous derived type, and a resized type whose extent is its size;
 *   isend     small MPI_Isend/MPI_Irsend (HMPI completes them as they start and hands
 *             out one shared complete request) in one array with receive requests,
 *             finished by Waitall, Testall, Waitany, Waitsome, Wait and Request_free,
 *             round after round: every message arrives, every handle ends null, and
 *             the receive requests (fresh ones each round) keep their own statuses.
 * Ranks pair up (0,1), (2,3), ...; an odd last rank only joins the barriers. Standard
 * MPI: passes on any correct MPI. */
#include "../p2p_common.h"

enum {
    FLOOD = 300,
    TAG_GO = 99,
    TAG_FLOOD = 1,
    TAG_A = 2,
    TAG_B = 3,
    TAG_POSTED = 4,
    TAG_ONE = 5,
    TAG_ISEND = 6
};

/* The receiver's "go": it enters its next receive right after sending this. */
static void go(int peer, int sender)
{
    if (sender)
        P2P_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    else
        P2P_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD));
}

static void flood(int me, int peer, int sender, int piled)
{
    /* 8, 24 and 200 bytes: all of them small enough for the lane. */
    static const int sizes[3] = {8, 24, 200};
    unsigned char buf[256];
    uint64_t seed = 1 + (uint64_t)piled;
    if (!piled)
        go(peer, sender);
    if (sender) {
        for (int i = 0; i < FLOOD; i++) {
            p2p_fill(buf, (size_t)sizes[i % 3], p2p_key(me, TAG_FLOOD, (uint64_t)i, seed));
            P2P_OK(MPI_Send(buf, sizes[i % 3], MPI_BYTE, peer, TAG_FLOOD, MPI_COMM_WORLD));
        }
        if (piled)
            MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    if (piled)
        MPI_Barrier(MPI_COMM_WORLD); /* every message sent before the first receive */
    for (int i = 0; i < FLOOD; i++) {
        MPI_Status st;
        memset(buf, 0, sizeof buf);
        P2P_OK(MPI_Recv(buf, (int)sizeof buf, MPI_BYTE, peer, TAG_FLOOD, MPI_COMM_WORLD, &st));
        CHECK(p2p_count(&st, MPI_BYTE) == sizes[i % 3], "flood %d: count %d, expected %d", i,
              p2p_count(&st, MPI_BYTE), sizes[i % 3]);
        P2P_CHECK_DATA(buf, (size_t)sizes[i % 3], p2p_key(peer, TAG_FLOOD, (uint64_t)i, seed),
                       "%s flood message %d", piled ? "piled" : "live", i);
    }
}

static void tags(int me, int peer, int sender)
{
    uint64_t v[2] = {0, 0};
    go(peer, sender);
    if (sender) {
        v[0] = p2p_key(me, TAG_A, 0, 2);
        P2P_OK(MPI_Send(&v[0], 1, MPI_UINT64_T, peer, TAG_A, MPI_COMM_WORLD));
        v[1] = p2p_key(me, TAG_B, 0, 2);
        P2P_OK(MPI_Send(&v[1], 1, MPI_UINT64_T, peer, TAG_B, MPI_COMM_WORLD));
        return;
    }
    P2P_OK(MPI_Recv(&v[1], 1, MPI_UINT64_T, peer, TAG_B, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    P2P_OK(MPI_Recv(&v[0], 1, MPI_UINT64_T, peer, TAG_A, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(v[0] == p2p_key(peer, TAG_A, 0, 2), "tag %d received the wrong message", TAG_A);
    CHECK(v[1] == p2p_key(peer, TAG_B, 0, 2), "tag %d received the wrong message", TAG_B);
}

static void posted(int me, int peer, int sender)
{
    uint64_t a = 0, b = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    if (!sender)
        P2P_OK(MPI_Irecv(&a, 1, MPI_UINT64_T, peer, TAG_POSTED, MPI_COMM_WORLD, &r));
    go(peer, sender);
    if (sender) {
        a = p2p_key(me, TAG_POSTED, 0, 3);
        P2P_OK(MPI_Send(&a, 1, MPI_UINT64_T, peer, TAG_POSTED, MPI_COMM_WORLD));
        b = p2p_key(me, TAG_ONE, 0, 3);
        P2P_OK(MPI_Send(&b, 1, MPI_UINT64_T, peer, TAG_ONE, MPI_COMM_WORLD));
        return;
    }
    MPI_Status st;
    P2P_OK(MPI_Recv(&b, 1, MPI_UINT64_T, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    P2P_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(st.MPI_TAG == TAG_ONE, "the MPI_ANY_TAG receive matched tag %d, not %d", st.MPI_TAG,
          TAG_ONE);
    CHECK(a == p2p_key(peer, TAG_POSTED, 0, 3), "the posted receive got the wrong message");
    CHECK(b == p2p_key(peer, TAG_ONE, 0, 3), "the blocking receive got the wrong message");
}

static void status_truncate_empty(int me, int peer, int sender)
{
    unsigned char buf[24];
    MPI_Status st;
    go(peer, sender);
    if (sender) {
        p2p_fill(buf, 12, p2p_key(me, 9, 0, 4));
        P2P_OK(MPI_Send(buf, 12, MPI_BYTE, peer, 9, MPI_COMM_WORLD));
    } else {
        P2P_OK(MPI_Recv(buf, (int)sizeof buf, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 9 && p2p_count(&st, MPI_BYTE) == 12,
              "ANY_TAG status: source %d tag %d count %d, expected %d 9 12", st.MPI_SOURCE,
              st.MPI_TAG, p2p_count(&st, MPI_BYTE), peer);
        P2P_CHECK_DATA(buf, 12, p2p_key(peer, 9, 0, 4), "ANY_TAG message");
    }

    if (!sender) {
        memset(buf, 0xEE, sizeof buf);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
    go(peer, sender);
    if (sender) {
        p2p_fill(buf, 16, p2p_key(me, 10, 0, 4));
        P2P_OK(MPI_Send(buf, 16, MPI_BYTE, peer, 10, MPI_COMM_WORLD));
    } else {
        P2P_FAILS(MPI_ERR_TRUNCATE, MPI_Recv(buf, 8, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &st));
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 10, "truncated: source %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
        P2P_CHECK_DATA(buf, 8, p2p_key(peer, 10, 0, 4), "truncated message");
        for (int i = 8; i < (int)sizeof buf; i++)
            CHECK(buf[i] == 0xEE, "truncated receive wrote byte %d past its 8", i);
    }

    go(peer, sender);
    if (sender) {
        P2P_OK(MPI_Send(NULL, 0, MPI_INT, peer, 11, MPI_COMM_WORLD));
    } else {
        P2P_OK(MPI_Recv(NULL, 0, MPI_INT, peer, 11, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_TAG == 11 && p2p_count(&st, MPI_INT) == 0, "empty: tag %d count %d",
              st.MPI_TAG, p2p_count(&st, MPI_INT));
    }
}

static void types(int me, int peer, int sender)
{
    MPI_Datatype pair, wide;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Type_create_resized(MPI_DOUBLE, 0, sizeof(double), &wide);
    MPI_Type_commit(&wide);
    int iv[6];
    double dv[3];
    for (int k = 0; k < 2; k++) {
        go(peer, sender);
        if (sender) {
            for (int i = 0; i < 6; i++)
                iv[i] = me * 100 + i;
            for (int i = 0; i < 3; i++)
                dv[i] = me + 0.5 * i;
            if (k == 0)
                P2P_OK(MPI_Send(iv, 3, pair, peer, 12, MPI_COMM_WORLD));
            else
                P2P_OK(MPI_Send(dv, 3, wide, peer, 13, MPI_COMM_WORLD));
        } else if (k == 0) {
            MPI_Status st;
            P2P_OK(MPI_Recv(iv, 3, pair, peer, 12, MPI_COMM_WORLD, &st));
            CHECK(p2p_count(&st, pair) == 3, "pair count %d", p2p_count(&st, pair));
            for (int i = 0; i < 6; i++)
                CHECK(iv[i] == peer * 100 + i, "pair element %d: %d", i, iv[i]);
        } else {
            P2P_OK(MPI_Recv(dv, 3, wide, peer, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < 3; i++)
                CHECK(dv[i] == peer + 0.5 * i, "double %d: %g", i, dv[i]);
        }
    }
    MPI_Type_free(&pair);
    MPI_Type_free(&wide);
}

/* Finishes the 2k requests of one isend round (receives at even indices, sends at odd)
 * the way `how` picks; returns how many handles are not null afterwards. */
static int finish_round(MPI_Request *r, int k2, MPI_Status *st, int how)
{
    int flag = 0, idx, outs[32], nout;
    switch (how) {
    case 0: P2P_OK(MPI_Waitall(k2, r, st)); break;
    case 1:
        while (!flag)
            P2P_OK(MPI_Testall(k2, r, &flag, st));
        break;
    case 2:
        for (int n = 0; n < k2; n++) {
            MPI_Status one;
            P2P_OK(MPI_Waitany(k2, r, &idx, &one));
            CHECK(idx != MPI_UNDEFINED && r[idx] == MPI_REQUEST_NULL, "Waitany gave %d", idx);
            st[idx] = one;
        }
        break;
    case 3:
        for (int left = k2; left > 0; left -= nout) {
            MPI_Status some[32];
            P2P_OK(MPI_Waitsome(k2, r, &nout, outs, some));
            CHECK(nout != MPI_UNDEFINED && nout > 0, "Waitsome gave %d", nout);
            for (int j = 0; j < nout; j++)
                st[outs[j]] = some[j];
        }
        break;
    default: /* the sends freed (their messages still go), the receives waited one by one */
        for (int i = 0; i < k2; i++) {
            if (i % 2)
                P2P_OK(MPI_Request_free(&r[i]));
            else
                P2P_OK(MPI_Wait(&r[i], &st[i]));
        }
    }
    int live = 0;
    for (int i = 0; i < k2; i++)
        live += r[i] != MPI_REQUEST_NULL;
    return live;
}

static void isend(int me, int peer)
{
    enum { ROUNDS = 40, K = 12 };
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t out[K], in[K];
        MPI_Request r[2 * K];
        MPI_Status st[2 * K];
        for (int i = 0; i < K; i++) {
            in[i] = 0;
            P2P_OK(MPI_Irecv(&in[i], 1, MPI_UINT64_T, peer, TAG_ISEND + i % 2, MPI_COMM_WORLD,
                             &r[2 * i]));
        }
        /* Both sides' receives are posted past this exchange: MPI_Irsend is allowed. */
        P2P_OK(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, TAG_GO, NULL, 0, MPI_BYTE, peer, TAG_GO,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < K; i++) {
            out[i] = p2p_key(me, TAG_ISEND, (uint64_t)(round * K + i), 6);
            int (*fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) =
                i % 3 == 2 ? MPI_Irsend : MPI_Isend;
            P2P_OK(fn(&out[i], 1, MPI_UINT64_T, peer, TAG_ISEND + i % 2, MPI_COMM_WORLD,
                      &r[2 * i + 1]));
        }
        int how = round % 5;
        int live = finish_round(r, 2 * K, st, how);
        CHECK(live == 0, "round %d (way %d): %d handles not null", round, how, live);
        for (int i = 0; i < K; i++) {
            CHECK(in[i] == p2p_key(peer, TAG_ISEND, (uint64_t)(round * K + i), 6),
                  "round %d (way %d): message %d wrong", round, how, i);
            const MPI_Status *s = &st[2 * i];
            CHECK(s->MPI_SOURCE == peer && s->MPI_TAG == TAG_ISEND + i % 2 &&
                      p2p_count(s, MPI_UINT64_T) == 1,
                  "round %d (way %d): receive %d status source %d tag %d count %d", round, how, i,
                  s->MPI_SOURCE, s->MPI_TAG, p2p_count(s, MPI_UINT64_T));
            int cancelled = 1;
            if (how != 4) {
                MPI_Test_cancelled(&st[2 * i + 1], &cancelled);
                CHECK(!cancelled, "round %d (way %d): send %d reads as cancelled", round, how, i);
            }
        }
        /* out[] is reused next round: the freed sends must have gone out by now. */
        P2P_OK(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, TAG_GO, NULL, 0, MPI_BYTE, peer, TAG_GO,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int peer = me ^ 1, sender = me % 2 == 0;
    if (peer < n) {
        /* The floods last: a full lane sends the next few messages by the queue. */
        tags(me, peer, sender);
        posted(me, peer, sender);
        status_truncate_empty(me, peer, sender);
        types(me, peer, sender);
        isend(me, peer);
        flood(me, peer, sender, 1);
        flood(me, peer, sender, 0);
    } else {
        MPI_Barrier(MPI_COMM_WORLD); /* an unpaired last rank: the piled flood's barrier */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        printf("p2p_short: %d ranks ok\n", n);
    MPI_Finalize();
    return 0;
}
