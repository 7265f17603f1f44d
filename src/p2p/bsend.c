/* bsend.c: the accounting of buffered sends to local peers (the entry points are
 * mpi/bsend.c). HMPI copies a buffered message to a local peer into the shared heap at
 * once (it never waits for the match), and never uses the attached buffers themselves:
 * they only bound how much may be outstanding, so a send that would not fit gets
 * MPI_ERR_BUFFER, as the standard requires. The engine gives room back as the messages are
 * received. A message copied into the heap has left the buffer in the standard's sense
 * (its bytes are out of the program's hands), so a detach or a flush waits for none of
 * them: it begins a new generation, whose room nothing outstanding counts against
 * (waiting for their receivers hung a detach followed by a barrier that the receiver
 * reached before its receive). All buffers count as one room (MPI 4.1's communicators'
 * and sessions' too: mpi/bsend.c says why). Engine lock. */
#include "engine.h"

static size_t attached;        /* bytes of the attached buffers (0: none) */
static int automatic;          /* buffers attached as MPI_BUFFER_AUTOMATIC: no bound */
static size_t used;            /* bytes held by this generation's messages not yet received */
static uint8_t generation = 1; /* of the messages reserved now (never 0) */

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

uint8_t hmpi_bsend_generation(void) { return generation; }

void hmpi_bsend_release(size_t bytes, uint8_t gen)
{
    if (gen == generation)
        used -= bytes + MPI_BSEND_OVERHEAD;
}

void hmpi_p2p_buffer(size_t size, int sign)
{
    hmpi_p2p_lock();
    if (size == HMPI_BSEND_AUTOMATIC)
        automatic += sign;
    else if (sign)
        attached = sign > 0 ? attached + size : attached - size;
    if (sign <= 0) { /* a detach or a flush: what is outstanding left the buffers */
        generation = (uint8_t)(generation % 255 + 1);
        used = 0;
    }
    hmpi_p2p_unlock();
}
