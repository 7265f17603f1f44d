/* errors.h: the one place where HMPI raises an MPI error: through the error handler of
 * the object involved (the communicator, or MPI_COMM_WORLD when there is none), as the
 * standard says. Returns the code, for handlers that return. */
#ifndef HMPI_MPI_ERRORS_H
#define HMPI_MPI_ERRORS_H

#include <mpi.h>

static inline int hmpi_raise(MPI_Comm comm, int code)
{
    if (code != MPI_SUCCESS)
        PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code);
    return code;
}

#endif
