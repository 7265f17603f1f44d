/* locks.c: the cross-process locks and counters of src/shm/lock.h, without MPI.
 * Edge cases one by one (a failed try leaves the word as it was; wrap-around of the
 * counters), then stress among threads and among forked processes sharing an anonymous
 * mapping, as ranks share the region: the reader-writer lock never lets a writer in with
 * anyone else, nor a reader with a writer, and the writers' plain increments of a shared
 * total are never lost; the test-and-test-and-set lock the same for its holders; a
 * counter's bump makes the data written before it visible to the reader that sees it. */
#include "shm/lock.h"
#include "../check.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { THREADS = 4, PROCS = 3, ROUNDS = 20000, MSGS = 100000 };

typedef struct {
    _Atomic uint32_t rw, tas;
    _Atomic int writers, readers; /* who is inside the rw lock now */
    uint64_t total;               /* plain: written only under a lock */
    uint64_t tas_total;
} shared_t;

static void rw_round(shared_t *sh, unsigned *seed)
{
    if (rand_r(seed) % 4 == 0) {
        while (!hmpi_rw_try_excl(&sh->rw))
            sched_yield();
        int w = atomic_fetch_add(&sh->writers, 1), r = atomic_load(&sh->readers);
        CHECK(w == 0 && r == 0, "a writer inside with %d writers and %d readers", w, r);
        sh->total++;
        atomic_fetch_sub(&sh->writers, 1);
        hmpi_rw_release_excl(&sh->rw);
    } else {
        while (!hmpi_rw_try_shared(&sh->rw))
            sched_yield();
        atomic_fetch_add(&sh->readers, 1);
        int w = atomic_load(&sh->writers);
        CHECK(w == 0, "a reader inside with %d writers", w);
        atomic_fetch_sub(&sh->readers, 1);
        hmpi_rw_release_shared(&sh->rw);
    }
    while (!hmpi_tas_try(&sh->tas))
        sched_yield();
    sh->tas_total++;
    hmpi_tas_release(&sh->tas);
}

static void rounds_of(shared_t *sh, unsigned seed, int n)
{
    for (int i = 0; i < n; i++)
        rw_round(sh, &seed);
}

/* The writers' count of a run: replayed from the seeds, as rw_round draws them. */
static uint64_t writes_of(unsigned seed, int n)
{
    uint64_t w = 0;
    for (int i = 0; i < n; i++)
        w += rand_r(&seed) % 4 == 0;
    return w;
}

static shared_t *g_sh;

static void *thread_main(void *arg)
{
    rounds_of(g_sh, (unsigned)(uintptr_t)arg, ROUNDS);
    return NULL;
}

static _Atomic uint32_t posted;
static uint64_t data[MSGS];

static void *producer(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < MSGS; i++) {
        data[i] = (uint64_t)i * 2654435761u + 1;
        hmpi_count_bump(&posted);
    }
    return NULL;
}

int main(void)
{
    /* Edge cases. */
    _Atomic uint32_t w = 0;
    CHECK(hmpi_rw_try_excl(&w) && w == HMPI_RW_WRITER, "exclusive on a free lock");
    CHECK(!hmpi_rw_try_excl(&w) && w == HMPI_RW_WRITER, "a second exclusive got in");
    CHECK(!hmpi_rw_try_shared(&w) && w == HMPI_RW_WRITER, "shared beside a writer: %u", w);
    hmpi_rw_release_excl(&w);
    CHECK(w == 0, "released exclusive: %u", w);
    CHECK(hmpi_rw_try_shared(&w) && hmpi_rw_try_shared(&w) && w == 2 * HMPI_RW_READER,
          "two readers: %u", w);
    CHECK(!hmpi_rw_try_excl(&w) && w == 2 * HMPI_RW_READER, "exclusive beside readers: %u", w);
    hmpi_rw_release_shared(&w);
    hmpi_rw_release_shared(&w);
    CHECK(w == 0, "released readers: %u", w);
    _Atomic uint32_t t = 0;
    CHECK(hmpi_tas_try(&t) && !hmpi_tas_try(&t) && t == 1, "test-and-set taken twice");
    hmpi_tas_release(&t);
    CHECK(t == 0 && hmpi_tas_try(&t), "test-and-set after release");
    _Atomic uint32_t c = UINT32_MAX - 1;
    uint32_t seen = UINT32_MAX - 1;
    CHECK(!hmpi_count_ahead(&c, seen), "a counter ahead of itself");
    hmpi_count_bump(&c);
    hmpi_count_bump(&c);
    CHECK(c == 0 && hmpi_count_ahead(&c, seen), "the counter across 2^32 is not ahead");
    seen += 2;
    CHECK(!hmpi_count_ahead(&c, seen), "consumed across 2^32, still ahead");

    /* Threads. */
    shared_t sh = {0};
    g_sh = &sh;
    pthread_t th[THREADS];
    uint64_t want = 0;
    for (int i = 0; i < THREADS; i++) {
        CHECK(pthread_create(&th[i], NULL, thread_main, (void *)(uintptr_t)(i + 1)) == 0,
              "pthread_create");
        want += writes_of((unsigned)(i + 1), ROUNDS);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK(sh.total == want, "threads: %llu writes counted, %llu made", (unsigned long long)sh.total,
          (unsigned long long)want);
    CHECK(sh.tas_total == (uint64_t)THREADS * ROUNDS, "threads: test-and-set lost %llu",
          (unsigned long long)((uint64_t)THREADS * ROUNDS - sh.tas_total));
    CHECK(sh.rw == 0 && sh.tas == 0, "threads: locks left %u %u", sh.rw, sh.tas);

    /* A counter carrying data between threads. */
    pthread_t p;
    CHECK(pthread_create(&p, NULL, producer, NULL) == 0, "pthread_create");
    uint32_t got = 0;
    while (got < MSGS) {
        if (!hmpi_count_ahead(&posted, got)) {
            sched_yield();
            continue;
        }
        CHECK(data[got] == (uint64_t)got * 2654435761u + 1, "message %u seen before its data", got);
        got++;
    }
    pthread_join(p, NULL);

    /* Processes. */
    shared_t *m = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap");
    want = 0;
    for (int i = 0; i < PROCS; i++) {
        want += writes_of((unsigned)(100 + i), ROUNDS);
        pid_t pid = fork();
        CHECK(pid >= 0, "fork");
        if (pid == 0) {
            rounds_of(m, (unsigned)(100 + i), ROUNDS);
            _exit(0);
        }
    }
    for (int i = 0; i < PROCS; i++) {
        int st;
        CHECK(wait(&st) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "a child failed");
    }
    CHECK(m->total == want && m->tas_total == (uint64_t)PROCS * ROUNDS,
          "processes: %llu of %llu writes, %llu of %llu test-and-set holds",
          (unsigned long long)m->total, (unsigned long long)want, (unsigned long long)m->tas_total,
          (unsigned long long)PROCS * ROUNDS);
    printf("locks: OK\n");
    return 0;
}
