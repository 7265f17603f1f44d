/* opi_basic.c: OPI_Give/OPI_Take between ranks of one node (the pointer itself must
 * arrive, zero copy) and of different nodes (the contents, into a buffer of the
 * taker's), checked byte for byte: sizes across size classes and protocols, blocking
 * and nonblocking, give-to-self, MPI_PROC_NULL, a strided datatype, buffers passed on
 * around the ring, and a communicator enabled with OPI_Comm_enable. */
#include "opi_common.h"

static int rank, nranks;
static int my_slice = -1; /* this rank's slice of the shared heap (-1: none, or no malloc) */

/* Ring: give to the right, take from the left, blocking (gives never wait). */
static void ring_blocking(void)
{
    static const size_t sizes[] = {0, 1, 7, 8, 63, 64, 65, 255, 256, 1000, 4096, 65536, 1 << 20};
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        void *p = NULL;
        CHECK(OPI_Alloc(&p, n) == MPI_SUCCESS && p, "OPI_Alloc(%zu)", n);
        CHECK(HMPI_Is_shared(p) == HMPI_Active(), "buffer shared iff HMPI is active");
        opi_fill(p, n, rank, (int)k, n);
        void *given = p;
        CHECK(OPI_Give(&p, (int)n, MPI_BYTE, right, (int)k, MPI_COMM_WORLD) == MPI_SUCCESS, "give");
        CHECK(p == NULL, "OPI_Give must clear the pointer");
        /* Tell the taker where the buffer was: a local take must get that very pointer. */
        void *theirs = NULL;
        MPI_Sendrecv(&given, sizeof given, MPI_BYTE, right, 1000 + (int)k, &theirs, sizeof theirs,
                     MPI_BYTE, left, 1000 + (int)k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        void *q = NULL;
        MPI_Status st;
        CHECK(OPI_Take(&q, (int)n, MPI_BYTE, left, (int)k, MPI_COMM_WORLD, &st) == MPI_SUCCESS,
              "take");
        CHECK(q != NULL, "take gave no buffer");
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == (int)k, "status %d/%d", st.MPI_SOURCE,
              st.MPI_TAG);
        CHECK(opi_count(&st, MPI_BYTE) == (int)n, "count %d, expected %zu",
              opi_count(&st, MPI_BYTE), n);
        if (opi_same_node(left))
            CHECK(q == theirs, "local take of %zu B: got %p, the giver's buffer was %p", n, q,
                  theirs);
        else if (HMPI_Active() && my_slice >= 0)
            CHECK(HMPI_Owner(q) == my_slice,
                  "a remote take gets a buffer of this rank's "
                  "slice, not %d",
                  HMPI_Owner(q));
        opi_verify(q, n, left, (int)k, n, "ring");
        CHECK(OPI_Free(&q) == MPI_SUCCESS && q == NULL, "free");
    }
}

/* Pairs exchange with Itake posted first, then Igive, in one Waitall. */
static void pairs_nonblocking(void)
{
    int peer = rank ^ 1;
    if (peer >= nranks)
        peer = rank; /* odd rank count: the last one trades with itself */
    for (int it = 0; it < 50; it++) {
        size_t n = (size_t)(it * 997) % 70000;
        int count = (int)(n / sizeof(double));
        void *out = NULL, *in = NULL;
        MPI_Request r[2];
        MPI_Status st[2];
        CHECK(OPI_Itake(&in, count, MPI_DOUBLE, peer, it, MPI_COMM_WORLD, &r[0]) == 0, "itake");
        OPI_Alloc(&out, (size_t)count * sizeof(double));
        opi_fill(out, (size_t)count * sizeof(double), rank, it, 7);
        CHECK(OPI_Igive(&out, count, MPI_DOUBLE, peer, it, MPI_COMM_WORLD, &r[1]) == 0, "igive");
        CHECK(out == NULL, "OPI_Igive must clear the pointer");
        CHECK(MPI_Waitall(2, r, st) == MPI_SUCCESS, "waitall");
        CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == it, "status");
        CHECK(opi_count(&st[0], MPI_DOUBLE) == count, "count %d, expected %d",
              opi_count(&st[0], MPI_DOUBLE), count);
        opi_verify(in, (size_t)count * sizeof(double), peer, it, 7, "pairs");
        OPI_Free(&in);
    }
}

/* A rank gives to itself: blocking (give, then take) and nonblocking (take first). */
static void to_self(void)
{
    for (int it = 0; it < 20; it++) {
        size_t n = (size_t)1 << (it % 18);
        void *p = NULL, *q = NULL;
        OPI_Alloc(&p, n);
        opi_fill(p, n, rank, it, 1);
        void *given = p;
        CHECK(OPI_Give(&p, (int)n, MPI_BYTE, rank, it, MPI_COMM_WORLD) == 0, "give to self");
        CHECK(OPI_Take(&q, (int)n, MPI_BYTE, rank, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == 0,
              "take from self");
        if (HMPI_Active())
            CHECK(q == given, "give to self passes the pointer");
        opi_verify(q, n, rank, it, 1, "self");
        MPI_Request r[2];
        CHECK(OPI_Itake(&p, (int)n, MPI_BYTE, 0, it, MPI_COMM_SELF, &r[0]) == 0, "itake self");
        CHECK(OPI_Igive(&q, (int)n, MPI_BYTE, 0, it, MPI_COMM_SELF, &r[1]) == 0, "igive self");
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        opi_verify(p, n, rank, it, 1, "self comm");
        OPI_Free(&p);
    }
}

static void proc_null(void)
{
    void *p = NULL;
    MPI_Status st;
    OPI_Alloc(&p, 100);
    CHECK(OPI_Give(&p, 100, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD) == 0 && !p,
          "give to PROC_NULL consumes the buffer");
    p = (void *)&st;
    CHECK(OPI_Take(&p, 100, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st) == 0, "take");
    CHECK(p == NULL && st.MPI_SOURCE == MPI_PROC_NULL && opi_count(&st, MPI_BYTE) == 0,
          "take from PROC_NULL: no buffer, PROC_NULL status");
    MPI_Request r;
    p = (void *)&st;
    CHECK(OPI_Itake(&p, 5, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r) == 0, "itake");
    MPI_Wait(&r, &st);
    CHECK(p == NULL && st.MPI_SOURCE == MPI_PROC_NULL, "itake from PROC_NULL");
}

/* Every other int of 3 blocks of 4: a give with a strided type keeps its layout. */
static void strided(void)
{
    MPI_Datatype vec;
    MPI_Type_vector(3, 4, 8, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    int *p = NULL;
    OPI_Alloc((void **)&p, 64 * sizeof(int)); /* two elements span 40 ints */
    for (int i = 0; i < 64; i++)
        p[i] = rank * 1000 + i;
    OPI_Give((void **)&p, 2, vec, right, 77, MPI_COMM_WORLD);
    int *q = NULL;
    MPI_Status st;
    CHECK(OPI_Take((void **)&q, 2, vec, left, 77, MPI_COMM_WORLD, &st) == 0, "take strided");
    CHECK(opi_count(&st, vec) == 2, "count %d of the vector type", opi_count(&st, vec));
    /* Element e starts at e*20 ints (extent: (3-1)*8+4); its blocks at +0, +8, +16. */
    for (int e = 0; e < 2; e++)
        for (int b = 0; b < 3; b++)
            for (int j = 0; j < 4; j++) {
                int i = e * 20 + b * 8 + j;
                CHECK(q[i] == left * 1000 + i, "strided int %d is %d, expected %d", i, q[i],
                      left * 1000 + i);
            }
    OPI_Free((void **)&q);
    MPI_Type_free(&vec);
}

/* One buffer per rank travels the whole ring; each holder adds its rank to every word. */
static void pass_on(void)
{
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    enum { WORDS = 5000 };
    long *p = NULL;
    OPI_Alloc((void **)&p, WORDS * sizeof(long));
    for (int i = 0; i < WORDS; i++)
        p[i] = i;
    int origin = rank;
    for (int hop = 0; hop < nranks; hop++) {
        OPI_Give((void **)&p, WORDS, MPI_LONG, right, 5, MPI_COMM_WORLD);
        OPI_Take((void **)&p, WORDS, MPI_LONG, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        origin = (origin + nranks - 1) % nranks;
        long add = 0; /* ranks origin+1 .. rank have added theirs so far */
        for (int k = 1; k <= hop; k++)
            add += (origin + k) % nranks;
        for (int i = 0; i < WORDS; i++)
            CHECK(p[i] == i + add, "hop %d word %d: %ld, expected %ld", hop, i, p[i], i + add);
        for (int i = 0; i < WORDS; i++)
            p[i] += rank;
    }
    OPI_Free((void **)&p);
}

/* OPI on a communicator of its own: enabled collectively; ranks numbered within it. */
static void other_comm(void)
{
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, nranks - rank, &half);
    CHECK(OPI_Comm_enable(half) == MPI_SUCCESS, "enable");
    CHECK(OPI_Comm_enable(half) == MPI_SUCCESS, "enable twice");
    int r, n;
    MPI_Comm_rank(half, &r);
    MPI_Comm_size(half, &n);
    void *p = NULL;
    OPI_Alloc(&p, 3000);
    opi_fill(p, 3000, r, 9, 9);
    OPI_Give(&p, 3000, MPI_BYTE, (r + 1) % n, 9, half);
    CHECK(OPI_Take(&p, 3000, MPI_BYTE, MPI_ANY_SOURCE, 9, half, MPI_STATUS_IGNORE) == 0, "take");
    opi_verify(p, 3000, (r + n - 1) % n, 9, 9, "split comm");
    OPI_Free(&p);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    opi_same_node(0);
    void *m = malloc(64);
    my_slice = HMPI_Owner(m);
    free(m);
    ring_blocking();
    pairs_nonblocking();
    to_self();
    proc_null();
    strided();
    pass_on();
    other_comm();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("opi_basic: ok (%d ranks, HMPI %s)\n", nranks, HMPI_Active() ? "on" : "off");
    MPI_Finalize();
    return 0;
}
