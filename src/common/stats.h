/* stats.h: per-rank counters (HMPI_STATS=1). Relaxed atomic adds, only when enabled,
 * so the hot paths pay one predictable branch when statistics are off. */
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

extern HMPI_HIDDEN int hmpi_stats_on;
extern _Atomic uint64_t hmpi_stat_values[HMPI_STAT_COUNT];

static inline void hmpi_stat_add(hmpi_stat_t s, uint64_t v)
{
    if (__builtin_expect(hmpi_stats_on, 0))
        atomic_fetch_add_explicit(&hmpi_stat_values[s], v, memory_order_relaxed);
}

/* Writes one line "hmpi[r] stats: name=value ..." to stderr. */
void hmpi_stats_print(const char *where);

#endif
