/* Figure 13, left: buf1 is packed completely before each send, buf2 never is. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 64
#define ROUNDS 3

int main(int argc, char **argv)
{
    int rank, i, r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *buf1 = malloc(N * sizeof(int));
    int *buf2 = malloc(N * sizeof(int));
    buf2[0] = 7;
    if (rank == 0) {
        r = 0;
        while (r < ROUNDS) {
            for (i = 0; i < N; i++)
                buf1[i] = i * (r + 1);
            MPI_Send(buf1, N, MPI_INT, 1, 1, MPI_COMM_WORLD); /* expect: sender fits */
            MPI_Send(buf2, N, MPI_INT, 1, 2, MPI_COMM_WORLD); /* expect: sender fails: without a complete pack */
            r++;
        }
    } else if (rank == 1) {
        int *in = malloc(N * sizeof(int));
        for (r = 0; r < ROUNDS; r++) {
            MPI_Recv(in, N, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fits */
            long s = 0;
            for (i = 0; i < N; i++)
                s += in[i];
            MPI_Recv(in, N, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fits */
            printf("round %d sum %ld\n", r, s);
        }
        free(in);
    }
    free(buf1);
    free(buf2);
    MPI_Finalize();
    return 0;
}
