/* job.c: the program tests/slurm/run.sh starts under srun, salloc and hmpirun, built
 * twice: with the MPI's plain wrapper (HMPI preloaded, or not at all) and with hmpicc
 * (linked). It says what the launcher gave it and checks every byte it receives; the
 * script judges the job by these lines, HMPI's own and the files it leaves.
 *   job hello      every rank: "job: rank R of N on HOST: HMPI active|pass-through|absent"
 *   job pingpong   ranks 0 and 1: 1 MiB there and back, 50 times, every byte checked;
 *                  rank 0 prints the time of one round trip
 *   job coll       MPI_Bcast, MPI_Allreduce and MPI_Alltoall over all ranks, checked
 *   job all        the three in turn
 * Buffers are malloc'ed after MPI_Init: with HMPI active they lie in its shared heap.
 * HMPI_Active is looked up with dlsym: the plain build has no HMPI at link time. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#define CHECK_WITH_MPI
#include "../check.h"

#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <string.h>

enum { PING_BYTES = 1 << 20, PING_ROUNDS = 50, COLL_INTS = 4096 };

static int rank, size;

static uint8_t pattern(int seed, size_t i) { return (uint8_t)(seed * 131 + i * 7 + (i >> 11)); }

/* What rank 1 sends back: every byte inverted. */
static uint8_t flip(uint8_t v) { return (uint8_t)(0xff ^ v); }

static void hello(void)
{
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(host, &len);
    int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "HMPI_Active");
    printf("job: rank %d of %d on %s: HMPI %s\n", rank, size, host,
           !active    ? "absent"
           : active() ? "active"
                      : "pass-through");
    fflush(stdout);
}

static void pingpong(void)
{
    if (size < 2) {
        if (rank == 0)
            printf("job: pingpong needs 2 ranks, the world has %d\n", size);
        return;
    }
    uint8_t *buf = malloc(PING_BYTES);
    CHECK(buf, "rank %d: no memory for the ping-pong", rank);
    double t0 = 0;
    for (int round = 0; round <= PING_ROUNDS; round++) {
        if (round == 1) /* the first round trip warms up: not timed */
            t0 = MPI_Wtime();
        if (rank == 0) {
            for (size_t i = 0; i < PING_BYTES; i++)
                buf[i] = pattern(round, i);
            MPI_Send(buf, PING_BYTES, MPI_BYTE, 1, round, MPI_COMM_WORLD);
            MPI_Recv(buf, PING_BYTES, MPI_BYTE, 1, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < PING_BYTES; i++)
                CHECK(buf[i] == flip(pattern(round, i)),
                      "rank 0: round %d: byte %zu came back as %u", round, i, buf[i]);
        } else if (rank == 1) {
            MPI_Recv(buf, PING_BYTES, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < PING_BYTES; i++) {
                CHECK(buf[i] == pattern(round, i), "rank 1: round %d: byte %zu is %u", round, i,
                      buf[i]);
                buf[i] = flip(buf[i]);
            }
            MPI_Send(buf, PING_BYTES, MPI_BYTE, 0, round, MPI_COMM_WORLD);
        }
    }
    if (rank == 0)
        printf("job: pingpong of 1 MiB: %d round trips checked, %.1f us each\n", PING_ROUNDS,
               (MPI_Wtime() - t0) * 1e6 / PING_ROUNDS);
    free(buf);
}

static void coll(void)
{
    int *a = malloc(sizeof *a * COLL_INTS), *b = malloc(sizeof *b * COLL_INTS);
    int *send = malloc(sizeof *send * (size_t)size), *recv = malloc(sizeof *recv * (size_t)size);
    CHECK(a && b && send && recv, "rank %d: no memory for the collectives", rank);
    for (int i = 0; i < COLL_INTS; i++)
        a[i] = rank == size - 1 ? i * 3 + 1 : -1;
    MPI_Bcast(a, COLL_INTS, MPI_INT, size - 1, MPI_COMM_WORLD);
    for (int i = 0; i < COLL_INTS; i++)
        CHECK(a[i] == i * 3 + 1, "rank %d: MPI_Bcast: element %d is %d", rank, i, a[i]);
    for (int i = 0; i < COLL_INTS; i++)
        a[i] = rank + i;
    MPI_Allreduce(a, b, COLL_INTS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < COLL_INTS; i++)
        CHECK(b[i] == size * (size - 1) / 2 + size * i, "rank %d: MPI_Allreduce: element %d is %d",
              rank, i, b[i]);
    for (int r = 0; r < size; r++)
        send[r] = rank * 1000 + r;
    MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        CHECK(recv[r] == r * 1000 + rank, "rank %d: MPI_Alltoall: from %d came %d", rank, r,
              recv[r]);
    if (rank == 0)
        printf("job: bcast, allreduce, alltoall over %d ranks checked\n", size);
    free(a);
    free(b);
    free(send);
    free(recv);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    int all = strcmp(mode, "all") == 0;
    if (!all && strcmp(mode, "hello") && strcmp(mode, "pingpong") && strcmp(mode, "coll")) {
        fprintf(stderr, "usage: %s hello|pingpong|coll|all\n", argv[0]);
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (all || strcmp(mode, "hello") == 0)
        hello();
    if (all || strcmp(mode, "pingpong") == 0)
        pingpong();
    if (all || strcmp(mode, "coll") == 0)
        coll();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("job: done\n");
    MPI_Finalize();
    return 0;
}
