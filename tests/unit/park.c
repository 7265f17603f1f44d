/* park.c: the park protocol of src/shm/park.h without MPI, and the waits of
 * src/shm/wait.h that use it. Edge cases: a wake before the sleep (the sleep returns at
 * once), a wake during the sleep, a nap that times out, a wake with nobody parked (no
 * bell moves), leave restoring the counts; threads: many sleepers, each woken alone;
 * processes (fork, a MAP_SHARED page, as ranks share the control area): a child woken
 * by its parent, and a ping-pong stress of two processes where every wait parks and
 * no wake may be lost (no wait as long as a nap, where membarrier serves the barrier);
 * the wait loop (hmpi_backoff under HMPI_WAIT_PARK): it parks, is woken by
 * hmpi_wait_wake, and hmpi_wait_end leaves the park. */
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

enum { NSLOTS = 8 };

typedef struct {
    hmpi_park_node_t node;
    hmpi_park_slot_t slot[NSLOTS];
    _Atomic uint32_t word[NSLOTS]; /* what each waiter waits for */
    char pad[64];
    _Atomic uint32_t ball; /* the ping-pong's turn */
} shared_t;

static shared_t *sh;

static void edge_cases(void)
{
    hmpi_park_node_t *n = &sh->node;
    hmpi_park_slot_t *s = &sh->slot[0];
    /* Nobody parked: a wake moves no bell. */
    hmpi_park_wake(n, s);
    CHECK(atomic_load(&s->bell) == 0, "bell moved with nobody parked");
    /* Wake before the sleep: the sleep on the announced value returns at once. */
    uint32_t v = hmpi_park_announce(n, s);
    CHECK(atomic_load(&n->sleepers) == 1 && atomic_load(&s->parked) == 1, "announce counts");
    hmpi_park_wake(n, s);
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
    hmpi_park_leave(n, s);
    CHECK(atomic_load(&n->sleepers) == 0 && atomic_load(&s->parked) == 0, "leave counts");
    /* Parked elsewhere: a wake of this slot still rings nothing here. */
    hmpi_park_announce(n, &sh->slot[1]);
    uint32_t b0 = atomic_load(&s->bell);
    hmpi_park_wake(n, s);
    CHECK(atomic_load(&s->bell) == b0, "a slot nobody parks on rang");
    hmpi_park_leave(n, &sh->slot[1]);
}

/* A waiter as wait.c runs one: check, announce, check, sleep, check... */
static double park_until(int i, uint32_t want, uint64_t nap_ns)
{
    double longest = 0;
    hmpi_park_slot_t *s = &sh->slot[i];
    if (atomic_load_explicit(&sh->word[i], memory_order_acquire) == want)
        return 0;
    uint32_t v = hmpi_park_announce(&sh->node, s);
    while (atomic_load_explicit(&sh->word[i], memory_order_acquire) != want) {
        double t1 = now();
        v = hmpi_park_sleep(s, v, nap_ns);
        if (now() - t1 > longest)
            longest = now() - t1;
    }
    hmpi_park_leave(&sh->node, s);
    return longest;
}

static void publish(int i, uint32_t val)
{
    atomic_store_explicit(&sh->word[i], val, memory_order_release);
    hmpi_park_wake(&sh->node, &sh->slot[i]);
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
    printf("park: ok (membarrier %s)\n", exact ? "yes" : "no: lost wakes bounded by naps");
    return 0;
}
