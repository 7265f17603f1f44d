/* part_rounds.c: one partitioned request used for 1,000 MPI_Start rounds, the send buffer
 * rewritten between rounds, every round checked byte for byte: rounds are numbered so
 * that a flag of one round is never read as the next one's, and the send completes only
 * once the receiver took every partition.
 *  - ring: every rank sends to its right and receives from its left (heap, then static
 *    send buffers), both requests waited for together;
 *  - race: ranks in pairs; the sender waits for its send alone, overwrites its buffer at
 *    once with garbage, then starts and marks its next round, while the receiver lags:
 *    every few rounds it works a while before its MPI_Wait, so the sender's next round is
 *    marked before the receiver started it. A send that completed before its receiver
 *    took the buffer shows up as garbage in the receiver's data.
 * Each with 16 KiB in all, then with 512 KiB (partitions of 128 KiB, which the sender
 * helps the receiver copy). */
#include "../p2p_common.h"

#include <time.h>

static int rank, nranks;
enum { PARTS = 4, BIG = 1 << 17 }; /* partitions; ints of the large case in all: 512 KiB */
static size_t N = 4096;            /* ints in all: 16 KiB, or BIG */
static int static_buf[BIG];

static int value(int who, int round, size_t i)
{
    return (int)p2p_mix(((uint64_t)who << 48) ^ ((uint64_t)round << 20) ^ i);
}

static void ring(int use_static, int rounds)
{
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    int *s = use_static ? static_buf : malloc(N * sizeof(int)), *r = malloc(N * sizeof(int));
    MPI_Request q[2];
    MPI_Psend_init(s, PARTS, (MPI_Count)N / PARTS, MPI_INT, right, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                   &q[0]);
    MPI_Precv_init(r, PARTS / 2, (MPI_Count)N / (PARTS / 2), MPI_INT, left, 1, MPI_COMM_WORLD,
                   MPI_INFO_NULL, &q[1]);
    for (int round = 0; round < rounds; round++) {
        for (size_t i = 0; i < N; i++)
            s[i] = value(rank, round, i);
        MPI_Startall(2, q);
        if (round % 2)
            MPI_Pready_range(0, PARTS - 1, q[0]);
        else
            for (int p = 0; p < PARTS; p++)
                MPI_Pready(p, q[0]);
        CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "MPI_Waitall");
        for (size_t i = 0; i < N; i++)
            CHECK(r[i] == value(left, round, i), "ring (%s) round %d: int %zu is %d, want %d",
                  use_static ? "static" : "heap", round, i, r[i], value(left, round, i));
    }
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    if (!use_static)
        free(s);
    free(r);
}

static void busy_us(long us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static void race(int use_static, int rounds)
{
    int partner = rank ^ 1;
    if (partner >= nranks)
        return;
    MPI_Request q;
    if (rank % 2 == 0) {
        int *s = use_static ? static_buf : malloc(N * sizeof(int));
        MPI_Psend_init(s, PARTS, (MPI_Count)N / PARTS, MPI_INT, partner, 2, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &q);
        for (int round = 0; round < rounds; round++) {
            for (size_t i = 0; i < N; i++)
                s[i] = value(rank, round, i);
            MPI_Start(&q);
            for (int p = PARTS - 1; p >= 0; p--)
                MPI_Pready(p, q);
            CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait (send)");
            for (size_t i = 0; i < N; i++)
                s[i] = 0x0bad0bad; /* the buffer is the program's again */
        }
        MPI_Request_free(&q);
        if (!use_static)
            free(s);
    } else {
        int *r = malloc(N * sizeof(int));
        MPI_Precv_init(r, 8, (MPI_Count)N / 8, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_INFO_NULL,
                       &q);
        for (int round = 0; round < rounds; round++) {
            MPI_Start(&q);
            if (round % 7 == 3)
                busy_us(200); /* the sender's next round is marked meanwhile */
            CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait (receive)");
            for (size_t i = 0; i < N; i++)
                CHECK(r[i] == value(partner, round, i),
                      "race (%s) round %d: int %zu is %#x, want %#x",
                      use_static ? "static" : "heap", round, i, (unsigned)r[i],
                      (unsigned)value(partner, round, i));
            memset(r, 0, N * sizeof(int));
        }
        MPI_Request_free(&q);
        free(r);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    ring(0, 1000);
    ring(1, 1000);
    race(0, 1000);
    race(1, 1000);
    N = BIG; /* partitions of 128 KiB: the sender helps copy them (p2p/part.c) */
    ring(0, 200);
    ring(1, 200);
    race(0, 300);
    race(1, 300);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("part_rounds: OK (%d ranks, 4 x 1,000 rounds of 16 KiB, 1,000 of 512 KiB)\n",
               nranks);
    MPI_Finalize();
    return 0;
}
