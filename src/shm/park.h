/* park.h: a waiter that sleeps in the kernel until a peer process wakes it. Words in
 * shared memory, futexes without FUTEX_PRIVATE (the ranks are processes). Policy (when
 * to park, for how long) is wait.c's; this file is only the protocol. No MPI in here.
 *
 * Words. hmpi_park_node_t.sleepers: how many waiters of the node are parked; its own
 * line, read by every waker, written only as someone parks or leaves (read-mostly).
 * hmpi_park_slot_t, one per rank on the rank's own line: parked (its threads that are
 * parked: written by the rank itself) and bell (the futex word: incremented by wakers).
 *
 * Waiter (a loop: check the condition; not done: one step):
 *   announce: parked++, sleepers++ (seq_cst), then a store-load barrier that covers
 *     every waker (hmpi_park_barrier: membarrier(GLOBAL_EXPEDITED), see below), then it
 *     reads bell (v) and RETURNS, so that the caller checks its condition once more;
 *   sleep, on each later step: futex_wait(bell, v, timeout); v = bell again; return.
 *   leave, as the wait ends: parked--, sleepers--.
 * Waker: publishes (its ordinary store), then reads sleepers (relaxed: one load of a
 *   line nobody writes while nobody parks); nonzero: for the target's slot, if parked:
 *   bell++ (seq_cst), FUTEX_WAKE all.
 * Why no wake is lost: the waiter's announce and the waker's publish form Dekker's
 *   pattern (each stores, then reads the other's word). The waker does not pay a fence
 *   on its publish (the hot path of every message); the waiter pays it for both with
 *   membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), which runs a full barrier on every CPU
 *   that runs a registered process (every rank registers in hmpi_park_setup): either a
 *   waker's publish is visible before the waiter's re-check, or its read of sleepers
 *   and parked comes after the announce. A wake between the re-check and futex_wait
 *   changed bell from v, so futex_wait returns at once. Where membarrier is refused,
 *   the window is the waker's store buffer (nanoseconds, and only at the announce):
 *   a wake lost there costs one timeout, which wait.c keeps short for the first sleep.
 * Timeouts bound every sleep: a lost wake, a waker that died (the launcher ends the
 *   job), or what only the MPI below brings cost at most one timeout. */
#ifndef HMPI_SHM_PARK_H
#define HMPI_SHM_PARK_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct {
    alignas(64) _Atomic uint32_t sleepers;
    char pad_[60];
} hmpi_park_node_t;

typedef struct {
    alignas(64) _Atomic uint32_t parked; /* written by the owner's threads only */
    _Atomic uint32_t bell;               /* the futex word: wakers increment it */
    char pad_[56];
} hmpi_park_slot_t;

static_assert(sizeof(hmpi_park_node_t) == 64 && sizeof(hmpi_park_slot_t) == 64, "one line each");

/* Registers this process for the waiters' barrier (once per process; harmless again).
 * 1 when membarrier serves it, 0 when the waiters fall back to their own fence (the
 * bounded first sleep covers what that leaves open). */
int hmpi_park_setup(void);

/* The waiter's side. announce returns bell's value to sleep on. */
uint32_t hmpi_park_announce(hmpi_park_node_t *n, hmpi_park_slot_t *s);
/* Sleeps while bell == v, at most timeout_ns; returns bell's value now. */
uint32_t hmpi_park_sleep(hmpi_park_slot_t *s, uint32_t v, uint64_t timeout_ns);
void hmpi_park_leave(hmpi_park_node_t *n, hmpi_park_slot_t *s);

/* The waker's side, after its publishing store. */
void hmpi_park_wake_slow(hmpi_park_slot_t *s);

static inline int hmpi_park_anyone(const hmpi_park_node_t *n)
{
    return __builtin_expect(atomic_load_explicit(&n->sleepers, memory_order_relaxed) != 0, 0);
}

static inline void hmpi_park_wake(hmpi_park_node_t *n, hmpi_park_slot_t *s)
{
    if (hmpi_park_anyone(n))
        hmpi_park_wake_slow(s);
}

#endif
