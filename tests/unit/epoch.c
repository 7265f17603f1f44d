/* epoch.c: the epoch halves (src/shm/epoch.h) without MPI. First a table of edge cases on
 * one thread's view of hand-set state words (the state order, which half an epoch uses,
 * "finished" by DONE or by the next epoch's state, claims that need no load and claims
 * that find everybody done); the walker (hmpi_epoch_is_valid) on a consistent view and
 * on each corruption of what it checks, and the assertions that call it. Then a stress run among n threads (n = 1..8) and among
 * forked processes over an anonymous shared mapping: each epoch every member claims its
 * half, writes (epoch, member) into it with plain stores and publishes; readers check
 * the words they read after their waits. Three patterns rotate, as the collectives use
 * them: everybody waits for everybody's ARRIVED and ends there (small allreduce), a root
 * published and waits for its readers' DONE (bcast), a member reads only its neighbour
 * (so claims cannot lean on all-member waits). A claim that let an owner overwrite a
 * half still read shows as a wrong word (and, under ThreadSanitizer, as a race). */
#include "shm/epoch.h"
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

enum { MAX_N = 8, HALF = 64, ITERS = 1000, PROC_N = 3 };

/* A half: the state word, then the owner's data. */
typedef struct {
    _Atomic uint64_t state;
    uint64_t epoch, member, check;
} half_t;

static uint64_t mix(uint64_t e, uint64_t i) { return e * 0x9E3779B97F4A7C15ULL ^ (i + 1); }

static void set_word(hmpi_epoch_t *ep, int i, uint64_t e, uint64_t v)
{
    atomic_store(hmpi_epoch_word(ep, i, e), v);
}

static void edge_cases(void)
{
    static _Alignas(64) unsigned char mem[3][2 * HALF];
    unsigned char *slot[3] = {mem[0], mem[1], mem[2]};
    memset(mem, 0, sizeof mem);
    hmpi_epoch_t ep = {3, 0, HALF, slot, 0, 0};

    CHECK(hmpi_epoch_state(5, HMPI_EPOCH_DONE) < hmpi_epoch_state(6, HMPI_EPOCH_ARRIVED),
          "a later epoch's first state is above an earlier one's last");
    CHECK(hmpi_epoch_state(5, HMPI_EPOCH_ARRIVED) < hmpi_epoch_state(5, HMPI_EPOCH_MID) &&
              hmpi_epoch_state(5, HMPI_EPOCH_MID) < hmpi_epoch_state(5, HMPI_EPOCH_DONE),
          "phases ordered within an epoch");
    CHECK(hmpi_epoch_half(&ep, 1, 4) == mem[1] && hmpi_epoch_half(&ep, 1, 7) == mem[1] + HALF,
          "even epochs use half 0, odd ones half 1");

    CHECK(hmpi_epoch_begin(&ep) == 1 && hmpi_epoch_begin(&ep) == 2 && ep.epoch == 2,
          "begin counts from 1");

    /* Member 1 in epoch 2: ARRIVED is not finished; DONE is; so is anything of 3. A stale
     * state of epoch 1 in the other half does not count for 2. */
    set_word(&ep, 1, 2, hmpi_epoch_state(2, HMPI_EPOCH_ARRIVED));
    set_word(&ep, 1, 3, hmpi_epoch_state(1, HMPI_EPOCH_DONE));
    CHECK(hmpi_epoch_reached(&ep, 1, 2, HMPI_EPOCH_ARRIVED) &&
              !hmpi_epoch_reached(&ep, 1, 2, HMPI_EPOCH_MID),
          "reached: exactly the phases at or below the state");
    CHECK(!hmpi_epoch_finished(&ep, 1, 2), "ARRIVED(2) and DONE(1) do not finish 2");
    set_word(&ep, 1, 2, hmpi_epoch_state(2, HMPI_EPOCH_DONE));
    CHECK(hmpi_epoch_finished(&ep, 1, 2), "DONE(2) finishes 2");
    set_word(&ep, 1, 2, hmpi_epoch_state(2, HMPI_EPOCH_MID));
    set_word(&ep, 1, 3, hmpi_epoch_state(3, HMPI_EPOCH_ARRIVED));
    CHECK(hmpi_epoch_finished(&ep, 1, 2), "ARRIVED(3) finishes 2 without DONE(2)");
    CHECK(!hmpi_epoch_finished(&ep, 1, 3), "but not 3");

    /* Claims: epoch 1 and 2 claim nothing (no epoch before them used the half). */
    ep.seen_done = 0;
    CHECK(hmpi_epoch_claim(&ep, 2, HMPI_WAIT_COLL) == mem[0] && ep.seen_done == 0,
          "claiming epoch 2 waits for nobody");
    /* Epoch 4 needs everybody done with 2: member 1 is (ARRIVED(3)), member 2 too. */
    set_word(&ep, 2, 2, hmpi_epoch_state(2, HMPI_EPOCH_DONE));
    ep.epoch = 4;
    CHECK(hmpi_epoch_claim(&ep, 4, HMPI_WAIT_COLL) == mem[0] && ep.seen_done == 2,
          "claiming epoch 4 finds 2 finished and remembers it (seen_done %llu)",
          (unsigned long long)ep.seen_done);
    /* A fresh enough seen_done claims without loading: words that say otherwise are not
     * read (member 2 looks unfinished with epoch 3). */
    ep.seen_done = 3;
    ep.epoch = 5;
    CHECK(hmpi_epoch_claim(&ep, 5, HMPI_WAIT_COLL) == mem[0] + HALF && ep.seen_done == 3,
          "seen_done 3 claims epoch 5 at once");

    /* wait_all raises seen_done: ARRIVED(e) by all says e-1, DONE(e) says e. */
    ep.seen_done = 0;
    set_word(&ep, 1, 5, hmpi_epoch_state(5, HMPI_EPOCH_DONE));
    set_word(&ep, 2, 5, hmpi_epoch_state(5, HMPI_EPOCH_DONE));
    hmpi_epoch_wait_all(&ep, 5, HMPI_EPOCH_ARRIVED, HMPI_WAIT_COLL);
    CHECK(ep.seen_done == 4, "all ARRIVED(5): seen_done 4, got %llu",
          (unsigned long long)ep.seen_done);
    hmpi_epoch_wait_all(&ep, 5, HMPI_EPOCH_DONE, HMPI_WAIT_COLL);
    CHECK(ep.seen_done == 5, "all DONE(5): seen_done 5");
    hmpi_epoch_seen(&ep, 3);
    CHECK(ep.seen_done == 5, "seen_done never goes back");

    /* Publish stores this member's word of that epoch's half only. */
    ep.epoch = 6;
    hmpi_epoch_publish(&ep, 6, HMPI_EPOCH_MID);
    CHECK(atomic_load(hmpi_epoch_word(&ep, 0, 6)) == hmpi_epoch_state(6, HMPI_EPOCH_MID) &&
              atomic_load(hmpi_epoch_word(&ep, 0, 5)) == 0,
          "publish writes one word");
}

/* A publish that lowers this member's state (the child's): DONE(2), then ARRIVED(2). */
static void publish_lower(void *arg)
{
    hmpi_epoch_t *ep = arg;
    hmpi_epoch_publish(ep, 2, HMPI_EPOCH_DONE);
    hmpi_epoch_publish(ep, 2, HMPI_EPOCH_ARRIVED);
}

/* hmpi_epoch_is_valid: member 1 of 3 two epochs in passes; each corruption of its
 * counters or of its own state words fails it; a peer's word, whatever it holds, is
 * never read (untrusted input). Then the assertions: a publish lowering a state aborts
 * from level 1 on. */
static void walker(void)
{
    static _Alignas(64) unsigned char mem[3][2 * HALF];
    unsigned char *slot[3] = {mem[0], mem[1], mem[2]};
    memset(mem, 0, sizeof mem);
    hmpi_epoch_t ep = {3, 1, HALF, slot, 0, 0};
    CHECK(hmpi_epoch_is_valid(&ep), "a fresh view failed");
    hmpi_epoch_publish(&ep, hmpi_epoch_begin(&ep), HMPI_EPOCH_DONE);
    hmpi_epoch_publish(&ep, hmpi_epoch_begin(&ep), HMPI_EPOCH_ARRIVED);
    ep.seen_done = 1;
    CHECK(hmpi_epoch_is_valid(&ep), "two epochs in: failed");

    hmpi_epoch_t bad = ep;
    bad.n = 0;
    CHECK(!hmpi_epoch_is_valid(&bad), "no members passed");
    bad = ep;
    bad.me = 3;
    CHECK(!hmpi_epoch_is_valid(&bad), "a member index past n passed");
    bad.me = -1;
    CHECK(!hmpi_epoch_is_valid(&bad), "a negative member index passed");
    bad = ep;
    bad.stride = 4;
    CHECK(!hmpi_epoch_is_valid(&bad), "halves closer than a word passed");
    bad.stride = HALF + 4;
    CHECK(!hmpi_epoch_is_valid(&bad), "a half not 8-aligned passed");
    bad = ep;
    bad.slot = NULL;
    CHECK(!hmpi_epoch_is_valid(&bad), "no slots passed");
    bad = ep;
    bad.seen_done = 3;
    CHECK(!hmpi_epoch_is_valid(&bad), "everybody done with an epoch not begun passed");

    /* Its own words: ARRIVED(2) in half 0, DONE(1) in half 1. */
    set_word(&ep, 1, 2, hmpi_epoch_state(2, 0));
    CHECK(!hmpi_epoch_is_valid(&ep), "a state without a phase passed");
    set_word(&ep, 1, 2, hmpi_epoch_state(1, HMPI_EPOCH_DONE));
    CHECK(!hmpi_epoch_is_valid(&ep), "an odd epoch's state in the even half passed");
    set_word(&ep, 1, 2, hmpi_epoch_state(4, HMPI_EPOCH_ARRIVED));
    CHECK(!hmpi_epoch_is_valid(&ep), "a state of an epoch not begun passed");
    set_word(&ep, 1, 3, hmpi_epoch_state(3, HMPI_EPOCH_MID));
    set_word(&ep, 1, 2, hmpi_epoch_state(2, HMPI_EPOCH_ARRIVED));
    CHECK(!hmpi_epoch_is_valid(&ep), "a state of an epoch not begun (odd half) passed");
    set_word(&ep, 1, 3, hmpi_epoch_state(1, HMPI_EPOCH_DONE));
    CHECK(hmpi_epoch_is_valid(&ep), "the words put back: failed");
    set_word(&ep, 0, 2, 0xBAD);
    set_word(&ep, 2, 3, hmpi_epoch_state(9, 0));
    CHECK(hmpi_epoch_is_valid(&ep), "a peer's word was read");

    int level = HMPI_ASSERT_LEVEL;
    CHECK(proc_aborts(publish_lower, &ep) == (level >= 1),
          "a publish lowering a state: aborted %d at level %d", !(level >= 1), level);
}

typedef struct {
    unsigned char *slots; /* [n][2 * HALF] */
    int n;
} shared_t;

static half_t *half_of(hmpi_epoch_t *ep, int i, uint64_t e)
{
    return (half_t *)hmpi_epoch_half(ep, i, e);
}

/* Member i's data of epoch e as a reader sees it: 1 when right. */
static int good(hmpi_epoch_t *ep, int i, uint64_t e)
{
    half_t *h = half_of(ep, i, e);
    return h->epoch == e && h->member == (uint64_t)i && h->check == mix(e, (uint64_t)i);
}

/* The member's whole run; returns the number of wrong halves it read. */
static long run(shared_t *sh, int me)
{
    unsigned char *slot[MAX_N];
    for (int i = 0; i < sh->n; i++)
        slot[i] = sh->slots + (size_t)i * 2 * HALF;
    hmpi_epoch_t ep = {sh->n, me, HALF, slot, 0, 0};
    long bad = 0;
    for (int k = 0; k < ITERS; k++) {
        uint64_t e = hmpi_epoch_begin(&ep);
        half_t *h = hmpi_epoch_claim(&ep, e, HMPI_WAIT_COLL);
        h->epoch = e;
        h->member = (uint64_t)me;
        h->check = mix(e, (uint64_t)me);
        hmpi_epoch_publish(&ep, e, HMPI_EPOCH_ARRIVED);
        if (e % 5 == 0)
            sched_yield(); /* let a fast member run ahead into its claim */
        switch (e % 3) {
        case 0: /* everybody reads everybody, and ends at ARRIVED */
            hmpi_epoch_wait_all(&ep, e, HMPI_EPOCH_ARRIVED, HMPI_WAIT_COLL);
            for (int i = 0; i < sh->n; i++)
                bad += !good(&ep, i, e);
            break;
        case 1: { /* a root's readers, then the root waits for their DONE */
            int root = (int)(e / 3 % (uint64_t)sh->n);
            if (me != root) {
                hmpi_epoch_wait(&ep, root, e, HMPI_EPOCH_ARRIVED, HMPI_WAIT_COLL);
                bad += !good(&ep, root, e);
                hmpi_epoch_publish(&ep, e, HMPI_EPOCH_DONE);
            } else {
                hmpi_epoch_wait_all(&ep, e, HMPI_EPOCH_DONE, HMPI_WAIT_COLL);
                for (int i = 0; i < sh->n; i++)
                    bad += !good(&ep, i, e); /* still valid: nobody began e + 2 */
                hmpi_epoch_publish(&ep, e, HMPI_EPOCH_DONE);
            }
            break;
        }
        default: { /* the neighbour only */
            int next = (me + 1) % sh->n;
            hmpi_epoch_wait(&ep, next, e, HMPI_EPOCH_ARRIVED, HMPI_WAIT_COLL);
            if (e % 7 == 0)
                sched_yield();
            bad += !good(&ep, next, e);
            hmpi_epoch_publish(&ep, e, HMPI_EPOCH_DONE);
            break;
        }
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
    member_t *m = arg;
    return (void *)(intptr_t)run(m->sh, m->me);
}

static void with_threads(int n)
{
    shared_t sh = {NULL, n};
    CHECK(posix_memalign((void **)&sh.slots, 64, (size_t)n * 2 * HALF) == 0, "out of memory");
    memset(sh.slots, 0, (size_t)n * 2 * HALF);
    pthread_t t[MAX_N];
    member_t m[MAX_N];
    for (int i = 0; i < n; i++) {
        m[i] = (member_t){&sh, i};
        CHECK(pthread_create(&t[i], NULL, thread_main, &m[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < n; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        CHECK(bad == NULL, "n=%d member %d read %ld wrong halves", n, i, (long)(intptr_t)bad);
    }
    free(sh.slots);
}

static void with_processes(int n)
{
    size_t bytes = (size_t)n * 2 * HALF;
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED, "mmap");
    shared_t sh = {map, n};
    PROCS_RUN(n, run, &sh, "read wrong halves");
    munmap(map, bytes);
}

int main(void)
{
    edge_cases();
    walker();
    static const int ns[] = {1, 2, 3, 4, 5, 8};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        with_threads(ns[k]);
    with_processes(PROC_N);
    with_processes(2);
    printf("epoch: edge cases; walker; threads n=1..8 and %d processes, %d epochs each: ok\n",
           PROC_N, ITERS);
    return 0;
}
