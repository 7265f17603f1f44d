/* stats.h: per-rank counters (stats.def). Counted only while someone wants them: the
 * HMPI_STATS report, or an MPI_T tool with a started handle (mpi/mpit.c); the hot paths
 * pay one predictable branch when nobody does. No MPI in here. */
#ifndef HMPI_STATS_H
#define HMPI_STATS_H

#include "hidden.h"

#include <stdatomic.h>
#include <stdint.h>

typedef enum {
#define S(name, doc) HMPI_STAT_##name,
#include "stats.def"
#undef S
    HMPI_STAT_COUNT
} hmpi_stat_t;

/* The parts a counter (and a knob) belongs to, named as in docs and MPI_T categories. */
typedef enum {
    HMPI_PART_P2P,
    HMPI_PART_COLL,
    HMPI_PART_RMA,
    HMPI_PART_OPI,
    HMPI_PART_HEAP,
    HMPI_PART_COUNT
} hmpi_part_t;

/* 1 while counting; written under the lock of stats.c. The hot paths read it plainly: a
 * relaxed atomic load could not be merged, and a function with three counters would test
 * it three times when off (6 instructions more per MPI_Send, callgrind). A change made
 * by MPI_T in another thread shows at the next call. */
extern HMPI_HIDDEN int hmpi_stats_on;
/* 1 when several threads may bump counters of MPI calls at once (MPI_THREAD_MULTIPLE). */
extern HMPI_HIDDEN int hmpi_stats_threads;
extern _Atomic uint64_t hmpi_stat_values[HMPI_STAT_COUNT];

static inline int hmpi_stats_counting(void) { return hmpi_stats_on; }

/* Any counter, from any thread: an atomic add. */
static inline void hmpi_stat_add(hmpi_stat_t s, uint64_t v)
{
    if (__builtin_expect(hmpi_stats_counting(), 0))
        atomic_fetch_add_explicit(&hmpi_stat_values[s], v, memory_order_relaxed);
}

/* A counter only code inside MPI calls bumps, already known to be counting: a plain
 * read and write unless several threads may be in MPI at once (no locked instruction,
 * which waits for the store buffer: on a wait's way out, on every send of the 8-byte
 * message rate). threads: hmpi_stats_threads, read once by a caller bumping several
 * counters (each atomic access makes the compiler read and test it again). */
static inline void hmpi_stat_bump_as(int threads, hmpi_stat_t s, uint64_t v)
{
    if (__builtin_expect(threads, 0))
        atomic_fetch_add_explicit(&hmpi_stat_values[s], v, memory_order_relaxed);
    else
        atomic_store_explicit(&hmpi_stat_values[s],
                              atomic_load_explicit(&hmpi_stat_values[s], memory_order_relaxed) + v,
                              memory_order_relaxed);
}

static inline void hmpi_stat_bump(hmpi_stat_t s, uint64_t v)
{
    hmpi_stat_bump_as(hmpi_stats_threads, s, v);
}

/* Who wants the counters: counting runs while one of them does and nothing blocks it. */
enum { HMPI_STATS_BY_REPORT = 1, HMPI_STATS_BY_TOOL = 2 };
void hmpi_stats_want(int who, int on);
/* HMPI_DISABLE=1: nothing is counted, whoever wants it (every counter reads 0). */
void hmpi_stats_block(int blocked);

const char *hmpi_stat_name(hmpi_stat_t s);
const char *hmpi_stat_doc(hmpi_stat_t s);
hmpi_part_t hmpi_stat_part(hmpi_stat_t s);
const char *hmpi_part_name(hmpi_part_t p);
/* 1 for the counters of nanoseconds (wait_*_ns). */
int hmpi_stat_is_time(hmpi_stat_t s);

/* One counter now, relaxed. Read counters only through these: msgs_immediate is kept
 * as the immediate messages that went by the queue, msgs_lane added when read (a send
 * by the lane, the 8-byte ping-pong's, bumps one counter fewer). */
uint64_t hmpi_stat_get(hmpi_stat_t s);
/* Every counter now, relaxed: out[HMPI_STAT_COUNT]. */
void hmpi_stats_read(uint64_t *out);

/* Writes one line "hmpi[r]: stats <where>: name=value ..." to stderr. */
void hmpi_stats_print(const char *where);

#endif
