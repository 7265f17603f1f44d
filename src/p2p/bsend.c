/* bsend.c: the accounting of buffered sends to local peers (the entry points are
 * mpi/bsend.c). HMPI copies a buffered message to the shared heap at once (it never
 * waits for the match), so the attached buffers only bound how much may be
 * outstanding: a send that would not fit gets MPI_ERR_BUFFER, as the standard
 * requires. The engine gives room back as the messages are received. */
#include "p2p.h"

static size_t attached; /* bytes of the attached buffers (0: none) */
static int automatic;   /* buffers attached as MPI_BUFFER_AUTOMATIC: no bound */
static size_t used;     /* bytes held by buffered local messages not yet received */

int hmpi_bsend_reserve(const hmpi_layout_t *t)
{
    size_t need = t->size + MPI_BSEND_OVERHEAD;
    hmpi_p2p_lock();
    if (used + need > attached && !automatic)
        hmpi_p2p_progress(); /* delivered messages give their room back */
    int ok = used + need <= attached || automatic > 0;
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

void hmpi_bsend_attach(size_t size, int sign)
{
    hmpi_p2p_lock();
    if (size == HMPI_BSEND_AUTOMATIC)
        automatic += sign;
    else
        attached = sign > 0 ? attached + size : attached - size;
    hmpi_p2p_unlock();
}

int hmpi_bsend_pending(void) { return used > 0; }

/* Every buffered message must be delivered before the buffer goes back. */
void hmpi_bsend_drain(void)
{
    hmpi_backoff_t b = {0};
    hmpi_p2p_lock();
    while (used > 0) {
        hmpi_p2p_progress();
        hmpi_p2p_unlock();
        hmpi_backoff(&b);
        hmpi_p2p_lock();
    }
    hmpi_p2p_unlock();
    hmpi_wait_end(&b, HMPI_WAIT_SEND);
}
