/* wait.c: the part of a wait past its first HMPI_SPIN_EARLY steps (wait.h), out of
 * line so that the waits' inline code stays small. No MPI in here. */
#include "wait.h"

unsigned hmpi_spin_limit = HMPI_SPIN_DEDICATED;

void hmpi_backoff_slow(hmpi_backoff_t *b)
{
    if (!b->limit)
        b->limit = hmpi_spin_limit;
    if (b->spins < b->limit) {
        b->spins++;
        hmpi_cpu_relax();
    } else {
        sched_yield();
    }
}
