/* Figure 13, right: the pointer sent is buf1 or buf2, not statically known. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 16

int main(int argc, char **argv)
{
    int rank, i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *buf1 = malloc(N * sizeof(int));
    int *buf2 = malloc(N * sizeof(int));
    int *p = rank % 2 ? buf1 : buf2;
    for (i = 0; i < N; i++)
        p[i] = i;
    if (rank == 0)
        MPI_Send(p, N, MPI_INT, 1, 0, MPI_COMM_WORLD); /* expect: sender fails: ambiguous pointer */
    else if (rank == 1)
        MPI_Recv(buf1, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fails: aliased */
    free(buf1);
    free(buf2);
    MPI_Finalize();
    return 0;
}
