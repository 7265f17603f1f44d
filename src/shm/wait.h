/* wait.h: how every HMPI wait loop waits. Spin briefly (the peer is usually running on
 * another core), then yield the core, because tests run 8 ranks on 2 cores and the
 * rank we wait for may need our core; then, by the policy HMPI_WAIT, park: sleep in the
 * kernel until the rank that changes what we wait for wakes us (shm/park.h; its wake
 * calls are hmpi_wait_wake*, below), or a bounded nap ends. Meanwhile let the engine
 * that p2p registers move (hmpi_wait_step). And what the waits cost, for the
 * statistics: a wait loop ends with hmpi_wait_end, which counts a wait that took a
 * step (did not complete at once) and its time, and unparks it. No MPI in here.
 *
 * Policies (HMPI_WAIT, set at MPI_Init by node.c through hmpi_wait_configure):
 *   spin:  pause steps only, never giving the core away;
 *   yield: pause steps up to hmpi_spin_limit, then sched_yield at every step;
 *   sleep: as yield, and once the wait has yielded HMPI_WAIT_PARK_US (default 50 us),
 *          park;
 *   auto:  yield while every rank of the host has a core; park after
 *          HMPI_WAIT_PARK_US (default 1 ms) when the ranks outnumber the cores.
 * A parked wait naps 100 us first (what a wake lost to the fallback barrier costs,
 * park.h), each nap twice the last, up to HMPI_WAIT_NAP_MAX_US; after each nap its
 * step counts as a yielding one (the progress hook runs), and the engine moves the MPI
 * below at its next pass (hmpi_wait_napped), so a sleeping rank still serves remote
 * peers, at most a nap late. Any loop of hmpi_backoff steps must end with
 * hmpi_wait_end, hmpi_wait_handoff or hmpi_backoff_end (which leave the park). */
#ifndef HMPI_SHM_WAIT_H
#define HMPI_SHM_WAIT_H

#include "../common/stats.h"
#include "park.h"

#include <sched.h>
#include <stdint.h>

typedef struct {
    unsigned spins;
    unsigned limit;  /* hmpi_spin_limit, read once the wait outlasts HMPI_SPIN_EARLY */
    uint64_t t0;     /* the clock (ns) then, when counting; 0: not timed */
    uint64_t since;  /* the clock (ns) at its first yield, when it may park; 0: none yet */
    uint32_t bell;   /* parked: the bell's value it sleeps on */
    uint32_t nap_us; /* parked: its next nap; 0: not parked */
    uint8_t no_park; /* 1: yields at most: a test call (it must return), a wait on the
                        MPI below (which wakes no futex) */
} hmpi_backoff_t;

/* Pause steps before a wait yields its core: 256 while every rank of the host has a
 * core of its own; HMPI_SPIN_EARLY when the ranks outnumber the cores, where a spinning
 * waiter only delays the rank it waits for (node.c sets hmpi_spin_limit at MPI_Init;
 * HMPI_SPIN), unless enough of them sleep (hmpi_wait_crowd). The first HMPI_SPIN_EARLY
 * steps compare with a constant: most waits end there without touching the global
 * (reading it on every step slowed a 2-rank allreduce: docs/performance-history.md,
 * "More ranks than cores"). */
enum { HMPI_SPIN_EARLY = 16, HMPI_SPIN_DEDICATED = 256 };
extern unsigned hmpi_spin_limit;

static inline void hmpi_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Past spinning: each further step gives the core away. */
static inline int hmpi_backoff_yielding(const hmpi_backoff_t *b)
{
    return b->limit && b->spins >= b->limit; /* limit is read at HMPI_SPIN_EARLY steps */
}

void hmpi_backoff_slow(hmpi_backoff_t *b);
void hmpi_backoff_unpark(hmpi_backoff_t *b);

/* The end of a loop of hmpi_backoff steps that no hmpi_wait_end counts. */
static inline void hmpi_backoff_end(hmpi_backoff_t *b)
{
    if (b->nap_us)
        hmpi_backoff_unpark(b);
}

/* One step of waiting: pause while young, then give the core away. */
static inline void hmpi_backoff(hmpi_backoff_t *b)
{
    if (b->spins < HMPI_SPIN_EARLY) {
        b->spins++;
        hmpi_cpu_relax();
    } else {
        hmpi_backoff_slow(b);
    }
}

/* What moves while anyone waits: the point-to-point engine registers it at MPI_Init
 * (p2p/progress.c), so that a rank waiting in a collective, an RMA synchronization or
 * anywhere else still takes in its local peers' messages (a peer may be blocked in a
 * synchronous send to it) and, every so often, moves the MPI below. below: what the
 * wait waits for may come through the MPI below (a window with remote members), so
 * move it now, not only every so often. NULL while nothing is registered. */
typedef void (*hmpi_wait_progress_fn)(int below);
extern HMPI_HIDDEN hmpi_wait_progress_fn hmpi_wait_progress;

/* Spinning steps between two calls of the progress hook; past spinning, every step. */
enum { HMPI_WAIT_POLL = 16 };

/* One step of any wait of HMPI: the progress hook every HMPI_WAIT_POLL-th step while
 * spinning and at every step once yielding, then a backoff step. below as for the hook,
 * passed only on yielding steps (a spinning waiter's peer is running, not waiting for
 * the MPI below); a wait that says below never parks (nothing wakes it from there). */
static inline void hmpi_wait_step(hmpi_backoff_t *b, int below)
{
    int yielding = hmpi_backoff_yielding(b);
    if ((yielding || b->spins % HMPI_WAIT_POLL == HMPI_WAIT_POLL - 1) && hmpi_wait_progress) {
        b->no_park |= (uint8_t)below; /* what the MPI below brings wakes no futex */
        hmpi_wait_progress(below && yielding);
    }
    hmpi_backoff(b);
}

/* What a wait waited for: its counters are wait_<family> and wait_<family>_ns, in this
 * order in stats.def. */
typedef enum {
    HMPI_WAIT_RECV, /* a receive (or probe) for its message */
    HMPI_WAIT_SEND, /* a send for its receiver */
    HMPI_WAIT_COLL, /* a collective for other ranks */
    HMPI_WAIT_RMA,  /* an RMA synchronization */
    HMPI_WAIT_OPI,  /* OPI_Take or OPI_Give for its peer */
    HMPI_WAIT_FAMILIES
} hmpi_wait_family_t;

/* The time of a wait: a wait that ends within its first HMPI_SPIN_EARLY steps reads no
 * clock (those end on the critical path of the smallest messages, where a clock read
 * would cost more than the 2% the statistics may); its steps count at the cost of a
 * pause step, measured by hmpi_wait_calibrate (in 1/16 ns). A longer one reads the
 * clock as it passes them (hmpi_backoff_slow) and as it ends. */
extern HMPI_HIDDEN uint32_t hmpi_wait_step16;
uint64_t hmpi_wait_now(void);
/* Measures hmpi_wait_step16, once; before statistics are first turned on. */
void hmpi_wait_calibrate(void);
void hmpi_wait_note_timed(const hmpi_backoff_t *b, hmpi_wait_family_t f, int count);

/* Counts the wait b of family f (count: as one wait, or its time only), when counting. */
static inline void hmpi_wait_note(const hmpi_backoff_t *b, hmpi_wait_family_t f, int count)
{
    if (!hmpi_stats_counting())
        return;
    if (b->t0) {
        hmpi_wait_note_timed(b, f, count);
        return;
    }
    hmpi_stat_t s = (hmpi_stat_t)(HMPI_STAT_wait_recv + 2 * (int)f);
    if (count)
        hmpi_stat_bump(s, 1);
    hmpi_stat_bump((hmpi_stat_t)(s + 1), ((uint64_t)b->spins * hmpi_wait_step16) >> 4);
}

/* The end of the wait b (a loop of hmpi_backoff steps) of family f. Macros, so that f is
 * worked out only for a wait that took a step: one that completed at once pays one test
 * of b->spins, on the short ways too. */
#define hmpi_wait_end(b, f)              \
    do {                                 \
        if ((b)->spins) {                \
            hmpi_backoff_end(b);         \
            hmpi_wait_note((b), (f), 1); \
        }                                \
    } while (0)

/* b gives up while the operation waits on in another loop, which counts it: its time so
 * far only. */
#define hmpi_wait_handoff(b, f)          \
    do {                                 \
        if ((b)->spins) {                \
            hmpi_backoff_end(b);         \
            hmpi_wait_note((b), (f), 0); \
        }                                \
    } while (0)

/* ---- policy and wakes ------------------------------------------------------------- */

typedef enum { HMPI_WAIT_SPIN, HMPI_WAIT_YIELD, HMPI_WAIT_PARK } hmpi_wait_policy_t;

/* The policy of every wait from now on: park_us of yielding before a wait parks (with
 * HMPI_WAIT_PARK), naps up to nap_max_us. */
void hmpi_wait_configure(hmpi_wait_policy_t policy, unsigned park_us, unsigned nap_max_us);
hmpi_wait_policy_t hmpi_wait_policy(void);
/* The host's cores, when its ranks outnumber them and hmpi_spin_limit is the crowded
 * default for that (0: the limit holds whatever the sleepers). A wait then spins as
 * long as with a core per rank while the ranks awake (the node's, less its sleepers:
 * hmpi_wait_attach) are no more than the cores: the crowd is asleep, and yielding every
 * step would cost a system call a step, and a switch where the two ranks that talk
 * share a core. */
void hmpi_wait_crowd(unsigned cores);

/* Where this process parks and wakes: the node's sleepers line, and the slot of local
 * rank r at (char *)slots + r * stride, nranks of them; me: this rank's. Until then
 * (and without MPI) no wait parks. Registers the process for park.h's barrier. */
void hmpi_wait_attach(hmpi_park_node_t *node, void *slots, size_t stride, int nranks, int me);

/* The node's sleepers line (a zero line of this process until hmpi_wait_attach). */
extern HMPI_HIDDEN hmpi_park_node_t *hmpi_wait_node;
/* Set by a nap, cleared by the engine as it next moves the MPI below. */
extern HMPI_HIDDEN _Atomic int hmpi_wait_napped;

void hmpi_wait_wake_slow(int local);
void hmpi_wait_wake_list_slow(const int *locals, int n);

/* After a store that a waiter of local rank `local` may wait for (-1: any local rank,
 * for a word several watch): wakes it if it is parked. One relaxed load of a line
 * nobody writes while nobody sleeps; no fence (park.h says why none is needed). While
 * someone sleeps: a fence and the load of local's bit; for -1, the node's parked map
 * (P/64 words) and a wake of each parked rank. */
static inline void hmpi_wait_wake(int local)
{
    if (hmpi_park_anyone(hmpi_wait_node))
        hmpi_wait_wake_slow(local);
}

static inline void hmpi_wait_wake_all(void) { hmpi_wait_wake(-1); }

/* The same for each of the n local ranks of locals (n may be 0): one load while nobody
 * sleeps. */
static inline void hmpi_wait_wake_list(const int *locals, int n)
{
    if (hmpi_park_anyone(hmpi_wait_node))
        hmpi_wait_wake_list_slow(locals, n);
}

#endif
