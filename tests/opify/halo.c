/* Halo exchange on a ring: pack a boundary into a send buffer, unpack the neighbour's. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 32
#define STEPS 4

int main(int argc, char **argv)
{
    int rank, size, i, step;
    double field[N];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (i = 0; i < N; i++)
        field[i] = rank * 100.0 + i;
    double *out = malloc(N * sizeof(double));
    double *in = malloc(N * sizeof(double));
    for (step = 0; step < STEPS; step++) {
        MPI_Request req[2];
        for (i = 0; i < N; i++)
            out[i] = field[i] * 0.5 + step;
        MPI_Irecv(in, N, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &req[0]); /* expect: receiver fits */
        MPI_Isend(out, N, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &req[1]); /* expect: sender fits */
        MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        MPI_Wait(&req[1], MPI_STATUS_IGNORE);
        for (i = 0; i < N; i++)
            field[i] += in[i];
    }
    double s = 0;
    for (i = 0; i < N; i++)
        s += field[i];
    printf("rank %d sum %.3f\n", rank, s);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
