/* part_basic.c: partitioned point-to-point (MPI-4.1 §4) in a ring: every rank sends to
 * its right neighbour and receives from its left one, byte for byte checked, round after
 * round with the buffer rewritten between rounds:
 *  - partition counts equal and not (8 to 2, 2 to 8, 3 to 5, 1 to 16), zero-byte ones;
 *  - send buffers in the shared heap (malloc after MPI_Init), static and on the stack;
 *  - MPI_Pready one by one in reverse, MPI_Pready_range in halves, MPI_Pready_list in a
 *    shuffled order; completion by MPI_Wait, MPI_Test loops, MPI_Waitall;
 *  - MPI_Startall over several partitioned requests and a persistent send at once;
 *  - derived datatypes with holes on either side;
 *  - matching in the order of initialization, whatever order the rounds start in;
 *  - MPI_PROC_NULL; MPI_Parrived of MPI_REQUEST_NULL and of an inactive request; pairs
 *    freed without a round, and a pair freed while its send is still active.
 * Standard MPI only: it passes on any correct MPI 4 (and runs under HMPI_NODE_SIZE, where
 * some neighbours are on another node and the MPI below carries them). */
#include "../p2p_common.h"

static int rank, nranks, right, left;
static MPI_Comm comm;

enum { STATIC_INTS = 1 << 18 };
static int static_send[STATIC_INTS], static_recv[STATIC_INTS];

static int value(int sender, int round, size_t i)
{
    return (int)p2p_mix(((uint64_t)sender << 40) ^ ((uint64_t)round << 24) ^ i);
}

enum { BUF_HEAP, BUF_STATIC, BUF_STACK };
enum { HOW_EACH, HOW_RANGE, HOW_LIST, HOW_KINDS };

/* Marks partitions 0..n-1 of request s, as how says. */
static void mark_all(MPI_Request s, int n, int how, int round)
{
    if (how == HOW_EACH) {
        for (int i = n - 1; i >= 0; i--)
            CHECK(MPI_Pready(i, s) == MPI_SUCCESS, "MPI_Pready(%d)", i);
    } else if (how == HOW_RANGE) {
        int h = n / 2;
        if (h > 0)
            CHECK(MPI_Pready_range(0, h - 1, s) == MPI_SUCCESS, "MPI_Pready_range(0, %d)", h - 1);
        CHECK(MPI_Pready_range(h, n - 1, s) == MPI_SUCCESS, "MPI_Pready_range(%d, %d)", h, n - 1);
    } else {
        int *list = malloc((size_t)n * sizeof *list);
        for (int i = 0; i < n; i++)
            list[i] = i;
        for (int i = n - 1; i > 0; i--) { /* a shuffle of its own per round */
            int j = (int)(p2p_mix((uint64_t)round * 131 + (uint64_t)i) % (uint64_t)(i + 1));
            int t = list[i];
            list[i] = list[j];
            list[j] = t;
        }
        CHECK(MPI_Pready_list(n, list, s) == MPI_SUCCESS, "MPI_Pready_list of %d", n);
        free(list);
    }
}

/* total ints, cut into sparts on the send side and rparts on the receive side, rounds
 * rounds; the send buffer where kind says. */
static void ring(int sparts, int rparts, size_t total, int kind, int rounds, int how)
{
    CHECK(total % (size_t)sparts == 0 && total % (size_t)rparts == 0, "bad case");
    int stack_send[kind == BUF_STACK ? total + 1 : 1];
    int *sbuf = kind == BUF_HEAP     ? malloc(total * sizeof(int) + 1)
                : kind == BUF_STATIC ? static_send
                                     : stack_send;
    int *rbuf = kind == BUF_STATIC ? static_recv : malloc(total * sizeof(int) + 1);
    CHECK(kind != BUF_STATIC || total <= STATIC_INTS, "static buffers too small");
    MPI_Request q[2];
    CHECK(MPI_Psend_init(sbuf, sparts, (MPI_Count)(total / (size_t)sparts), MPI_INT, right, 7, comm,
                         MPI_INFO_NULL, &q[0]) == MPI_SUCCESS,
          "MPI_Psend_init");
    CHECK(MPI_Precv_init(rbuf, rparts, (MPI_Count)(total / (size_t)rparts), MPI_INT, left, 7, comm,
                         MPI_INFO_NULL, &q[1]) == MPI_SUCCESS,
          "MPI_Precv_init");
    for (int round = 0; round < rounds; round++) {
        for (size_t i = 0; i < total; i++)
            sbuf[i] = value(rank, round, i);
        memset(rbuf, 0xa5, total * sizeof(int));
        int h = round % 3;
        if (h == 0) {
            CHECK(MPI_Startall(2, q) == MPI_SUCCESS, "MPI_Startall");
        } else {
            CHECK(MPI_Start(&q[1]) == MPI_SUCCESS, "MPI_Start (receive)");
            CHECK(MPI_Start(&q[0]) == MPI_SUCCESS, "MPI_Start (send)");
        }
        mark_all(q[0], sparts, how, round);
        MPI_Status st[2];
        if (h == 1) {
            CHECK(MPI_Waitall(2, q, st) == MPI_SUCCESS, "MPI_Waitall");
        } else {
            int done[2] = {0, 0};
            while (!done[0] || !done[1])
                for (int k = 0; k < 2; k++)
                    if (!done[k])
                        CHECK(MPI_Test(&q[k], &done[k], &st[k]) == MPI_SUCCESS, "MPI_Test");
        }
        CHECK(q[0] != MPI_REQUEST_NULL && q[1] != MPI_REQUEST_NULL, "a persistent request went");
        /* (MPI-4.1 says nothing of a partitioned receive's status: MPICH 4.2.1 counts 0,
         * HMPI the message; part_early checks HMPI's) */
        for (size_t i = 0; i < total; i++)
            CHECK(rbuf[i] == value(left, round, i),
                  "%d->%d partitions, %zu ints, buffer kind %d, round %d: int %zu is %d, want %d",
                  sparts, rparts, total, kind, round, i, rbuf[i], value(left, round, i));
    }
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    CHECK(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL, "freed requests not null");
    if (kind == BUF_HEAP)
        free(sbuf);
    if (kind != BUF_STATIC)
        free(rbuf);
}

/* Derived datatypes with holes: the sender's elements are 2 ints of every 3 (a vector),
 * the receiver's plain ints; then the other way round. Sent to rank to, received from
 * rank from. */
static void ring_vector(int send_holes, int to, int from)
{
    enum { PARTS = 4, ELEMS = 64 }; /* vector elements a partition */
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec); /* ints 0 and 2 of 3; extent 3 ints */
    MPI_Datatype vres;
    MPI_Type_create_resized(vec, 0, 3 * (MPI_Aint)sizeof(int), &vres);
    MPI_Type_commit(&vres);
    MPI_Type_free(&vec);
    size_t n = (size_t)PARTS * ELEMS, ints = 2 * n; /* data ints */
    int *holey = malloc(3 * n * sizeof(int)), *flat = malloc(ints * sizeof(int));
    MPI_Request q[2];
    for (int round = 0; round < 3; round++) {
        /* the sender's data, packed, is value(rank, round, k) for k = 0.. */
        if (send_holes) {
            for (size_t e = 0; e < n; e++) {
                holey[3 * e] = value(rank, round, 2 * e);
                holey[3 * e + 1] = -1;
                holey[3 * e + 2] = value(rank, round, 2 * e + 1);
            }
            memset(flat, 0x5a, ints * sizeof(int));
        } else {
            for (size_t k = 0; k < ints; k++)
                flat[k] = value(rank, round, k);
            for (size_t e = 0; e < 3 * n; e++)
                holey[e] = 77; /* the holes must stay 77 */
        }
        if (round == 0) {
            if (send_holes) {
                MPI_Psend_init(holey, PARTS, ELEMS, vres, to, 8, comm, MPI_INFO_NULL, &q[0]);
                MPI_Precv_init(flat, 2 * PARTS, ELEMS, MPI_INT, from, 8, comm, MPI_INFO_NULL,
                               &q[1]);
            } else {
                MPI_Psend_init(flat, 2, (MPI_Count)ints / 2, MPI_INT, to, 8, comm, MPI_INFO_NULL,
                               &q[0]);
                MPI_Precv_init(holey, PARTS, ELEMS, vres, from, 8, comm, MPI_INFO_NULL, &q[1]);
            }
            MPI_Type_free(&vres); /* the requests keep it (MPI-4.1 §5.1.9) */
        }
        MPI_Startall(2, q);
        mark_all(q[0], send_holes ? PARTS : 2, round % HOW_KINDS, round);
        CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "MPI_Waitall (vector)");
        for (size_t e = 0; e < n; e++) {
            int a = send_holes ? flat[2 * e] : holey[3 * e];
            int b = send_holes ? flat[2 * e + 1] : holey[3 * e + 2];
            CHECK(a == value(from, round, 2 * e) && b == value(from, round, 2 * e + 1),
                  "vector (holes on the %s side), round %d: element %zu is %d %d",
                  send_holes ? "send" : "receive", round, e, a, b);
            CHECK(send_holes || holey[3 * e + 1] == 77, "a hole was written at element %zu", e);
        }
    }
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    free(holey);
    free(flat);
}

/* MPI_Startall over three partitioned pairs and a persistent send and receive at once. */
static void startall_many(void)
{
    enum { PAIRS = 3, N = 1024 };
    int *s[PAIRS], *r[PAIRS], ps = 0, pr = -1;
    MPI_Request q[2 * PAIRS + 2];
    for (int k = 0; k < PAIRS; k++) {
        s[k] = malloc(N * sizeof(int));
        r[k] = malloc(N * sizeof(int));
        MPI_Psend_init(s[k], 4 << k, N / (4 << k), MPI_INT, right, 20 + k, comm, MPI_INFO_NULL,
                       &q[k]);
        MPI_Precv_init(r[k], 2, N / 2, MPI_INT, left, 20 + k, comm, MPI_INFO_NULL, &q[PAIRS + k]);
    }
    MPI_Send_init(&ps, 1, MPI_INT, right, 30, comm, &q[2 * PAIRS]);
    MPI_Recv_init(&pr, 1, MPI_INT, left, 30, comm, &q[2 * PAIRS + 1]);
    for (int round = 0; round < 5; round++) {
        for (int k = 0; k < PAIRS; k++)
            for (int i = 0; i < N; i++)
                s[k][i] = value(rank, round * 10 + k, (size_t)i);
        ps = rank * 100 + round;
        CHECK(MPI_Startall(2 * PAIRS + 2, q) == MPI_SUCCESS, "MPI_Startall of %d", 2 * PAIRS + 2);
        for (int k = PAIRS - 1; k >= 0; k--)
            mark_all(q[k], 4 << k, (round + k) % HOW_KINDS, round);
        CHECK(MPI_Waitall(2 * PAIRS + 2, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "MPI_Waitall");
        for (int k = 0; k < PAIRS; k++)
            for (int i = 0; i < N; i++)
                CHECK(r[k][i] == value(left, round * 10 + k, (size_t)i),
                      "Startall pair %d round %d: int %d", k, round, i);
        CHECK(pr == left * 100 + round, "persistent receive got %d", pr);
    }
    for (int k = 0; k < 2 * PAIRS + 2; k++)
        MPI_Request_free(&q[k]);
    for (int k = 0; k < PAIRS; k++)
        free(s[k]), free(r[k]);
}

/* Two sends and two receives of one (source, tag): they match in the order of their
 * initialization, though the sender starts and marks the second one first. */
static void init_order(void)
{
    enum { N = 512 };
    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    int *x = malloc(N * sizeof(int)), *y = malloc(N * sizeof(int));
    MPI_Request sa, sb, rx, ry;
    MPI_Psend_init(a, 2, N / 2, MPI_INT, right, 40, comm, MPI_INFO_NULL, &sa);
    MPI_Precv_init(x, 4, N / 4, MPI_INT, left, 40, comm, MPI_INFO_NULL, &rx);
    MPI_Psend_init(b, 4, N / 4, MPI_INT, right, 40, comm, MPI_INFO_NULL, &sb);
    MPI_Precv_init(y, 2, N / 2, MPI_INT, left, 40, comm, MPI_INFO_NULL, &ry);
    for (int i = 0; i < N; i++) {
        a[i] = value(rank, 1, (size_t)i);
        b[i] = value(rank, 2, (size_t)i);
    }
    MPI_Start(&ry);
    MPI_Start(&sb);
    mark_all(sb, 4, HOW_LIST, 0);
    MPI_Start(&rx);
    MPI_Start(&sa);
    mark_all(sa, 2, HOW_EACH, 0);
    MPI_Request all[4] = {sa, sb, rx, ry};
    CHECK(MPI_Waitall(4, all, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "MPI_Waitall (order)");
    for (int i = 0; i < N; i++)
        CHECK(x[i] == value(left, 1, (size_t)i) && y[i] == value(left, 2, (size_t)i),
              "initialization order not kept: int %d", i);
    MPI_Request_free(&sa), MPI_Request_free(&sb), MPI_Request_free(&rx), MPI_Request_free(&ry);
    free(a), free(b), free(x), free(y);
}

/* MPI_PROC_NULL on both sides: every round completes at once, the receive's status says
 * MPI_PROC_NULL. Where HMPI is active: MPICH 4.0.2 alone crashes in MPI_Psend_init to it. */
static void proc_null(void)
{
    int buf[8] = {0};
    MPI_Request s, r;
    MPI_Status st;
    CHECK(MPI_Psend_init(buf, 2, 4, MPI_INT, MPI_PROC_NULL, 1, comm, MPI_INFO_NULL, &s) ==
              MPI_SUCCESS,
          "MPI_Psend_init to MPI_PROC_NULL");
    CHECK(MPI_Precv_init(buf, 4, 2, MPI_INT, MPI_PROC_NULL, 1, comm, MPI_INFO_NULL, &r) ==
              MPI_SUCCESS,
          "MPI_Precv_init from MPI_PROC_NULL");
    for (int round = 0; round < 3; round++) {
        MPI_Start(&s);
        MPI_Start(&r);
        CHECK(MPI_Pready_range(0, 1, s) == MPI_SUCCESS, "MPI_Pready_range to MPI_PROC_NULL");
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Wait(&r, &st);
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "status of a PROC_NULL receive: source %d",
              st.MPI_SOURCE);
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

/* Requests freed without a round (they still match each other: the next pair of the
 * same tag meets its own), and a send freed while active (erroneous, MPI-4.1 §4.2.2),
 * which HMPI completes on its own. Between neighbours in pairs (0 with 1, ...: one node
 * also under HMPI_NODE_SIZE=2), where HMPI is active: MPICH 4.0.2 alone crashes when a
 * partitioned receive freed before any round is matched, and loses a send freed while
 * active. */
static void freed(void)
{
    int buf[8] = {0};
    MPI_Request s, r;
    int partner = rank ^ 1;
    if (partner >= nranks)
        return;
    /* freed without a round, both sides */
    MPI_Psend_init(buf, 1, 8, MPI_INT, partner, 50, comm, MPI_INFO_NULL, &s);
    MPI_Precv_init(buf, 1, 8, MPI_INT, partner, 50, comm, MPI_INFO_NULL, &r);
    MPI_Request_free(&s);
    MPI_Request_free(&r);

    /* a send freed while active: the round completes all the same */
    int *sb = malloc(256 * sizeof(int)), *rb = malloc(256 * sizeof(int));
    for (int i = 0; i < 256; i++)
        sb[i] = value(rank, 9, (size_t)i);
    MPI_Psend_init(sb, 4, 64, MPI_INT, partner, 50, comm, MPI_INFO_NULL, &s);
    MPI_Precv_init(rb, 1, 256, MPI_INT, partner, 50, comm, MPI_INFO_NULL, &r);
    MPI_Start(&s);
    MPI_Start(&r);
    MPI_Pready_range(0, 3, s);
    MPI_Request_free(&s);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < 256; i++)
        CHECK(rb[i] == value(partner, 9, (size_t)i), "send freed while active: int %d", i);
    MPI_Request_free(&r);
    MPI_Sendrecv(buf, 1, MPI_INT, partner, 52, buf + 1, 1, MPI_INT, partner, 52, comm,
                 MPI_STATUS_IGNORE); /* the partner read sb before it goes */
    free(sb), free(rb);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    right = (rank + 1) % nranks;
    left = (rank + nranks - 1) % nranks;

    static const int pairs[][2] = {{4, 4}, {8, 2}, {2, 8}, {3, 5}, {1, 16}, {16, 1}};
    for (size_t c = 0; c < sizeof pairs / sizeof pairs[0]; c++)
        for (int kind = BUF_HEAP; kind <= BUF_STACK; kind++)
            ring(pairs[c][0], pairs[c][1], 240 * 16, kind, 4, (int)(c + (size_t)kind) % HOW_KINDS);
    ring(4, 4, 1 << 18, BUF_HEAP, 3, HOW_RANGE);   /* 1 MiB, 256 KiB partitions */
    ring(4, 2, 1 << 18, BUF_STATIC, 3, HOW_LIST);  /* 1 MiB outside the heap */
    ring(8, 8, 0 * 8, BUF_HEAP, 2, HOW_EACH);      /* zero-byte partitions */
    ring(64, 16, 1 << 12, BUF_STACK, 3, HOW_LIST); /* many small partitions */
#ifdef OPEN_MPI
    /* Open MPI 5.0.7's own partitioned calls move a datatype with holes as if it had none
     * (the holes arrive): only between neighbours in pairs, one node also under
     * HMPI_NODE_SIZE=2, where HMPI carries them. */
    if (HMPI_Active && HMPI_Active() && (rank ^ 1) < nranks) {
        ring_vector(1, rank ^ 1, rank ^ 1);
        ring_vector(0, rank ^ 1, rank ^ 1);
    }
#else
    ring_vector(1, right, left);
    ring_vector(0, right, left);
#endif
    startall_many();
    init_order();
    int flag = 0;
    CHECK(MPI_Parrived(MPI_REQUEST_NULL, 3, &flag) == MPI_SUCCESS && flag,
          "MPI_Parrived(MPI_REQUEST_NULL)");
    if (HMPI_Active && HMPI_Active()) {
        proc_null();
        freed();
    }

    MPI_Barrier(comm);
    if (rank == 0)
        printf("part_basic: OK (%d ranks, heap buffers %s)\n", nranks,
               p2p_shared(static_send) == 0 ? "shared, static ones not" : "as the MPI has them");
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
