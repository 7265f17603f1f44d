/* wait_step.c: the one wait of HMPI (src/shm/wait.h, hmpi_wait_step). The progress hook
 * that p2p registers runs every HMPI_WAIT_POLL-th step while the wait spins and at every
 * step once it yields, with `below` passed only on yielding steps; no hook, no call.
 * Then a real wait: a thread that waits for a word another thread sets only from inside
 * the hook (as a rank's local peer, blocked in a synchronous send, can finish only when
 * the waiter's engine moves) ends, with the spin limit as when ranks outnumber cores and
 * as when they do not. And the crowded limit holds only while more ranks are awake
 * than there are cores (hmpi_wait_crowd). */
#include "shm/wait.h"
#include "../check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static int calls, below_calls, calls_at[4096];
static unsigned step_now;

static void hook(int below)
{
    if (calls < (int)(sizeof calls_at / sizeof calls_at[0]))
        calls_at[calls] = (int)step_now;
    calls++;
    below_calls += below;
}

static void steps(unsigned limit, unsigned n, int below)
{
    hmpi_spin_limit = limit;
    calls = below_calls = 0;
    hmpi_backoff_t b = {0};
    for (step_now = 0; step_now < n; step_now++)
        hmpi_wait_step(&b, below);
}

static _Atomic int released, peer_ready;

static void release_hook(int below)
{
    (void)below;
    if (atomic_load(&peer_ready))
        atomic_store_explicit(&released, 1, memory_order_release);
}

static void *waiter(void *arg)
{
    (void)arg;
    hmpi_backoff_t b = {0};
    while (!atomic_load_explicit(&released, memory_order_acquire))
        hmpi_wait_step(&b, 0);
    return NULL;
}

int main(void)
{
    /* Spinning for 64 steps, then yielding: calls at steps 15, 31, 47, 63 (the 16th of
     * each 16), then one at every yielding step, `below` on those only. */
    hmpi_wait_progress = hook;
    steps(64, 100, 1);
    CHECK(calls == 4 + 36, "limit 64, 100 steps: %d calls, expected 40", calls);
    for (int k = 0; k < 4; k++)
        CHECK(calls_at[k] == 16 * k + 15, "call %d at step %d, expected %d", k, calls_at[k],
              16 * k + 15);
    for (int k = 4; k < calls; k++)
        CHECK(calls_at[k] == 64 + (k - 4), "call %d at step %d, expected %d", k, calls_at[k],
              64 + (k - 4));
    CHECK(below_calls == 36, "below passed on %d calls, expected the 36 yielding ones",
          below_calls);
    steps(64, 100, 0);
    CHECK(below_calls == 0, "below passed on %d calls of a wait that said 0", below_calls);

    /* Ranks outnumber cores: the limit is HMPI_SPIN_EARLY. The wait learns it at step
     * HMPI_SPIN_EARLY, its first slow step (which yields), so the hook runs at step 15
     * and then at every step from HMPI_SPIN_EARLY + 1. */
    steps(HMPI_SPIN_EARLY, 40, 0);
    CHECK(calls == 1 + (40 - HMPI_SPIN_EARLY - 1), "limit %d, 40 steps: %d calls", HMPI_SPIN_EARLY,
          calls);
    CHECK(calls_at[0] == 15 && calls_at[1] == HMPI_SPIN_EARLY + 1,
          "limit %d: calls at steps %d, %d", HMPI_SPIN_EARLY, calls_at[0], calls_at[1]);

    /* The crowd asleep (hmpi_wait_crowd): 8 ranks on 2 cores spin as with a core each
     * once 6 of them sleep (256 steps, then yield), as crowded while only 5 do. */
    static hmpi_park_node_t node;
    static char park_slots[8][128];
    hmpi_wait_attach(&node, park_slots, sizeof park_slots[0], 8, 0);
    hmpi_wait_crowd(2);
    atomic_store(&node.sleepers, 6);
    steps(HMPI_SPIN_EARLY, 300, 0);
    CHECK(calls == HMPI_SPIN_DEDICATED / 16 + (300 - HMPI_SPIN_DEDICATED),
          "6 of 8 asleep on 2 cores: %d calls, expected those of limit %d", calls,
          HMPI_SPIN_DEDICATED);
    atomic_store(&node.sleepers, 5);
    steps(HMPI_SPIN_EARLY, 300, 0);
    CHECK(calls == 1 + (300 - HMPI_SPIN_EARLY - 1),
          "5 of 8 asleep on 2 cores: %d calls, expected those of limit %d", calls, HMPI_SPIN_EARLY);
    hmpi_wait_crowd(0);
    atomic_store(&node.sleepers, 6);
    steps(HMPI_SPIN_EARLY, 300, 0);
    CHECK(calls == 1 + (300 - HMPI_SPIN_EARLY - 1),
          "no crowd rule: %d calls, expected those of limit %d", calls, HMPI_SPIN_EARLY);
    atomic_store(&node.sleepers, 0);

    /* No hook registered: the steps run, nothing is called. */
    hmpi_wait_progress = NULL;
    steps(64, 100, 1);
    CHECK(calls == 0, "%d calls with no hook", calls);

    /* A wait that only the hook can end, on its own thread. */
    unsigned limits[2] = {HMPI_SPIN_EARLY, HMPI_SPIN_DEDICATED};
    for (int i = 0; i < 2; i++) {
        hmpi_spin_limit = limits[i];
        atomic_store(&released, 0);
        atomic_store(&peer_ready, 0);
        hmpi_wait_progress = release_hook;
        pthread_t t;
        CHECK(pthread_create(&t, NULL, waiter, NULL) == 0, "pthread_create");
        atomic_store(&peer_ready, 1);
        CHECK(pthread_join(t, NULL) == 0, "pthread_join");
        CHECK(atomic_load(&released), "the waiter returned before it was released");
        hmpi_wait_progress = NULL;
    }
    printf("wait_step: OK\n");
    return 0;
}
