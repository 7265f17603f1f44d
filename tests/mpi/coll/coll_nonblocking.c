/* coll_nonblocking.c: nonblocking collectives (MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce,
 * MPI_Iallreduce) and MPI 4's persistent ones (the _init forms) against results computed
 * locally, on every communicator of coll_common.h: sizes from 0 to 1.2 MiB, every buffer
 * kind, roots other than 0, MPI_IN_PLACE, a strided datatype, a non-commutative op; many
 * outstanding at once on one communicator and on several, completed in another order
 * than they were started; mixed with point-to-point traffic and with blocking
 * collectives; a Test loop on a collective nobody waits for; persistent requests started
 * 1,000 times with their buffers changed between starts; MPI_Request_free of an inactive
 * persistent request; a rooted collective from a root other than 0 as a new
 * communicator's first call (its setup still under way when the call starts);
 * collectives that end in their start call mixed with pending ones, the root of small
 * broadcasts many calls ahead of its readers, bad arguments under MPI_ERRORS_RETURN.
 * Standard MPI only. */
#include "coll_common.h"

/* MPICH declares MPI_STATUSES_IGNORE as (MPI_Status *)1 and annotates MPI_Waitall &
 * co. with access sizes: GCC 12 then reports a bogus overflow at every use. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

static const int counts[] = {0, 1, 7, 100, 1000, 20000, 300000};
enum { NCOUNTS = sizeof counts / sizeof counts[0] };

/* x op y for the non-commutative op: 2x2 integer matrices multiplied (mod 2^32). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    unsigned *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        unsigned r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                         a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof r);
    }
}
static MPI_Op op_matmul;
static MPI_Datatype type_mat;

static int sum_of(uint64_t seed, int size, long i)
{
    long long s = 0;
    for (int r = 0; r < size; r++)
        s += tc_int(seed, r, i);
    return (int)s;
}

/* Ibcast and Iallreduce/Ireduce of every size on tc, each checked. */
static void sizes(const tc_comm_t *tc, int kind)
{
    for (int k = 0; k < NCOUNTS; k++) {
        int n = counts[k], root = (k * 7 + 1) % tc->size;
        uint64_t seed = 1000u * (uint64_t)k + (uint64_t)kind;
        int *a = tc_alloc(kind, sizeof(int) * (size_t)n),
            *b = tc_alloc(kind, sizeof(int) * (size_t)n);
        MPI_Request q[3];
        /* broadcast from root */
        for (int i = 0; i < n; i++)
            b[i] = tc->rank == root ? tc_int(seed, root, i) : -1;
        MPI_Ibcast(b, n, MPI_INT, root, tc->comm, &q[0]);
        /* allreduce into a from b's values afterwards: a separate buffer now */
        int *c = tc_alloc(kind, sizeof(int) * (size_t)n),
            *d = tc_alloc(kind, sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            c[i] = tc_int(seed + 1, tc->rank, i);
        MPI_Iallreduce(c, d, n, MPI_INT, MPI_SUM, tc->comm, &q[1]);
        for (int i = 0; i < n; i++)
            a[i] = tc_int(seed + 2, tc->rank, i);
        MPI_Ireduce(tc->rank == root ? MPI_IN_PLACE : a, tc->rank == root ? a : NULL, n, MPI_INT,
                    MPI_MAX, root, tc->comm, &q[2]);
        /* complete in reverse order */
        for (int j = 2; j >= 0; j--)
            MPI_Wait(&q[j], MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++) {
            CHECK(b[i] == tc_int(seed, root, i), "%s: Ibcast of %d ints (%s) from %d: [%d] = %d",
                  tc->name, n, tc_buf_name[kind], root, i, b[i]);
            CHECK(d[i] == sum_of(seed + 1, tc->size, i), "%s: Iallreduce of %d ints (%s): [%d]",
                  tc->name, n, tc_buf_name[kind], i);
        }
        if (tc->rank == root)
            for (int i = 0; i < n; i++) {
                int m = tc_int(seed + 2, 0, i);
                for (int r = 1; r < tc->size; r++)
                    m = tc_int(seed + 2, r, i) > m ? tc_int(seed + 2, r, i) : m;
                CHECK(a[i] == m, "%s: Ireduce(MAX) of %d ints to %d: [%d] = %d, expected %d",
                      tc->name, n, root, i, a[i], m);
            }
        /* Iallreduce in place */
        for (int i = 0; i < n; i++)
            c[i] = tc_int(seed + 3, tc->rank, i);
        MPI_Iallreduce(MPI_IN_PLACE, c, n, MPI_INT, MPI_SUM, tc->comm, &q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            CHECK(c[i] == sum_of(seed + 3, tc->size, i), "%s: Iallreduce in place of %d: [%d]",
                  tc->name, n, i);
        tc_release();
    }
}

/* A strided datatype broadcast and reduced, and the non-commutative op in rank order. */
static void layouts(const tc_comm_t *tc)
{
    enum { K = 333 };
    MPI_Datatype st = tc_strided_ints(K);
    int *b = tc_alloc(BUF_HEAP, sizeof(int) * 2 * K);
    int root = tc->size - 1;
    if (tc->rank == root)
        tc_fill_strided(b, K, 77, root);
    else
        for (int i = 0; i < 2 * K; i++)
            b[i] = -5;
    MPI_Request q;
    MPI_Ibcast(b, 1, st, root, tc->comm, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < K; i++) {
        CHECK(b[2 * i] == tc_int(77, root, i), "%s: strided Ibcast [%d]", tc->name, i);
        CHECK(tc->rank == root || b[2 * i + 1] == -5, "%s: strided Ibcast wrote a hole", tc->name);
    }
    MPI_Type_free(&st);
    /* matrices: the product in rank order */
    enum { M = 50 };
    unsigned *x = tc_alloc(BUF_HEAP, sizeof(unsigned) * 4 * M),
             *y = tc_alloc(BUF_HEAP, sizeof(unsigned) * 4 * M);
    for (int i = 0; i < 4 * M; i++)
        x[i] = (unsigned)tc_int(91, tc->rank, i);
    MPI_Iallreduce(x, y, M, type_mat, op_matmul, tc->comm, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int k = 0; k < M; k++) {
        unsigned acc[4];
        for (int j = 0; j < 4; j++)
            acc[j] = (unsigned)tc_int(91, tc->size - 1, 4 * k + j);
        for (int r = tc->size - 2; r >= 0; r--) {
            unsigned m[4];
            for (int j = 0; j < 4; j++)
                m[j] = (unsigned)tc_int(91, r, 4 * k + j);
            int one = 1;
            matmul(m, acc, &one, NULL);
        }
        CHECK(memcmp(acc, y + 4 * k, sizeof acc) == 0, "%s: non-commutative Iallreduce, matrix %d",
              tc->name, k);
    }
    tc_release();
}

/* Many at once on one communicator and on several, completed out of order, with
 * point-to-point traffic and a blocking collective in between. */
static void many(void)
{
    enum { K = 12 };
    int n = 257;
    MPI_Request q[2 * K];
    int *in[K], *out[K];
    for (int k = 0; k < K; k++) {
        const tc_comm_t *tc = &tc_comms[k % tc_ncomms];
        in[k] = tc_alloc(BUF_HEAP, sizeof(int) * (size_t)n);
        out[k] = tc_alloc(BUF_HEAP, sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            in[k][i] = tc_int(500 + (uint64_t)k, tc->rank, i);
        MPI_Iallreduce(in[k], out[k], n, MPI_INT, MPI_SUM, tc->comm, &q[k]);
        MPI_Ibarrier(tc->comm, &q[K + k]);
    }
    /* point-to-point in a ring meanwhile, and a blocking allreduce on world */
    int next = (tc_rank + 1) % tc_size, prev = (tc_rank + tc_size - 1) % tc_size, got = -1;
    MPI_Sendrecv(&tc_rank, 1, MPI_INT, next, 3, &got, 1, MPI_INT, prev, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(got == prev, "ring during nonblocking collectives: %d", got);
    int one = 1, all = 0;
    MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all == tc_size, "blocking allreduce behind nonblocking ones: %d", all);
    /* half by Waitany from the end, the rest by Testsome loops */
    for (int left = 2 * K; left > K;) {
        int idx;
        MPI_Waitany(2 * K, q, &idx, MPI_STATUS_IGNORE);
        CHECK(idx != MPI_UNDEFINED, "Waitany: nothing active");
        left--;
    }
    int active = 1;
    while (active) {
        int outc, idx[2 * K];
        MPI_Testsome(2 * K, q, &outc, idx, MPI_STATUSES_IGNORE);
        active = outc != MPI_UNDEFINED;
    }
    for (int k = 0; k < K; k++) {
        const tc_comm_t *tc = &tc_comms[k % tc_ncomms];
        for (int i = 0; i < n; i++)
            CHECK(out[k][i] == sum_of(500 + (uint64_t)k, tc->size, i), "many: op %d on %s [%d]", k,
                  tc->name, i);
    }
    tc_release();
}

/* A Test loop alone moves a collective (MPI-4.1 §6.12 makes freeing or cancelling an
 * active one erroneous: not tested). */
static void tests_alone(void)
{
    double x = tc_rank, y = 0;
    MPI_Request q;
    MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
    int done = 0;
    while (!done)
        MPI_Test(&q, &done, MPI_STATUS_IGNORE);
    CHECK(y == tc_size * (tc_size - 1) / 2.0, "Test loop: %g", y);
}

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
/* Persistent collectives started 1,000 times, buffers changed between starts. */
static void persistent(void)
{
    /* 1,000 starts where HMPI runs them on its node; fewer through the MPI below, whose
     * calls take milliseconds with more ranks than cores. */
    int many = tc_hmpi_does(MPI_COMM_WORLD);
    for (int c = 0; c < tc_ncomms; c++) {
        const tc_comm_t *tc = &tc_comms[c];
        enum { N = 40, ROUNDS = 1000 };
        int *in = tc_alloc(BUF_HEAP, sizeof(int) * N), *out = tc_alloc(BUF_HEAP, sizeof(int) * N);
        int *bb = tc_alloc(BUF_STACK, sizeof(int) * N), root = tc->size / 2;
        MPI_Request q[4];
        MPI_Allreduce_init(in, out, N, MPI_INT, MPI_SUM, tc->comm, MPI_INFO_NULL, &q[0]);
        MPI_Bcast_init(bb, N, MPI_INT, root, tc->comm, MPI_INFO_NULL, &q[1]);
        MPI_Barrier_init(tc->comm, MPI_INFO_NULL, &q[2]);
        MPI_Reduce_init(in, out, N, MPI_INT, MPI_MIN, root, tc->comm, MPI_INFO_NULL, &q[3]);
        int rounds = c == 0 && many ? ROUNDS : ROUNDS / 50;
        for (int k = 0; k < rounds; k++) {
            for (int i = 0; i < N; i++) {
                in[i] = tc_int((uint64_t)k, tc->rank, i);
                bb[i] = tc->rank == root ? tc_int((uint64_t)k + 7, root, i) : 0;
            }
            MPI_Startall(3, q);
            MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
            for (int i = 0; i < N; i++) {
                CHECK(out[i] == sum_of((uint64_t)k, tc->size, i),
                      "%s: persistent allreduce, round %d", tc->name, k);
                CHECK(bb[i] == tc_int((uint64_t)k + 7, root, i), "%s: persistent bcast, round %d",
                      tc->name, k);
            }
            if (k % 100 == 0) {
                MPI_Start(&q[3]);
                MPI_Wait(&q[3], MPI_STATUS_IGNORE);
                if (tc->rank == root)
                    for (int i = 0; i < N; i++) {
                        int m = tc_int((uint64_t)k, 0, i);
                        for (int r = 1; r < tc->size; r++)
                            m = tc_int((uint64_t)k, r, i) < m ? tc_int((uint64_t)k, r, i) : m;
                        CHECK(out[i] == m, "%s: persistent reduce, round %d", tc->name, k);
                    }
            }
        }
        for (int j = 0; j < 4; j++) /* inactive: freed at once */
            MPI_Request_free(&q[j]);
        tc_release();
    }
}
#endif

/* Collectives that end in their start call (HMPI returns one shared complete request for
 * them) mixed with pending ones: the root of small broadcasts many calls ahead of its
 * readers, then a blocking broadcast behind them; such requests in MPI_Request_get_status,
 * MPI_Waitany, MPI_Testsome and MPI_Waitall beside pending ones and MPI_REQUEST_NULL, each
 * status empty and each handle MPI_REQUEST_NULL once completed; bad arguments under
 * MPI_ERRORS_RETURN, and the communicator still right after them. */
static void at_start(void)
{
    enum { K = 50 };
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int ours = tc_hmpi_does(comm); /* statuses checked where HMPI makes them */
    double v[K], w = -1;
    MPI_Request q[K];
    int tok = 0, root = 0;
    /* The root starts K broadcasts before any reader starts one (a reader waits for its
     * token), then waits for them all. */
    if (tc_rank == root) {
        for (int k = 0; k < K; k++) {
            v[k] = 1000.0 + k;
            MPI_Ibcast(&v[k], 1, MPI_DOUBLE, root, comm, &q[k]);
        }
        for (int r = 1; r < tc_size; r++)
            MPI_Send(&tok, 1, MPI_INT, r, 9, MPI_COMM_WORLD);
        MPI_Waitall(K, q, MPI_STATUSES_IGNORE);
    } else {
        MPI_Recv(&tok, 1, MPI_INT, root, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < K; k++) {
            v[k] = -1;
            MPI_Ibcast(&v[k], 1, MPI_DOUBLE, root, comm, &q[k]);
            MPI_Wait(&q[k], MPI_STATUS_IGNORE);
            CHECK(v[k] == 1000.0 + k, "root ahead: broadcast %d read %g", k, v[k]);
        }
    }
    for (int k = 0; k < K; k++)
        CHECK(q[k] == MPI_REQUEST_NULL, "root ahead: request %d not null after its wait", k);
    if (tc_rank == root)
        w = 7.5;
    MPI_Bcast(&w, 1, MPI_DOUBLE, root, comm);
    CHECK(w == 7.5, "blocking broadcast behind nonblocking ones: %g", w);

    /* Mixed arrays: an 8-byte broadcast (on its root complete at once), an allreduce and a
     * barrier (complete at once on the last to arrive), an empty slot. */
    for (int round = 0; round < 20; round++) {
        double b = tc_rank == root ? 3.0 + round : -1, x = tc_rank + round, y = -1;
        MPI_Request m[4];
        MPI_Status st[4];
        MPI_Ibcast(&b, 1, MPI_DOUBLE, root, comm, &m[0]);
        MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm, &m[1]);
        m[2] = MPI_REQUEST_NULL;
        MPI_Ibarrier(comm, &m[3]);
        int flag = 0;
        MPI_Status s0;
        s0.MPI_SOURCE = s0.MPI_TAG = -7;
        MPI_Request_get_status(m[0], &flag, &s0);
        if (flag && ours) { /* complete: an empty status, the request still there */
            int n = -1;
            MPI_Get_count(&s0, MPI_BYTE, &n);
            CHECK(s0.MPI_SOURCE == MPI_ANY_SOURCE && s0.MPI_TAG == MPI_ANY_TAG && n == 0,
                  "get_status of a complete collective: source %d tag %d count %d", s0.MPI_SOURCE,
                  s0.MPI_TAG, n);
        }
        CHECK(m[0] != MPI_REQUEST_NULL, "get_status freed the request");
        if (round % 3 == 0) {
            MPI_Waitall(4, m, st);
        } else if (round % 3 == 1) {
            for (int left = 3; left > 0; left--) {
                int idx = -1;
                MPI_Waitany(4, m, &idx, &st[0]);
                CHECK(idx == 0 || idx == 1 || idx == 3, "Waitany: index %d", idx);
                CHECK(m[idx] == MPI_REQUEST_NULL, "Waitany left request %d", idx);
                CHECK(!ours || (st[0].MPI_SOURCE == MPI_ANY_SOURCE && st[0].MPI_TAG == MPI_ANY_TAG),
                      "Waitany: status source %d tag %d", st[0].MPI_SOURCE, st[0].MPI_TAG);
            }
            int idx = -1;
            MPI_Waitany(4, m, &idx, MPI_STATUS_IGNORE);
            CHECK(idx == MPI_UNDEFINED, "Waitany with none active: %d", idx);
        } else {
            int outc = 0, idx[4], seen = 0;
            while (outc != MPI_UNDEFINED) {
                MPI_Testsome(4, m, &outc, idx, st);
                for (int i = 0; outc != MPI_UNDEFINED && i < outc; i++) {
                    CHECK(m[idx[i]] == MPI_REQUEST_NULL, "Testsome left request %d", idx[i]);
                    seen++;
                }
            }
            CHECK(seen == 3, "Testsome completed %d of 3", seen);
        }
        for (int i = 0; i < 4; i++)
            CHECK(m[i] == MPI_REQUEST_NULL, "round %d: request %d not null", round, i);
        CHECK(b == 3.0 + round, "mixed: broadcast %g in round %d", b, round);
        CHECK(y == tc_size * (tc_size - 1) / 2.0 + (double)tc_size * round,
              "mixed: allreduce %g in round %d", y, round);
        /* MPI_Test of one that ended at its start: flag set at once */
        MPI_Request t;
        MPI_Ibcast(&b, 1, MPI_DOUBLE, root, comm, &t);
        int done = 0;
        while (!done)
            MPI_Test(&t, &done, MPI_STATUS_IGNORE);
        CHECK(t == MPI_REQUEST_NULL, "Test left the request");
    }

    /* Bad arguments: an error class back, no request made, the communicator usable. */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Request bad = MPI_REQUEST_NULL;
    int cls = MPI_SUCCESS, err = MPI_Ibcast(&w, 1, MPI_DOUBLE, tc_size, comm, &bad);
    MPI_Error_class(err, &cls);
    /* (MPICH 4.0.2 alone says MPI_ERR_OTHER for the count: any error where it answers) */
    CHECK(ours ? cls == MPI_ERR_ROOT : err != MPI_SUCCESS, "Ibcast with root %d: class %d", tc_size,
          cls);
    double x = 1, y = 0;
    err = MPI_Iallreduce(&x, &y, -1, MPI_DOUBLE, MPI_SUM, comm, &bad);
    MPI_Error_class(err, &cls);
    CHECK(ours ? cls == MPI_ERR_COUNT : err != MPI_SUCCESS, "Iallreduce of count -1: class %d",
          cls);
    err = MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm, &bad);
    CHECK(err == MPI_SUCCESS, "Iallreduce after the errors: %d", err);
    MPI_Wait(&bad, MPI_STATUS_IGNORE);
    CHECK(y == tc_size, "Iallreduce after the errors: %g", y);
    MPI_Comm_free(&comm);
}

/* A new communicator's first collective is an MPI_Ibcast, or an MPI_Ireduce, from the
 * last rank: the call starts before the communicator's setup ends, so the root's place
 * in the team is not known yet at the start (it was taken for rank 0's). */
static void first(void)
{
    enum { N = 100 };
    for (int which = 0; which < 2; which++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        int root = tc_size - 1, a[N], b[N];
        for (int i = 0; i < N; i++)
            a[i] = tc_int(41, which ? tc_rank : root, i), b[i] = -1;
        MPI_Request q;
        if (which == 0)
            MPI_Ibcast(tc_rank == root ? a : b, N, MPI_INT, root, comm, &q);
        else
            MPI_Ireduce(a, b, N, MPI_INT, MPI_SUM, root, comm, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) {
            if (which == 0 && tc_rank != root)
                CHECK(b[i] == tc_int(41, root, i), "first Ibcast from %d: [%d] = %d", root, i,
                      b[i]);
            if (which == 1 && tc_rank == root)
                CHECK(b[i] == sum_of(41, tc_size, i), "first Ireduce to %d: [%d] = %d", root, i,
                      b[i]);
            if (which == 1 && tc_rank != root)
                CHECK(b[i] == -1, "first Ireduce wrote a non-root's recvbuf: [%d] = %d", i, b[i]);
        }
        MPI_Comm_free(&comm);
    }
}

static void run(void)
{
    first();
    MPI_Op_create(matmul, 0, &op_matmul);
    MPI_Type_contiguous(4, MPI_UNSIGNED, &type_mat);
    MPI_Type_commit(&type_mat);
    for (int c = 0; c < tc_ncomms; c++) {
        MPI_Request q;
        MPI_Ibarrier(tc_comms[c].comm, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        /* the shared heap, and memory outside it (the other kinds take the same paths) */
        sizes(&tc_comms[c], BUF_HEAP);
        sizes(&tc_comms[c], c % 2 ? BUF_STACK : BUF_PREINIT);
        layouts(&tc_comms[c]);
    }
    many();
    tests_alone();
    at_start();
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
    persistent();
#endif
    MPI_Op_free(&op_matmul);
    MPI_Type_free(&type_mat);
}

int main(int argc, char **argv) { return tc_main(argc, argv, run); }
