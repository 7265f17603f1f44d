/* stats_job.c: a job whose point-to-point traffic is known exactly, for the finalize
 * report's test (stats_report.py): each rank sends to the next one in a ring 100
 * messages of 8 bytes and 10 of 64 KiB (buffers malloc'ed after MPI_Init: the shared
 * heap), all checked byte for byte, then a few collectives. Prints "stats_job: N ranks
 * ok" and the messages and bytes it sent. */
#define CHECK_WITH_MPI
#include "../../check.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SMALL = 100, SMALL_BYTES = 8, LARGE = 10, LARGE_BYTES = 64 << 10 };

static void ring(int rank, int size, int count, int bytes, int tag)
{
    unsigned char *out = malloc((size_t)bytes), *in = malloc((size_t)bytes);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < count; i++) {
        for (int k = 0; k < bytes; k++)
            out[k] = (unsigned char)(rank * 31 + i * 7 + k);
        memset(in, 0xee, (size_t)bytes);
        MPI_Sendrecv(out, bytes, MPI_BYTE, next, tag, in, bytes, MPI_BYTE, prev, tag,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < bytes; k++)
            CHECK(in[k] == (unsigned char)(prev * 31 + i * 7 + k),
                  "message %d of %d bytes from %d: byte %d is %d", i, bytes, prev, k, in[k]);
    }
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ring(rank, size, SMALL, SMALL_BYTES, 1);
    ring(rank, size, LARGE, LARGE_BYTES, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 5; i++) {
        long v = rank + i, sum = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == (long)size * (size - 1) / 2 + (long)size * i, "allreduce %d: %ld", i, sum);
    }
    char *b = malloc(1024);
    for (int i = 0; i < 3; i++) {
        if (rank == 0)
            for (int k = 0; k < 1024; k++)
                b[k] = (char)(k + i);
        MPI_Bcast(b, 1024, MPI_CHAR, 0, MPI_COMM_WORLD);
        for (int k = 0; k < 1024; k++)
            CHECK(b[k] == (char)(k + i), "bcast %d: byte %d", i, k);
    }
    free(b);
    if (rank == 0)
        printf("stats_job: %d ranks ok, %d messages and %d bytes from each\n", size, SMALL + LARGE,
               SMALL * SMALL_BYTES + LARGE * LARGE_BYTES);
    MPI_Finalize();
    return 0;
}
