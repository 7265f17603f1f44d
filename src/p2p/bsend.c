/* bsend.c: the accounting of buffered sends to local peers (the entry points are
 * mpi/bsend.c). HMPI copies a buffered message to the shared heap at once (it never
 * waits for the match), so the attached buffer only bounds how much may be
 * outstanding: a send that would not fit gets MPI_ERR_BUFFER, as the standard
 * requires. The engine gives room back as the messages are received. */
#include "engine.h"

static size_t attached; /* bytes of the attached buffer (0: none) */
static size_t used;     /* bytes held by buffered local messages not yet received */

int hmpi_bsend_reserve(const hmpi_layout_t *t)
{
    size_t need = t->size + MPI_BSEND_OVERHEAD;
    hmpi_p2p_lock();
    if (used + need > attached)
        hmpi_p2p_progress(); /* delivered messages give their room back */
    int ok = used + need <= attached;
    if (ok)
        used += need;
    hmpi_p2p_unlock();
    return ok ? MPI_SUCCESS : MPI_ERR_BUFFER;
}

/* Called by the engine when a buffered message has been received (lock held). */
void hmpi_bsend_release(size_t bytes)
{
    used -= bytes + MPI_BSEND_OVERHEAD;
}

/* MPI_Buffer_attach (size) and detach (0, after drain: every buffered message must be
 * delivered before the buffer goes back). */
void hmpi_p2p_buffer(size_t size, int drain)
{
    hmpi_backoff_t b = {0};
    uint64_t since = 0;
    hmpi_p2p_lock();
    while (drain && used > 0) {
        hmpi_p2p_progress();
        hmpi_p2p_wait_step(&b, &since);
    }
    attached = size;
    hmpi_p2p_unlock();
    hmpi_wait_end(&b, HMPI_WAIT_SEND);
}
