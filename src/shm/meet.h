/* meet.h: the meeting line, where 2 to 8 members meet, each with a few bytes of data,
 * in one cache line of shared memory (the collectives' barrier and smallest allreduce,
 * src/coll/). No MPI in here; the wait steps with hmpi_wait_step (wait.h).
 *
 * Each member owns an entry of `stride` bytes of the line: two data areas of `cap`
 * bytes (for odd and even meetings), then a word. Meeting L (m->seq, counted by every
 * member alike) writes area L & 1, then stores L in the word (release); every member
 * waits for every word to reach L (acquire), so all data of meeting L is visible to all
 * once they return. Writers sharing one line meet faster than with a line per member or
 * per parity (two cores: docs/performance-history.md, "Collectives").
 * Reuse: a member writing area L & 1 at meeting L saw everybody enter meeting L-1, so
 * everybody is done reading meeting L-2's data. The words only grow, and the line must
 * be zeroed before the first meeting. */
#ifndef HMPI_SHM_MEET_H
#define HMPI_SHM_MEET_H

#include "ctrl.h"
#include "epoch.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One member's view, private to it. */
typedef struct {
    unsigned char *line; /* HMPI_CACHE_LINE bytes, one address in every member; or NULL */
    size_t stride;       /* bytes of each member's entry */
    size_t cap;          /* bytes of each of the entry's two data areas */
    int n, me;
    uint64_t seq; /* meetings begun */
} hmpi_meet_t;

enum { HMPI_MEET_MAX = HMPI_CACHE_LINE / 8 }; /* members: an entry holds a word at least */

/* Sets m up for member me of n (2..HMPI_MEET_MAX) on line. Entries of 2..8 members are
 * a power of two bytes, which keeps each area aligned for what fits: 32 bytes (2
 * members) hold 8 bytes twice, 16 bytes (3-4) 4 bytes, 8 bytes (5-8) none. */
static inline void hmpi_meet_init(hmpi_meet_t *m, void *line, int n, int me)
{
    size_t stride = (HMPI_CACHE_LINE / (size_t)n) & ~(sizeof(uint64_t) - 1);
    *m = (hmpi_meet_t){
        (unsigned char *)line, stride, stride >= 32 ? 8 : stride >= 16 ? 4 : 0, n, me, 0};
}

static inline _Atomic uint64_t *hmpi_meet_word(const hmpi_meet_t *m, int i)
{
    return (_Atomic uint64_t *)(m->line + (size_t)(i + 1) * m->stride - sizeof(uint64_t));
}

/* Member i's data of meeting l. */
static inline unsigned char *hmpi_meet_data(const hmpi_meet_t *m, int i, uint64_t l)
{
    return m->line + (size_t)i * m->stride + (l & 1) * m->cap;
}

/* The first half of a meeting: enters meeting l = seq + 1 with `bytes` (at most cap, may
 * be 0) of data and returns l; hmpi_meet_test tells when everybody is in. A member
 * enters its next meeting only once this one is complete (the areas' reuse above). */
static inline uint64_t hmpi_meet_enter(hmpi_meet_t *m, const void *data, size_t bytes)
{
    uint64_t l = ++m->seq;
    if (bytes)
        memcpy(hmpi_meet_data(m, m->me, l), data, bytes);
    atomic_store_explicit(hmpi_meet_word(m, m->me), l, memory_order_release);
    hmpi_wait_wake_all(); /* members that wait for it may sleep (wait.h) */
    return l;
}

/* 1 once every member entered meeting l (acquire): its data may be read. Members from
 * *at on are looked at (a member seen in is not loaded again); *at goes past them. */
static inline int hmpi_meet_test(const hmpi_meet_t *m, uint64_t l, int *at)
{
    for (; *at < m->n; (*at)++)
        if (*at != m->me && atomic_load_explicit(hmpi_meet_word(m, *at), memory_order_acquire) < l)
            return 0;
    return 1;
}

/* Meets the others with `bytes` (at most cap, may be 0) of data; returns the meeting's
 * number for hmpi_meet_data, valid until this member's next meeting. */
static inline uint64_t hmpi_meet(hmpi_meet_t *m, const void *data, size_t bytes,
                                 hmpi_wait_family_t f)
{
    uint64_t l = hmpi_meet_enter(m, data, bytes);
    for (int i = 0; i < m->n; i++) {
        _Atomic uint64_t *w = hmpi_meet_word(m, i);
        if (i != m->me && atomic_load_explicit(w, memory_order_acquire) < l)
            hmpi_epoch_wait_word(w, l, f);
    }
    return l;
}

#endif
