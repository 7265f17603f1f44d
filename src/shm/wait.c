/* wait.c: the part of a wait past its first HMPI_SPIN_EARLY steps (wait.h), out of
 * line so that the waits' inline code stays small: yielding, parking and naps by the
 * policy; the wakes; the clock of the wait counters. No MPI in here. */
#include "wait.h"
#include "../common/assert.h"

#include <time.h>

unsigned hmpi_spin_limit = HMPI_SPIN_DEDICATED;
hmpi_wait_progress_fn hmpi_wait_progress;
uint32_t hmpi_wait_step16;

enum { NAP_FIRST_US = 100 };

static hmpi_park_node_t nobody; /* sleepers 0 until attached */
hmpi_park_node_t *hmpi_wait_node = &nobody;
_Atomic int hmpi_wait_napped;
static char *slots; /* NULL: no wait parks */
static size_t slot_stride;
static int slot_count, slot_me;
static hmpi_wait_policy_t policy = HMPI_WAIT_YIELD;
static uint64_t park_ns;
static uint32_t nap_max_us = 10000;
static unsigned crowd_cores; /* hmpi_wait_crowd */

static hmpi_park_slot_t *slot(int r)
{
    return (hmpi_park_slot_t *)(slots + (size_t)r * slot_stride);
}

void hmpi_wait_configure(hmpi_wait_policy_t p, unsigned park_us, unsigned max_us)
{
    policy = p;
    park_ns = (uint64_t)park_us * 1000u;
    nap_max_us = max_us > NAP_FIRST_US ? max_us : NAP_FIRST_US;
}

hmpi_wait_policy_t hmpi_wait_policy(void) { return policy; }

void hmpi_wait_crowd(unsigned cores) { crowd_cores = cores; }

/* The spin limit of a wait that outlasted HMPI_SPIN_EARLY steps: the crowded one only
 * while more ranks are awake than the host has cores (one load of the sleepers line,
 * which every waker reads too). */
static unsigned spin_limit_now(void)
{
    if (!crowd_cores || !slots)
        return hmpi_spin_limit;
    uint32_t asleep = atomic_load_explicit(&hmpi_wait_node->sleepers, memory_order_relaxed);
    return (unsigned)slot_count <= crowd_cores + asleep ? HMPI_SPIN_DEDICATED : hmpi_spin_limit;
}

void hmpi_wait_attach(hmpi_park_node_t *node, void *base, size_t stride, int nranks, int me)
{
    HMPI_ASSERT_INTERNAL(node && base && stride >= sizeof(hmpi_park_slot_t) && me >= 0 &&
                         me < nranks);
    hmpi_park_setup();
    slot_stride = stride;
    slot_count = nranks;
    slot_me = me;
    hmpi_wait_node = node;
    slots = base;
}

void hmpi_wait_wake_slow(int local)
{
    if (!slots)
        return;
    hmpi_park_node_t *n = hmpi_wait_node;
    hmpi_park_fence();
    HMPI_ASSERT_INTERNAL(local < slot_count); /* a local rank, or -1 for all */
    if (local >= 0) {
        if (hmpi_park_is_parked(n, slot(local), local))
            hmpi_park_ring(slot(local));
        return;
    }
    /* Every parked rank, this one too (another of its threads may sleep): the map's
     * words, and the slots of the set bits only; past the map, each slot. */
    int mapped = slot_count < HMPI_PARK_MAP_RANKS ? slot_count : HMPI_PARK_MAP_RANKS;
    for (int w = 0; w < (mapped + 63) / 64; w++) {
        uint64_t bits = atomic_load_explicit(&n->map[w], memory_order_relaxed);
        while (bits) {
            int r = w * 64 + __builtin_ctzll(bits);
            bits &= bits - 1;
            hmpi_park_ring(slot(r));
        }
    }
    for (int r = mapped; r < slot_count; r++)
        if (atomic_load_explicit(&slot(r)->parked, memory_order_relaxed))
            hmpi_park_ring(slot(r));
}

void hmpi_wait_wake_list_slow(const int *locals, int n)
{
    for (int i = 0; i < n; i++)
        hmpi_wait_wake_slow(locals[i]);
}

void hmpi_backoff_unpark(hmpi_backoff_t *b)
{
    HMPI_ASSERT_INTERNAL(b->nap_us && slots); /* parked, which needs the slots */
    hmpi_park_leave(hmpi_wait_node, slot(slot_me), slot_me);
    b->nap_us = 0;
}

_Static_assert(HMPI_STAT_wait_send == HMPI_STAT_wait_recv + 2 * HMPI_WAIT_SEND &&
                   HMPI_STAT_wait_coll == HMPI_STAT_wait_recv + 2 * HMPI_WAIT_COLL &&
                   HMPI_STAT_wait_rma == HMPI_STAT_wait_recv + 2 * HMPI_WAIT_RMA &&
                   HMPI_STAT_wait_opi == HMPI_STAT_wait_recv + 2 * HMPI_WAIT_OPI &&
                   HMPI_STAT_wait_opi_ns == HMPI_STAT_wait_opi + 1,
               "stats.def lists the wait counters in family order, each count then its time");

uint64_t hmpi_wait_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void hmpi_wait_calibrate(void)
{
    enum { STEPS = 1024 };
    if (__atomic_load_n(&hmpi_wait_step16, __ATOMIC_RELAXED))
        return;
    uint64_t best = UINT64_MAX;
    for (int round = 0; round < 3; round++) { /* the fastest of three: one preempted is not */
        uint64_t t = hmpi_wait_now();
        for (int i = 0; i < STEPS; i++)
            hmpi_cpu_relax();
        t = hmpi_wait_now() - t;
        if (t < best)
            best = t;
    }
    uint64_t step16 = best * 16 / STEPS;
    __atomic_store_n(&hmpi_wait_step16, step16 ? (uint32_t)step16 : 1u, __ATOMIC_RELAXED);
}

void hmpi_wait_note_timed(const hmpi_backoff_t *b, hmpi_wait_family_t f, int count)
{
    uint64_t ns = hmpi_wait_now() - b->t0 + (((uint64_t)HMPI_SPIN_EARLY * hmpi_wait_step16) >> 4);
    hmpi_stat_t s = (hmpi_stat_t)(HMPI_STAT_wait_recv + 2 * (int)f);
    if (count)
        hmpi_stat_bump(s, 1);
    hmpi_stat_bump((hmpi_stat_t)(s + 1), ns);
}

void hmpi_backoff_slow(hmpi_backoff_t *b)
{
    if (!b->limit) {
        b->limit = spin_limit_now();
        if (hmpi_stats_counting())
            b->t0 = hmpi_wait_now();
    }
    if (b->nap_us) { /* parked: nap until woken or the nap ends */
        b->bell = hmpi_park_sleep(slot(slot_me), b->bell, (uint64_t)b->nap_us * 1000u);
        b->nap_us = b->nap_us * 2 < nap_max_us ? b->nap_us * 2 : nap_max_us;
        atomic_store_explicit(&hmpi_wait_napped, 1, memory_order_relaxed);
        return;
    }
    if (b->spins < b->limit || policy == HMPI_WAIT_SPIN) {
        if (b->spins < b->limit)
            b->spins++;
        hmpi_cpu_relax();
        return;
    }
    if (policy == HMPI_WAIT_PARK && slots && !b->no_park) {
        uint64_t now = hmpi_wait_now();
        if (!b->since) {
            b->since = now;
        } else if (now - b->since >= park_ns) {
            /* Announce, and return: the caller checks its condition once more before
             * the first nap (park.h). */
            b->bell = hmpi_park_announce(hmpi_wait_node, slot(slot_me), slot_me);
            b->nap_us = NAP_FIRST_US;
            return;
        }
    }
    sched_yield();
}
