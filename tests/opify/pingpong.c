/* Ping-pong with separate send and receive buffers, repacked every round;
 * the pack reads what it just wrote (allowed), the unpack reads a prefix. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 16
#define ROUNDS 6

int main(int argc, char **argv)
{
    int rank, r, i, peer;
    int acc = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = 1 - rank;
    if (rank < 2) {
        int *out = malloc(N * sizeof(int));
        int *in = malloc(N * sizeof(int));
        for (r = 0; r < ROUNDS; r++) {
            if ((r % 2) == rank) {
                for (i = 0; i < N; i++) {
                    out[i] = acc + i;
                    out[i] = out[i] * 3;
                }
                MPI_Send(out, N, MPI_INT, peer, 7, MPI_COMM_WORLD); /* expect: sender fits */
            } else {
                MPI_Recv(in, N, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fits */
                acc += in[0] + in[N - 1];
                for (i = 0; i < 4; i++)
                    acc += in[i];
            }
        }
        printf("rank %d acc %d\n", rank, acc);
        free(out);
        free(in);
    }
    MPI_Finalize();
    return 0;
}
