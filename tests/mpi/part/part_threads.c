/* part_threads.c: partitioned communication under MPI_THREAD_MULTIPLE, as MPI-4.1's
 * examples use it: on the sender, threads fill and mark partitions at once (MPI_Pready
 * from every thread, no lock of the program's); on the receiver, threads each poll
 * MPI_Parrived for their own partitions and check their bytes as soon as they arrive,
 * while the main thread waits for the whole. Ranks in pairs (0 and 1, 2 and 3, ...),
 * 200 rounds, a shuffled order of partitions per thread and round, heap and static send
 * buffers. Skipped (passes) where the MPI gives less than MPI_THREAD_MULTIPLE. */
#include "../p2p_common.h"

#include <pthread.h>
#include <sched.h>

enum { THREADS = 4, PARTS = 64, PER = 256, ROUNDS = 200 }; /* ints a partition */

static int rank, nranks, partner;
static int static_buf[PARTS * PER];
static MPI_Request req;
static int *buf;
static pthread_barrier_t go, done;

static int value(int round, size_t i) { return (int)p2p_mix(((uint64_t)round << 32) ^ i); }

static void *sender(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&go); /* the main thread started the round */
        int mine[PARTS / THREADS];
        for (int k = 0; k < PARTS / THREADS; k++)
            mine[k] = t + THREADS * k;
        for (int k = PARTS / THREADS - 1; k > 0; k--) {
            int j =
                (int)(p2p_mix((uint64_t)round * 977 + (uint64_t)(t * 64 + k)) % (uint64_t)(k + 1));
            int x = mine[k];
            mine[k] = mine[j];
            mine[j] = x;
        }
        for (int k = 0; k < PARTS / THREADS; k++) {
            int p = mine[k];
            for (int i = 0; i < PER; i++)
                buf[p * PER + i] = value(round, (size_t)(p * PER + i));
            CHECK(MPI_Pready(p, req) == MPI_SUCCESS, "thread %d: MPI_Pready(%d)", t, p);
        }
        pthread_barrier_wait(&done);
    }
    return NULL;
}

static void *receiver(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&go);
        int left = PARTS / THREADS, seen[PARTS / THREADS] = {0};
        while (left) {
            for (int k = 0; k < PARTS / THREADS; k++) {
                int p = t + THREADS * k, flag = 0;
                if (seen[k])
                    continue;
                CHECK(MPI_Parrived(req, p, &flag) == MPI_SUCCESS, "MPI_Parrived(%d)", p);
                if (!flag)
                    continue;
                for (int i = 0; i < PER; i++)
                    CHECK(buf[p * PER + i] == value(round, (size_t)(p * PER + i)),
                          "round %d: partition %d int %d is %d as it arrived", round, p, i,
                          buf[p * PER + i]);
                seen[k] = 1;
                left--;
            }
            if (left)
                sched_yield();
        }
        pthread_barrier_wait(&done);
    }
    return NULL;
}

static void run(int use_static)
{
    int sending = rank % 2 == 0;
    buf = sending && use_static ? static_buf : malloc(PARTS * PER * sizeof(int));
    if (sending)
        MPI_Psend_init(buf, PARTS, PER, MPI_INT, partner, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    else
        MPI_Precv_init(buf, PARTS, PER, MPI_INT, partner, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    pthread_t th[THREADS];
    pthread_barrier_init(&go, NULL, THREADS + 1);
    pthread_barrier_init(&done, NULL, THREADS + 1);
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, sending ? sender : receiver, (void *)(intptr_t)t);
    for (int round = 0; round < ROUNDS; round++) {
        if (!sending)
            memset(buf, 0, PARTS * PER * sizeof(int));
        CHECK(MPI_Start(&req) == MPI_SUCCESS, "MPI_Start");
        pthread_barrier_wait(&go);
        if (!sending)
            CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait (receive)");
        pthread_barrier_wait(&done); /* every thread marked (or saw) its partitions */
        if (sending)
            CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait (send)");
        else
            for (int i = 0; i < PARTS * PER; i++)
                CHECK(buf[i] == value(round, (size_t)i), "round %d: int %d is %d", round, i,
                      buf[i]);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&go);
    pthread_barrier_destroy(&done);
    MPI_Request_free(&req);
    if (buf != static_buf)
        free(buf);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    partner = rank ^ 1;
    if (provided == MPI_THREAD_MULTIPLE && partner < nranks) {
        run(0);
        run(1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("part_threads: %s (%d ranks)\n",
               provided == MPI_THREAD_MULTIPLE ? "OK" : "skipped: no MPI_THREAD_MULTIPLE", nranks);
    MPI_Finalize();
    return 0;
}
