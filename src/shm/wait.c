/* wait.c: the part of a wait past its first HMPI_SPIN_EARLY steps (wait.h), out of
 * line so that the waits' inline code stays small, and the clock of the wait counters.
 * No MPI in here. */
#include "wait.h"

#include <time.h>

unsigned hmpi_spin_limit = HMPI_SPIN_DEDICATED;
hmpi_wait_progress_fn hmpi_wait_progress;
uint32_t hmpi_wait_step16;

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
        b->limit = hmpi_spin_limit;
        if (hmpi_stats_counting())
            b->t0 = hmpi_wait_now();
    }
    if (b->spins < b->limit) {
        b->spins++;
        hmpi_cpu_relax();
    } else {
        sched_yield();
    }
}
