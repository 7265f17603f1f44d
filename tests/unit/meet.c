/* meet.c: the meeting line (src/shm/meet.h) without MPI. The table: each member count's
 * entry size and data capacity, words and data areas inside the line and apart. Then
 * meetings among n threads (n = 2..8) and forked processes over an anonymous shared
 * mapping: before meeting l each member writes l into its cell of one of two arrays (by
 * parity, plain stores) and l's pattern into its data area; after it every member reads
 * every cell and every member's data: all must be of meeting l. A member let through
 * early, data overwritten while still read, or stores not ordered before the loads
 * after the meeting show as a wrong value (and, under ThreadSanitizer, as a race). */
#include "shm/meet.h"
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

enum { ITERS = 1000 }; /* each meeting needs every member scheduled: kept short for busy machines */

static void table(void)
{
    static const struct {
        int n;
        size_t stride, cap;
    } want[] = {{2, 32, 8}, {3, 16, 4}, {4, 16, 4}, {5, 8, 0}, {6, 8, 0}, {7, 8, 0}, {8, 8, 0}};
    static _Alignas(HMPI_CACHE_LINE) unsigned char line[HMPI_CACHE_LINE];
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int n = want[k].n;
        for (int me = 0; me < n; me++) {
            hmpi_meet_t m;
            hmpi_meet_init(&m, line, n, me);
            CHECK(m.stride == want[k].stride && m.cap == want[k].cap && m.seq == 0 && m.me == me,
                  "n=%d: entry %zu bytes holding %zu twice, got %zu and %zu", n, want[k].stride,
                  want[k].cap, m.stride, m.cap);
        }
        hmpi_meet_t m;
        hmpi_meet_init(&m, line, n, 0);
        for (int i = 0; i < n; i++) {
            unsigned char *w = (unsigned char *)hmpi_meet_word(&m, i);
            CHECK(w >= line && w + 8 <= line + HMPI_CACHE_LINE && (uintptr_t)w % 8 == 0,
                  "n=%d: word %d inside the line, aligned", n, i);
            for (uint64_t l = 1; l <= 2; l++) {
                unsigned char *d = hmpi_meet_data(&m, i, l);
                CHECK(d >= line + (size_t)i * m.stride && d + m.cap <= w,
                      "n=%d: member %d's area %llu inside its entry, before its word", n, i,
                      (unsigned long long)(l & 1));
                CHECK(m.cap == 0 || (uintptr_t)d % m.cap == 0, "n=%d: area aligned to its size", n);
            }
            CHECK(m.cap == 0 || hmpi_meet_data(&m, i, 1) == hmpi_meet_data(&m, i, 2) + m.cap,
                  "n=%d: the two areas side by side", n);
        }
    }
}

typedef struct {
    unsigned char *line; /* HMPI_CACHE_LINE bytes, zeroed */
    uint64_t *cells;     /* [2][n] */
    int n;
} shared_t;

static uint64_t pattern(uint64_t l, int i) { return l * 0x9E3779B97F4A7C15ULL + (uint64_t)i; }

/* The member's whole run; returns the number of wrong values it read. */
static long run(shared_t *sh, int me)
{
    hmpi_meet_t m;
    hmpi_meet_init(&m, sh->line, sh->n, me);
    long bad = 0;
    for (uint64_t k = 1; k <= ITERS; k++) {
        uint64_t *row = sh->cells + (k & 1) * (size_t)sh->n;
        row[me] = k;
        uint64_t mine = pattern(k, me);
        uint64_t l = hmpi_meet(&m, &mine, m.cap, HMPI_WAIT_COLL);
        bad += l != k;
        if (k % 7 == 0)
            sched_yield(); /* let a fast member run into its next meeting */
        for (int i = 0; i < sh->n; i++) {
            bad += row[i] != k;
            uint64_t got = 0, want = 0, full = pattern(k, i);
            memcpy(&got, hmpi_meet_data(&m, i, l), m.cap); /* the first cap bytes */
            memcpy(&want, &full, m.cap);
            bad += got != want;
        }
    }
    return bad;
}

typedef struct {
    shared_t *sh;
    int me;
} member_t;

static void *thread_main(void *arg)
{
    member_t *mb = arg;
    return (void *)(intptr_t)run(mb->sh, mb->me);
}

static void with_threads(int n)
{
    shared_t sh = {NULL, calloc(2 * (size_t)n, sizeof(uint64_t)), n};
    CHECK(posix_memalign((void **)&sh.line, HMPI_CACHE_LINE, HMPI_CACHE_LINE) == 0 && sh.cells,
          "out of memory");
    memset(sh.line, 0, HMPI_CACHE_LINE);
    pthread_t t[HMPI_MEET_MAX];
    member_t mb[HMPI_MEET_MAX];
    for (int i = 0; i < n; i++) {
        mb[i] = (member_t){&sh, i};
        CHECK(pthread_create(&t[i], NULL, thread_main, &mb[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < n; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        CHECK(bad == NULL, "n=%d member %d read %ld wrong values", n, i, (long)(intptr_t)bad);
    }
    free(sh.line);
    free(sh.cells);
}

static void with_processes(int n)
{
    size_t bytes = HMPI_CACHE_LINE + 2 * (size_t)n * sizeof(uint64_t);
    unsigned char *map =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED, "mmap");
    shared_t sh = {map, (uint64_t *)(void *)(map + HMPI_CACHE_LINE), n};
    PROCS_RUN(n, run, &sh, "read wrong values");
    munmap(map, bytes);
}

int main(void)
{
    table();
    for (int n = 2; n <= HMPI_MEET_MAX; n++)
        with_threads(n);
    with_processes(2);
    with_processes(4);
    printf("meet: table n=2..8; threads n=2..8 and 2, 4 processes, %d meetings each: ok\n", ITERS);
    return 0;
}
