/* wait_sleep.c: waits that outlast their spin budget and park (HMPI_WAIT=sleep, the
 * registration sets it), woken by the rank that arrives late: a message to sleeping
 * receivers (short and 1 MiB), synchronous sends to a receiver that posts late, a
 * barrier and an allreduce whose last member arrives after the others sleep, a PSCW
 * epoch whose target waits for late origins, an exclusive lock held while the others
 * queue for it, and OPI takes of buffers given late. Data is checked byte for byte.
 * With --cpu (all ranks on one node, HMPI active), each waiter whose peer is local
 * must also have used under 10% of a core while it waited LATE_MS: it slept. */
#define CHECK_WITH_MPI
#include "../../check.h"
#include "hmpi.h"

#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { LATE_MS = 300, BIG = 1 << 20 };

static int rank, nranks, cpu_check;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

typedef struct {
    double wall, cpu;
} stamp_t;

static stamp_t start(void) { return (stamp_t){now(), cpu()}; }

/* A wait that lasted about LATE_MS: under 10% of a core, when checking. */
static void check_slept(stamp_t t0, const char *what)
{
    double wall = now() - t0.wall, used = cpu() - t0.cpu;
    CHECK(wall > 0.5 * LATE_MS / 1000.0, "%s: rank %d waited only %.3f s", what, rank, wall);
    if (getenv("WAIT_SLEEP_VERBOSE"))
        printf("%s: rank %d: %.4f s CPU in %.3f s\n", what, rank, used, wall);
    if (cpu_check)
        CHECK(used < 0.10 * wall, "%s: rank %d used %.3f s of CPU in %.3f s of waiting", what, rank,
              used, wall);
}

static void late(void) { usleep(LATE_MS * 1000); }

static unsigned char byte_of(int from, int to, size_t i)
{
    return (unsigned char)(from * 31 + to * 7 + i * 13 + (i >> 8));
}

static void recv_sleeping(void)
{
    static unsigned char big[BIG];
    unsigned char small[64];
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        late();
        for (int r = 1; r < nranks; r++) {
            for (size_t i = 0; i < sizeof small; i++)
                small[i] = byte_of(0, r, i);
            MPI_Send(small, sizeof small, MPI_BYTE, r, 1, MPI_COMM_WORLD);
        }
        late();
        for (int r = 1; r < nranks; r++) {
            for (size_t i = 0; i < BIG; i++)
                big[i] = byte_of(0, r, i);
            MPI_Send(big, BIG, MPI_BYTE, r, 2, MPI_COMM_WORLD);
        }
        return;
    }
    stamp_t t0 = start();
    MPI_Recv(small, sizeof small, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check_slept(t0, "MPI_Recv of 64 bytes");
    for (size_t i = 0; i < sizeof small; i++)
        CHECK(small[i] == byte_of(0, rank, i), "small byte %zu", i);
    memset(big, 0, BIG);
    MPI_Recv(big, BIG, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (size_t i = 0; i < BIG; i++)
        CHECK(big[i] == byte_of(0, rank, i), "big byte %zu", i);
}

static void ssend_late_receiver(void)
{
    int v[4];
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        for (int i = 0; i < 4; i++)
            v[i] = rank * 100 + i;
        stamp_t t0 = start();
        MPI_Ssend(v, 4, MPI_INT, 0, 3, MPI_COMM_WORLD);
        check_slept(t0, "MPI_Ssend");
        return;
    }
    late();
    for (int r = 1; r < nranks; r++) {
        MPI_Recv(v, 4, MPI_INT, r, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++)
            CHECK(v[i] == r * 100 + i, "ssend from %d: %d", r, v[i]);
    }
}

static void barrier_last_late(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == nranks - 1) {
        late();
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        stamp_t t0 = start();
        MPI_Barrier(MPI_COMM_WORLD);
        check_slept(t0, "MPI_Barrier");
    }
    long x = rank + 1, sum = 0;
    if (rank == 0)
        late();
    stamp_t t0 = start();
    MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank != 0)
        check_slept(t0, "MPI_Allreduce");
    CHECK(sum == (long)nranks * (nranks + 1) / 2, "allreduce %ld", sum);
}

static void rma_pscw_and_lock(void)
{
    long *base;
    MPI_Win win;
    MPI_Win_allocate(nranks * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);
    for (int i = 0; i < nranks; i++)
        base[i] = -1;
    MPI_Group world, one;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int others = nranks - 1, *ranks = malloc(sizeof(int) * (size_t)(others ? others : 1));
        for (int r = 1; r < nranks; r++)
            ranks[r - 1] = r;
        MPI_Group group;
        MPI_Group_incl(world, others, ranks, &group);
        MPI_Win_post(group, 0, win);
        stamp_t t0 = start();
        MPI_Win_wait(win);
        check_slept(t0, "MPI_Win_wait");
        for (int r = 1; r < nranks; r++)
            CHECK(base[r] == r * 1000, "PSCW put of %d: %ld", r, base[r]);
        MPI_Group_free(&group);
        free(ranks);
    } else {
        int zero = 0;
        MPI_Group_incl(world, 1, &zero, &one);
        late();
        long v = rank * 1000;
        MPI_Win_start(one, 0, win);
        MPI_Put(&v, 1, MPI_LONG, 0, rank, 1, MPI_LONG, win);
        MPI_Win_complete(win);
        MPI_Group_free(&one);
    }
    MPI_Group_free(&world);

    /* Rank 0 holds its window's lock while the others queue for it. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        base[0] = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        late();
        MPI_Win_unlock(0, win);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        long one_ = 1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Accumulate(&one_, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        CHECK(base[0] == nranks - 1, "lock: %ld increments, expected %d", base[0], nranks - 1);
        MPI_Win_unlock(0, win);
    }
    MPI_Win_free(&win);
}

static void opi_take_late(void)
{
    enum { N = 4096 };
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        late();
        for (int r = 1; r < nranks; r++) {
            void *p = NULL;
            CHECK(OPI_Alloc(&p, N) == MPI_SUCCESS && p, "OPI_Alloc");
            for (size_t i = 0; i < N; i++)
                ((unsigned char *)p)[i] = byte_of(0, r, i);
            CHECK(OPI_Give(&p, N, MPI_BYTE, r, 4, MPI_COMM_WORLD) == MPI_SUCCESS, "give");
        }
        return;
    }
    void *p = NULL;
    stamp_t t0 = start();
    CHECK(OPI_Take(&p, N, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS && p,
          "take");
    check_slept(t0, "OPI_Take");
    for (size_t i = 0; i < N; i++)
        CHECK(((unsigned char *)p)[i] == byte_of(0, rank, i), "taken byte %zu", i);
    OPI_Free(&p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    cpu_check = argc > 1 && !strcmp(argv[1], "--cpu") && HMPI_Active();
    recv_sleeping();
    ssend_late_receiver();
    barrier_last_late();
    rma_pscw_and_lock();
    opi_take_late();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("wait_sleep: %d ranks%s: ok\n", nranks, cpu_check ? ", CPU checked" : "");
    MPI_Finalize();
    return 0;
}
