/* opi_mixed.c: OPI requests and ordinary ones in the same completion calls. Each round
 * every rank posts, in one array, takes and receives from its left neighbour and gives
 * and sends to its right one, then completes the array with MPI_Waitall, a loop of
 * MPI_Waitany, of MPI_Waitsome, or of MPI_Testall; many takes are outstanding at once
 * with different tags and complete in any order. Contents checked byte for byte. */
#include "opi_common.h"

static int rank, nranks;

enum { K = 6 }; /* takes (and receives) outstanding per round */

typedef enum { BY_WAITALL, BY_WAITANY, BY_WAITSOME, BY_TESTALL, BY_COUNT } by_t;

static void complete(by_t by, int n, MPI_Request *r, MPI_Status *st)
{
    int idx[4 * K], out, flag = 0;
    MPI_Status one;
    switch (by) {
    case BY_WAITALL: CHECK(MPI_Waitall(n, r, st) == MPI_SUCCESS, "waitall"); break;
    case BY_WAITANY:
        for (int done = 0; done < n; done++) {
            int i;
            CHECK(MPI_Waitany(n, r, &i, &one) == MPI_SUCCESS && i != MPI_UNDEFINED, "waitany");
            st[i] = one;
        }
        break;
    case BY_WAITSOME:
        for (int done = 0; done < n; done += out) {
            MPI_Status s[4 * K];
            CHECK(MPI_Waitsome(n, r, &out, idx, s) == MPI_SUCCESS && out != MPI_UNDEFINED,
                  "waitsome");
            for (int j = 0; j < out; j++)
                st[idx[j]] = s[j];
        }
        break;
    default:
        while (!flag)
            CHECK(MPI_Testall(n, r, &flag, st) == MPI_SUCCESS, "testall");
        break;
    }
    for (int i = 0; i < n; i++)
        CHECK(r[i] == MPI_REQUEST_NULL, "request %d not freed by completion", i);
}

static size_t size_of(int round, int k)
{
    static const size_t sizes[] = {0, 8, 100, 256, 257, 5000, 20000, 131072};
    return sizes[(round + k) % 8];
}

static void rounds(void)
{
    int left = (rank + nranks - 1) % nranks, right = (rank + 1) % nranks;
    for (int round = 0; round < 40; round++) {
        by_t by = (by_t)(round % BY_COUNT);
        MPI_Request r[4 * K];
        MPI_Status st[4 * K];
        void *in[K] = {0};
        char *msg_in[K];
        int n = 0;
        /* Interleaved: take k, receive k, ... so OPI and ordinary requests alternate. */
        for (int k = 0; k < K; k++) {
            size_t sz = size_of(round, k);
            msg_in[k] = malloc(sz + 1);
            CHECK(OPI_Itake(&in[k], (int)sz, MPI_BYTE, left, k, MPI_COMM_WORLD, &r[n++]) == 0,
                  "itake");
            CHECK(MPI_Irecv(msg_in[k], (int)sz, MPI_BYTE, left, k, MPI_COMM_WORLD, &r[n++]) == 0,
                  "irecv");
        }
        char *msg_out[K];
        for (int k = K - 1; k >= 0; k--) { /* given in the reverse order of the takes */
            size_t sz = size_of(round, k);
            void *p = NULL;
            OPI_Alloc(&p, sz);
            opi_fill(p, sz, rank, k, (uint64_t)round);
            CHECK(OPI_Igive(&p, (int)sz, MPI_BYTE, right, k, MPI_COMM_WORLD, &r[n++]) == 0,
                  "igive");
            msg_out[k] = malloc(sz + 1);
            opi_fill(msg_out[k], sz, rank, k + 100, (uint64_t)round);
            CHECK(MPI_Isend(msg_out[k], (int)sz, MPI_BYTE, right, k, MPI_COMM_WORLD, &r[n++]) == 0,
                  "isend");
        }
        complete(by, n, r, st);
        for (int k = 0; k < K; k++) {
            size_t sz = size_of(round, k);
            MPI_Status *ts = &st[2 * k], *rs = &st[2 * k + 1];
            CHECK(ts->MPI_SOURCE == left && ts->MPI_TAG == k, "take status %d/%d (round %d)",
                  ts->MPI_SOURCE, ts->MPI_TAG, round);
            CHECK(opi_count(ts, MPI_BYTE) == (int)sz, "take count %d, expected %zu",
                  opi_count(ts, MPI_BYTE), sz);
            CHECK(rs->MPI_SOURCE == left && rs->MPI_TAG == k, "recv status");
            CHECK(in[k] != NULL, "take %d gave no buffer", k);
            opi_verify(in[k], sz, left, k, (uint64_t)round, "taken");
            opi_verify(msg_in[k], sz, left, k + 100, (uint64_t)round, "received");
            OPI_Free(&in[k]);
            free(msg_in[k]);
            free(msg_out[k]);
        }
    }
}

/* MPI_Test on a take until it completes, with the give made only after the first test. */
static void test_loop(void)
{
    int left = (rank + nranks - 1) % nranks, right = (rank + 1) % nranks;
    for (int it = 0; it < 20; it++) {
        void *in = NULL, *out = NULL;
        MPI_Request r;
        int flag = 0;
        MPI_Status st;
        OPI_Itake(&in, 1000, MPI_BYTE, left, 42, MPI_COMM_WORLD, &r);
        MPI_Test(&r, &flag, &st);
        OPI_Alloc(&out, 1000);
        opi_fill(out, 1000, rank, 42, (uint64_t)it);
        OPI_Give(&out, 1000, MPI_BYTE, right, 42, MPI_COMM_WORLD);
        while (!flag)
            MPI_Test(&r, &flag, &st);
        CHECK(r == MPI_REQUEST_NULL && st.MPI_SOURCE == left, "test loop status");
        opi_verify(in, 1000, left, 42, (uint64_t)it, "test loop");
        OPI_Free(&in);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    rounds();
    test_loop();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("opi_mixed: ok (%d ranks, HMPI %s)\n", nranks, HMPI_Active() ? "on" : "off");
    MPI_Finalize();
    return 0;
}
