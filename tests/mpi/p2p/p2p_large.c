/* p2p_large.c: counts and sizes past 2^31. MPI 4's large-count calls (MPI_Send_c, ...)
 * must meet HMPI's int calls in one matching order: every _c call of the send and
 * receive families paired with an int call on the other side (and _c with _c), around a
 * ring, wildcards included; a message of more than 2 GiB as MPI_BYTE with a count past
 * INT_MAX (MPI_Send_c/MPI_Recv_c, MPI_Isend_c/MPI_Recv_c from MPI_ANY_SOURCE) and as
 * one element of a type larger than 2 GiB through the int calls, checked byte for
 * byte with MPI_Get_count_c/MPI_Get_elements_x; non-contiguous data past 2 GiB refused
 * with MPI_ERR_COUNT; negative _c counts refused. The _c parts need an MPI 4 below
 * (MPICH 4); under Open MPI 4.1 only the int parts run. */
#include "../p2p_common.h"

#include <limits.h>

#define SEED 0x1A26Eull

static int rank, size;

/* The large message: 2^31 + 4099 bytes (odd, past INT_MAX). */
#define BIG ((size_t)1 << 31 | 4099)

/* One element of a contiguous type of BIG bytes, through the int calls. */
static void big_type_int(void)
{
    MPI_Datatype half, big;
    MPI_Type_contiguous((int)(BIG / 2), MPI_BYTE, &half);
    int lens[2] = {2, (int)(BIG % 2)};
    MPI_Aint disps[2] = {0, (MPI_Aint)(BIG / 2 * 2)};
    MPI_Datatype types[2] = {half, MPI_BYTE};
    MPI_Type_create_struct(BIG % 2 ? 2 : 1, lens, disps, types, &big);
    MPI_Type_commit(&big);
    MPI_Type_free(&half);
    MPI_Count tsize = 0;
    MPI_Type_size_x(big, &tsize);
    CHECK((size_t)tsize == BIG, "type size %lld, expected %zu", (long long)tsize, BIG);
    uint64_t key = p2p_key(0, 77, 0, SEED);
    if (rank == 0) {
        unsigned char *out = p2p_malloc(BIG);
        p2p_fill(out, BIG, key);
        CHECK(MPI_Send(out, 1, big, 1, 77, MPI_COMM_WORLD) == MPI_SUCCESS, "big-type send");
        free(out);
    } else if (rank == 1) {
        unsigned char *in = p2p_malloc(BIG);
        memset(in, 0, BIG);
        MPI_Status st;
        CHECK(MPI_Recv(in, 1, big, 0, 77, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "big-type receive");
        MPI_Count n = -1;
        MPI_Get_elements_x(&st, MPI_BYTE, &n);
        CHECK((size_t)n == BIG, "big-type receive: %lld bytes, expected %zu", (long long)n, BIG);
        P2P_CHECK_DATA(in, BIG, key, "one element of a %zu-byte type", BIG);
        free(in);
    }
    MPI_Type_free(&big);
}

/* Non-contiguous data past 2 GiB: refused before any byte is read (a small buffer). */
static void big_noncontig_refused(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype strided;
    MPI_Type_vector(1 << 21, 1024, 2048, MPI_BYTE, &strided); /* 2 GiB of data */
    MPI_Type_commit(&strided);
    char small[16];
    int peer = (rank + 1) % size;
    int rc = MPI_Send(small, 2, strided, peer, 5, MPI_COMM_WORLD);
    CHECK(p2p_class(rc) == MPI_ERR_COUNT, "4 GiB strided send: %s, expected MPI_ERR_COUNT",
          p2p_errstr(rc));
    MPI_Request rq = MPI_REQUEST_NULL;
    rc = MPI_Irecv(small, 2, strided, peer, 5, MPI_COMM_WORLD, &rq);
    CHECK(p2p_class(rc) == MPI_ERR_COUNT, "4 GiB strided receive: %s, expected MPI_ERR_COUNT",
          p2p_errstr(rc));
    MPI_Type_free(&strided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

#if MPI_VERSION >= 4

/* The payload of (sender, tag) at size n, into a fresh buffer. */
static unsigned char *payload(int sender, int tag, size_t n)
{
    unsigned char *b = malloc(n ? n : 1);
    p2p_fill(b, n, p2p_key(sender, tag, n, SEED));
    return b;
}

static void expect(const unsigned char *b, int sender, int tag, size_t n, const char *how)
{
    P2P_CHECK_DATA(b, n, p2p_key(sender, tag, n, SEED), "%s from %d tag %d (%zu B)", how, sender,
                   tag, n);
}

static void expect_count(const MPI_Status *st, size_t n, const char *how)
{
    MPI_Count c = -1;
    MPI_Get_count_c(st, MPI_BYTE, &c);
    CHECK((size_t)c == n, "%s: MPI_Get_count_c says %lld, expected %zu", how, (long long)c, n);
}

enum { N_SENDS = 8 };
/* Sends rank -> right with send kind k (0..7: Send, Ssend, Rsend, Bsend and their I
 * forms), half of them as _c, the receiver alternating Recv_c/Irecv/Irecv_c/Recv/ANY.
 * Rsend needs the receive posted: a zero-byte message says it is. */
static void ring_pairs(size_t n)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int k = 0; k < 2 * N_SENDS; k++) {
        int tag = 100 + k, use_c = k & 1, kind = k / 2;
        unsigned char *out = payload(rank, tag, n), *in = calloc(n ? n : 1, 1);
        MPI_Request rr = MPI_REQUEST_NULL, sr = MPI_REQUEST_NULL;
        MPI_Status st;
        int recv_kind = k % 5;
        int src = recv_kind == 4 ? MPI_ANY_SOURCE : left;
        /* Post the receive first (nonblocking for all kinds), then say so. */
        if (recv_kind == 1)
            MPI_Irecv(in, (int)n, MPI_BYTE, src, tag, MPI_COMM_WORLD, &rr);
        else
            MPI_Irecv_c(in, (MPI_Count)n, MPI_BYTE, src, tag, MPI_COMM_WORLD, &rr);
        MPI_Sendrecv(NULL, 0, MPI_BYTE, left, 99, NULL, 0, MPI_BYTE, right, 99, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Count c = (MPI_Count)n;
        int ci = (int)n, rc;
        switch (kind) {
        case 0:
            rc = use_c ? MPI_Send_c(out, c, MPI_BYTE, right, tag, MPI_COMM_WORLD)
                       : MPI_Send(out, ci, MPI_BYTE, right, tag, MPI_COMM_WORLD);
            break;
        case 1:
            rc = use_c ? MPI_Ssend_c(out, c, MPI_BYTE, right, tag, MPI_COMM_WORLD)
                       : MPI_Ssend(out, ci, MPI_BYTE, right, tag, MPI_COMM_WORLD);
            break;
        case 2:
            rc = use_c ? MPI_Rsend_c(out, c, MPI_BYTE, right, tag, MPI_COMM_WORLD)
                       : MPI_Rsend(out, ci, MPI_BYTE, right, tag, MPI_COMM_WORLD);
            break;
        case 3:
            rc = use_c ? MPI_Bsend_c(out, c, MPI_BYTE, right, tag, MPI_COMM_WORLD)
                       : MPI_Bsend(out, ci, MPI_BYTE, right, tag, MPI_COMM_WORLD);
            break;
        case 4:
            rc = use_c ? MPI_Isend_c(out, c, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr)
                       : MPI_Isend(out, ci, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr);
            break;
        case 5:
            rc = use_c ? MPI_Issend_c(out, c, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr)
                       : MPI_Issend(out, ci, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr);
            break;
        case 6:
            rc = use_c ? MPI_Irsend_c(out, c, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr)
                       : MPI_Irsend(out, ci, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr);
            break;
        default:
            rc = use_c ? MPI_Ibsend_c(out, c, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr)
                       : MPI_Ibsend(out, ci, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr);
        }
        CHECK(rc == MPI_SUCCESS, "send kind %d%s of %zu B: %s", kind, use_c ? " (_c)" : "", n,
              p2p_errstr(rc));
        MPI_Wait(&sr, MPI_STATUS_IGNORE);
        MPI_Wait(&rr, &st);
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag, "status source %d tag %d", st.MPI_SOURCE,
              st.MPI_TAG);
        expect(in, left, tag, n, use_c ? "_c send" : "int send to _c receive");
        expect_count(&st, n, "ring");
        free(out);
        free(in);
    }
}

/* Blocking Recv_c, Sendrecv_c, Sendrecv_replace_c, persistent _c requests, matched
 * receives: each against the int call on the other side. */
static void ring_others(size_t n)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status st;
    int tag = 200;
    unsigned char *out = payload(rank, tag, n), *in = calloc(n ? n : 1, 1);

    MPI_Request sr;
    MPI_Isend(out, (int)n, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr);
    MPI_Recv_c(in, (MPI_Count)n, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    expect(in, left, tag, n, "MPI_Recv_c");
    expect_count(&st, n, "MPI_Recv_c");

    memset(in, 0, n);
    MPI_Sendrecv_c(out, (MPI_Count)n, MPI_BYTE, right, tag, in, (MPI_Count)n, MPI_BYTE, left, tag,
                   MPI_COMM_WORLD, &st);
    expect(in, left, tag, n, "MPI_Sendrecv_c");
    expect_count(&st, n, "MPI_Sendrecv_c");

    memcpy(in, out, n);
    MPI_Sendrecv_replace_c(in, (MPI_Count)n, MPI_BYTE, right, tag, left, tag, MPI_COMM_WORLD, &st);
    expect(in, left, tag, n, "MPI_Sendrecv_replace_c");

    /* Persistent: _c send requests to int receives and int sends to a _c receive. */
    MPI_Request ps, pr;
    MPI_Send_init_c(out, (MPI_Count)n, MPI_BYTE, right, tag + 1, MPI_COMM_WORLD, &ps);
    MPI_Recv_init_c(in, (MPI_Count)n, MPI_BYTE, left, tag + 1, MPI_COMM_WORLD, &pr);
    for (int round = 0; round < 3; round++) {
        memset(in, 0, n);
        MPI_Start(&pr);
        MPI_Start(&ps);
        MPI_Wait(&ps, MPI_STATUS_IGNORE);
        MPI_Wait(&pr, &st);
        expect(in, left, tag, n, "persistent _c");
        expect_count(&st, n, "persistent _c");
    }
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);

    /* Matched probes, then MPI_Mrecv_c and MPI_Imrecv_c. */
    for (int i = 0; i < 2; i++) {
        MPI_Isend(out, (int)n, MPI_BYTE, right, tag + 2, MPI_COMM_WORLD, &sr);
        MPI_Message msg;
        MPI_Mprobe(left, tag + 2, MPI_COMM_WORLD, &msg, &st);
        memset(in, 0, n);
        if (i == 0) {
            MPI_Mrecv_c(in, (MPI_Count)n, MPI_BYTE, &msg, &st);
        } else {
            MPI_Request rq;
            MPI_Imrecv_c(in, (MPI_Count)n, MPI_BYTE, &msg, &rq);
            MPI_Wait(&rq, &st);
        }
        MPI_Wait(&sr, MPI_STATUS_IGNORE);
        expect(in, left, tag, n, i ? "MPI_Imrecv_c" : "MPI_Mrecv_c");
        expect_count(&st, n, "matched _c receive");
    }
    free(out);
    free(in);
}

/* A count past INT_MAX, MPI_BYTE: MPI_Send_c to MPI_Recv_c, then MPI_Isend_c to a
 * longer MPI_Recv_c from MPI_ANY_SOURCE. */
static void big_count_c(void)
{
    if (rank > 1)
        return;
    unsigned char *buf = p2p_malloc(BIG);
    uint64_t key = p2p_key(0, 300, 0, SEED);
    if (rank == 0) {
        unsigned char *out = buf;
        p2p_fill(out, BIG, key);
        CHECK(MPI_Send_c(out, (MPI_Count)BIG, MPI_BYTE, 1, 300, MPI_COMM_WORLD) == MPI_SUCCESS,
              "MPI_Send_c of %zu bytes", BIG);
        MPI_Request rq;
        MPI_Isend_c(out, (MPI_Count)BIG, MPI_BYTE, 1, 301, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else {
        unsigned char *in = buf;
        MPI_Status st;
        memset(in, 0, BIG);
        CHECK(MPI_Recv_c(in, (MPI_Count)BIG, MPI_BYTE, 0, 300, MPI_COMM_WORLD, &st) == MPI_SUCCESS,
              "MPI_Recv_c of %zu bytes", BIG);
        expect_count(&st, BIG, "MPI_Recv_c past INT_MAX");
        P2P_CHECK_DATA(in, BIG, key, "MPI_Send_c -> MPI_Recv_c, %zu bytes", BIG);
        memset(in, 0, BIG);
        CHECK(MPI_Recv_c(in, (MPI_Count)BIG + 100, MPI_BYTE, MPI_ANY_SOURCE, 301, MPI_COMM_WORLD,
                         &st) == MPI_SUCCESS,
              "longer MPI_Recv_c");
        expect_count(&st, BIG, "MPI_Isend_c -> longer MPI_Recv_c");
        P2P_CHECK_DATA(in, BIG, key, "MPI_Isend_c -> MPI_Recv_c, %zu bytes", BIG);
    }
    free(buf);
}

static void bad_counts(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char b[8];
    int rc = MPI_Send_c(b, -1, MPI_BYTE, (rank + 1) % size, 1, MPI_COMM_WORLD);
    CHECK(p2p_class(rc) == MPI_ERR_COUNT, "MPI_Send_c count -1: %s", p2p_errstr(rc));
    rc = MPI_Send_c(b, (MPI_Count)INT_MIN - 5, MPI_BYTE, (rank + 1) % size, 1, MPI_COMM_WORLD);
    CHECK(p2p_class(rc) == MPI_ERR_COUNT, "MPI_Send_c count INT_MIN-5: %s", p2p_errstr(rc));
    MPI_Request rq = MPI_REQUEST_NULL;
    rc = MPI_Irecv_c(b, (MPI_Count)1 << 40, MPI_DATATYPE_NULL, 0, 1, MPI_COMM_WORLD, &rq);
    CHECK(p2p_class(rc) == MPI_ERR_TYPE, "MPI_Irecv_c of 2^40 MPI_DATATYPE_NULL: %s",
          p2p_errstr(rc));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Ibsend_c/Bsend_c room comes from MPI_Buffer_attach_c; detach_c gives it back. */
static void *attach_c(void)
{
    MPI_Count room = 8 * ((MPI_Count)70000 + MPI_BSEND_OVERHEAD);
    void *buf = malloc((size_t)room);
    MPI_Buffer_attach_c(buf, room);
    return buf;
}

static void detach_c(void *buf)
{
    void *back = NULL;
    MPI_Count room = 0;
    MPI_Buffer_detach_c(&back, &room);
    CHECK(back == buf && room == 8 * ((MPI_Count)70000 + MPI_BSEND_OVERHEAD),
          "MPI_Buffer_detach_c gave %p, %lld", back, (long long)room);
    free(buf);
}

#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#if MPI_VERSION >= 4
    void *bbuf = attach_c();
    size_t sizes[] = {0, 8, 300, 5000, 70000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        ring_pairs(sizes[i]);
        ring_others(sizes[i]);
    }
    detach_c(bbuf);
    bad_counts();
    big_count_c();
#endif
    big_noncontig_refused();
    if (rank <= 1)
        big_type_int();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_large: OK (%s)\n",
               MPI_VERSION >= 4 ? "MPI 4 _c calls and int calls" : "int calls only");
    MPI_Finalize();
    return 0;
}
