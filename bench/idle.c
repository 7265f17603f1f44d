/* idle.c: the CPU time a rank burns while it waits (issue 25), for `bench/run idle`:
 *   recv     ranks in pairs (0,1), (2,3), ...: the even rank waits in MPI_Recv for a
 *            message its odd partner sends after sleeping SECONDS;
 *   barrier  every rank but the last waits in MPI_Barrier for the last, which sleeps
 *            SECONDS first.
 * Each waiting rank measures its own user+system CPU time (getrusage RUSAGE_SELF) and
 * wall time across the call; rank 0 prints one CSV line per waiting rank. The received
 * value is checked. Plain MPI, linked with the MPI below; run under hmpirun.
 *   idle [SECONDS]      (default 5; an odd rank count leaves the last rank out of recv) */
#define _GNU_SOURCE
#include "bench_util.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)r.ru_utime.tv_sec + 1e-6 * (double)r.ru_utime.tv_usec +
           (double)r.ru_stime.tv_sec + 1e-6 * (double)r.ru_stime.tv_usec;
}

static void sleep_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&t, &t) != 0)
        ;
}

/* Rank 0 prints the (cpu, wall) pairs of the waiting ranks (waiting[r] set). */
static void report(const char *test, int rank, int size, int waiting, double c, double w)
{
    double mine[3] = {waiting, c, w}, *all = NULL;
    if (rank == 0 && !(all = malloc(sizeof mine * (size_t)size)))
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < size; r++) {
        if (all[3 * r])
            printf("%s,%d,%.4f,%.4f\n", test, r, all[3 * r + 1], all[3 * r + 2]);
    }
    free(all);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 5.0;
    if (argc > 2 || secs <= 0 || secs > 3600) {
        fprintf(stderr, "usage: idle [SECONDS]\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING], state[128];
        bench_mpi_version(v, sizeof v);
        bench_hmpi_state(&secs, NULL, state, sizeof state);
        printf("# mpi: %s\n# hmpi: %s\ntest,rank,cpu_s,wall_s\n", v, state);
        fflush(stdout);
    }

    /* recv: the even rank of each pair waits. */
    long msg = 0;
    int partner = rank ^ 1, in_pair = partner < size;
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu(), w0 = now();
    if (in_pair && rank % 2 == 1) {
        sleep_s(secs);
        msg = 1000 + rank;
        MPI_Send(&msg, 1, MPI_LONG, partner, 0, MPI_COMM_WORLD);
    } else if (in_pair) {
        MPI_Recv(&msg, 1, MPI_LONG, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (msg != 1000 + partner) {
            fprintf(stderr, "idle: rank %d received %ld, not %d\n", rank, msg, 1000 + partner);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    double c1 = cpu(), w1 = now();
    report("recv", rank, size, in_pair && rank % 2 == 0, c1 - c0, w1 - w0);

    /* barrier: all but the last rank wait for it. */
    MPI_Barrier(MPI_COMM_WORLD);
    c0 = cpu();
    w0 = now();
    if (rank == size - 1)
        sleep_s(secs);
    MPI_Barrier(MPI_COMM_WORLD);
    c1 = cpu();
    w1 = now();
    report("barrier", rank, size, rank != size - 1, c1 - c0, w1 - w0);
    MPI_Finalize();
    return 0;
}
