/* wait.h: how every HMPI wait loop waits. Spin briefly (the peer is usually running on
 * another core), then yield the core, because tests run 8 ranks on 2 cores and the
 * rank we wait for may need our core. No MPI in here. */
#ifndef HMPI_SHM_WAIT_H
#define HMPI_SHM_WAIT_H

#include <sched.h>

typedef struct {
    unsigned spins;
    unsigned limit; /* hmpi_spin_limit, read once the wait outlasts HMPI_SPIN_EARLY */
} hmpi_backoff_t;

/* Pause steps before a wait yields its core: 256 while every rank of the
 * host has a core of its own; HMPI_SPIN_EARLY when the ranks outnumber the cores,
 * where a spinning waiter only delays the rank it waits for (node.c sets
 * hmpi_spin_limit at MPI_Init; HMPI_SPIN). The first HMPI_SPIN_EARLY steps compare
 * with a constant: most waits end there without touching the global (reading it on
 * every step cost 30% on a 2-rank 256 KiB allreduce, docs/performance.md). */
enum { HMPI_SPIN_EARLY = 16, HMPI_SPIN_DEDICATED = 256 };
extern unsigned hmpi_spin_limit;

static inline void hmpi_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Past spinning: each further step gives the core away. */
static inline int hmpi_backoff_yielding(const hmpi_backoff_t *b)
{
    return b->limit && b->spins >= b->limit; /* limit is read at HMPI_SPIN_EARLY steps */
}

void hmpi_backoff_slow(hmpi_backoff_t *b);

/* One step of waiting: pause while young, then give the core away. */
static inline void hmpi_backoff(hmpi_backoff_t *b)
{
    if (b->spins < HMPI_SPIN_EARLY) {
        b->spins++;
        hmpi_cpu_relax();
    } else {
        hmpi_backoff_slow(b);
    }
}

#endif
