/* stack_ring.c: a ring exchange through MPI_Send and MPI_Isend (each ITERS times per
 * rank, sizes from 8 bytes to 4 MB), then through MPI_Sendrecv and MPI_Sendrecv_replace,
 * which HMPI builds from its own sends: a tool above must count only the program's
 * calls. Every byte checked; rank 0 prints "stack_ring: OK" when every rank got
 * everything. Run under count_tool. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 20

static unsigned char val(int rank, int it, size_t i)
{
    return (unsigned char)(rank * 31 + it * 7 + i * 13);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long bad = 0;
    for (int it = 0; it < ITERS; it++) {
        size_t n = (size_t)8 << (it % 20); /* 8 B .. 4 MB */
        unsigned char *out = malloc(n), *in = malloc(n);
        for (size_t i = 0; i < n; i++) {
            out[i] = val(rank, it, i);
            in[i] = 0;
        }
        MPI_Request r[2];
        MPI_Status st[2];
        MPI_Irecv(in, (int)n, MPI_BYTE, left, it, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(out, (int)n, MPI_BYTE, right, it, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, st);
        for (size_t i = 0; i < n; i++)
            bad += in[i] != val(left, it, i);
        for (size_t i = 0; i < n; i++)
            in[i] = 0;
        if (rank % 2 == 0) {
            MPI_Send(out, (int)n, MPI_BYTE, right, 1000 + it, MPI_COMM_WORLD);
            MPI_Recv(in, (int)n, MPI_BYTE, left, 1000 + it, MPI_COMM_WORLD, &st[0]);
        } else {
            MPI_Recv(in, (int)n, MPI_BYTE, left, 1000 + it, MPI_COMM_WORLD, &st[0]);
            MPI_Send(out, (int)n, MPI_BYTE, right, 1000 + it, MPI_COMM_WORLD);
        }
        for (size_t i = 0; i < n; i++)
            bad += in[i] != val(left, it, i);
        for (size_t i = 0; i < n; i++)
            in[i] = 0;
        MPI_Sendrecv(out, (int)n, MPI_BYTE, right, 2000 + it, in, (int)n, MPI_BYTE, left, 2000 + it,
                     MPI_COMM_WORLD, &st[0]);
        for (size_t i = 0; i < n; i++)
            bad += in[i] != val(left, it, i);
        MPI_Sendrecv_replace(out, (int)n, MPI_BYTE, right, 3000 + it, left, 3000 + it,
                             MPI_COMM_WORLD, &st[0]);
        for (size_t i = 0; i < n; i++)
            bad += out[i] != val(left, it, i);
        free(out);
        free(in);
    }
    long total = 0;
    MPI_Reduce(&bad, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (bad)
        printf("rank %d: %ld wrong bytes\n", rank, bad);
    if (rank == 0 && total == 0)
        printf("stack_ring: OK\n");
    MPI_Finalize();
    return 0;
}
