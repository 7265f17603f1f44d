/* opi_alltoall.c: all-to-all by ownership passing (the OPI paper, §3.5: a
 * scatter and a gather at once), as an example that checks itself against
 * MPI_Alltoall. Every rank posts one OPI_Itake per peer, then for each peer allocates
 * a buffer, packs it and gives it away; buffers are unpacked in the order they arrive
 * (MPI_Waitany) and freed into the taker's pool, to be packed and given again in the
 * next exchange. Within a node no block is ever copied by the library.
 *   mpiexec -n 4 ./opi_alltoall [count]       (prints "opi_alltoall: ok" on success) */
#include "hmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { A2A_TAG = 23 };

/* send and recv hold size blocks of count doubles each, as for MPI_Alltoall. */
static int opi_alltoall(const double *send, double *recv, int count, MPI_Comm comm)
{
    int rank, size, err = MPI_SUCCESS;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)(2 * size));
    double **in = malloc(sizeof *in * (size_t)size);
    size_t block = sizeof(double) * (size_t)count;
    for (int i = 0; i < size; i++) /* takes first: a buffer can land as soon as given */
        OPI_Itake((void **)&in[i], count, MPI_DOUBLE, i, A2A_TAG, comm, &reqs[i]);
    for (int j = 1; j <= size; j++) { /* start with the right neighbour: spread the load */
        int to = (rank + j) % size;
        double *out;
        OPI_Alloc((void **)&out, block);
        memcpy(out, send + (size_t)to * (size_t)count, block); /* pack */
        OPI_Igive((void **)&out, count, MPI_DOUBLE, to, A2A_TAG, comm, &reqs[size + to]);
    }
    for (int n = 0; n < size; n++) {
        int i;
        MPI_Status st;
        if (MPI_Waitany(size, reqs, &i, &st) != MPI_SUCCESS)
            err = MPI_ERR_OTHER;
        memcpy(recv + (size_t)i * (size_t)count, in[i], block); /* unpack */
        OPI_Free((void **)&in[i]);
    }
    for (int i = size; i < 2 * size; i++) /* the gives: complete already */
        MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    free(in);
    free(reqs);
    return err;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int count = argc > 1 ? atoi(argv[1]) : 4096;
    size_t n = (size_t)size * (size_t)count;
    double *send = malloc(sizeof(double) * n), *got = malloc(sizeof(double) * n),
           *want = malloc(sizeof(double) * n);
    for (int it = 0; it < 10 && !bad; it++) {
        int c = it % 2 ? count : count / 3 + 1;
        for (size_t k = 0; k < (size_t)size * (size_t)c; k++)
            send[k] = rank * 1e7 + (double)k + it * 0.25;
        bad |= opi_alltoall(send, got, c, MPI_COMM_WORLD) != MPI_SUCCESS;
        MPI_Alltoall(send, c, MPI_DOUBLE, want, c, MPI_DOUBLE, MPI_COMM_WORLD);
        if (memcmp(got, want, sizeof(double) * (size_t)size * (size_t)c) != 0) {
            fprintf(stderr, "opi_alltoall: rank %d, exchange %d differs from MPI_Alltoall\n", rank,
                    it);
            bad = 1;
        }
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf("opi_alltoall: %s (%d ranks, %d doubles per block, HMPI %s)\n",
               any ? "FAILED" : "ok", size, count, HMPI_Active() ? "on" : "off");
    free(send);
    free(got);
    free(want);
    MPI_Finalize();
    return any;
}
