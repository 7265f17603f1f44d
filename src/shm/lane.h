/* lane.h: the lane ring, k fixed-size slots in shared memory that carry messages from
 * one writer process to one reader in order, with no atomic read-modify-write on either
 * side (p2p/lane.c: a lane per sender and local receiver, a slot an envelope). It knows
 * nothing of what a slot holds but two words: its seq, the slot's first 8 bytes, and a
 * 32-bit state word at an offset the caller names, with a value the caller calls free.
 * The caller passes that offset and value as constants, so inlined the hot path stays
 * as short as writing the words by hand. No MPI in here.
 *
 * Protocol. Slot n of the ring (n counts ring positions, from any start) is slot
 * n mod k, k a power of two. A message goes into the writer's last slot again when the
 * reader has given that back already, else into the ring's next: a ping-pong then
 * keeps to one line each way (a line that moves between two cores as each reads and
 * writes it in turn costs less than a new line each message: docs/performance.md,
 * "A lane's slot used again"), while a stream still has all k slots. The writer's
 * cursor (hmpi_lane_tx_t, private to it) holds head, the ring positions used so far
 * (its last slot is head - 1), seq, the slots published so far, and free: slots
 * [head, free) were seen free since their last use.
 *  - claim: once something is published, the writer first reads the state of its last
 *    slot (acquire): free, the message goes there again. Else it takes slot head when
 *    that is known free (head != free); else a look reads the states of slots head,
 *    head + 1, ... up to k - 1 of them (k before the first message; acquire,
 *    independent loads) while they are free, and sets free past the last one: one look
 *    serves many claims. The look stops short of slot head - 1 + k, which is the last
 *    slot: a window of known free slots that held it would let the ring's way overwrite
 *    a message the last slot took again after the look (the last slot can read free
 *    to the look and be used again before the ring's way comes round to it). A look that found
 *    none sets skip, and the next HMPI_LANE_SKIP claims of the ring's way fail without
 *    reading a line the reader is writing.
 *  - publish: the writer fills the slot, stores a busy value into its state (relaxed),
 *    then seq + 1 into its seq word (release, last): the slot's contents and its busy
 *    state are visible before the slot is. A slot taken from the ring moves head on.
 *  - peek/take: the reader's cursor (hmpi_lane_rx_t) holds next, the ring positions it
 *    took (its last slot is next - 1, the writer's last when it has taken all), and
 *    seq, the slots taken. Message seq + 1 is in slot next - 1 (used again) or slot
 *    next when that slot's seq word reads seq + 1 (acquire); take moves next on when
 *    it was slot next.
 *  - give back: when done with a slot taken, the reader stores the free value into its
 *    state (release) and never reads the slot again. Slots may be given back in any
 *    order; the writer takes new ones in ring order only, so one kept back holds the
 *    ring.
 * No slot is overwritten while the reader reads it: the writer writes a slot only after
 * reading it free (acquire), and the reader wrote free (release) after its last read of
 * the slot's previous use. That free cannot be an older one: the writer's own busy
 * store of the previous use came before its read (its last slot) or before its look
 * (a look reads slots of [head, head + k) only, whose previous uses were all published
 * already), so by coherence the read sees the busy or a later store, the reader's. A
 * slot never used reads free from init. The window [head, free) never holds the last
 * slot: a look covers at most [head, head - 1 + k), and neither way of publishing puts
 * the last slot into it (the ring's way makes slot head the last and moves head past
 * it; the last again moves nothing).
 * Seq: messages are numbered 1, 2, ... in the order published, each number in one slot
 * only, and a slot's seq word holds the number of its latest use (0 from init). The
 * writer places message m in its last slot or in slot head; the reader, having taken
 * m - 1, has its next where the writer's head was when it wrote m (by induction: a new
 * slot moves both on, a slot used again neither), so it looks in exactly those two
 * slots. A slot holds m only once m is published, and a slot overwritten later holds a
 * larger number: the reader sees message m exactly, for any k >= 1. The numbers and
 * positions are 64 bits and never wrap in a run (2^64 messages); only the writer's
 * free is kept in 32 bits, which is exact while free - head <= k.
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

/* The writer's cursor, private to it: ring positions used (the last slot is head - 1);
 * slots [head, free) known free, free kept as its low 32 bits (free - head is at most
 * k, so they name it); claims of the ring's way to refuse before the next look;
 * messages published. Zero it (or set the low 32 bits of head into free) to start. */
typedef struct {
    uint64_t head;
    uint32_t free;
    uint32_t skip;
    uint64_t seq;
} hmpi_lane_tx_t;

/* The reader's cursor, private to it: ring positions taken (the last slot is next - 1)
 * and messages taken. Starts at the writer's head and seq. */
typedef struct {
    uint64_t next;
    uint64_t seq;
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

/* ---- validity: the walkers of the assertions (common/assert.h) -----------------------
 * Pure checks of the invariants above, 1 when they hold, for the asserts of this file
 * and for tests. Each looks only at what its caller owns, so that none can fire on what
 * another process did: a cursor, and a slot's seq word, which only the writer stores
 * after init. A slot's state word is the reader's to write (free) and is never read
 * here. */

/* The writer's cursor alone (O(1)): k a power of two; at most HMPI_LANE_SKIP claims to
 * skip, and a skip only while no slot is known free (a look that found none set it,
 * and nothing moves head or free until the next look); the window [head, free) of slots
 * known free at most k slots, k - 1 once something is published (a look stops short of
 * the last slot, and a publish never puts the last slot into it). */
static inline int hmpi_lane_tx_cursor_is_valid(const hmpi_lane_tx_t *tx, unsigned k)
{
    uint32_t known = tx->free - (uint32_t)tx->head;
    return k && (k & (k - 1)) == 0 && known <= (tx->seq ? k - 1 : k) &&
           tx->skip <= HMPI_LANE_SKIP && (!tx->skip || !known);
}

/* The writer's cursor and the seq words of its ring (O(k), the writer's own stores):
 * the cursor as above; the last slot, slot head - 1, holds the latest message, seq (0
 * before the first); going back from it, slots head - 2, head - 3, ... head - k hold
 * strictly smaller numbers (a ring position's messages all come before the next
 * position's first) until the positions before the cursor's start, which hold 0 from
 * init. A slot whose seq word is wrong would make the reader miss or repeat messages. */
static inline int hmpi_lane_tx_is_valid(const hmpi_lane_tx_t *tx, void *ring, unsigned k,
                                        size_t slot_bytes)
{
    if (!hmpi_lane_tx_cursor_is_valid(tx, k))
        return 0;
    uint64_t above = 0;
    for (unsigned i = 0; i < k; i++) {
        uint64_t n = atomic_load_explicit(
            hmpi_lane_seq(hmpi_lane_slot(ring, k, slot_bytes, tx->head - 1 - i)),
            memory_order_relaxed);
        if (i == 0 ? n != tx->seq : n && n >= above)
            return 0;
        above = n;
    }
    return 1;
}

/* The reader's cursor against its writer's, for whoever holds both (the tests, a rank's
 * lane to itself): a reader's cursor alone has no invariant, any next and seq being a
 * start. The reader took only what was published (rx seq <= tx seq). With k >= 2, each
 * message it has yet to take moved the writer's head one position at most, so head -
 * next <= tx seq - rx seq (with everything taken, the reader's next is the writer's
 * head); and those messages lie in distinct slots (the writer uses its last slot again
 * only once given back, which a reader does after taking), so head - next <= k. (With
 * k = 1 the last slot is the next one too, and the reader's next moves at every take:
 * positions tell nothing there.) */
static inline int hmpi_lane_rx_is_valid(const hmpi_lane_rx_t *rx, const hmpi_lane_tx_t *tx,
                                        unsigned k)
{
    uint64_t behind = tx->head - rx->next;
    return k && (k & (k - 1)) == 0 && rx->seq <= tx->seq &&
           (k == 1 || (behind <= tx->seq - rx->seq && behind <= k));
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

/* The writer's last slot when the reader gave it back already (the message goes there
 * again), else NULL: one load, of a line the reader wrote last when it is free. */
static inline void *hmpi_lane_again(const hmpi_lane_tx_t *tx, void *ring, unsigned k,
                                    size_t slot_bytes, size_t state_off, uint32_t free_value)
{
    if (!tx->seq)
        return NULL;
    void *s = hmpi_lane_slot(ring, k, slot_bytes, tx->head - 1);
    return atomic_load_explicit(hmpi_lane_state(s, state_off), memory_order_acquire) == free_value
               ? s
               : NULL;
}

/* Whether slot head, the ring's next (hmpi_lane_slot(ring, k, slot_bytes, tx->head)),
 * is known free; when not, hmpi_lane_look. Pieces of hmpi_lane_claim, for a caller that
 * keeps the look out of line. */
static inline int hmpi_lane_known_free(const hmpi_lane_tx_t *tx)
{
    return (uint32_t)tx->head != tx->free;
}

/* No slot known free: counts a skip down, or reads ahead from head while the slots
 * are free, never as far as the last slot (slot head - 1 + k: the claims that use it
 * again must not find it known free as well). Returns slot head when it is free, else
 * NULL. */
static inline void *hmpi_lane_look(hmpi_lane_tx_t *tx, void *ring, unsigned k, size_t slot_bytes,
                                   size_t state_off, uint32_t free_value)
{
    uint64_t h = tx->head, ahead = tx->seq ? k - 1 : k;
    if (tx->skip) { /* the last look found the ring full: no read a claim */
        tx->skip--;
        return NULL;
    }
    uint64_t n = h;
    while (n - h < ahead &&
           atomic_load_explicit(hmpi_lane_state(hmpi_lane_slot(ring, k, slot_bytes, n), state_off),
                                memory_order_acquire) == free_value)
        n++;
    tx->free = (uint32_t)n;
    HMPI_ASSERT_INTERNAL(hmpi_lane_tx_cursor_is_valid(tx, k)); /* short of the last slot */
    if (n == h) {
        tx->skip = HMPI_LANE_SKIP;
        return NULL;
    }
    return hmpi_lane_slot(ring, k, slot_bytes, h);
}

/* The slot for the writer's next message: its last again when given back, else the
 * ring's next when free; NULL when neither is (the ring is full, or skipping). */
static inline void *hmpi_lane_claim(hmpi_lane_tx_t *tx, void *ring, unsigned k, size_t slot_bytes,
                                    size_t state_off, uint32_t free_value)
{
    HMPI_ASSERT_INTERNAL(hmpi_lane_tx_cursor_is_valid(tx, k));
    void *s = hmpi_lane_again(tx, ring, k, slot_bytes, state_off, free_value);
    if (s)
        return s;
    if (__builtin_expect(!hmpi_lane_known_free(tx), 0))
        return hmpi_lane_look(tx, ring, k, slot_bytes, state_off, free_value);
    return hmpi_lane_slot(ring, k, slot_bytes, tx->head);
}

/* Publishes slot s, the one the last claim gave, its contents written: state busy
 * (relaxed), then the message's number (release, last). A slot of the ring's way
 * (slot head, known free) moves head on; with k = 1 the last slot is slot head too,
 * and either reading holds. */
static inline void hmpi_lane_publish(hmpi_lane_tx_t *tx, void *ring, unsigned k, size_t slot_bytes,
                                     void *s, size_t state_off, uint32_t busy_value)
{
    if (s == hmpi_lane_slot(ring, k, slot_bytes, tx->head) && hmpi_lane_known_free(tx))
        tx->head++;
    else
        HMPI_ASSERT_INTERNAL(tx->seq && s == hmpi_lane_slot(ring, k, slot_bytes, tx->head - 1));
    atomic_store_explicit(hmpi_lane_state(s, state_off), busy_value, memory_order_relaxed);
    atomic_store_explicit(hmpi_lane_seq(s), ++tx->seq, memory_order_release);
    HMPI_ASSERT_EXPENSIVE(hmpi_lane_tx_is_valid(tx, ring, k, slot_bytes));
}

/* Whether slot s holds the reader's next message, message seq + 1 (acquire): the test
 * of hmpi_lane_peek, for a reader that polls the two slots it worked out once. */
static inline int hmpi_lane_holds(void *s, uint64_t seq)
{
    return atomic_load_explicit(hmpi_lane_seq(s), memory_order_acquire) == seq + 1;
}

/* The reader's last slot, where the writer's next message goes again (once it took
 * one). */
static inline void *hmpi_lane_last(const hmpi_lane_rx_t *rx, void *ring, unsigned k,
                                   size_t slot_bytes)
{
    return hmpi_lane_slot(ring, k, slot_bytes, rx->next - 1);
}

/* The slot of the reader's next message when it is published, else NULL; the same
 * until taken. The last slot first: where a ping-pong's next message is. */
static inline void *hmpi_lane_peek(const hmpi_lane_rx_t *rx, void *ring, unsigned k,
                                   size_t slot_bytes)
{
    void *s;
    if (rx->seq && hmpi_lane_holds(s = hmpi_lane_last(rx, ring, k, slot_bytes), rx->seq))
        return s;
    s = hmpi_lane_slot(ring, k, slot_bytes, rx->next);
    return hmpi_lane_holds(s, rx->seq) ? s : NULL;
}

/* Moves past slot s, the one hmpi_lane_peek gave: the reader's until given back. */
static inline void hmpi_lane_take(hmpi_lane_rx_t *rx, void *ring, unsigned k, size_t slot_bytes,
                                  void *s)
{
    /* one of the two slots hmpi_lane_peek looks at */
    HMPI_ASSERT_INTERNAL(s == hmpi_lane_slot(ring, k, slot_bytes, rx->next) ||
                         (rx->seq && s == hmpi_lane_last(rx, ring, k, slot_bytes)));
    if (s == hmpi_lane_slot(ring, k, slot_bytes, rx->next))
        rx->next++;
    rx->seq++;
}

/* Gives taken slot s back to the writer, after the reader's last read of it. */
static inline void hmpi_lane_give_back(void *s, size_t state_off, uint32_t free_value)
{
    atomic_store_explicit(hmpi_lane_state(s, state_off), free_value, memory_order_release);
}

#endif
