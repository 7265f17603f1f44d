/* p2p_isendrecv.c: MPI 4's MPI_Isendrecv and MPI_Isendrecv_replace (and their _c forms)
 * against every send and receive form on the other side: the matching must be the same
 * as for MPI_Irecv plus MPI_Isend, whichever path each message takes (a local peer through
 * HMPI, a remote one through the MPI below). Sizes across the protocols' thresholds, heap
 * and static buffers, wildcards, MPI_PROC_NULL on either side, derived datatypes of one
 * signature, truncation, requests mixed in one Waitall and completed by Test loops.
 * Every byte received is checked. Standard MPI only (also run as a plain binary). */
#include "../p2p_common.h"

#define SEED 0x15E4Dull

static int rank, nranks;

static const size_t sizes[] = {0, 8, 200, 300, 4096, 40000, 1u << 20};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };
static unsigned char static_send[1u << 20], static_recv[1u << 20];

static void expect_status(const MPI_Status *st, int source, int tag, size_t bytes, const char *what)
{
    CHECK(st->MPI_SOURCE == source, "%s: source %d, expected %d", what, st->MPI_SOURCE, source);
    CHECK(st->MPI_TAG == tag, "%s: tag %d, expected %d", what, st->MPI_TAG, tag);
    int n = p2p_count(st, MPI_BYTE);
    CHECK(n == (int)bytes, "%s: count %d, expected %zu", what, n, bytes);
}

/* The case: rank 0 sends, then receives; rank 1 answers with one Isendrecv. Each
 * form of the send and the receive on rank 0's side, each size, heap and static buffers. */
static void against_forms(void)
{
    if (nranks < 2 || rank > 1)
        return;
    for (int form = 0; form < 4; form++)
        for (int k = 0; k < NSIZES; k++)
            for (int heap = 0; heap < 2; heap++) {
                size_t n = sizes[k];
                int t0 = 100 + form * 20 + k, t1 = 500 + form * 20 + k;
                unsigned char *sb = heap ? p2p_malloc(n + 1) : static_send;
                unsigned char *rb = heap ? p2p_malloc(n + 1) : static_recv;
                p2p_fill(sb, n, p2p_key(rank, rank ? t1 : t0, heap, SEED));
                memset(rb, 0xEE, n);
                MPI_Status st;
                if (rank == 0) {
                    MPI_Request q[2];
                    switch (form) {
                    case 0: /* blocking send, then receive */
                        MPI_Send(sb, (int)n, MPI_BYTE, 1, t0, MPI_COMM_WORLD);
                        MPI_Recv(rb, (int)n, MPI_BYTE, 1, t1, MPI_COMM_WORLD, &st);
                        break;
                    case 1: /* synchronous send: the Isendrecv's receive must match it */
                        MPI_Ssend(sb, (int)n, MPI_BYTE, 1, t0, MPI_COMM_WORLD);
                        MPI_Recv(rb, (int)n, MPI_BYTE, MPI_ANY_SOURCE, t1, MPI_COMM_WORLD, &st);
                        break;
                    case 2: /* nonblocking both ways, receive first */
                        MPI_Irecv(rb, (int)n, MPI_BYTE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &q[0]);
                        MPI_Isend(sb, (int)n, MPI_BYTE, 1, t0, MPI_COMM_WORLD, &q[1]);
                        MPI_Status sts[2];
                        MPI_Waitall(2, q, sts);
                        st = sts[0];
                        break;
                    default: /* a blocking Sendrecv against the Isendrecv */
                        MPI_Sendrecv(sb, (int)n, MPI_BYTE, 1, t0, rb, (int)n, MPI_BYTE, 1, t1,
                                     MPI_COMM_WORLD, &st);
                    }
                    expect_status(&st, 1, t1, n, "rank 0's receive");
                } else {
                    MPI_Request q;
                    MPI_Isendrecv(sb, (int)n, MPI_BYTE, 0, t1, rb, (int)n, MPI_BYTE, 0, t0,
                                  MPI_COMM_WORLD, &q);
                    CHECK(q != MPI_REQUEST_NULL, "Isendrecv gave MPI_REQUEST_NULL");
                    if (k & 1) { /* a Test loop, the others a Wait */
                        int done = 0;
                        while (!done)
                            MPI_Test(&q, &done, &st);
                    } else {
                        MPI_Wait(&q, &st);
                    }
                    CHECK(q == MPI_REQUEST_NULL, "the request is not freed by its completion");
                    expect_status(&st, 0, t0, n, "Isendrecv's status");
                }
                P2P_CHECK_DATA(rb, n, p2p_key(!rank, rank ? t0 : t1, heap, SEED),
                               "form %d, %zu bytes, %s buffers", form, n, heap ? "heap" : "static");
                if (heap) {
                    free(sb);
                    free(rb);
                }
            }
}

/* A ring: every rank sends to the next and receives from the previous by one Isendrecv,
 * the receive named, wildcard in source, wildcard in tag; the replace form too. */
static void ring(void)
{
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    for (int k = 0; k < NSIZES; k++)
        for (int wild = 0; wild < 3; wild++) {
            size_t n = sizes[k];
            int tag = 7 + wild;
            unsigned char *sb = p2p_malloc(n + 1), *rb = p2p_malloc(n + 1);
            p2p_fill(sb, n, p2p_key(rank, tag, k, SEED));
            MPI_Request q;
            MPI_Status st;
            MPI_Isendrecv(sb, (int)n, MPI_BYTE, next, tag, rb, (int)n, MPI_BYTE,
                          wild == 1 ? MPI_ANY_SOURCE : prev, wild == 2 ? MPI_ANY_TAG : tag,
                          MPI_COMM_WORLD, &q);
            MPI_Wait(&q, &st);
            expect_status(&st, prev, tag, n, "ring");
            P2P_CHECK_DATA(rb, n, p2p_key(prev, tag, k, SEED), "ring, %zu bytes, wild %d", n, wild);
            /* The same in place. */
            p2p_fill(sb, n, p2p_key(rank, tag + 10, k, SEED));
            MPI_Isendrecv_replace(sb, (int)n, MPI_BYTE, next, tag + 10,
                                  wild == 1 ? MPI_ANY_SOURCE : prev,
                                  wild == 2 ? MPI_ANY_TAG : tag + 10, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, &st);
            expect_status(&st, prev, tag + 10, n, "ring, replace");
            P2P_CHECK_DATA(sb, n, p2p_key(prev, tag + 10, k, SEED), "replace, %zu bytes", n);
            free(sb);
            free(rb);
        }
}

/* MPI_PROC_NULL on either side: that half does nothing; a status of PROC_NULL from a
 * receive of nobody. */
static void proc_null(void)
{
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    int a = rank, b = -1;
    MPI_Request q;
    MPI_Status st;
    MPI_Isendrecv(&a, 1, MPI_INT, MPI_PROC_NULL, 1, &b, 1, MPI_INT, MPI_PROC_NULL, 1,
                  MPI_COMM_WORLD, &q);
    MPI_Wait(&q, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
          "both PROC_NULL: "
          "source %d tag %d",
          st.MPI_SOURCE, st.MPI_TAG);
    CHECK(p2p_count(&st, MPI_INT) == 0 && b == -1, "both PROC_NULL: something was received");
    /* Send to the next, receive from nobody; then receive from the previous, send to nobody. */
    MPI_Isendrecv(&a, 1, MPI_INT, next, 2, &b, 1, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "receive from PROC_NULL: source %d", st.MPI_SOURCE);
    MPI_Isendrecv(&a, 1, MPI_INT, MPI_PROC_NULL, 2, &b, 1, MPI_INT, prev, 2, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    CHECK(b == prev, "send to PROC_NULL: received %d from %d", b, prev);
    b = rank;
    MPI_Isendrecv_replace(&b, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, &st);
    CHECK(b == rank && st.MPI_SOURCE == MPI_PROC_NULL, "replace with PROC_NULL changed the buffer");
}

/* One signature, different layouts: a strided vector of ints sent, contiguous ints
 * received, and the replace form with the vector on both sides. */
static void derived(void)
{
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    enum { N = 1000, STRIDE = 3 };
    MPI_Datatype vec;
    MPI_Type_vector(N, 1, STRIDE, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *spread = p2p_malloc(sizeof(int) * N * STRIDE), *flat = p2p_malloc(sizeof(int) * N);
    for (int i = 0; i < N * STRIDE; i++)
        spread[i] = i % STRIDE ? -7 : rank * 100000 + i / STRIDE;
    MPI_Request q;
    MPI_Isendrecv(spread, 1, vec, next, 4, flat, N, MPI_INT, prev, 4, MPI_COMM_WORLD, &q);
    MPI_Type_free(&vec); /* allowed while the operation is pending */
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
        CHECK(flat[i] == prev * 100000 + i, "vector to ints: element %d is %d", i, flat[i]);
    MPI_Type_vector(N, 1, STRIDE, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Isendrecv_replace(spread, 1, vec, next, 5, prev, 5, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < N * STRIDE; i++) {
        int want = i % STRIDE ? -7 : prev * 100000 + i / STRIDE;
        CHECK(spread[i] == want, "replace with a vector: element %d is %d, expected %d", i,
              spread[i], want);
    }
    MPI_Type_free(&vec);
    free(spread);
    free(flat);
}

/* Several at once in one Waitall with plain Irecv/Isend requests, completed out of order. */
static void mixed(void)
{
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    enum { K = 6 };
    int out[K], in[K], extra_in = -1, extra_out = rank;
    MPI_Request q[K + 2];
    MPI_Irecv(&extra_in, 1, MPI_INT, prev, 99, MPI_COMM_WORLD, &q[K]);
    for (int i = K - 1; i >= 0; i--) {
        out[i] = rank * 10 + i;
        in[i] = -1;
        MPI_Isendrecv(&out[i], 1, MPI_INT, next, 60 + i, &in[i], 1, MPI_INT, prev, 60 + i,
                      MPI_COMM_WORLD, &q[i]);
    }
    MPI_Isend(&extra_out, 1, MPI_INT, next, 99, MPI_COMM_WORLD, &q[K + 1]);
    MPI_Status st[K + 2];
    MPI_Waitall(K + 2, q, st);
    for (int i = 0; i < K; i++) {
        CHECK(in[i] == prev * 10 + i, "Waitall: message %d is %d", i, in[i]);
        CHECK(st[i].MPI_TAG == 60 + i, "Waitall: status %d has tag %d", i, st[i].MPI_TAG);
    }
    CHECK(extra_in == prev, "Waitall: the plain receive got %d", extra_in);
    /* Testsome until all are done. */
    for (int i = 0; i < K; i++)
        MPI_Isendrecv(&out[i], 1, MPI_INT, next, 80 + i, &in[i], 1, MPI_INT, MPI_ANY_SOURCE, 80 + i,
                      MPI_COMM_WORLD, &q[i]);
    int left = K;
    while (left > 0) {
        int outc, idx[K];
        MPI_Testsome(K, q, &outc, idx, MPI_STATUSES_IGNORE);
        CHECK(outc != MPI_UNDEFINED, "Testsome: no active request with %d left", left);
        left -= outc;
    }
}

/* A receive too small for the message: MPI_ERR_TRUNCATE from the wait, and the
 * communication goes on. */
static void truncation(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c); /* collective: every rank */
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    if (nranks < 2 || rank > 1) {
        MPI_Comm_free(&c);
        return;
    }
    int big[4] = {1, 2, 3, 4}, small[2] = {0, 0};
    MPI_Request q;
    MPI_Isendrecv(big, 4, MPI_INT, !rank, 3, small, 2, MPI_INT, !rank, 3, c, &q);
    MPI_Status st;
    int rc = MPI_Wait(&q, &st);
    CHECK(p2p_class(rc) == MPI_ERR_TRUNCATE, "a truncated Isendrecv returned %s", p2p_errstr(rc));
    int again = rank, got = -1;
    MPI_Isendrecv(&again, 1, MPI_INT, !rank, 4, &got, 1, MPI_INT, !rank, 4, c, &q);
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS && got == !rank, "after a truncation");
    MPI_Comm_free(&c);
}

/* The _c forms, with counts that fit an int (the large case is p2p_large's), where the
 * MPI below has them (MPI 4: MPICH 4; Open MPI 5.0 has MPI_Isendrecv but no _c calls). */
static void large_count(void)
{
#if MPI_VERSION >= 4
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    double s[3] = {rank, rank + .5, -rank}, r[3] = {0};
    MPI_Request q;
    MPI_Isendrecv_c(s, 3, MPI_DOUBLE, next, 70, r, 3, MPI_DOUBLE, prev, 70, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    CHECK(r[0] == prev && r[1] == prev + .5 && r[2] == -prev, "Isendrecv_c: %g %g %g", r[0], r[1],
          r[2]);
    MPI_Isendrecv_replace_c(s, 3, MPI_DOUBLE, next, 71, prev, 71, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    CHECK(s[0] == prev && s[2] == -prev, "Isendrecv_replace_c: %g %g", s[0], s[2]);
#endif
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    against_forms();
    p2p_barrier_polite(MPI_COMM_WORLD);
    ring();
    proc_null();
    derived();
    mixed();
    truncation();
    large_count();
    p2p_barrier_polite(MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_isendrecv: ok (%d ranks)\n", nranks);
    MPI_Finalize();
    return 0;
}
