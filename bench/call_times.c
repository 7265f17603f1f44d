/* call_times.c: where single calls are slow. After WARM warm-up calls and a barrier,
 * times each of N calls of an 8-byte-or-less MPI_Allreduce (MPI_SUM of COUNT MPI_CHAR)
 * alone with MPI_Wtime, and each rank prints the calls that took more than LIMIT
 * microseconds as index:us (issue 42's "first timed collective spikes": is the first
 * call slow, or a call at a fixed count?). Plain MPI, linked with the MPI below; run it
 * under hmpirun, with and without HMPI_DISABLE=1.
 *   call_times [N [COUNT [LIMIT [WARM]]]]    defaults 3000 4 2 100 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 3000, count = argc > 2 ? atoi(argv[2]) : 4;
    double limit = argc > 3 ? atof(argv[3]) : 2.0;
    int warm = argc > 4 ? atoi(argv[4]) : 100;
    double *t = malloc(sizeof *t * (size_t)(n > 0 ? n : 1));
    if (n < 1 || count < 1 || count > 8 || warm < 0 || !t) {
        if (rank == 0)
            fprintf(stderr, "usage: call_times [N [COUNT (1..8) [LIMIT_US [WARM]]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8];
    for (int i = 0; i < warm; i++)
        MPI_Allreduce(a, b, count, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        double t0 = MPI_Wtime();
        MPI_Allreduce(a, b, count, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
        t[i] = (MPI_Wtime() - t0) * 1e6;
    }
    for (int r = 0; r < size; r++) { /* in rank order */
        MPI_Barrier(MPI_COMM_WORLD);
        if (r != rank)
            continue;
        printf("rank %d:", rank);
        for (int i = 0; i < n; i++)
            if (t[i] > limit)
                printf(" %d:%.1f", i, t[i]);
        printf("\n");
        fflush(stdout);
    }
    free(t);
    MPI_Finalize();
    return 0;
}
