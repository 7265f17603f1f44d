/* barrier.h: a dissemination barrier among n members in shared memory. No MPI in here,
 * and no waiting: hmpi_barrier_poll makes what progress it can and says whether this
 * member has passed; the caller's loop waits (with progress of its own) in between.
 *
 * Round k (k = 0 .. ceil(log2 n) - 1): member i tells member (i + 2^k) mod n that it
 * reached round k, then waits until member (i - 2^k) mod n has told it the same. After
 * the last round each member has heard, through a chain of such messages, from every
 * other one. Cost: ceil(log2 n) cache-line transfers on the critical path (one for two
 * members; a central counter puts n read-modify-writes of one line there), and
 * n ceil(log2 n) lines move per barrier.
 *
 * Words: flag[i][k], one cache line each, has one writer, member i - 2^k, which stores
 * the number of the barrier it is in (members count their barriers privately, all
 * alike, from 1). Stored with release, read with acquire: what a member stored before
 * arriving happens before every member's return. The numbers only grow (compared as
 * int32_t differences, so wrap-around is harmless) and are never reset: a writer
 * already in barrier e + 1 overwrites e with e + 1, which satisfies a reader still
 * waiting for e (and its release carries e's stores too). */
#ifndef HMPI_SHM_BARRIER_H
#define HMPI_SHM_BARRIER_H

#include "../common/assert.h"
#include "ctrl.h"
#include "wait.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    alignas(HMPI_CACHE_LINE) _Atomic uint32_t seq;
} hmpi_barrier_flag_t;

/* One member's side, private to it. */
typedef struct {
    hmpi_barrier_flag_t *flags; /* [n * rounds], zeroed before the first barrier */
    uint32_t n, me, rounds;
    uint32_t seq;   /* barriers begun */
    uint32_t round; /* rounds of the current one passed */
    int told;       /* this round's partner is told */
} hmpi_barrier_t;

static inline uint32_t hmpi_barrier_rounds(uint32_t n)
{
    uint32_t r = 0;
    while (r < 32 && (1ull << r) < n)
        r++;
    return r;
}

/* Bytes of the shared flags of n members (0 for one member). */
static inline size_t hmpi_barrier_size(uint32_t n)
{
    return (size_t)n * hmpi_barrier_rounds(n) * sizeof(hmpi_barrier_flag_t);
}

static inline void hmpi_barrier_init(hmpi_barrier_t *b, void *flags, uint32_t n, uint32_t me)
{
    HMPI_ASSERT_INTERNAL(me < n && (flags || n == 1)); /* one member has no flags */
    *b = (hmpi_barrier_t){(hmpi_barrier_flag_t *)flags, n, me, hmpi_barrier_rounds(n), 0, 0, 0};
}

static inline void hmpi_barrier_arrive(hmpi_barrier_t *b)
{
    b->seq++;
    b->round = 0;
    b->told = 0;
}

/* Moves this member's barrier along; 1 once it has passed. */
static inline int hmpi_barrier_poll(hmpi_barrier_t *b)
{
    while (b->round < b->rounds) {
        uint32_t k = b->round, step = 1u << k;
        if (!b->told) {
            uint32_t to = (uint32_t)(((uint64_t)b->me + step) % b->n);
            atomic_store_explicit(&b->flags[(size_t)to * b->rounds + k].seq, b->seq,
                                  memory_order_release);
            hmpi_wait_wake_all(); /* the member told may sleep (wait.h) */
            b->told = 1;
        }
        uint32_t heard = atomic_load_explicit(&b->flags[(size_t)b->me * b->rounds + k].seq,
                                              memory_order_acquire);
        if ((int32_t)(heard - b->seq) < 0)
            return 0;
        b->round++;
        b->told = 0;
    }
    return 1;
}

#endif
