/* stats.c: the counters behind HMPI_STATS and their one-line report. */
#include "stats.h"
#include "log.h"

#include <inttypes.h>
#include <stdio.h>

int hmpi_stats_on;
_Atomic uint64_t hmpi_stat_values[HMPI_STAT_COUNT];

static const char *const stat_names[HMPI_STAT_COUNT] = {
#define S(name, doc) #name,
#include "stats.def"
#undef S
};

void hmpi_stats_print(const char *where)
{
    char line[16384]; /* about 40 bytes a counter */
    size_t n = (size_t)snprintf(line, sizeof line, "stats %s:", where);
    for (int i = 0; i < HMPI_STAT_COUNT && n < sizeof line; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, " %s=%" PRIu64, stat_names[i],
                              atomic_load_explicit(&hmpi_stat_values[i], memory_order_relaxed));
    hmpi_log_long(line);
}
