/* The old contents are read before the pack overwrites them (an exposed read),
 * and a receive buffer is read before anything was received into it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 8

int main(int argc, char **argv)
{
    int rank, i, r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *b = malloc(N * sizeof(int));
    int *in = malloc(N * sizeof(int));
    for (i = 0; i < N; i++)
        b[i] = 0;
    for (r = 0; r < 3; r++) {
        int last = b[N - 1];
        for (i = 0; i < N; i++)
            b[i] = last + i;
        if (rank == 0)
            MPI_Send(b, N, MPI_INT, 1, 0, MPI_COMM_WORLD); /* expect: sender fails: sent again without a complete pack */
    }
    printf("%d\n", in[0]);
    if (rank == 1)
        MPI_Recv(in, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fails: before its first receive */
    free(b);
    free(in);
    MPI_Finalize();
    return 0;
}
