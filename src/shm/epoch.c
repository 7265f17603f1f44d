/* epoch.c: the waits of the epoch halves and the meeting line (epoch.h, meet.h) past a
 * first failed load, out of line so that the inline fast paths stay small. No MPI in
 * here: the progress of anything else is wait.h's hook. */
#include "epoch.h"

void hmpi_epoch_wait_word(const _Atomic uint64_t *w, uint64_t want, hmpi_wait_family_t f)
{
    hmpi_backoff_t b = {0};
    while (atomic_load_explicit(w, memory_order_acquire) < want)
        hmpi_wait_step(&b, 0); /* local peers' messages still move (one may be blocked in
                                * a synchronous send to us before it enters this) */
    hmpi_wait_end(&b, f);
}

void hmpi_epoch_wait_done(hmpi_epoch_t *ep, uint64_t e, hmpi_wait_family_t f)
{
    for (int i = 0; i < ep->n; i++) {
        if (i == ep->me || hmpi_epoch_finished(ep, i, e))
            continue;
        hmpi_backoff_t b = {0};
        while (!hmpi_epoch_finished(ep, i, e))
            hmpi_wait_step(&b, 0);
        hmpi_wait_end(&b, f);
    }
    if (ep->seen_done < e)
        ep->seen_done = e;
    HMPI_ASSERT_INTERNAL(hmpi_epoch_is_valid(ep)); /* e was one it began */
}
