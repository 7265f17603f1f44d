/* bsend.c: the buffers of buffered sends: MPI_Buffer_attach/detach, and MPI 4.1's buffers
 * of a communicator or a session, MPI_BUFFER_AUTOMATIC and the flushes. The accounting of
 * buffered sends to local peers, which the attached buffers bound, is p2p/bsend.c's.
 *
 * HMPI copies a buffered message to a local peer into the shared heap at once, so a buffer
 * only bounds how much may be outstanding. MPI 4.1 gives a send the buffer of its
 * communicator, else of its session, else the process's; HMPI counts them all as one room
 * (unbounded while one is MPI_BUFFER_AUTOMATIC): a send that fits in the sum but not in its
 * own buffer is taken where the standard says MPI_ERR_BUFFER. The check is lost, never a
 * correct program's send: passed through, a communicator's buffer left HMPI no room at all,
 * and a local MPI_Bsend on it failed (measured over MPICH 4.2.1). A flush or a detach waits
 * for the MPI below's messages (its call), not for HMPI's local ones: those left the
 * buffer as they were copied into the heap (p2p/bsend.c). */
#include "../core/errors.h"
#include "../p2p/p2p.h"

/* The room a buffer at buffer of size bytes gives (p2p/bsend.c). */
static size_t room(const void *buffer, size_t size)
{
#ifdef MPI_BUFFER_AUTOMATIC
    if (buffer == MPI_BUFFER_AUTOMATIC)
        return HMPI_BSEND_AUTOMATIC;
#endif
    return size;
}

/* After the MPI below attached buffer (size bytes), or detached the buffer whose address it
 * wrote at buffer_addr: the room follows. Returns err. */
static int attached(int err, const void *buffer, size_t size)
{
    if (err == MPI_SUCCESS)
        hmpi_p2p_buffer(room(buffer, size), 1);
    return err;
}

static int detached(int err, const void *buffer_addr, size_t size)
{
    if (err == MPI_SUCCESS)
        hmpi_p2p_buffer(room(*(void *const *)buffer_addr, size), -1);
    return err;
}

int MPI_Buffer_attach(void *buffer, int size)
{
    HMPI_ENTER("MPI_Buffer_attach");
    return attached(PMPI_Buffer_attach(buffer, size), buffer, (size_t)size);
}
HMPI_PMPI(Buffer_attach)

int MPI_Buffer_detach(void *buffer_addr, int *size)
{
    HMPI_ENTER("MPI_Buffer_detach");
    int err = PMPI_Buffer_detach(buffer_addr, size);
    return detached(err, buffer_addr, err ? 0 : (size_t)*size);
}
HMPI_PMPI(Buffer_detach)

#if MPI_VERSION >= 4
int MPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    HMPI_ENTER("MPI_Buffer_attach_c");
    return attached(PMPI_Buffer_attach_c(buffer, size), buffer, (size_t)size);
}
HMPI_PMPI(Buffer_attach_c)

int MPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    HMPI_ENTER("MPI_Buffer_detach_c");
    int err = PMPI_Buffer_detach_c(buffer_addr, size);
    return detached(err, buffer_addr, err ? 0 : (size_t)*size);
}
HMPI_PMPI(Buffer_detach_c)
#endif

#if HMPI_MPI41_CALLS
/* ---- MPI 4.1: buffers of communicators and sessions, flushes ------------------------- */

int MPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size)
{
    HMPI_ENTER("MPI_Comm_attach_buffer");
    return attached(PMPI_Comm_attach_buffer(comm, buffer, size), buffer, (size_t)size);
}
HMPI_PMPI(Comm_attach_buffer)

int MPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size)
{
    HMPI_ENTER("MPI_Comm_attach_buffer_c");
    return attached(PMPI_Comm_attach_buffer_c(comm, buffer, size), buffer, (size_t)size);
}
HMPI_PMPI(Comm_attach_buffer_c)

int MPI_Session_attach_buffer(MPI_Session session, void *buffer, int size)
{
    HMPI_ENTER("MPI_Session_attach_buffer");
    return attached(PMPI_Session_attach_buffer(session, buffer, size), buffer, (size_t)size);
}
HMPI_PMPI(Session_attach_buffer)

int MPI_Session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size)
{
    HMPI_ENTER("MPI_Session_attach_buffer_c");
    return attached(PMPI_Session_attach_buffer_c(session, buffer, size), buffer, (size_t)size);
}
HMPI_PMPI(Session_attach_buffer_c)

int MPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    HMPI_ENTER("MPI_Comm_detach_buffer");
    int err = PMPI_Comm_detach_buffer(comm, buffer_addr, size);
    return detached(err, buffer_addr, err ? 0 : (size_t)*size);
}
HMPI_PMPI(Comm_detach_buffer)

int MPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    HMPI_ENTER("MPI_Comm_detach_buffer_c");
    int err = PMPI_Comm_detach_buffer_c(comm, buffer_addr, size);
    return detached(err, buffer_addr, err ? 0 : (size_t)*size);
}
HMPI_PMPI(Comm_detach_buffer_c)

int MPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size)
{
    HMPI_ENTER("MPI_Session_detach_buffer");
    int err = PMPI_Session_detach_buffer(session, buffer_addr, size);
    return detached(err, buffer_addr, err ? 0 : (size_t)*size);
}
HMPI_PMPI(Session_detach_buffer)

int MPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    HMPI_ENTER("MPI_Session_detach_buffer_c");
    int err = PMPI_Session_detach_buffer_c(session, buffer_addr, size);
    return detached(err, buffer_addr, err ? 0 : (size_t)*size);
}
HMPI_PMPI(Session_detach_buffer_c)

int MPI_Buffer_flush(void)
{
    HMPI_ENTER("MPI_Buffer_flush");
    int err = PMPI_Buffer_flush();
    hmpi_p2p_buffer(0, 0);
    return err;
}
HMPI_PMPI(Buffer_flush)

int MPI_Comm_flush_buffer(MPI_Comm comm)
{
    HMPI_ENTER("MPI_Comm_flush_buffer");
    int err = PMPI_Comm_flush_buffer(comm);
    hmpi_p2p_buffer(0, 0);
    return err;
}
HMPI_PMPI(Comm_flush_buffer)

int MPI_Session_flush_buffer(MPI_Session session)
{
    HMPI_ENTER("MPI_Session_flush_buffer");
    int err = PMPI_Session_flush_buffer(session);
    hmpi_p2p_buffer(0, 0);
    return err;
}
HMPI_PMPI(Session_flush_buffer)

/* A nonblocking flush: HMPI's local messages left the buffers already (a new
 * generation), the MPI below's request stands for its own. */
static int iflushed(int err)
{
    hmpi_p2p_buffer(0, 0);
    return err;
}

int MPI_Buffer_iflush(MPI_Request *request)
{
    HMPI_ENTER("MPI_Buffer_iflush");
    return iflushed(PMPI_Buffer_iflush(request));
}
HMPI_PMPI(Buffer_iflush)

int MPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    HMPI_ENTER("MPI_Comm_iflush_buffer");
    return iflushed(PMPI_Comm_iflush_buffer(comm, request));
}
HMPI_PMPI(Comm_iflush_buffer)

int MPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    HMPI_ENTER("MPI_Session_iflush_buffer");
    return iflushed(PMPI_Session_iflush_buffer(session, request));
}
HMPI_PMPI(Session_iflush_buffer)
#endif
