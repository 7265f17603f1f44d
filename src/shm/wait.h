/* wait.h: how every HMPI wait loop waits. Spin briefly (the peer is usually running on
 * another core), then yield the core, because tests run 8 ranks on 2 cores and the
 * rank we wait for may need our core. No MPI in here. */
#ifndef HMPI_SHM_WAIT_H
#define HMPI_SHM_WAIT_H

#include <sched.h>

typedef struct {
    unsigned spins;
} hmpi_backoff_t;

enum { HMPI_SPIN_LIMIT = 256 };

static inline void hmpi_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* One step of waiting: pause while young, then give the core away. */
static inline void hmpi_backoff(hmpi_backoff_t *b)
{
    if (b->spins < HMPI_SPIN_LIMIT) {
        b->spins++;
        hmpi_cpu_relax();
    } else {
        sched_yield();
    }
}

#endif
