/* hmpi.h: HMPI's extensions to MPI. Include after (or instead of) mpi.h.
 * Everything else HMPI does is behind the standard MPI calls. */
#ifndef HMPI_H
#define HMPI_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HMPI_VERSION_MAJOR 0
#define HMPI_VERSION_MINOR 1

/* 1 when ptr lies in the node's shared heap (readable by every local rank at the
 * same address), else 0. A few instructions; callable at any time. */
int HMPI_Is_shared(const void *ptr);

/* 1 when HMPI accelerates this job (after MPI_Init, not disabled, region made). */
int HMPI_Active(void);

/* The local rank (on this rank's node) whose heap slice holds ptr, or -1. */
int HMPI_Owner(const void *ptr);

#ifdef __cplusplus
}
#endif
#endif
