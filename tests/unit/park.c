/* park.c: the park protocol of src/shm/park.h without MPI, and the waits of
 * src/shm/wait.h that use it. Edge cases: a wake before the sleep (the sleep returns at
 * once), a wake during the sleep, a nap that times out, a wake with nobody parked (no
 * bell moves), leave restoring the counts; threads: many sleepers, each woken alone;
 * processes (fork, a MAP_SHARED page, as ranks share the control area): a child woken
 * by its parent, and a ping-pong stress of two processes where every wait parks and
 * no wake may be lost (no wait as long as a nap, where membarrier serves the barrier);
 * the wait loop (hmpi_backoff under HMPI_WAIT_PARK): it parks, is woken by
 * hmpi_wait_wake, and hmpi_wait_end leaves the park. The node's map of parked ranks:
 * its bit set by announce and cleared by leave (two threads of one rank: the bit stays
 * until the last leaves), set and cleared by many threads at once (every bit right
 * after), a waiter in the map's second word found and woken by hmpi_wait_wake_all
 * through the map (no other bell moves), a targeted wake of a rank that is not parked
 * rings nothing. */
#include "shm/park.h"
#include "shm/wait.h"
#include "../check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { NSLOTS = 8, NMAPPED = 130 }; /* NMAPPED: ranks of the map tests (three words) */

typedef struct {
    hmpi_park_node_t node;
    hmpi_park_slot_t slot[NMAPPED];
    _Atomic uint32_t word[NMAPPED]; /* what each waiter waits for */
    char pad[64];
    _Atomic uint32_t ball; /* the ping-pong's turn */
} shared_t;

static shared_t *sh;

static void edge_cases(void)
{
    hmpi_park_node_t *n = &sh->node;
    hmpi_park_slot_t *s = &sh->slot[0];
    /* Nobody parked: a wake moves no bell. */
    hmpi_park_wake(n, s, 0);
    CHECK(atomic_load(&s->bell) == 0, "bell moved with nobody parked");
    /* Wake before the sleep: the sleep on the announced value returns at once. */
    uint32_t v = hmpi_park_announce(n, s, 0);
    CHECK(atomic_load(&n->sleepers) == 1 && atomic_load(&s->parked) == 1, "announce counts");
    CHECK(atomic_load(&n->map[0]) == 1, "announce sets the rank's bit");
    hmpi_park_wake(n, s, 0);
    CHECK(atomic_load(&s->bell) == v + 1, "a wake of a parked slot rings its bell");
    double t = now();
    uint32_t v2 = hmpi_park_sleep(s, v, 2000000000u);
    CHECK(now() - t < 1.0, "a sleep after its wake took %.3f s", now() - t);
    CHECK(v2 == v + 1, "sleep returns the bell now");
    /* A nap nobody ends: it times out. */
    t = now();
    hmpi_park_sleep(s, v2, 20000000u);
    double took = now() - t;
    CHECK(took >= 0.015 && took < 1.0, "a 20 ms nap took %.3f s", took);
    hmpi_park_leave(n, s, 0);
    CHECK(atomic_load(&n->sleepers) == 0 && atomic_load(&s->parked) == 0, "leave counts");
    CHECK(atomic_load(&n->map[0]) == 0, "leave clears the rank's bit");
    /* Parked elsewhere: a wake of this slot still rings nothing here. */
    hmpi_park_announce(n, &sh->slot[1], 1);
    uint32_t b0 = atomic_load(&s->bell);
    hmpi_park_wake(n, s, 0);
    CHECK(atomic_load(&s->bell) == b0, "a slot nobody parks on rang");
    CHECK(atomic_load(&n->map[0]) == 2, "rank 1's bit alone: %#llx",
          (unsigned long long)atomic_load(&n->map[0]));
    hmpi_park_leave(n, &sh->slot[1], 1);
    /* Two threads of rank 6 park: the bit stays until the second leaves. */
    hmpi_park_announce(n, &sh->slot[6], 6);
    hmpi_park_announce(n, &sh->slot[6], 6);
    hmpi_park_leave(n, &sh->slot[6], 6);
    CHECK(atomic_load(&n->map[0]) == 1u << 6, "one thread of rank 6 left, its bit went");
    hmpi_park_leave(n, &sh->slot[6], 6);
    CHECK(atomic_load(&n->map[0]) == 0 && atomic_load(&n->sleepers) == 0, "rank 6 left");
}

/* A waiter as wait.c runs one: check, announce, check, sleep, check... */
static double park_until(int i, uint32_t want, uint64_t nap_ns)
{
    double longest = 0;
    hmpi_park_slot_t *s = &sh->slot[i];
    if (atomic_load_explicit(&sh->word[i], memory_order_acquire) == want)
        return 0;
    uint32_t v = hmpi_park_announce(&sh->node, s, i);
    while (atomic_load_explicit(&sh->word[i], memory_order_acquire) != want) {
        double t1 = now();
        v = hmpi_park_sleep(s, v, nap_ns);
        if (now() - t1 > longest)
            longest = now() - t1;
    }
    hmpi_park_leave(&sh->node, s, i);
    return longest;
}

static void publish(int i, uint32_t val)
{
    atomic_store_explicit(&sh->word[i], val, memory_order_release);
    hmpi_park_wake(&sh->node, &sh->slot[i], i);
}

static void *sleeper(void *arg)
{
    int i = (int)(intptr_t)arg;
    double t = now();
    park_until(i, 1, 10000000000ull); /* 10 s naps: only a wake ends them in time */
    return (void *)(intptr_t)(now() - t < 5.0);
}

static void many_sleepers(void)
{
    pthread_t th[NSLOTS];
    for (int i = 0; i < NSLOTS; i++) {
        atomic_store(&sh->word[i], 0);
        pthread_create(&th[i], NULL, sleeper, (void *)(intptr_t)i);
    }
    usleep(100000); /* let them sleep */
    for (int i = 0; i < NSLOTS; i++) {
        publish(i, 1);
        void *ok;
        pthread_join(th[i], &ok);
        CHECK(ok, "sleeper %d was not woken in time", i);
        for (int k = i + 1; k < NSLOTS; k++) /* the others still sleep */
            CHECK(atomic_load(&sh->slot[k].parked) == 1, "sleeper %d left early", k);
    }
    CHECK(atomic_load(&sh->node.sleepers) == 0, "sleepers left: %u",
          atomic_load(&sh->node.sleepers));
}

static void fork_wake(void)
{
    atomic_store(&sh->word[2], 0);
    pid_t pid = fork();
    if (pid == 0) {
        double t = now();
        park_until(2, 7, 10000000000ull);
        _exit(now() - t < 5.0 ? 0 : 3);
    }
    usleep(100000);
    CHECK(atomic_load(&sh->slot[2].parked) == 1, "the child did not park");
    publish(2, 7);
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child was not woken (status %d)", st);
}

/* Two processes hand a ball back and forth; each waits for it parked (no spinning).
 * With membarrier (exact) the naps are 10 s and a lost wake shows as one run out; else
 * they are 20 ms, which bound what a lost wake costs. */
static void ping_pong(int exact)
{
    uint64_t nap = exact ? 10000000000ull : 20000000u;
    enum { ROUNDS = 3000 };
    atomic_store(&sh->word[3], 0);
    atomic_store(&sh->word[4], 0);
    pid_t pid = fork();
    int me = pid == 0 ? 4 : 3, peer = pid == 0 ? 3 : 4;
    double longest = 0;
    for (uint32_t r = 1; r <= ROUNDS; r++) {
        if (me == 3) {
            publish(peer, r);
            double l = park_until(me, r, nap);
            longest = l > longest ? l : longest;
        } else {
            double l = park_until(me, r, nap);
            longest = l > longest ? l : longest;
            publish(peer, r);
        }
    }
    if (pid == 0)
        _exit(exact && longest > 5.0 ? 4 : 0);
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "ping-pong child: a wake was lost (%d)", st);
    CHECK(!exact || longest < 5.0, "ping-pong: a wake was lost (a nap of %.3f s)", longest);
    CHECK(atomic_load(&sh->node.sleepers) == 0, "sleepers after the ping-pong");
}

static _Atomic int released;

static void *releaser(void *arg)
{
    (void)arg;
    while (atomic_load(&sh->node.sleepers) == 0) /* until the waiter parks */
        usleep(1000);
    atomic_store_explicit(&released, 1, memory_order_release);
    hmpi_wait_wake(5);
    return NULL;
}

static void wait_loop(void)
{
    hmpi_wait_attach(&sh->node, sh->slot, sizeof(hmpi_park_slot_t), NSLOTS, 5);
    hmpi_wait_configure(HMPI_WAIT_PARK, 0, 5000000); /* naps up to 5 s */
    hmpi_spin_limit = HMPI_SPIN_EARLY;
    pthread_t th;
    pthread_create(&th, NULL, releaser, NULL);
    hmpi_backoff_t b = {0};
    double t = now();
    while (!atomic_load_explicit(&released, memory_order_acquire))
        hmpi_backoff(&b);
    CHECK(now() - t < 4.0, "the wait loop was not woken (%.3f s)", now() - t);
    CHECK(b.nap_us != 0, "the wait loop did not park");
    hmpi_wait_end(&b, HMPI_WAIT_RECV);
    CHECK(b.nap_us == 0 && atomic_load(&sh->node.sleepers) == 0 &&
              atomic_load(&sh->slot[5].parked) == 0,
          "hmpi_wait_end left the park");
    pthread_join(th, NULL);
    /* HMPI_WAIT_YIELD: never parks. */
    hmpi_wait_configure(HMPI_WAIT_YIELD, 0, 5000000);
    b = (hmpi_backoff_t){0};
    for (int i = 0; i < 1000; i++)
        hmpi_backoff(&b);
    CHECK(b.nap_us == 0 && atomic_load(&sh->node.sleepers) == 0, "yield parked");
    hmpi_wait_end(&b, HMPI_WAIT_RECV);
}

/* Many threads, one rank each, announce and leave over and over, at once, across three
 * words of the map: after each announce the thread's bit is set, at the end all are
 * clear (a lost fetch_or or fetch_and would show). */
enum { FLIPPERS = 12, FLIPS = 20000 };

static void *flipper(void *arg)
{
    int r = (int)(intptr_t)arg;
    hmpi_park_node_t *n = &sh->node;
    int bad = 0;
    for (int k = 0; k < FLIPS; k++) {
        hmpi_park_announce(n, &sh->slot[r], r);
        bad |= !((atomic_load(&n->map[r >> 6]) >> (r & 63)) & 1);
        hmpi_park_leave(n, &sh->slot[r], r);
        bad |= (int)((atomic_load(&n->map[r >> 6]) >> (r & 63)) & 1);
    }
    return (void *)(intptr_t)bad;
}

static void map_many_threads(void)
{
    pthread_t th[FLIPPERS];
    for (int i = 0; i < FLIPPERS; i++) /* ranks 0, 11, 22, ... 121: words 0, 1 and 2 */
        pthread_create(&th[i], NULL, flipper, (void *)(intptr_t)(i * 11));
    for (int i = 0; i < FLIPPERS; i++) {
        void *bad;
        pthread_join(th[i], &bad);
        CHECK(!bad, "rank %d's bit was wrong after an announce or a leave", i * 11);
    }
    for (int w = 0; w < HMPI_PARK_MAP_WORDS; w++)
        CHECK(atomic_load(&sh->node.map[w]) == 0, "map word %d left %#llx", w,
              (unsigned long long)atomic_load(&sh->node.map[w]));
    CHECK(atomic_load(&sh->node.sleepers) == 0, "sleepers after the flips");
}

static void *far_sleeper(void *arg)
{
    (void)arg;
    double t = now();
    park_until(70, 9, 10000000000ull); /* 10 s naps: only a wake ends them in time */
    return (void *)(intptr_t)(now() - t < 5.0);
}

/* Rank 70 (the map's second word) parks in another thread; hmpi_wait_wake_all wakes it
 * through the map and rings no other bell. Then a targeted wake of a rank that is not
 * parked rings nothing. */
static void map_wake_all(void)
{
    hmpi_wait_attach(&sh->node, sh->slot, sizeof(hmpi_park_slot_t), NMAPPED, 0);
    uint32_t before[NMAPPED];
    for (int r = 0; r < NMAPPED; r++)
        before[r] = atomic_load(&sh->slot[r].bell);
    atomic_store(&sh->word[70], 0);
    pthread_t th;
    pthread_create(&th, NULL, far_sleeper, NULL);
    while (!((atomic_load(&sh->node.map[1]) >> 6) & 1)) /* bit 70: word 1, bit 6 */
        usleep(1000);
    hmpi_wait_wake(3); /* rank 3 is not parked: no bell moves */
    for (int r = 0; r < NMAPPED; r++)
        CHECK(atomic_load(&sh->slot[r].bell) == before[r], "a wake of rank 3 rang rank %d", r);
    atomic_store_explicit(&sh->word[70], 9, memory_order_release);
    hmpi_wait_wake_all();
    void *ok;
    pthread_join(th, &ok);
    CHECK(ok, "rank 70 was not woken through the map");
    for (int r = 0; r < NMAPPED; r++)
        CHECK(atomic_load(&sh->slot[r].bell) - before[r] == (r == 70),
              "wake_all rang rank %d (%u times)", r, atomic_load(&sh->slot[r].bell) - before[r]);
    CHECK(atomic_load(&sh->node.map[1]) == 0 && atomic_load(&sh->node.sleepers) == 0,
          "rank 70 left");
}

int main(void)
{
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED, "mmap");
    memset(sh, 0, sizeof *sh);
    int exact = hmpi_park_setup();
    edge_cases();
    many_sleepers();
    fork_wake();
    ping_pong(exact);
    wait_loop();
    map_many_threads();
    map_wake_all();
    printf("park: ok (membarrier %s)\n", exact ? "yes" : "no: lost wakes bounded by naps");
    return 0;
}
