/* One pack, two sends: the second send carries data not packed since the first. */
#include <mpi.h>
#include <stdlib.h>

#define N 10

int main(int argc, char **argv)
{
    int rank, i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *b = malloc(N * sizeof(int));
    int *c = malloc(N * sizeof(int));
    if (rank == 0) {
        for (i = 0; i < N; i++)
            b[i] = i;
        MPI_Send(b, N, MPI_INT, 1, 0, MPI_COMM_WORLD); /* expect: sender fails: sent again without a complete pack */
        MPI_Send(b, N, MPI_INT, 1, 0, MPI_COMM_WORLD); /* expect: sender fails: sent again without a complete pack */
    } else if (rank == 1) {
        MPI_Recv(c, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fits */
        MPI_Recv(c, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fits */
    }
    free(b);
    free(c);
    MPI_Finalize();
    return 0;
}
