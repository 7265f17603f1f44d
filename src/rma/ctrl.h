/* ctrl.h: the control block of one window on one node: the fence barrier, a reader-writer
 * lock and an accumulate lock per target, and the post/complete counters of every pair of
 * local members. It lives in the shared heap (the window's local leader allocates it), so
 * it has one address in every local rank. It holds no pointers. Only C11 atomics; the
 * functions here never wait (the loops that wait, with progress, live in sync_*.c).
 * No MPI in here. */
#ifndef HMPI_RMA_CTRL_H
#define HMPI_RMA_CTRL_H

#include "../shm/barrier.h"
#include "../shm/ctrl.h"

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Layout (n = local members, indexed by their order in the window's group, "wl"):
 *   header                    1 line: departed (+ read-only geometry)
 *   tsync[n]                  2 lines per target: its rw lock, its accumulate lock
 *   post[n] rows              row T: post[T][O] for every O, written by T only
 *   done[n] rows              row O: done[O][T] for every T, written by O only
 *   barrier                   the flags of a dissemination barrier (shm/barrier.h)
 * Rows are padded to whole lines so that each has one writer.
 *
 * Barrier (fence, Win_free): shm/barrier.h, whose release/acquire chain makes whatever
 * a member stored before arriving (direct puts, local stores) visible to every member
 * after it; ceil(log2 n) line transfers on its critical path.
 * Departure (Win_free): after the last barrier each non-leader fetch_adds departed
 * (release) and never touches the block again; the leader frees it once departed is
 * n - 1 (acquire).
 *
 * Reader-writer lock (MPI_Win_lock, lock_all), per target: rw = 2 * readers + writer.
 *   - exclusive: CAS 0 -> 1 (acquire); release: fetch_sub 1 (release).
 *   - shared: fetch_add 2 (acquire); if the writer bit was set, fetch_sub 2 and retry
 *     after the bit clears; release: fetch_sub 2 (release).
 *   A reader's transient increment only delays a writer's CAS. No fairness: a writer
 *   can wait as long as readers overlap (the standard asks for none).
 *
 * Accumulate lock, per target: test-and-test-and-set; exchange 1 (acquire) to take,
 * store 0 (release) to give back. Every accumulate-family operation on a target, from
 * any local origin, holds it while it reads, combines and writes: that is the per-element
 * atomicity the standard requires, and the release/acquire pair orders one origin's
 * update before the next one's read.
 *
 * Post/complete (PSCW): monotonic 32-bit counters, one per ordered pair.
 *   - post[T][O]: T adds 1 (release) when it posts an exposure epoch that includes O;
 *     O keeps, privately, how many posts of T it consumed, and starts its access epoch
 *     to T once the counter is ahead (acquire), consuming one. Posts of T to O happen
 *     one epoch at a time, so counting matches each start with its post.
 *   - done[O][T]: O adds 1 (release) when it completes an access epoch to T, after its
 *     direct puts; T waits until the counter is ahead of what it consumed (acquire).
 *   Differences are compared as int32_t, so wrap-around is harmless. */

typedef struct {
    alignas(HMPI_CACHE_LINE) _Atomic uint32_t departed; /* members done with the block */
    uint32_t nlocal;                                   /* written before publication */
    uint32_t row_bytes;                                /* one post/done row, padded */
    uint32_t tsync_off, post_off, done_off;            /* byte offsets from the block */
    uint32_t barrier_off;
} hmpi_rma_ctrl_t;

typedef struct {
    alignas(HMPI_CACHE_LINE) _Atomic uint32_t rw;  /* 2 * readers + writer bit */
    alignas(HMPI_CACHE_LINE) _Atomic uint32_t acc; /* accumulate lock: 0 free, 1 held */
} hmpi_rma_tsync_t;

static_assert(sizeof(hmpi_rma_ctrl_t) == HMPI_CACHE_LINE, "one line: departed, geometry");
static_assert(sizeof(hmpi_rma_tsync_t) == 2 * HMPI_CACHE_LINE, "rw and acc on own lines");

enum { HMPI_RMA_RW_WRITER = 1, HMPI_RMA_RW_READER = 2 };

/* Bytes of a block for n local members. */
static inline size_t hmpi_rma_ctrl_size(uint32_t n)
{
    size_t row = ((size_t)n * sizeof(uint32_t) + HMPI_CACHE_LINE - 1) / HMPI_CACHE_LINE *
                 HMPI_CACHE_LINE;
    return sizeof(hmpi_rma_ctrl_t) + n * sizeof(hmpi_rma_tsync_t) + 2 * (size_t)n * row +
           hmpi_barrier_size(n);
}

/* Fills a zeroed block's geometry (the leader, before it publishes the address). */
static inline void hmpi_rma_ctrl_init(hmpi_rma_ctrl_t *c, uint32_t n)
{
    c->nlocal = n;
    c->row_bytes = (uint32_t)((n * sizeof(uint32_t) + HMPI_CACHE_LINE - 1) / HMPI_CACHE_LINE *
                              HMPI_CACHE_LINE);
    c->tsync_off = sizeof(hmpi_rma_ctrl_t);
    c->post_off = c->tsync_off + n * (uint32_t)sizeof(hmpi_rma_tsync_t);
    c->done_off = c->post_off + n * c->row_bytes;
    c->barrier_off = c->done_off + n * c->row_bytes;
}

static inline hmpi_rma_tsync_t *hmpi_rma_tsync(hmpi_rma_ctrl_t *c, int wl)
{
    return (hmpi_rma_tsync_t *)((char *)c + c->tsync_off) + wl;
}

static inline _Atomic uint32_t *hmpi_rma_post_cell(hmpi_rma_ctrl_t *c, int t, int o)
{
    return (_Atomic uint32_t *)((char *)c + c->post_off + (size_t)t * c->row_bytes) + o;
}

static inline _Atomic uint32_t *hmpi_rma_done_cell(hmpi_rma_ctrl_t *c, int o, int t)
{
    return (_Atomic uint32_t *)((char *)c + c->done_off + (size_t)o * c->row_bytes) + t;
}

/* ---- barrier ------------------------------------------------------------------------ */

/* The barrier's shared flags. */
static inline void *hmpi_rma_barrier_flags(hmpi_rma_ctrl_t *c)
{
    return (char *)c + c->barrier_off;
}

/* ---- reader-writer lock ------------------------------------------------------------- */

static inline int hmpi_rma_rw_try_excl(hmpi_rma_tsync_t *t)
{
    uint32_t zero = 0;
    return atomic_load_explicit(&t->rw, memory_order_relaxed) == 0 &&
           atomic_compare_exchange_strong_explicit(&t->rw, &zero, HMPI_RMA_RW_WRITER,
                                                   memory_order_acquire, memory_order_relaxed);
}

static inline void hmpi_rma_rw_release_excl(hmpi_rma_tsync_t *t)
{
    atomic_fetch_sub_explicit(&t->rw, HMPI_RMA_RW_WRITER, memory_order_release);
}

static inline int hmpi_rma_rw_try_shared(hmpi_rma_tsync_t *t)
{
    if (atomic_load_explicit(&t->rw, memory_order_relaxed) & HMPI_RMA_RW_WRITER)
        return 0;
    uint32_t v = atomic_fetch_add_explicit(&t->rw, HMPI_RMA_RW_READER, memory_order_acquire);
    if (!(v & HMPI_RMA_RW_WRITER))
        return 1;
    atomic_fetch_sub_explicit(&t->rw, HMPI_RMA_RW_READER, memory_order_relaxed);
    return 0;
}

static inline void hmpi_rma_rw_release_shared(hmpi_rma_tsync_t *t)
{
    atomic_fetch_sub_explicit(&t->rw, HMPI_RMA_RW_READER, memory_order_release);
}

/* ---- accumulate lock ------------------------------------------------------------------ */

static inline int hmpi_rma_acc_try(hmpi_rma_tsync_t *t)
{
    return atomic_load_explicit(&t->acc, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&t->acc, 1, memory_order_acquire) == 0;
}

static inline void hmpi_rma_acc_release(hmpi_rma_tsync_t *t)
{
    atomic_store_explicit(&t->acc, 0, memory_order_release);
}

/* ---- post / complete counters --------------------------------------------------------- */

static inline void hmpi_rma_count_bump(_Atomic uint32_t *cell)
{
    atomic_fetch_add_explicit(cell, 1, memory_order_release);
}

/* 1 when cell is ahead of seen (acquire: what its writer did before is visible). */
static inline int hmpi_rma_count_ahead(_Atomic uint32_t *cell, uint32_t seen)
{
    return (int32_t)(atomic_load_explicit(cell, memory_order_acquire) - seen) > 0;
}

#endif
