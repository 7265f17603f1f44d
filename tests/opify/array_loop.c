/* Stack arrays in a loop: a ping from rank 0 to rank 1, with a running checksum. */
#include <mpi.h>
#include <stdio.h>

#define N 12
#define ITERS 5

int main(int argc, char **argv)
{
    int rank, it, i;
    long check = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (it = 0; it < ITERS; it++) {
        long sbuf[N];
        long rbuf[N];
        if (rank == 0) {
            for (i = 0; i < N; i++)
                sbuf[i] = (long)it * N + i;
            MPI_Send(sbuf, N, MPI_LONG, 1, 4, MPI_COMM_WORLD); /* expect: sender fits */
        } else if (rank == 1) {
            MPI_Recv(rbuf, N, MPI_LONG, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fits */
            for (i = 0; i < N; i++)
                check += rbuf[i] * (i + 1);
        }
    }
    if (rank == 1)
        printf("check %ld\n", check);
    MPI_Finalize();
    return 0;
}
