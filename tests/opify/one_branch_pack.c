/* Packed on one side of a branch only, sent after the join. */
#include <mpi.h>
#include <stdlib.h>

#define N 4

int main(int argc, char **argv)
{
    int rank, i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *s = malloc(N * sizeof(int));
    if (argc > 3) {
        for (i = 0; i < N; i++)
            s[i] = i;
    }
    if (rank == 0)
        MPI_Send(s, N, MPI_INT, 1, 0, MPI_COMM_WORLD); /* expect: sender fails: without a complete pack */
    free(s);
    MPI_Finalize();
    return 0;
}
