/* barrier.c: the dissemination barrier (src/shm/barrier.h) among n threads, n = 1..17
 * (powers of two and the numbers around them), then among forked processes sharing an
 * anonymous mapping, as ranks share the region. Before barrier i each member writes i
 * into its cell of one of two arrays (by parity, plain stores); after it every member
 * reads every cell: all must hold i. A barrier that let one member through early, or
 * failed to order the stores before it with the loads after it, shows up as a stale
 * cell (and, under ThreadSanitizer, as a data race). */
#include "shm/barrier.h"
#include "../check.h"
#include "procs.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_N = 17, ITERS = 2000, PROC_N = 5 };

typedef struct {
    void *flags;
    uint32_t n;
    uint32_t *cells; /* [2][n] */
} shared_t;

typedef struct {
    shared_t *sh;
    uint32_t me;
} member_t;

/* The member's whole run; returns the number of bad cells it saw. */
static long run(shared_t *sh, uint32_t me)
{
    hmpi_barrier_t b;
    hmpi_barrier_init(&b, sh->flags, sh->n, me);
    long bad = 0;
    for (uint32_t i = 1; i <= ITERS; i++) {
        uint32_t *row = sh->cells + (i & 1) * sh->n;
        row[me] = i;
        hmpi_barrier_arrive(&b);
        while (!hmpi_barrier_poll(&b))
            sched_yield(); /* more members than cores */
        for (uint32_t j = 0; j < sh->n; j++)
            bad += row[j] != i;
    }
    return bad;
}

static void *thread_main(void *arg)
{
    member_t *m = arg;
    return (void *)(intptr_t)run(m->sh, m->me);
}

static void with_threads(uint32_t n)
{
    size_t bytes = hmpi_barrier_size(n);
    shared_t sh = {NULL, n, calloc(2 * (size_t)n, sizeof(uint32_t))};
    if (bytes) {
        CHECK(posix_memalign(&sh.flags, HMPI_CACHE_LINE, bytes) == 0, "out of memory");
        memset(sh.flags, 0, bytes);
    }
    CHECK(sh.cells, "out of memory");
    pthread_t t[MAX_N];
    member_t m[MAX_N];
    for (uint32_t i = 0; i < n; i++) {
        m[i] = (member_t){&sh, i};
        CHECK(pthread_create(&t[i], NULL, thread_main, &m[i]) == 0, "pthread_create");
    }
    for (uint32_t i = 0; i < n; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        CHECK(bad == NULL, "n=%u member %u saw %ld stale cells", n, i, (long)(intptr_t)bad);
    }
    free(sh.flags);
    free(sh.cells);
}

static void with_processes(uint32_t n)
{
    size_t flag_bytes = hmpi_barrier_size(n), bytes = flag_bytes + 2 * n * sizeof(uint32_t);
    char *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED, "mmap");
    shared_t sh = {map, n, (uint32_t *)(void *)(map + flag_bytes)};
    PROCS_RUN(n, run, &sh, "saw stale cells");
    munmap(map, bytes);
}

int main(void)
{
    CHECK(hmpi_barrier_rounds(1) == 0 && hmpi_barrier_rounds(2) == 1 &&
              hmpi_barrier_rounds(3) == 2 && hmpi_barrier_rounds(16) == 4 &&
              hmpi_barrier_rounds(17) == 5,
          "rounds: ceil(log2 n)");
    static const uint32_t ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        with_threads(ns[k]);
    with_processes(PROC_N);
    with_processes(2);
    printf("barrier: threads n=1..17 and %d processes, %d barriers each: ok\n", PROC_N, ITERS);
    return 0;
}
