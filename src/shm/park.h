/* park.h: a waiter that sleeps in the kernel until a peer process wakes it. Words in
 * shared memory, futexes without FUTEX_PRIVATE (the ranks are processes). Policy (when
 * to park, for how long) is wait.c's; this file is only the protocol. No MPI in here.
 *
 * Words. hmpi_park_node_t.sleepers: how many waiters of the node are parked; its own
 * line, read by every waker, written only as someone parks or leaves (read-mostly).
 * hmpi_park_node_t.map: one bit per local rank below HMPI_PARK_MAP_RANKS, set while any
 * of its threads is parked (on the lines after sleepers', P/64 words). hmpi_park_slot_t,
 * one per rank on the rank's own line: parked (its threads that are parked: written by
 * the rank itself) and bell (the futex word: incremented by wakers).
 *
 * Waiter (a loop: check the condition; not done: one step):
 *   announce: parked++, its bit set (fetch_or), sleepers++ (all seq_cst), then a
 *     store-load barrier that covers every waker (hmpi_park_barrier: membarrier
 *     (GLOBAL_EXPEDITED), see below), then it reads bell (v) and RETURNS, so that the
 *     caller checks its condition once more;
 *   sleep, on each later step: futex_wait(bell, v, timeout); v = bell again; return.
 *   leave, as the wait ends: sleepers--, parked--; when that was its last parked
 *     thread, its bit cleared (fetch_and), then parked read again: another thread of the
 *     rank announced meanwhile, so the bit is set again.
 * Waker: publishes (its ordinary store), then reads sleepers (relaxed: one load of a
 *   line nobody writes while nobody parks); nonzero: a fence, then for one target its
 *   bit (its slot's parked past the map), for all targets the map's words (P/64 loads:
 *   the slots of the clear bits are not read); for each set bit: bell++ (seq_cst),
 *   FUTEX_WAKE all.
 * Why no wake is lost: the waiter's announce and the waker's publish form Dekker's
 *   pattern (each stores, then reads the other's word). The waker does not pay a fence
 *   on its publish (the hot path of every message); the waiter pays it for both with
 *   membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), which runs a full barrier on every CPU
 *   that runs a registered process (every rank registers in hmpi_park_setup): either a
 *   waker's publish is visible before the waiter's re-check, or its reads of sleepers
 *   and of the bit (or parked) come after the announce, which stored all three before
 *   the barrier. A wake between the re-check and futex_wait changed bell from v, so
 *   futex_wait returns at once. The bit is as good as parked: it is set before the
 *   barrier and cleared only as the rank's last parked thread leaves, except for an
 *   instant when one thread leaves while another announces (the clear, then the re-read
 *   of parked that sets it again): a wake that reads the map just then is lost for that
 *   other thread, once. Where membarrier is refused, the window is the waker's store
 *   buffer (nanoseconds, and only at the announce). A wake lost either way costs one
 *   timeout, which wait.c keeps short for the first sleep.
 * Timeouts bound every sleep: a lost wake, a waker that died (the launcher ends the
 *   job), or what only the MPI below brings cost at most one timeout. */
#ifndef HMPI_SHM_PARK_H
#define HMPI_SHM_PARK_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

/* Ranks the map covers: 1,024 (two lines); a node with more ranks finds the others'
 * sleep by their slots (a wake of all reads those slots one by one). */
enum { HMPI_PARK_MAP_RANKS = 1024, HMPI_PARK_MAP_WORDS = HMPI_PARK_MAP_RANKS / 64 };

typedef struct {
    alignas(64) _Atomic uint32_t sleepers;
    char pad_[60];
    alignas(64) _Atomic uint64_t map[HMPI_PARK_MAP_WORDS]; /* bit r: rank r is parked */
} hmpi_park_node_t;

typedef struct {
    alignas(64) _Atomic uint32_t parked; /* written by the owner's threads only */
    _Atomic uint32_t bell;               /* the futex word: wakers increment it */
    char pad_[56];
} hmpi_park_slot_t;

static_assert(sizeof(hmpi_park_node_t) == 64 + HMPI_PARK_MAP_WORDS * 8 &&
                  sizeof(hmpi_park_slot_t) == 64,
              "sleepers on one line, the map on its own, a slot on one line");

/* Registers this process for the waiters' barrier (once per process; harmless again).
 * 1 when membarrier serves it, 0 when the waiters fall back to their own fence (the
 * bounded first sleep covers what that leaves open). */
int hmpi_park_setup(void);

/* The waiter's side, for local rank r (its slot s). announce returns bell's value to
 * sleep on. */
uint32_t hmpi_park_announce(hmpi_park_node_t *n, hmpi_park_slot_t *s, int r);
/* Sleeps while bell == v, at most timeout_ns; returns bell's value now. */
uint32_t hmpi_park_sleep(hmpi_park_slot_t *s, uint32_t v, uint64_t timeout_ns);
void hmpi_park_leave(hmpi_park_node_t *n, hmpi_park_slot_t *s, int r);

/* The waker's side, after its publishing store and after finding sleepers nonzero (a
 * fence first: hmpi_park_fence). ring: wakes every thread parked on s. */
void hmpi_park_ring(hmpi_park_slot_t *s);

static inline void hmpi_park_fence(void)
{
    atomic_thread_fence(memory_order_seq_cst); /* someone sleeps: a fence is cheap now */
}

/* 1 when local rank r (slot s) may be parked: its bit, past the map its slot. */
static inline int hmpi_park_is_parked(const hmpi_park_node_t *n, const hmpi_park_slot_t *s, int r)
{
    if (r < HMPI_PARK_MAP_RANKS)
        return (atomic_load_explicit(&n->map[r >> 6], memory_order_relaxed) >> (r & 63)) & 1;
    return atomic_load_explicit(&s->parked, memory_order_relaxed) != 0;
}

/* Wakes local rank r (slot s) if it is parked: a fence and one load when it is not. */
void hmpi_park_wake_slow(hmpi_park_node_t *n, hmpi_park_slot_t *s, int r);

static inline int hmpi_park_anyone(const hmpi_park_node_t *n)
{
    return __builtin_expect(atomic_load_explicit(&n->sleepers, memory_order_relaxed) != 0, 0);
}

static inline void hmpi_park_wake(hmpi_park_node_t *n, hmpi_park_slot_t *s, int r)
{
    if (hmpi_park_anyone(n))
        hmpi_park_wake_slow(n, s, r);
}

#endif
