/* lane.h: the lane ring, k fixed-size slots in shared memory that carry messages from
 * one writer process to one reader in order, with no atomic read-modify-write on either
 * side (p2p/lane.c: a lane per sender and local receiver, a slot an envelope). It knows
 * nothing of what a slot holds but two words: its seq, the slot's first 8 bytes, and a
 * 32-bit state word at an offset the caller names, with a value the caller calls free.
 * The caller passes that offset and value as constants, so inlined the hot path stays
 * as short as writing the words by hand. No MPI in here.
 *
 * Protocol. Slot n of the ring (n counts uses, from any start) is slot n mod k, k a
 * power of two. The writer's cursor (hmpi_lane_tx_t, private to it) holds head, the
 * uses so far, and free: slots [head, free) were seen free since their last use.
 *  - claim: the writer takes slot head only when it is known free (head != free); else
 *    a look reads the states of slots head, head + 1, ... up to k of them (acquire,
 *    independent loads) while they are free, and sets free past the last one: one look
 *    serves many claims. A look that found none sets skip, and the next HMPI_LANE_SKIP
 *    claims fail without reading a line the reader is writing.
 *  - publish: the writer fills the slot, stores a busy value into its state (relaxed),
 *    then head + 1 into its seq (release, last): the slot's contents and its busy
 *    state are visible before the slot is.
 *  - peek/take: the reader's cursor (hmpi_lane_rx_t) holds next, the slots taken; slot
 *    next is published when its seq reads next + 1 (acquire). take moves past it.
 *  - give back: when done with a slot taken, the reader stores the free value into its
 *    state (release) and never reads the slot again. Slots may be given back in any
 *    order; the writer reuses them in ring order only, so one kept back holds the ring.
 * No slot is overwritten while the reader reads it: the writer writes slot n only after
 * reading it free (acquire), and the reader wrote free (release) after its last read of
 * use n - k. That free cannot be an older one: the writer's own busy store of use n - k
 * came after it read the free of use n - 2k and before its look, so by coherence its
 * look sees the busy or a later store, the reader's. A slot never used reads free from
 * init. A look reads slots [head, head + k) only, whose last uses (n - k) were all
 * published already, so the free it reads is that use's given back, or init's.
 * Seq: slot n holds n + 1 once published, its previous use's n + 1 - k or 0 (init)
 * before, never a later use's (the writer reuses it only once the reader took and gave
 * back use n): so the reader sees exactly use next as next + 1, for any k >= 1. The
 * seq and the counts are 64 bits and never wrap in a run (2^64 uses); only the
 * writer's free is kept in 32 bits, which is exact while free - head <= k.
 * Untrusted writer: the reader computes every address from its own cursor, never from a
 * slot, and writes only the state of slots it took. A corrupted seq can hide a slot (the
 * lane stalls: what was written there is late or lost) or show one early or twice (the
 * reader reads whatever is there): the caller checks every field it reads from a slot,
 * once, as from any other process. A corrupted state word (a reader gone wrong) can make
 * the writer reuse a slot too early, which harms only that reader's messages. */
#ifndef HMPI_SHM_LANE_H
#define HMPI_SHM_LANE_H

#include "../common/assert.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Claims that fail without a look after a look found the ring full: a look reads lines
 * the reader is writing. */
enum { HMPI_LANE_SKIP = 16 };

/* The writer's cursor, private to it: uses so far; slots [head, free) known free,
 * free kept as its low 32 bits (free - head is at most k, so they name it); claims to
 * refuse before the next look. 16 bytes, so an array of them indexes as cheaply as an
 * array of words. Zero it (or set the low 32 bits of head into free) to start. */
typedef struct {
    uint64_t head;
    uint32_t free;
    uint32_t skip;
} hmpi_lane_tx_t;

/* The reader's cursor, private to it: slots taken. Starts at the writer's head. */
typedef struct {
    uint64_t next;
} hmpi_lane_rx_t;

/* Slot n of a ring of k (a power of two) slots of slot_bytes each. */
static inline void *hmpi_lane_slot(void *ring, unsigned k, size_t slot_bytes, uint64_t n)
{
    HMPI_ASSERT_INTERNAL(k && (k & (k - 1)) == 0);
    return (char *)ring + (size_t)(n & (k - 1)) * slot_bytes;
}

/* A slot's seq word: its first 8 bytes. */
static inline _Atomic uint64_t *hmpi_lane_seq(void *slot) { return (_Atomic uint64_t *)slot; }

/* A slot's state word, state_off bytes in. */
static inline _Atomic uint32_t *hmpi_lane_state(void *slot, size_t state_off)
{
    return (_Atomic uint32_t *)(void *)((char *)slot + state_off);
}

/* Every slot free, seq 0, before the ring is shared (the writer's, while alone). */
static inline void hmpi_lane_init(void *ring, unsigned k, size_t slot_bytes, size_t state_off,
                                  uint32_t free_value)
{
    for (unsigned i = 0; i < k; i++) {
        void *s = hmpi_lane_slot(ring, k, slot_bytes, i);
        atomic_store_explicit(hmpi_lane_seq(s), 0, memory_order_relaxed);
        atomic_store_explicit(hmpi_lane_state(s, state_off), free_value, memory_order_relaxed);
    }
}

/* Whether the writer's next slot, hmpi_lane_slot(ring, k, slot_bytes, tx->head), is
 * known free; when not, hmpi_lane_look. The two halves of hmpi_lane_claim, for a caller
 * that keeps the look out of line. */
static inline int hmpi_lane_known_free(const hmpi_lane_tx_t *tx)
{
    return (uint32_t)tx->head != tx->free;
}

/* No slot known free: counts a skip down, or reads ahead from head while the slots
 * are free. Returns slot head when it is free, else NULL. */
static inline void *hmpi_lane_look(hmpi_lane_tx_t *tx, void *ring, unsigned k, size_t slot_bytes,
                                   size_t state_off, uint32_t free_value)
{
    uint64_t h = tx->head;
    if (tx->skip) { /* the last look found the ring full: no read a claim */
        tx->skip--;
        return NULL;
    }
    uint64_t n = h;
    while (n - h < k &&
           atomic_load_explicit(hmpi_lane_state(hmpi_lane_slot(ring, k, slot_bytes, n), state_off),
                                memory_order_acquire) == free_value)
        n++;
    tx->free = (uint32_t)n;
    if (n == h) {
        tx->skip = HMPI_LANE_SKIP;
        return NULL;
    }
    return hmpi_lane_slot(ring, k, slot_bytes, h);
}

/* The writer's next slot when it is free, else NULL (the ring is full, or skipping). */
static inline void *hmpi_lane_claim(hmpi_lane_tx_t *tx, void *ring, unsigned k, size_t slot_bytes,
                                    size_t state_off, uint32_t free_value)
{
    HMPI_ASSERT_INTERNAL(tx->free - (uint32_t)tx->head <= k);
    if (__builtin_expect(!hmpi_lane_known_free(tx), 0))
        return hmpi_lane_look(tx, ring, k, slot_bytes, state_off, free_value);
    return hmpi_lane_slot(ring, k, slot_bytes, tx->head);
}

/* Publishes slot s, the one the last claim gave, its contents written: state busy
 * (relaxed), then the seq (release, last). */
static inline void hmpi_lane_publish(hmpi_lane_tx_t *tx, void *s, size_t state_off,
                                     uint32_t busy_value)
{
    HMPI_ASSERT_INTERNAL(hmpi_lane_known_free(tx));
    atomic_store_explicit(hmpi_lane_state(s, state_off), busy_value, memory_order_relaxed);
    atomic_store_explicit(hmpi_lane_seq(s), ++tx->head, memory_order_release);
}

/* The reader's next slot when it is published, else NULL; the same until taken. */
static inline void *hmpi_lane_peek(const hmpi_lane_rx_t *rx, void *ring, unsigned k,
                                   size_t slot_bytes)
{
    void *s = hmpi_lane_slot(ring, k, slot_bytes, rx->next);
    if (atomic_load_explicit(hmpi_lane_seq(s), memory_order_acquire) != rx->next + 1)
        return NULL;
    return s;
}

/* Moves past the slot hmpi_lane_peek gave: the reader's until given back. */
static inline void hmpi_lane_take(hmpi_lane_rx_t *rx) { rx->next++; }

/* Gives taken slot s back to the writer, after the reader's last read of it. */
static inline void hmpi_lane_give_back(void *s, size_t state_off, uint32_t free_value)
{
    atomic_store_explicit(hmpi_lane_state(s, state_off), free_value, memory_order_release);
}

#endif
