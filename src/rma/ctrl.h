/* ctrl.h: the control block of one window on one node: the fence barrier, a reader-writer
 * lock and an accumulate lock per target, and the post/complete counters of every pair of
 * local members. It lives in the shared heap (the window's local leader allocates it), so
 * it has one address in every local rank. It holds no pointers. Only C11 atomics; the
 * functions here never wait (the loops that wait, with progress, live in sync_*.c).
 * No MPI in here. */
#ifndef HMPI_RMA_CTRL_H
#define HMPI_RMA_CTRL_H

#include "../common/assert.h"
#include "../shm/barrier.h"
#include "../shm/ctrl.h"
#include "../shm/lock.h"

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
 * Reader-writer lock (MPI_Win_lock, lock_all) and accumulate lock, per target: the
 * rw lock and test-and-test-and-set lock of shm/lock.h. Every accumulate-family
 * operation on a target, from any local origin, holds the accumulate lock while it
 * reads, combines and writes: that is the per-element atomicity the standard requires,
 * and the release/acquire pair orders one origin's update before the next one's read.
 *
 * Post/complete (PSCW): shm/lock.h's monotonic counters, one per ordered pair.
 *   - post[T][O]: T bumps it when it posts an exposure epoch that includes O; O keeps,
 *     privately, how many posts of T it consumed, and starts its access epoch to T once
 *     the counter is ahead, consuming one. Posts of T to O happen one epoch at a time,
 *     so counting matches each start with its post.
 *   - done[O][T]: O bumps it when it completes an access epoch to T, after its direct
 *     puts; T waits until the counter is ahead of what it consumed. */

typedef struct {
    alignas(HMPI_CACHE_LINE) _Atomic uint32_t departed; /* members done with the block */
    uint32_t nlocal;                                    /* written before publication */
    uint32_t row_bytes;                                 /* one post/done row, padded */
    uint32_t tsync_off, post_off, done_off;             /* byte offsets from the block */
    uint32_t barrier_off;
} hmpi_rma_ctrl_t;

typedef struct {
    alignas(HMPI_CACHE_LINE) _Atomic uint32_t rw;  /* 2 * readers + writer bit */
    alignas(HMPI_CACHE_LINE) _Atomic uint32_t acc; /* accumulate lock: 0 free, 1 held */
} hmpi_rma_tsync_t;

static_assert(sizeof(hmpi_rma_ctrl_t) == HMPI_CACHE_LINE, "one line: departed, geometry");
static_assert(sizeof(hmpi_rma_tsync_t) == 2 * HMPI_CACHE_LINE &&
                  offsetof(hmpi_rma_tsync_t, acc) == HMPI_CACHE_LINE,
              "rw and acc on own lines");

/* Bytes of a block for n local members. */
static inline size_t hmpi_rma_ctrl_size(uint32_t n)
{
    size_t row =
        ((size_t)n * sizeof(uint32_t) + HMPI_CACHE_LINE - 1) / HMPI_CACHE_LINE * HMPI_CACHE_LINE;
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
    /* the barrier's flags end the block that hmpi_rma_ctrl_size measured */
    HMPI_ASSERT_INTERNAL(c->barrier_off + hmpi_barrier_size(n) == hmpi_rma_ctrl_size(n));
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

#endif
