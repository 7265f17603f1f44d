/* coll_comm_free.c: a communicator's collective state goes with the communicator, with
 * no wait on its members: 1,000 rounds of two duplicates of MPI_COMM_WORLD, each used by
 * a blocking and a nonblocking allreduce large enough to take a slot's scratch, then
 * freed, in opposite orders on even and odd ranks (a teardown that waited for the members
 * would deadlock here). The resident set after a tenth of the run is the baseline: by the
 * end it may not have grown by more than 16 MiB (the states of 2,000 communicators kept
 * would be hundreds). Results are checked. Standard MPI only. */
#define CHECK_WITH_MPI
#include "../../check.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { ROUNDS = 1000, N = 8192 }; /* 64 KiB of doubles: past the slots' inline bytes */
#define GROWTH_MAX (16l << 20)

static long resident_bytes(void)
{
    long pages = 0, size = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    CHECK(f, "cannot read /proc/self/statm");
    CHECK(fscanf(f, "%ld %ld", &size, &pages) == 2, "bad /proc/self/statm");
    fclose(f);
    return pages * 4096;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *in = malloc(sizeof(double) * N), *out = malloc(sizeof(double) * N);
    CHECK(in && out, "out of memory");
    long base = 0;
    for (int k = 0; k < ROUNDS; k++) {
        if (k == ROUNDS / 10)
            base = resident_bytes();
        MPI_Comm a, b;
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Comm_dup(MPI_COMM_WORLD, &b);
        for (int i = 0; i < N; i++)
            in[i] = rank + k + i;
        MPI_Allreduce(in, out, N, MPI_DOUBLE, MPI_SUM, a);
        CHECK(out[N - 1] == size * (k + N - 1.0) + size * (size - 1) / 2.0, "round %d: %g", k,
              out[N - 1]);
        MPI_Request q;
        MPI_Iallreduce(in, out, N, MPI_DOUBLE, MPI_MAX, b, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        CHECK(out[0] == size - 1.0 + k, "round %d: max %g", k, out[0]);
        if (rank % 2) {
            MPI_Comm_free(&a);
            MPI_Comm_free(&b);
        } else {
            MPI_Comm_free(&b);
            MPI_Comm_free(&a);
        }
    }
    long grown = resident_bytes() - base;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    (void)grown; /* the sanitizer's quarantine keeps freed memory resident: no bound here */
#else
    CHECK(grown <= GROWTH_MAX, "the resident set grew by %ld bytes over %d rounds", grown,
          ROUNDS - ROUNDS / 10);
#endif
    free(in);
    free(out);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_comm_free: ok (%d ranks)\n", size);
    MPI_Finalize();
    return 0;
}
