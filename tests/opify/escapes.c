/* Buffers that escape: passed to memcpy, address of an element taken, pointer
 * arithmetic in the send, a buffer from the caller. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#define N 6

static void send_it(int *p)
{
    MPI_Send(p, N, MPI_INT, 1, 0, MPI_COMM_WORLD); /* expect: sender fails: comes from the caller */
}

int main(int argc, char **argv)
{
    int rank, i;
    int src[N] = {1, 2, 3, 4, 5, 6};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *a = malloc(N * sizeof(int));
    int *b = malloc(2 * N * sizeof(int));
    int *c = malloc(N * sizeof(int));
    memcpy(a, src, sizeof(src));
    for (i = 0; i < 2 * N; i++)
        b[i] = i;
    for (i = 0; i < N; i++)
        c[i] = i;
    int *q = &c[1];
    *q = 5;
    if (rank == 0) {
        MPI_Send(a, N, MPI_INT, 1, 0, MPI_COMM_WORLD); /* expect: sender fails: passed to */
        MPI_Send(b + N, N, MPI_INT, 1, 0, MPI_COMM_WORLD); /* expect: sender fails: ambiguous buffer expression */
        MPI_Send(c, N, MPI_INT, 1, 0, MPI_COMM_WORLD); /* expect: sender fails: address taken */
        send_it(a);
    } else if (rank == 1) {
        int *e = malloc(N * sizeof(int));
        MPI_Recv(e, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fails: passed to printf */
        printf("%p\n", (void *)e);
        free(e);
    }
    free(a);
    free(b);
    free(c);
    MPI_Finalize();
    return 0;
}
