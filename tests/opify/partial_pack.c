/* Only half of the buffer is packed before the send. */
#include <mpi.h>
#include <stdlib.h>

#define N 10

int main(int argc, char **argv)
{
    int rank, i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *b = malloc(N * sizeof(int));
    for (i = 0; i < N / 2; i++)
        b[i] = i;
    if (rank == 0)
        MPI_Send(b, N, MPI_INT, 1, 0, MPI_COMM_WORLD); /* expect: sender fails: without a complete pack */
    free(b);
    MPI_Finalize();
    return 0;
}
