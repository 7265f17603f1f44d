/* opi_threads.c: OPI under MPI_THREAD_MULTIPLE. Several threads per rank exchange
 * buffers with the same threads of the neighbouring ranks at once, each on its own tag,
 * blocking and nonblocking, and free what they take from any thread; a last phase
 * frees on one thread what another took (one pool per rank, shared by its threads). */
#include "opi_common.h"

#include <pthread.h>

enum { THREADS = 3, ROUNDS = 300 };

static int rank, nranks;
static void *handed[THREADS]; /* phase 2: buffers taken by thread t, freed by t+1 */

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    for (int i = 0; i < ROUNDS; i++) {
        size_t n = 8 + (size_t)((i * 131 + t * 17) % 9000);
        void *out = NULL, *in = NULL;
        CHECK(OPI_Alloc(&out, n) == 0, "alloc");
        opi_fill(out, n, rank, t, (uint64_t)i);
        if (i % 2) {
            MPI_Request r[2];
            OPI_Itake(&in, (int)n, MPI_BYTE, left, t, MPI_COMM_WORLD, &r[0]);
            OPI_Igive(&out, (int)n, MPI_BYTE, right, t, MPI_COMM_WORLD, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        } else {
            OPI_Give(&out, (int)n, MPI_BYTE, right, t, MPI_COMM_WORLD);
            OPI_Take(&in, (int)n, MPI_BYTE, left, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        opi_verify(in, n, left, t, (uint64_t)i, "threads");
        CHECK(OPI_Free(&in) == 0, "free");
    }
    /* Take one more, leave it to the next thread to free. */
    void *out = NULL;
    OPI_Alloc(&out, 1000);
    OPI_Give(&out, 1000, MPI_BYTE, right, THREADS + t, MPI_COMM_WORLD);
    OPI_Take(&handed[t], 1000, MPI_BYTE, left, THREADS + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("opi_threads: skipped (MPI_THREAD_MULTIPLE not provided)\n");
        MPI_Finalize();
        return 0;
    }
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++)
        CHECK(OPI_Free(&handed[(t + 1) % THREADS]) == 0, "free of another thread's take");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("opi_threads: ok (%d ranks x %d threads, HMPI %s)\n", nranks, THREADS,
               HMPI_Active() ? "on" : "off");
    MPI_Finalize();
    return 0;
}
