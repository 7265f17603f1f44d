/* stats.c: the counters behind HMPI_STATS and MPI_T, who wants them counted, what each
 * one is (name, doc, part), and the per-rank line. No MPI in here. */
#include "stats.h"
#include "log.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

int hmpi_stats_on;
int hmpi_stats_threads;
_Atomic uint64_t hmpi_stat_values[HMPI_STAT_COUNT];

static const char *const stat_names[HMPI_STAT_COUNT] = {
#define S(name, doc) #name,
#include "stats.def"
#undef S
};

static const char *const stat_docs[HMPI_STAT_COUNT] = {
#define S(name, doc) doc,
#include "stats.def"
#undef S
};

/* wanted: HMPI_STATS_BY_* bits; blocked by HMPI_DISABLE. */
static pthread_mutex_t want_lock = PTHREAD_MUTEX_INITIALIZER;
static int wanted, blocked;

static void set_on_locked(void)
{
    __atomic_store_n(&hmpi_stats_on, wanted && !blocked, __ATOMIC_RELAXED);
}

void hmpi_stats_want(int who, int on)
{
    pthread_mutex_lock(&want_lock);
    wanted = on ? wanted | who : wanted & ~who;
    set_on_locked();
    pthread_mutex_unlock(&want_lock);
}

void hmpi_stats_block(int b)
{
    pthread_mutex_lock(&want_lock);
    blocked = b;
    set_on_locked();
    pthread_mutex_unlock(&want_lock);
}

const char *hmpi_stat_name(hmpi_stat_t s) { return stat_names[s]; }
const char *hmpi_stat_doc(hmpi_stat_t s) { return stat_docs[s]; }

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

hmpi_part_t hmpi_stat_part(hmpi_stat_t s)
{
    const char *n = stat_names[s];
    if (starts(n, "wait_"))
        n += 5; /* wait_coll_ns is coll's, wait_recv p2p's */
    if (starts(n, "heap_"))
        return HMPI_PART_HEAP;
    if (starts(n, "coll"))
        return HMPI_PART_COLL;
    if (starts(n, "rma"))
        return HMPI_PART_RMA;
    if (starts(n, "opi"))
        return HMPI_PART_OPI;
    return HMPI_PART_P2P;
}

const char *hmpi_part_name(hmpi_part_t p)
{
    static const char *const names[HMPI_PART_COUNT] = {"p2p", "coll", "rma", "opi", "heap"};
    return names[p];
}

int hmpi_stat_is_time(hmpi_stat_t s)
{
    size_t n = strlen(stat_names[s]);
    return n > 3 && strcmp(stat_names[s] + n - 3, "_ns") == 0;
}

uint64_t hmpi_stat_get(hmpi_stat_t s)
{
    uint64_t v = atomic_load_explicit(&hmpi_stat_values[s], memory_order_relaxed);
    if (s == HMPI_STAT_msgs_immediate) /* what went by the queue; the lane's are added */
        v += atomic_load_explicit(&hmpi_stat_values[HMPI_STAT_msgs_lane], memory_order_relaxed);
    return v;
}

void hmpi_stats_read(uint64_t *out)
{
    for (int i = 0; i < HMPI_STAT_COUNT; i++)
        out[i] = hmpi_stat_get((hmpi_stat_t)i);
}

void hmpi_stats_print(const char *where)
{
    char line[16384]; /* about 40 bytes a counter */
    size_t n = (size_t)snprintf(line, sizeof line, "stats %s:", where);
    for (int i = 0; i < HMPI_STAT_COUNT && n < sizeof line; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, " %s=%" PRIu64, stat_names[i],
                              hmpi_stat_get((hmpi_stat_t)i));
    hmpi_log_long(line);
}
