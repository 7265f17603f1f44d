/* epoch.h: epoch halves, the handshake of a fixed set of members that meet again and
 * again (the collectives of a communicator's team, src/coll/coll.h). Each member owns a
 * slot of two halves; a half starts with a state word that only its owner writes, and
 * the owner's data after it (its layout is the user's business) is read by the others.
 * No MPI in here; the waits step with hmpi_wait_step (wait.h).
 *
 * Epochs: every member counts the meetings it begins itself (ep->epoch, from 1), and all
 * count alike because the user calls them in the same order everywhere. Epoch e uses
 * half e & 1 of every slot.
 *
 * state = (epoch << 2) | phase, stored by the owner with release, loaded by the others
 * with acquire, and monotone within a half. Phases:
 *   ARRIVED  the owner published its data for this epoch; it stays valid until the owner
 *            begins the epoch after next in the same half.
 *   MID      the owner finished a first step the user defines.
 *   DONE     the owner will not read other members' data of this epoch again.
 *            Publishing anything of epoch e+1 implies DONE(e): a user may end an epoch
 *            at ARRIVED when nobody waits for its DONE, and hmpi_epoch_finished accepts
 *            either sign.
 * A reader of member i's data for epoch e first waits for state_i >= ARRIVED(e)
 * (acquire), which orders the owner's plain stores of the data before its reads. Any
 * state >= X counts as X: the next epochs only ever raise the value.
 *
 * Reuse (a fast member must not overwrite what a slow one still reads): before writing
 * half e & 1 for epoch e the owner claims it (hmpi_epoch_claim): every member must have
 * finished e-2, the previous user of that half. ep->seen_done is the last epoch this
 * member knows every member has finished, raised by every all-member wait (all >=
 * ARRIVED(e) means all finished e-1) and checked against the slots only when too old.
 * Consecutive meetings that wait for everybody never load a peer's word to claim. So a
 * member is at most two epochs ahead of the slowest reader of its slot. */
#ifndef HMPI_SHM_EPOCH_H
#define HMPI_SHM_EPOCH_H

#include "../common/assert.h"
#include "wait.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum { HMPI_EPOCH_ARRIVED = 1, HMPI_EPOCH_MID = 2, HMPI_EPOCH_DONE = 3 };

static inline uint64_t hmpi_epoch_state(uint64_t epoch, int phase)
{
    return (epoch << 2) | (uint64_t)phase;
}

/* One member's view, private to it. The slots lie in memory every member maps at the
 * same address (the shared heap), so slot[] holds plain pointers valid in every one. */
typedef struct {
    int n, me;            /* members, and this member's index */
    size_t stride;        /* bytes from half 0 to half 1 of a slot */
    unsigned char **slot; /* [n] every member's slot (each half starts with its word) */
    uint64_t epoch;       /* epochs begun */
    uint64_t seen_done;   /* every member has finished this epoch */
} hmpi_epoch_t;

/* Member i's half of epoch e (its state word first). */
static inline void *hmpi_epoch_half(const hmpi_epoch_t *ep, int i, uint64_t e)
{
    HMPI_ASSERT_INTERNAL(i >= 0 && i < ep->n);
    return ep->slot[i] + (e & 1) * ep->stride;
}

static inline _Atomic uint64_t *hmpi_epoch_word(const hmpi_epoch_t *ep, int i, uint64_t e)
{
    return (_Atomic uint64_t *)hmpi_epoch_half(ep, i, e);
}

/* The walker of the assertions (common/assert.h): 1 when this member's view is
 * consistent. O(1), and it reads only this member's own words, which no other member
 * writes, so it cannot fire on what a peer did (a peer's state is untrusted input):
 *  - n >= 1 members, me one of them, the slots given, halves at least a word apart and
 *    8-aligned (the state word is atomic);
 *  - seen_done <= epoch: nobody is known to have finished an epoch this member has not
 *    begun;
 *  - each of its two state words holds 0 (never published) or a state with a phase
 *    (ARRIVED .. DONE) of an epoch of its half's parity that it has begun (<= epoch). */
static inline int hmpi_epoch_is_valid(const hmpi_epoch_t *ep)
{
    if (ep->n < 1 || ep->me < 0 || ep->me >= ep->n || !ep->slot || !ep->slot[ep->me] ||
        ep->stride < sizeof(uint64_t) || ep->stride % sizeof(uint64_t) || ep->seen_done > ep->epoch)
        return 0;
    for (uint64_t h = 0; h < 2; h++) {
        uint64_t w = atomic_load_explicit(
            (_Atomic uint64_t *)(void *)(ep->slot[ep->me] + h * ep->stride), memory_order_relaxed);
        if (w && ((w & 3) == 0 || ((w >> 2) & 1) != h || (w >> 2) > ep->epoch))
            return 0;
    }
    return 1;
}

static inline uint64_t hmpi_epoch_begin(hmpi_epoch_t *ep)
{
    HMPI_ASSERT_INTERNAL(hmpi_epoch_is_valid(ep));
    return ++ep->epoch;
}

/* Waits (hmpi_wait_step, counted as family f) until the monotone word w reaches want;
 * acquire. The way every wait of this file and meet.h goes once a first load failed. */
void hmpi_epoch_wait_word(const _Atomic uint64_t *w, uint64_t want, hmpi_wait_family_t f);

/* 1 when member i has reached phase of epoch e; acquire. */
static inline int hmpi_epoch_reached(const hmpi_epoch_t *ep, int i, uint64_t e, int phase)
{
    return atomic_load_explicit(hmpi_epoch_word(ep, i, e), memory_order_acquire) >=
           hmpi_epoch_state(e, phase);
}

/* Waits until member i has reached phase of epoch e; acquire. */
static inline void hmpi_epoch_wait(const hmpi_epoch_t *ep, int i, uint64_t e, int phase,
                                   hmpi_wait_family_t f)
{
    if (!hmpi_epoch_reached(ep, i, e, phase))
        hmpi_epoch_wait_word(hmpi_epoch_word(ep, i, e), hmpi_epoch_state(e, phase), f);
}

/* Waits for members [lo, hi) other than this one. */
static inline void hmpi_epoch_wait_range(const hmpi_epoch_t *ep, int lo, int hi, uint64_t e,
                                         int phase, hmpi_wait_family_t f)
{
    for (int i = lo; i < hi; i++)
        if (i != ep->me)
            hmpi_epoch_wait(ep, i, e, phase, f);
}

/* This member saw every member reach epoch e (ARRIVED): they all finished e-1. */
static inline void hmpi_epoch_seen(hmpi_epoch_t *ep, uint64_t e)
{
    HMPI_ASSERT_INTERNAL(e >= 1 && e <= ep->epoch); /* seen in an epoch it began */
    if (ep->seen_done < e - 1)
        ep->seen_done = e - 1;
}

/* Waits for every other member (raises seen_done accordingly: everybody reached e, so
 * everybody finished e-1, and e itself when the phase is DONE). */
static inline void hmpi_epoch_wait_all(hmpi_epoch_t *ep, uint64_t e, int phase,
                                       hmpi_wait_family_t f)
{
    hmpi_epoch_wait_range(ep, 0, ep->n, e, phase, f);
    uint64_t done = phase == HMPI_EPOCH_DONE ? e : e - 1;
    if (ep->seen_done < done)
        ep->seen_done = done;
    HMPI_ASSERT_INTERNAL(hmpi_epoch_is_valid(ep)); /* e was one it began */
}

/* The store of a publish, asserted (monotone within a half: a reader takes any state >= X
 * as X, so a lower one would let it read data not yet written). */
static inline void hmpi_epoch_store(hmpi_epoch_t *ep, uint64_t e, int phase)
{
    /* Only for an epoch this member has begun: a state never runs ahead of its owner. */
    HMPI_ASSERT_INTERNAL(e >= 1 && e <= ep->epoch);
    _Atomic uint64_t *w = hmpi_epoch_word(ep, ep->me, e);
    HMPI_ASSERT_INTERNAL(atomic_load_explicit(w, memory_order_relaxed) <=
                         hmpi_epoch_state(e, phase));
    atomic_store_explicit(w, hmpi_epoch_state(e, phase), memory_order_release);
}

static inline void hmpi_epoch_publish(hmpi_epoch_t *ep, uint64_t e, int phase)
{
    hmpi_epoch_store(ep, e, phase);
    hmpi_wait_wake_all(); /* members that wait for it may sleep (wait.h) */
}

/* The same where only known members wait for it: the n node-local ranks of locals (a
 * parent, a few children) are woken if they sleep, not every parked rank of the node.
 * A waiter left out (a claim that waits for a member's DONE, hmpi_epoch_wait_done) is
 * not lost: it finds the word at its next nap (wait.h). */
static inline void hmpi_epoch_publish_to(hmpi_epoch_t *ep, uint64_t e, int phase, const int *locals,
                                         int n)
{
    hmpi_epoch_store(ep, e, phase);
    hmpi_wait_wake_list(locals, n);
}

/* 1 when member i finished epoch k: DONE(k), or anything of epoch k+1. */
static inline int hmpi_epoch_finished(const hmpi_epoch_t *ep, int i, uint64_t k)
{
    return hmpi_epoch_reached(ep, i, k, HMPI_EPOCH_DONE) ||
           hmpi_epoch_reached(ep, i, k + 1, HMPI_EPOCH_ARRIVED);
}

/* Waits until every member finished epoch e; then seen_done >= e. */
void hmpi_epoch_wait_done(hmpi_epoch_t *ep, uint64_t e, hmpi_wait_family_t f);

/* Before writing this member's half of epoch e: returns the half, once nobody reads it
 * for epoch e-2 any more. */
static inline void *hmpi_epoch_claim(hmpi_epoch_t *ep, uint64_t e, hmpi_wait_family_t f)
{
    HMPI_ASSERT_INTERNAL(e == ep->epoch); /* a member writes its current epoch's half only */
    if (e >= 2 && ep->seen_done < e - 2)
        hmpi_epoch_wait_done(ep, e - 2, f);
    HMPI_ASSERT_INTERNAL(hmpi_epoch_is_valid(ep) && (e < 2 || ep->seen_done >= e - 2));
    return hmpi_epoch_half(ep, ep->me, e);
}

#endif
