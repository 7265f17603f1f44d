/* session.h: the sessions the program opened and the groups made from their psets
 * (session.c), for the checks of the session entry points and of the constructors from
 * groups (mpi/comm.c). MPI 4 only; every function here is cheap and takes a lock. */
#ifndef HMPI_MPI_SESSION_H
#define HMPI_MPI_SESSION_H

#include <mpi.h>

#if HMPI_MPI4_CALLS
/* The program's session s was opened (by the MPI below: s is valid) or finalized. */
void hmpi_session_opened(MPI_Session s);
void hmpi_session_closed(MPI_Session s);
/* s, or MPI_SESSION_NULL when the program holds no such session open (a finalized
 * one's handle): the MPI below then refuses it with MPI_ERR_SESSION through its handler
 * for errors of no object, where it might have read a freed object. s itself under
 * HMPI_DISABLE=1. */
MPI_Session hmpi_session_checked(MPI_Session s);
/* MPI_SUCCESS, or MPI_ERR_GROUP described for hmpi_err_what: g is MPI_GROUP_NULL, or a
 * group made from a pset of a session finalized since. */
int hmpi_session_group_check(MPI_Group g);
#endif

#endif
