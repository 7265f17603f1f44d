/* bell.c: the bell (src/shm/bell.h). First its arithmetic and one thread's rings and
 * answers: each answer returns exactly the bits rung since the last one, an idle word
 * answers 0. Then writers (threads: 3, and 65 so that two words are in use; forked
 * processes: 5) each publish a count in a mailbox of their own and ring, and wait for
 * the reader's ack of that count before the next; the reader looks only at the
 * mailboxes whose bits it took. A ring lost, or a look that does not see what was
 * published before the ring, leaves a writer waiting for an ack that never comes: the
 * reader stops with a failure when nothing moved for 10 seconds. Every count read is
 * checked (never behind what was seen, never ahead of what was published). */
#include "shm/bell.h"
#include "../check.h"
#include "procs.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum { MAX_W = 65 };

typedef struct {
    _Atomic uint64_t count; /* published by its writer */
    char pad0[56];
    _Atomic uint64_t ack; /* written by the reader */
    char pad1[56];
} mailbox_t;

typedef struct {
    hmpi_bell_t *bell;
    mailbox_t *box; /* [n] */
    unsigned n;
    uint64_t iters;
} shared_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long writer(shared_t *sh, unsigned w)
{
    hmpi_bell_t *word = hmpi_bell_word(sh->bell, w);
    uint64_t bit = hmpi_bell_bit(w);
    for (uint64_t i = 1; i <= sh->iters; i++) {
        atomic_store_explicit(&sh->box[w].count, i, memory_order_release);
        hmpi_bell_ring(word, bit);
        while (atomic_load_explicit(&sh->box[w].ack, memory_order_acquire) != i)
            sched_yield(); /* more members than cores */
    }
    return 0;
}

/* Answers until every writer's last count is acked; returns the wrong reads. */
static long reader(shared_t *sh)
{
    uint64_t seen[MAX_W] = {0}, done = 0, all = sh->iters * sh->n;
    long bad = 0;
    double last = now_s();
    while (done < all) {
        int moved = 0;
        for (size_t i = 0; i * 64 < sh->n; i++)
            for (uint64_t rung = hmpi_bell_answer(sh->bell, i); rung; rung &= rung - 1) {
                unsigned w = (unsigned)(i * 64) + (unsigned)__builtin_ctzll(rung);
                CHECK(w < sh->n, "bit %u rung past the %u writers", w, sh->n);
                uint64_t c = atomic_load_explicit(&sh->box[w].count, memory_order_acquire);
                if (c < seen[w] || c > sh->iters) {
                    bad++;
                    continue;
                }
                if (c > seen[w]) {
                    done += c - seen[w];
                    seen[w] = c;
                    moved = 1;
                    atomic_store_explicit(&sh->box[w].ack, c, memory_order_release);
                }
            }
        if (moved) {
            last = now_s();
        } else if (now_s() - last > 10.0) {
            fprintf(stderr,
                    "FAIL: no ring answered for 10 s with %llu of %llu counts seen "
                    "(a ring lost, or a look that missed a publish)\n",
                    (unsigned long long)done, (unsigned long long)all);
            return bad + 1;
        } else {
            sched_yield();
        }
    }
    for (unsigned w = 0; w < sh->n; w++)
        bad += seen[w] != sh->iters;
    return bad;
}

/* Member 0 reads, members 1..n write (as writers 0..n-1). */
static long member(shared_t *sh, int i)
{
    return i == 0 ? reader(sh) : writer(sh, (unsigned)i - 1);
}

typedef struct {
    shared_t *sh;
    int i;
} arg_t;

static void *thread_main(void *p)
{
    arg_t *a = p;
    return (void *)(intptr_t)member(a->sh, a->i);
}

static void with_threads(unsigned n, uint64_t iters)
{
    size_t bytes = hmpi_bell_size(n) + n * sizeof(mailbox_t);
    void *mem;
    CHECK(posix_memalign(&mem, HMPI_CACHE_LINE, bytes) == 0, "out of memory");
    memset(mem, 0, bytes);
    shared_t sh = {mem, (mailbox_t *)(void *)((char *)mem + hmpi_bell_size(n)), n, iters};
    pthread_t t[MAX_W + 1];
    arg_t a[MAX_W + 1];
    for (unsigned i = 0; i <= n; i++) {
        a[i] = (arg_t){&sh, (int)i};
        CHECK(pthread_create(&t[i], NULL, thread_main, &a[i]) == 0, "pthread_create");
    }
    for (unsigned i = 0; i <= n; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        CHECK(bad == NULL, "%u writers: member %u saw %ld wrong counts", n, i, (long)(intptr_t)bad);
    }
    free(mem);
}

static void with_processes(unsigned n, uint64_t iters)
{
    size_t bytes = hmpi_bell_size(n) + n * sizeof(mailbox_t);
    char *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED, "mmap");
    shared_t sh = {(hmpi_bell_t *)(void *)map, (mailbox_t *)(void *)(map + hmpi_bell_size(n)), n,
                   iters};
    PROCS_RUN(n + 1, member, &sh, "saw wrong counts (or none moved)");
    munmap(map, bytes);
}

static void arithmetic(void)
{
    CHECK(hmpi_bell_size(1) == 64 && hmpi_bell_size(64) == 64 && hmpi_bell_size(65) == 64 &&
              hmpi_bell_size(512) == 64 && hmpi_bell_size(513) == 128 &&
              hmpi_bell_size(1024) == 128,
          "bell sizes: whole lines of 512 writers");
    hmpi_bell_t bell[16] = {0};
    CHECK(hmpi_bell_word(bell, 0) == &bell[0] && hmpi_bell_word(bell, 63) == &bell[0] &&
              hmpi_bell_word(bell, 64) == &bell[1] && hmpi_bell_word(bell, 1023) == &bell[15],
          "a writer's word");
    CHECK(hmpi_bell_bit(0) == 1 && hmpi_bell_bit(63) == 1ull << 63 && hmpi_bell_bit(64) == 1 &&
              hmpi_bell_bit(130) == 4,
          "a writer's bit");
    CHECK(hmpi_bell_answer(bell, 0) == 0 && hmpi_bell_answer(bell, 15) == 0, "idle words");
    static const unsigned ws[] = {0, 5, 63, 64, 127, 1000, 5};
    for (size_t k = 0; k < sizeof ws / sizeof ws[0]; k++)
        hmpi_bell_ring(hmpi_bell_word(bell, ws[k]), hmpi_bell_bit(ws[k]));
    CHECK(hmpi_bell_answer(bell, 0) == (1ull | 1ull << 5 | 1ull << 63), "word 0's rings");
    CHECK(hmpi_bell_answer(bell, 0) == 0, "word 0 answered: cleared");
    CHECK(hmpi_bell_answer(bell, 1) == (1ull | 1ull << 63), "word 1's rings");
    CHECK(hmpi_bell_answer(bell, 15) == 1ull << (1000 % 64), "word 15's ring");
    for (size_t i = 0; i < 16; i++)
        CHECK(atomic_load(&bell[i]) == 0, "word %zu left rung", i);
}

int main(void)
{
    arithmetic();
    with_threads(1, 20000);
    with_threads(3, 20000);
    with_threads(MAX_W, 300);
    with_processes(5, 5000);
    printf("bell: arithmetic; 1, 3 and %d writer threads, 5 writer processes: ok\n", MAX_W);
    return 0;
}
