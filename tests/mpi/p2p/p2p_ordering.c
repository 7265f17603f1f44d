/* p2p_ordering.c: MPI's non-overtaking rule. Every rank streams thousands of
 * messages to itself, to rank+1 and to rank+n/2; sizes jump across the protocol
 * thresholds within one stream (100 KiB then 8 B with the same tag, ...). Receives
 * use MPI_ANY_SOURCE and MPI_ANY_TAG and select by tag out of order; each message
 * must be the next one of its (sender, tag) stream, and with MPI_ANY_TAG the next
 * one of its sender. Payloads are checked byte for byte. */
#include "../p2p_common.h"

#define SEED 0x0DE50DE5ull
#define MAX_MSG (100u << 10)
#define WINDOW 8 /* receives kept posted in phase 0 */
#define NPHASES 3

/* Phase 0: one tag, receives (ANY_SOURCE, tag) pre-posted in a sliding window.
 * Phase 1: five tags, blocking receives (ANY_SOURCE, ANY_TAG).
 * Phase 2: three tags received selectively: tag 12 per source, then tag 10 from
 *          ANY_SOURCE, then the rest per source with ANY_TAG. */
static const int phase_msgs[NPHASES] = {2000, 1000, 1000};
static const char *phase_name[NPHASES] = {"one tag, pre-posted ANY_SOURCE window",
                                          "ANY_SOURCE+ANY_TAG", "selective by tag"};

/* Sizes that cross every protocol boundary, in a row, with one tag: j % 100 >= 90. */
static const size_t cross[10] = {100u << 10, 8, 24577, 0, 8193, 1, 65536, 256, 257, 8192};

static int rank, nranks;
static int dests[3], ndests, srcs[3], nsrcs;
static unsigned char *scratch;
static long nchecked;

/* Message j of the stream ph: s -> d. */
static void gen(int ph, int s, int d, int j, int *tag, size_t *size)
{
    uint64_t base = p2p_mix(SEED ^ ((uint64_t)ph << 48 | (uint64_t)s << 24 | (uint64_t)d));
    int r = j % 100;
    /* the 8 B message right after the 100 KiB one keeps its tag */
    uint64_t ht = p2p_mix(base ^ (uint64_t)(r == 91 ? j - 1 : j));
    *tag = ph == 0 ? 7 : ph == 1 ? 1 + (int)(ht % 5) : 10 + (int)(ht % 3);
    uint64_t h = p2p_mix(ht ^ 0x51CE);
    if (r >= 90)
        *size = cross[r - 90];
    else if (h % 100 < 85)
        *size = (h >> 16) % 257;
    else if (h % 100 < 97)
        *size = 257 + (h >> 16) % (8192 - 257 + 1);
    else
        *size = 8193 + (h >> 16) % (24577 - 8193 + 1);
}

/* The payload: the pattern of (s, tag, index), with {s, d, j, tag} in front when
 * it fits, so that a failure can say which message came instead. */
static void payload(int ph, int s, int d, int j, int tag, size_t size, unsigned char *buf)
{
    p2p_fill(buf, size,
             p2p_key(s, tag, (uint64_t)ph << 40 | (uint64_t)d << 20 | (uint64_t)j, SEED));
    if (size >= 16) {
        uint32_t h[4] = {(uint32_t)s, (uint32_t)d, (uint32_t)j, (uint32_t)tag};
        memcpy(buf, h, 16);
    }
}

/* A received message must be message j of s's stream to this rank. */
static void check_msg(int ph, int s, int j, const unsigned char *buf, const MPI_Status *st)
{
    int tag;
    size_t size;
    gen(ph, s, rank, j, &tag, &size);
    int count = p2p_count(st, MPI_BYTE);
    char came[96] = "";
    if (count >= 16) {
        uint32_t h[4];
        memcpy(h, buf, 16);
        snprintf(came, sizeof came, " (its header says: from %u to %u, message %u, tag %u)", h[0],
                 h[1], h[2], h[3]);
    }
    CHECK(st->MPI_SOURCE == s, "phase %d (%s): expected source %d, status says %d", ph,
          phase_name[ph], s, st->MPI_SOURCE);
    CHECK(st->MPI_TAG == tag && count == (int)size,
          "phase %d (%s): from %d to %d expected message %d (tag %d, %zu B), got tag %d, "
          "%d B%s: order broken",
          ph, phase_name[ph], s, rank, j, tag, size, st->MPI_TAG, count, came);
    payload(ph, s, rank, j, tag, size, scratch);
    for (size_t i = 0; i < size; i++)
        CHECK(buf[i] == scratch[i],
              "phase %d (%s): from %d to %d message %d (tag %d, %zu B): byte %zu expected "
              "0x%02x, got 0x%02x%s",
              ph, phase_name[ph], s, rank, j, tag, size, i, scratch[i], buf[i], came);
    nchecked++;
}

/* Posts every message of phase ph to every destination, streams interleaved. */
static MPI_Request *send_all(int ph, unsigned char **arena_p, int *nreq_p)
{
    int m = phase_msgs[ph];
    size_t total = 0;
    for (int j = 0; j < m; j++)
        for (int k = 0; k < ndests; k++) {
            int tag;
            size_t size;
            gen(ph, rank, dests[k], j, &tag, &size);
            total += size;
        }
    unsigned char *arena = malloc(total + 1), *p = arena;
    MPI_Request *rq = malloc(sizeof *rq * (size_t)m * ndests);
    CHECK(arena && rq, "out of memory (%zu B)", total);
    int n = 0;
    for (int j = 0; j < m; j++)
        for (int k = 0; k < ndests; k++) {
            int tag;
            size_t size;
            gen(ph, rank, dests[k], j, &tag, &size);
            payload(ph, rank, dests[k], j, tag, size, p);
            MPI_Isend(p, (int)size, MPI_BYTE, dests[k], tag, MPI_COMM_WORLD, &rq[n++]);
            p += size;
        }
    *arena_p = arena;
    *nreq_p = n;
    return rq;
}

static int src_index(int s)
{
    for (int i = 0; i < nsrcs; i++)
        if (srcs[i] == s)
            return i;
    CHECK(0, "message from %d, which sends nothing to %d", s, rank);
    return -1;
}

/* The index of the next message with tag in s's stream after position from, or -1. */
static int next_with_tag(int ph, int s, int from, int tag)
{
    for (int j = from; j < phase_msgs[ph]; j++) {
        int t;
        size_t size;
        gen(ph, s, rank, j, &t, &size);
        if (t == tag)
            return j;
    }
    return -1;
}

static void phase0(void)
{
    int m = phase_msgs[0], total = m * nsrcs, next[3] = {0, 0, 0};
    unsigned char *buf[WINDOW];
    MPI_Request rq[WINDOW];
    for (int w = 0; w < WINDOW; w++) {
        buf[w] = malloc(MAX_MSG);
        CHECK(buf[w], "out of memory");
        if (w < total)
            MPI_Irecv(buf[w], MAX_MSG, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &rq[w]);
    }
    unsigned char *arena;
    int nreq;
    MPI_Request *srq = send_all(0, &arena, &nreq);
    for (int k = 0; k < total; k++) {
        int w = k % WINDOW;
        MPI_Status st;
        MPI_Wait(&rq[w], &st);
        int i = src_index(st.MPI_SOURCE);
        CHECK(next[i] < m, "phase 0: more than %d messages from %d", m, st.MPI_SOURCE);
        check_msg(0, st.MPI_SOURCE, next[i]++, buf[w], &st);
        if (k + WINDOW < total)
            MPI_Irecv(buf[w], MAX_MSG, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &rq[w]);
    }
    MPI_Waitall(nreq, srq, MPI_STATUSES_IGNORE);
    for (int w = 0; w < WINDOW; w++)
        free(buf[w]);
    free(srq);
    free(arena);
}

static void phase1(void)
{
    int m = phase_msgs[1], total = m * nsrcs, next[3] = {0, 0, 0};
    unsigned char *buf = malloc(MAX_MSG), *arena;
    CHECK(buf, "out of memory");
    int nreq;
    MPI_Request *srq = send_all(1, &arena, &nreq);
    for (int k = 0; k < total; k++) {
        MPI_Status st;
        MPI_Recv(buf, MAX_MSG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int i = src_index(st.MPI_SOURCE);
        CHECK(next[i] < m, "phase 1: more than %d messages from %d", m, st.MPI_SOURCE);
        check_msg(1, st.MPI_SOURCE, next[i]++, buf, &st);
    }
    MPI_Waitall(nreq, srq, MPI_STATUSES_IGNORE);
    free(buf);
    free(srq);
    free(arena);
}

static void phase2(void)
{
    unsigned char *buf = malloc(MAX_MSG), *arena;
    CHECK(buf, "out of memory");
    int nreq;
    MPI_Request *srq = send_all(2, &arena, &nreq);
    p2p_barrier_polite(MPI_COMM_WORLD); /* most messages are now unexpected */
    MPI_Status st;
    /* tag 12 from each source in turn, skipping the other tags */
    for (int i = 0; i < nsrcs; i++)
        for (int j = next_with_tag(2, srcs[i], 0, 12); j >= 0;
             j = next_with_tag(2, srcs[i], j + 1, 12)) {
            MPI_Recv(buf, MAX_MSG, MPI_BYTE, srcs[i], 12, MPI_COMM_WORLD, &st);
            check_msg(2, srcs[i], j, buf, &st);
        }
    /* tag 10 from any source */
    int next10[3], left = 0;
    for (int i = 0; i < nsrcs; i++) {
        next10[i] = next_with_tag(2, srcs[i], 0, 10);
        for (int j = next10[i]; j >= 0; j = next_with_tag(2, srcs[i], j + 1, 10))
            left++;
    }
    for (; left > 0; left--) {
        MPI_Recv(buf, MAX_MSG, MPI_BYTE, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &st);
        int i = src_index(st.MPI_SOURCE);
        CHECK(next10[i] >= 0, "phase 2: one tag-10 message too many from %d", srcs[i]);
        check_msg(2, srcs[i], next10[i], buf, &st);
        next10[i] = next_with_tag(2, srcs[i], next10[i] + 1, 10);
    }
    /* what is left (tag 11) per source with ANY_TAG, nonblocking */
    for (int i = 0; i < nsrcs; i++)
        for (int j = next_with_tag(2, srcs[i], 0, 11); j >= 0;
             j = next_with_tag(2, srcs[i], j + 1, 11)) {
            MPI_Request rq;
            MPI_Irecv(buf, MAX_MSG, MPI_BYTE, srcs[i], MPI_ANY_TAG, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, &st);
            check_msg(2, srcs[i], j, buf, &st);
        }
    int flag;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CHECK(!flag, "phase 2: a message left over from %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    MPI_Waitall(nreq, srq, MPI_STATUSES_IGNORE);
    free(buf);
    free(srq);
    free(arena);
}

static void add_unique(int *set, int *n, int v)
{
    for (int i = 0; i < *n; i++)
        if (set[i] == v)
            return;
    set[(*n)++] = v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double t0 = MPI_Wtime();
    add_unique(dests, &ndests, (rank + 1) % nranks);
    add_unique(dests, &ndests, (rank + nranks / 2) % nranks);
    add_unique(dests, &ndests, rank);
    add_unique(srcs, &nsrcs, (rank - 1 + nranks) % nranks);
    add_unique(srcs, &nsrcs, (rank - nranks / 2 + nranks) % nranks);
    add_unique(srcs, &nsrcs, rank);
    scratch = malloc(MAX_MSG);
    CHECK(scratch, "out of memory");

    void (*phases[NPHASES])(void) = {phase0, phase1, phase2};
    for (int ph = 0; ph < NPHASES; ph++) {
        double t = MPI_Wtime();
        phases[ph]();
        p2p_barrier_polite(MPI_COMM_WORLD); /* no stream may reach the next phase's receives */
        if (rank == 0 && getenv("P2P_VERBOSE"))
            printf("  phase %d (%s): %.3f s\n", ph, phase_name[ph], MPI_Wtime() - t);
    }
    long total = 0;
    MPI_Reduce(&nchecked, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_ordering: OK, %ld messages in order on %d ranks in %.2f s\n", total, nranks,
               MPI_Wtime() - t0);
    free(scratch);
    MPI_Finalize();
    return 0;
}
