/* corrupt_envelope.c: a sender corrupts its own envelope in flight, one field at a
 * time (size, data pointer, source, proto, tag, local rank); the receiver must get
 * MPI_ERR_INTERN with nothing written to its buffer or the guard bytes around it, and
 * the next, normal messages (one by the lane, one by the queue) must arrive intact. A
 * wrong sequence number (pseq) costs only order, never a message. Last, a queue link
 * pointing out of the heap: the message behind it is lost (and logged), the receiver
 * does not crash; and a queue link that leads back to a newer message (a loop): the
 * receiver does not go round forever, and both messages arrive once, in order.
 * 2 ranks on one node.
 * Built against HMPI's internal headers, p2p/engine.h (the envelope's layout) among
 * them: it reaches the envelope through the send request. Ordering, deterministic: the
 * sender pushes with MPI_Issend, corrupts, then signals by PMPI_Bcast on the MPI below;
 * the receiver makes no HMPI call between the barrier that opens a round and that
 * broadcast, so it cannot see the envelope early. */
#define CHECK_WITH_MPI
#include "../../check.h"
#include "p2p/engine.h"
#include "heap/heap.h"
#include "../below_sym.h" /* BELOW(X): the MPI below's PMPI_X (HMPI exports PMPI_X too) */
#include "hmpi.h"

#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

enum { GUARD = 256, SMALL = 64, HEAP = 4096 };

typedef enum {
    CASE_SIZE,      /* immediate message claiming 1 GiB */
    CASE_DATA_AWAY, /* heap message whose data points outside the shared heap */
    CASE_DATA_END,  /* heap message whose data runs past the end of the heap */
    CASE_SRC_RANGE, /* source rank not in the communicator (ANY_SOURCE receive) */
    CASE_SRC_SPOOF, /* source of another member (the receiver itself) */
    CASE_PROTO,     /* protocol out of the table */
    CASE_TAG,       /* negative tag (ANY_TAG receive) */
    CASE_SRC_LOCAL, /* local rank other than the envelope's slice */
    CASE_PSEQ,      /* a sequence number far ahead: the message still arrives */
    CASE_LINK,      /* the incoming queue's link to an older message points away */
    CASE_LOOP,      /* the older message's link leads back to the newer one */
    NCASES
} corrupt_case_t;

static const char *case_name[NCASES] = {"size",      "data-away", "data-end", "src-range",
                                        "src-spoof", "proto",     "tag",      "src_local",
                                        "pseq",      "link",      "loop"};

static unsigned char pattern(int round, size_t i)
{
    return (unsigned char)(i * 131u + (unsigned)round * 7u + 1u);
}

/* Corrupts e for case c; returns 1 when the receive must fail, 0 when the case does
 * not apply here (CMA unavailable: the message travels intact). */
static int corrupt(corrupt_case_t c, hmpi_env_t *e)
{
    static int away;
    switch (c) {
    case CASE_SIZE: e->size = (uint64_t)1 << 30; return 1;
    case CASE_DATA_AWAY: e->data = &away; return 1;
    case CASE_DATA_END:
        e->data = (const char *)hmpi_region.slices + hmpi_region.slices_len - 100;
        return 1;
    case CASE_SRC_RANGE: e->src = 12345; return 1;
    case CASE_SRC_SPOOF: e->src = 1; return 1;
    case CASE_PROTO: e->proto = 77; return 1;
    case CASE_TAG: e->tag = -5; return 1;
    case CASE_SRC_LOCAL: e->src_local = 1; return 1;
    case CASE_PSEQ: e->pseq += 1000000; return 0;
    case CASE_LINK: /* the message itself is intact: only the one pushed before is lost */
        e->link.next = (hmpi_qnode_t *)(uintptr_t)0x1000;
        return 0;
    case CASE_LOOP: /* e -> older -> e: pushed after e, the older one's link goes round */
        e->link.next->next = &e->link;
        return 0;
    default: return 0;
    }
}

static void sender(corrupt_case_t c, int round)
{
    size_t n = c == CASE_DATA_AWAY || c == CASE_DATA_END ? HEAP : SMALL;
    unsigned char small[SMALL];
    unsigned char *buf = n == HEAP ? hmpi_heap_shared_alloc(n) : small;
    CHECK(buf, "no heap buffer");
    for (size_t i = 0; i < n; i++)
        buf[i] = pattern(round, i);
    if (c == CASE_LINK || c == CASE_LOOP) { /* queued first (no lane above 256 B) */
        static unsigned char older[512];
        CHECK(MPI_Send(older, sizeof older, MPI_BYTE, 1, 999, MPI_COMM_WORLD) == MPI_SUCCESS,
              "send");
    }
    MPI_Request req;
    CHECK(MPI_Issend(buf, (int)n, MPI_BYTE, 1, round, MPI_COMM_WORLD, &req) == MPI_SUCCESS,
          "Issend");
    CHECK(hmpi_req_is_ours(req), "case %s: the local send is not HMPI's", case_name[c]);
    hmpi_env_t *e = hmpi_req_obj(req)->env;
    CHECK(e, "case %s: a synchronous send without an envelope in flight", case_name[c]);
    int expect = corrupt(c, e);
    BELOW(Bcast)(&expect, 1, MPI_INT, 0, MPI_COMM_WORLD); /* the receiver may look now */
    /* The receiver marks even a bad envelope DONE: the send completes normally. */
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "case %s: send failed", case_name[c]);
    if (n == HEAP)
        hmpi_heap_free(buf);
}

static void check_guards(const unsigned char *g, size_t cap, const char *what, int round)
{
    for (size_t i = 0; i < GUARD; i++) {
        CHECK(g[i] == 0xA5, "%s (round %d): front guard byte %zu is %#x", what, round, i, g[i]);
        CHECK(g[GUARD + cap + i] == 0xA5, "%s (round %d): back guard byte %zu is %#x", what, round,
              i, g[GUARD + cap + i]);
    }
}

static void receiver(corrupt_case_t c, int round)
{
    size_t cap = c == CASE_DATA_AWAY || c == CASE_DATA_END ? HEAP : SMALL;
    unsigned char *g = malloc(cap + 2 * GUARD);
    CHECK(g, "no memory");
    memset(g, 0xA5, GUARD);
    memset(g + GUARD, 0x5A, cap);
    memset(g + GUARD + cap, 0xA5, GUARD);
    int expect = 0;
    BELOW(Bcast)(&expect, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int source = c == CASE_SRC_RANGE ? MPI_ANY_SOURCE : c == CASE_SRC_SPOOF ? 1 : 0;
    int tag = c == CASE_TAG ? MPI_ANY_TAG : round;
    MPI_Status st;
    if (c == CASE_LOOP) { /* both taken in one go: the older message is the first */
        CHECK(MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "probe");
        CHECK(st.MPI_TAG == 999, "case loop: tag %d came first, want the older message's 999",
              st.MPI_TAG);
    }
    int err = MPI_Recv(g + GUARD, (int)cap, MPI_BYTE, source, tag, MPI_COMM_WORLD, &st);
    check_guards(g, cap, case_name[c], round);
    if (expect) {
        int cls = -1;
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_INTERN, "case %s: receive returned class %d, want MPI_ERR_INTERN",
              case_name[c], cls);
        for (size_t i = 0; i < cap; i++)
            CHECK(g[GUARD + i] == 0x5A, "case %s: byte %zu written by a failed receive",
                  case_name[c], i);
    } else {
        CHECK(err == MPI_SUCCESS, "case %s (not applicable): receive failed", case_name[c]);
        for (size_t i = 0; i < cap; i++)
            CHECK(g[GUARD + i] == pattern(round, i), "case %s: byte %zu differs", case_name[c], i);
        if (c == CASE_LINK) { /* the older message was behind the broken link: gone */
            int flag = 1;
            MPI_Iprobe(0, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            CHECK(!flag, "case link: the message behind the broken link arrived");
        }
        if (c == CASE_LOOP) { /* nothing lost: the loop closed on the newest message */
            unsigned char older[512];
            memset(older, 0x5A, sizeof older);
            CHECK(MPI_Recv(older, sizeof older, MPI_BYTE, 0, 999, MPI_COMM_WORLD, &st) ==
                      MPI_SUCCESS,
                  "case loop: the older message");
            for (size_t i = 0; i < sizeof older; i++)
                CHECK(older[i] == 0, "case loop: byte %zu of the older message is %#x", i,
                      older[i]);
            int again[2] = {1, 1}; /* (the sender may be on to the next round's tags) */
            MPI_Iprobe(0, 999, MPI_COMM_WORLD, &again[0], MPI_STATUS_IGNORE);
            MPI_Iprobe(0, round, MPI_COMM_WORLD, &again[1], MPI_STATUS_IGNORE);
            CHECK(!again[0] && !again[1], "case loop: a message arrived twice");
        }
    }
    free(g);
}

/* Normal messages after each corrupted one, a small one (the sender's lane) and a
 * larger one (the queue): the job goes on, data intact. */
static void normal_round(int rank, int round)
{
    enum { N = 3000, LANE = 8 };
    unsigned char *buf = malloc(N + 2 * GUARD);
    CHECK(buf, "no memory");
    memset(buf, 0xA5, N + 2 * GUARD);
    if (rank == 0) {
        for (size_t i = 0; i < N; i++)
            buf[GUARD + i] = pattern(round, i);
        CHECK(MPI_Send(buf + GUARD, LANE, MPI_BYTE, 1, 2000 + round, MPI_COMM_WORLD) == MPI_SUCCESS,
              "normal small send");
        CHECK(MPI_Send(buf + GUARD, N, MPI_BYTE, 1, 1000 + round, MPI_COMM_WORLD) == MPI_SUCCESS,
              "normal send");
    } else {
        MPI_Status st;
        CHECK(MPI_Recv(buf + GUARD, N, MPI_BYTE, 0, 2000 + round, MPI_COMM_WORLD, &st) ==
                  MPI_SUCCESS,
              "normal small receive after a corrupted one (round %d)", round);
        for (size_t i = 0; i < LANE; i++)
            CHECK(buf[GUARD + i] == pattern(round, i), "small round %d: byte %zu differs", round,
                  i);
        memset(buf + GUARD, 0, LANE);
        CHECK(MPI_Recv(buf + GUARD, N, MPI_BYTE, 0, 1000 + round, MPI_COMM_WORLD, &st) ==
                  MPI_SUCCESS,
              "normal receive after a corrupted one (round %d)", round);
        check_guards(buf, N, "normal", round);
        for (size_t i = 0; i < N; i++)
            CHECK(buf[GUARD + i] == pattern(round, i), "normal round %d: byte %zu differs", round,
                  i);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 ranks");
    CHECK(HMPI_Active(), "HMPI is not active: nothing to corrupt");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int c = 0; c < NCASES; c++) {
        BELOW(Barrier)(MPI_COMM_WORLD); /* the receiver is out of HMPI until the Bcast */
        if (rank == 0)
            sender((corrupt_case_t)c, c);
        else
            receiver((corrupt_case_t)c, c);
        normal_round(rank, c);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        printf("corrupt_envelope: %d corruptions survived, guards intact\n", NCASES);
    MPI_Finalize();
    return 0;
}
