/* bell.h: a reader's bell, one bit per writer in words of shared memory, so that a
 * reader with many writers looks only where something was written (p2p/lane.c: the
 * summary word of a receiver's lanes). A writer rings (sets its bit) after it published;
 * the reader answers a word (takes its rung bits, clearing them) and then looks at the
 * writers it took. No MPI in here.
 *
 * Protocol. Writer w: publishes in its own structure (release), then rings: an atomic
 * OR of bit w mod 64 into word w / 64 (release). Reader: loads a word (relaxed: an idle
 * word costs a read of a line in its cache); when not zero, exchanges it with 0
 * (acquire) and looks at every writer whose bit it took.
 * No ring is lost: the ring and the answer are read-modify-writes of one word, so they
 * are ordered. An answer after the ring takes the bit and, reading from the ring
 * (release, acquire), sees what was published before it; an answer before it leaves the
 * bit set, and the next answer takes it. A look may find nothing (a bit rung for
 * something the reader took by another way, or already took after an earlier bit):
 * harmless. The writer does not test its bit before ringing: skipping the OR when the
 * bit reads set would be a store (the publish) then a load, against the reader's
 * exchange then load (the look), and without a full fence on both sides each could miss
 * the other's store (store buffering): a message left unseen. The fence costs what the
 * OR does.
 * Cost: a ring is one atomic OR of a line the reader also writes; an answer reads
 * ceil(n / 64) words (8 to a line) and exchanges the ones not zero, against one line a
 * writer for a reader that looks at every writer each time.
 * Untrusted writers: a bit rung with nothing published costs a look; a writer that
 * never rings delays only its own messages. The reader ignores bits past its n
 * writers. */
#ifndef HMPI_SHM_BELL_H
#define HMPI_SHM_BELL_H

#include "ctrl.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef _Atomic uint64_t hmpi_bell_t;

/* Bytes of the bell of n writers: whole cache lines, zeroed before the first ring. */
static inline size_t hmpi_bell_size(unsigned n)
{
    size_t lines = ((size_t)n + 511) / 512; /* 8 words of 64 writers a line */
    return lines * HMPI_CACHE_LINE;
}

/* Writer w's word of bell, and its bit there: computed once, rung many times. */
static inline hmpi_bell_t *hmpi_bell_word(hmpi_bell_t *bell, unsigned w) { return bell + w / 64; }
static inline uint64_t hmpi_bell_bit(unsigned w) { return 1ull << (w % 64); }

/* After publishing: sets the writer's bit. */
static inline void hmpi_bell_ring(hmpi_bell_t *word, uint64_t bit)
{
    atomic_fetch_or_explicit(word, bit, memory_order_release);
}

/* The reader: the bits rung in word i of bell since its last answer (cleared), 0 with
 * one load when none was. Look at each writer taken after this returns. */
static inline uint64_t hmpi_bell_answer(hmpi_bell_t *bell, size_t i)
{
    if (!atomic_load_explicit(&bell[i], memory_order_relaxed))
        return 0;
    return atomic_exchange_explicit(&bell[i], 0, memory_order_acquire);
}

#endif
