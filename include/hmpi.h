/* hmpi.h: HMPI's extensions to MPI. Include after (or instead of) mpi.h.
 * Everything else HMPI does is behind the standard MPI calls. */
#ifndef HMPI_H
#define HMPI_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default) /* the API of a library built with hidden visibility */
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

/* ---- OPI: the Ownership Passing Interface (docs/opi.md) ---------------------------
 * Buffers come from OPI_Alloc (or a take) and pass between ranks: to a rank of the same
 * node only the pointer travels, the data is never copied; to another node (or with
 * HMPI_DISABLE=1) the contents are sent and the taker gets a buffer of its own. Either
 * way the program is the same. OPI_Give and OPI_Free set *ptr to NULL; a buffer given
 * away is the taker's, which frees it (into its own pool) or gives it on.
 * Errors go through the communicator's error handler (MPI_COMM_WORLD's for OPI_Alloc,
 * OPI_Free, OPI_Pool_query); their classes: MPI_ERR_ARG (ptr == NULL, length too large),
 * MPI_ERR_BUFFER (*ptr NULL, not an OPI buffer, already freed, given away),
 * MPI_ERR_COUNT (count < 0, or count elements do not fit in the buffer), MPI_ERR_COMM
 * (communicator not enabled), MPI_ERR_NO_MEM, and the usual RANK/TAG/TYPE/TRUNCATE.
 * MPI_COMM_WORLD and MPI_COMM_SELF are always enabled; any other communicator needs
 * OPI_Comm_enable first. Requests complete with MPI_Wait/MPI_Test and friends, mixed
 * freely with other requests; they cannot be cancelled. */

/* A buffer of at least len bytes (64-byte aligned) into *ptr. */
int OPI_Alloc(void **ptr, size_t len);
/* Releases *ptr (into this rank's pool) and sets *ptr to NULL. */
int OPI_Free(void **ptr);
/* Passes the buffer *ptr, holding count elements of datatype, to rank; *ptr = NULL. */
int OPI_Give(void **ptr, int count, MPI_Datatype datatype, int rank, int tag, MPI_Comm comm);
/* Takes a buffer given by rank (or MPI_ANY_SOURCE) with tag (or MPI_ANY_TAG) into *ptr.
 * The status holds source, tag and the count given. */
int OPI_Take(void **ptr, int count, MPI_Datatype datatype, int rank, int tag, MPI_Comm comm,
             MPI_Status *status);
/* Nonblocking forms. *ptr of OPI_Itake is valid once the request completes. */
int OPI_Igive(void **ptr, int count, MPI_Datatype datatype, int rank, int tag, MPI_Comm comm,
              MPI_Request *request);
int OPI_Itake(void **ptr, int count, MPI_Datatype datatype, int rank, int tag, MPI_Comm comm,
              MPI_Request *request);
/* Makes comm usable by OPI (collective over comm; a second call does nothing). */
int OPI_Comm_enable(MPI_Comm comm);

/* This rank's OPI buffers, for tests and tuning (HMPI_OPI_POOL_MAX, _DEPTH). */
typedef struct {
    unsigned long long cached_blocks, cached_bytes; /* free in this rank's pool now */
    unsigned long long owned_blocks, owned_bytes;   /* from this rank's heap, alive anywhere */
    unsigned long long allocs;      /* buffers handed out (allocs and remote takes) */
    unsigned long long pool_hits;   /* of which from the pool */
    unsigned long long heap_allocs; /* from the heap */
    unsigned long long heap_frees;  /* freed to this rank's heap */
    unsigned long long returned;    /* other ranks' buffers sent back to their owner */
} OPI_Pool_info;
int OPI_Pool_query(OPI_Pool_info *info);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
