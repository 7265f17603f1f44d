/* Packing on both sides of a branch, a send after the join; a receive whose
 * unpack stops on one side of a branch. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 20

int main(int argc, char **argv)
{
    int rank, i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    float *s = malloc(N * sizeof(float));
    float *r = malloc(N * sizeof(float));
    if (rank == 0) {
        if (argc > 5) {
            for (i = 0; i < N; i++)
                s[i] = 1.0f;
        } else {
            for (i = 0; i < N; i++)
                s[i] = (float)i;
            s[3] = s[3] * 2.0f;
        }
        MPI_Send(s, N, MPI_FLOAT, 1, 9, MPI_COMM_WORLD); /* expect: sender fits */
    } else if (rank == 1) {
        MPI_Recv(r, N, MPI_FLOAT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fits */
        float t = 0;
        if (argc > 5) {
            t = r[0];
        } else {
            for (i = 0; i < N; i++)
                t += r[i];
        }
        printf("t = %.1f\n", t);
    }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
