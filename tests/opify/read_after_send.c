/* The send buffer is read after the send (like NPB CG's row reduction). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 8

int main(int argc, char **argv)
{
    int rank, i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *v = malloc(N * sizeof(double));
    double w[N];
    if (rank == 0) {
        for (i = 0; i < N; i++)
            v[i] = i;
        MPI_Send(v, N, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD); /* expect: sender fails: read after send */
        printf("first %f\n", v[0]);
    } else if (rank == 1) {
        MPI_Recv(w, N, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fits */
        printf("last %f\n", w[N - 1]);
    }
    free(v);
    MPI_Finalize();
    return 0;
}
