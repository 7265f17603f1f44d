/* opi_wildcard.c: takes with MPI_ANY_SOURCE and MPI_ANY_TAG. Every rank gives a stream
 * of buffers to rank 0, which takes them with wildcards: statuses name the right giver,
 * tag and count, each giver's buffers arrive in the order given (non-overtaking), and
 * with simulated nodes one wildcard take is satisfied by local givers (pointers) and
 * remote ones (contents) alike. Then isolation: OPI traffic never matches an ordinary
 * receive on the same communicator and tag, nor ordinary messages a take. */
#include "opi_common.h"

static int rank, nranks;

enum { PER_GIVER = 300, NTAGS = 3 }; /* PER_GIVER a multiple of NTAGS */

/* Payload: giver, sequence number, then a pattern of that pair. */
static size_t size_of(int giver, int seq) { return 16 + (size_t)((giver * 131 + seq * 17) % 5000); }

static void check_payload(const void *p, size_t n, int giver, int seq, const char *what)
{
    const int *h = p;
    CHECK(h[0] == giver && h[1] == seq, "%s: payload says giver %d seq %d, expected %d/%d", what,
          h[0], h[1], giver, seq);
    opi_verify((const char *)p + 16, n - 16, giver, 1, (uint64_t)seq, what);
}

static void give_stream(int to)
{
    for (int seq = 0; seq < PER_GIVER; seq++) {
        size_t n = size_of(rank, seq);
        int *p = NULL;
        OPI_Alloc((void **)&p, n);
        p[0] = rank;
        p[1] = seq;
        opi_fill((char *)p + 16, n - 16, rank, 1, (uint64_t)seq);
        CHECK(OPI_Give((void **)&p, (int)n, MPI_BYTE, to, seq % NTAGS, MPI_COMM_WORLD) == 0,
              "give");
    }
}

/* Rank 0 takes everything: mostly any source and tag, sometimes one tag. MPI orders
 * messages per (giver, tag): a take of seq s with tag t needs every earlier seq of that
 * giver with tag t taken already. */
static void take_streams(void)
{
    char *taken = calloc((size_t)nranks * PER_GIVER, 1);
    int total = PER_GIVER * nranks, left_with[NTAGS];
    for (int t = 0; t < NTAGS; t++)
        left_with[t] = PER_GIVER / NTAGS * nranks;
    for (int got = 0; got < total; got++) {
        void *p = NULL;
        MPI_Status st;
        int tag = got % 5 == 3 && left_with[got % NTAGS] ? got % NTAGS : MPI_ANY_TAG;
        CHECK(OPI_Take(&p, 6000, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st) == 0, "take");
        int g = st.MPI_SOURCE;
        CHECK(g >= 0 && g < nranks, "status source %d", g);
        int seq = ((int *)p)[1];
        CHECK(seq >= 0 && seq < PER_GIVER && !taken[g * PER_GIVER + seq], "giver %d: seq %d twice",
              g, seq);
        for (int s = seq % NTAGS; s < seq; s += NTAGS)
            CHECK(taken[g * PER_GIVER + s], "giver %d: seq %d overtook seq %d (tag %d)", g, seq, s,
                  seq % NTAGS);
        taken[g * PER_GIVER + seq] = 1;
        left_with[seq % NTAGS]--;
        CHECK(st.MPI_TAG == seq % NTAGS && (tag == MPI_ANY_TAG || tag == st.MPI_TAG),
              "status tag %d, seq %d", st.MPI_TAG, seq);
        CHECK(opi_count(&st, MPI_BYTE) == (int)size_of(g, seq), "count %d, expected %zu",
              opi_count(&st, MPI_BYTE), size_of(g, seq));
        check_payload(p, size_of(g, seq), g, seq, "wildcard");
        OPI_Free(&p);
    }
    free(taken);
}

static void streams(void)
{
    give_stream(0);
    if (rank == 0)
        take_streams();
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Specific source, any tag: per (giver, tag) order still holds. */
static void any_tag(void)
{
    int left = (rank + nranks - 1) % nranks, right = (rank + 1) % nranks;
    for (int i = 0; i < 40; i++) {
        void *p = NULL;
        OPI_Alloc(&p, 64);
        ((int *)p)[0] = i;
        OPI_Give(&p, 4, MPI_INT, right, i % 7, MPI_COMM_WORLD);
    }
    for (int i = 0; i < 40; i++) {
        void *p = NULL;
        MPI_Status st;
        OPI_Take(&p, 4, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK(((int *)p)[0] == i && st.MPI_TAG == i % 7 && st.MPI_SOURCE == left,
              "any tag: got %d tag %d", ((int *)p)[0], st.MPI_TAG);
        CHECK(opi_count(&st, MPI_INT) == 4, "count");
        OPI_Free(&p);
    }
}

/* OPI and ordinary messages with the same communicator and tag stay apart, in both
 * directions, with wildcard receives and takes posted before either arrives. */
static void isolation(void)
{
    int left = (rank + nranks - 1) % nranks, right = (rank + 1) % nranks;
    enum { TAG = 5, MAGIC_MPI = 0x4d5049, MAGIC_OPI = 0x4f5049 };
    int msg = 0;
    void *p = NULL;
    MPI_Request r[2];
    MPI_Status st[2];
    MPI_Irecv(&msg, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]);
    OPI_Itake(&p, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]);
    MPI_Barrier(MPI_COMM_WORLD); /* both posted everywhere before anything is sent */
    int *q = NULL;
    OPI_Alloc((void **)&q, sizeof(int));
    *q = MAGIC_OPI;
    OPI_Give((void **)&q, 1, MPI_INT, right, TAG, MPI_COMM_WORLD);
    int m = MAGIC_MPI;
    MPI_Send(&m, 1, MPI_INT, right, TAG, MPI_COMM_WORLD);
    MPI_Waitall(2, r, st);
    CHECK(msg == MAGIC_MPI && st[0].MPI_SOURCE == left, "ordinary receive got %#x", msg);
    CHECK(*(int *)p == MAGIC_OPI && st[1].MPI_SOURCE == left, "take got %#x", *(int *)p);
    OPI_Free(&p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    streams();
    any_tag();
    isolation();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("opi_wildcard: ok (%d ranks, HMPI %s)\n", nranks, HMPI_Active() ? "on" : "off");
    MPI_Finalize();
    return 0;
}
