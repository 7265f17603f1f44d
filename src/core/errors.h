/* errors.h: the one way HMPI raises an MPI error: through the error handler of the
 * object involved (the communicator, the window), or MPI_COMM_WORLD's when there is
 * none (an invalid communicator, a request without one): that is what both MPICH and
 * Open MPI do for the calls HMPI defines, so a program sees the same handler with or
 * without HMPI. Under sessions alone (no MPI_Init) neither MPI_COMM_WORLD nor
 * MPI_COMM_SELF is valid, and an error of no object goes to the initial handler, which
 * ends the job as both MPIs do then. Under MPI_ERRORS_ARE_FATAL one line names the
 * function and the bad argument before the handler of the MPI below ends the job.
 *
 * A check that finds a bad argument describes it with hmpi_err_what() and returns the
 * class; the entry point raises it with its own name. Everything past the first branch
 * runs only after a call has failed: the success path costs a compare. */
#ifndef HMPI_CORE_ERRORS_H
#define HMPI_CORE_ERRORS_H

#include "../common/hidden.h"

#include <mpi.h>
#include <stddef.h>

/* Where the process is in MPI's life (mpi/init.c): MPI functions may be called only while
 * it is RUNNING. */
enum { HMPI_STATE_BEFORE, HMPI_STATE_RUNNING, HMPI_STATE_AFTER };
extern HMPI_HIDDEN int hmpi_mpi_state;
/* Sessions of MPI 4 (MPI_Session_init) not yet finalized: MPI runs while there is one,
 * with or without MPI_Init (mpi/init.c). */
extern HMPI_HIDDEN _Atomic int hmpi_mpi_sessions;
/* 1 from MPI_Init to MPI_Finalize (mpi/init.c): only then are MPI_COMM_WORLD and
 * MPI_COMM_SELF valid handles; under sessions alone they are not (MPI-4.1 §11.3). */
extern HMPI_HIDDEN int hmpi_mpi_world;

/* Records what is wrong with an argument (printf format), for the message a fatal
 * handler prints; returns code. */
int hmpi_err_what(int code, const char *fmt, ...) __attribute__((cold, format(printf, 2, 3)));

/* Raise code (not MPI_SUCCESS) in function fn (NULL: not known here). Return code. */
int hmpi_err_comm(MPI_Comm comm, int code, const char *fn) __attribute__((cold));
int hmpi_err_win(MPI_Win win, int code, const char *fn) __attribute__((cold));
#if HMPI_MPI4_CALLS
/* The same through session s's handler. MPICH 4.0 and 4.2 abort in
 * MPI_Session_call_errhandler with a predefined handler, MPI_ERRORS_RETURN included, so
 * that one returns code without the call and a fatal one says its line first. */
int hmpi_err_session(MPI_Session s, int code, const char *fn) __attribute__((cold));
#endif

/* The state is not RUNNING. A call before MPI_Init or after MPI_Finalize has no
 * handler to call (MPI-4's initial handler is ERRORS_ARE_FATAL): say so and end the
 * process. Returns only when the MPI below was started behind HMPI's back (a PMPI tool
 * whose MPI_Init calls PMPI_Init): HMPI then passes through, as it always did. */
void hmpi_err_state(const char *fn) __attribute__((cold));

static inline int hmpi_raise_in(MPI_Comm comm, int code, const char *fn)
{
    return code == MPI_SUCCESS ? code : hmpi_err_comm(comm, code, fn);
}

static inline int hmpi_raise(MPI_Comm comm, int code) { return hmpi_raise_in(comm, code, NULL); }

static inline int hmpi_raise_win(MPI_Win win, int code, const char *fn)
{
    return code == MPI_SUCCESS ? code : hmpi_err_win(win, code, fn);
}

/* First statement of every entry point: fn is the MPI name, as users know it. */
#define HMPI_ENTER(fn)                                                 \
    do {                                                               \
        if (__builtin_expect(hmpi_mpi_state != HMPI_STATE_RUNNING, 0)) \
            hmpi_err_state(fn);                                        \
    } while (0)

#endif
