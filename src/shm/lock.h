/* lock.h: the cross-process locks and counters of HMPI, words in shared memory that
 * several ranks of a node update with C11 atomics. None of them waits: each "try" either
 * takes what it asks for or leaves the word as it found it, and the caller's wait loop
 * (hmpi_wait_step, shm/wait.h) decides how to wait. No MPI in here.
 *
 * Reader-writer lock (MPI_Win_lock and lock_all, per target): one 32-bit word,
 * 2 * readers + writer bit.
 *   - exclusive: CAS 0 -> WRITER (acquire); release: fetch_sub WRITER (release).
 *   - shared: fetch_add READER (acquire); if the writer bit was set, fetch_sub READER
 *     and fail (the caller retries after the bit clears); release: fetch_sub READER
 *     (release).
 *   A reader's transient increment only delays a writer's CAS. No fairness: a writer can
 *   wait as long as readers overlap (MPI asks for none).
 *
 * Test-and-test-and-set lock (the per-target accumulate lock): 0 free, 1 held; take with
 * an exchange (acquire) after a plain read saw it free, give back with a store (release).
 *
 * Monotonic counters (PSCW's post/complete): a 32-bit word one writer bumps (release);
 * a reader keeps privately how many bumps it consumed and asks whether the word is
 * ahead (acquire: what the writer did before the bump is visible). Differences are
 * compared as int32_t, so wrap-around is harmless while fewer than 2^31 bumps are
 * unconsumed. */
#ifndef HMPI_SHM_LOCK_H
#define HMPI_SHM_LOCK_H

#include "wait.h"

#include <stdatomic.h>
#include <stdint.h>

enum { HMPI_RW_WRITER = 1, HMPI_RW_READER = 2 };

static inline int hmpi_rw_try_excl(_Atomic uint32_t *rw)
{
    uint32_t zero = 0;
    return atomic_load_explicit(rw, memory_order_relaxed) == 0 &&
           atomic_compare_exchange_strong_explicit(rw, &zero, HMPI_RW_WRITER, memory_order_acquire,
                                                   memory_order_relaxed);
}

static inline void hmpi_rw_release_excl(_Atomic uint32_t *rw)
{
    atomic_fetch_sub_explicit(rw, HMPI_RW_WRITER, memory_order_release);
    hmpi_wait_wake_all(); /* a rank waiting for the lock may sleep (wait.h) */
}

static inline int hmpi_rw_try_shared(_Atomic uint32_t *rw)
{
    if (atomic_load_explicit(rw, memory_order_relaxed) & HMPI_RW_WRITER)
        return 0;
    uint32_t v = atomic_fetch_add_explicit(rw, HMPI_RW_READER, memory_order_acquire);
    if (!(v & HMPI_RW_WRITER))
        return 1;
    atomic_fetch_sub_explicit(rw, HMPI_RW_READER, memory_order_relaxed);
    return 0;
}

static inline void hmpi_rw_release_shared(_Atomic uint32_t *rw)
{
    atomic_fetch_sub_explicit(rw, HMPI_RW_READER, memory_order_release);
    hmpi_wait_wake_all();
}

static inline int hmpi_tas_try(_Atomic uint32_t *l)
{
    return atomic_load_explicit(l, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(l, 1, memory_order_acquire) == 0;
}

static inline void hmpi_tas_release(_Atomic uint32_t *l)
{
    atomic_store_explicit(l, 0, memory_order_release);
    hmpi_wait_wake_all();
}

static inline void hmpi_count_bump(_Atomic uint32_t *cell)
{
    atomic_fetch_add_explicit(cell, 1, memory_order_release);
    hmpi_wait_wake_all();
}

/* 1 when cell is ahead of seen, the bumps consumed so far. */
static inline int hmpi_count_ahead(_Atomic uint32_t *cell, uint32_t seen)
{
    return (int32_t)(atomic_load_explicit(cell, memory_order_acquire) - seen) > 0;
}

#endif
