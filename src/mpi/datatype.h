/* datatype.h: what p2p needs to know of a datatype: its packed size and whether count
 * elements are one contiguous run of bytes (then they move by memcpy, otherwise by
 * MPI_Pack/MPI_Unpack of the MPI below). */
#ifndef HMPI_MPI_DATATYPE_H
#define HMPI_MPI_DATATYPE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t size;     /* bytes of one element's data (MPI_Type_size) */
    MPI_Aint lb;     /* true lower bound: data of element 0 starts at buf + lb */
    MPI_Aint extent; /* distance between consecutive elements */
    int contig;      /* count elements are size*count bytes at buf + lb */
} hmpi_type_t;

/* Fills *t for count elements of type. Returns MPI_SUCCESS or MPI_ERR_TYPE. */
int hmpi_type_get(MPI_Datatype type, int count, hmpi_type_t *t);

/* The cache behind hmpi_type_get (datatype.c), one entry per handle, committed types
 * only; read directly by the short ways of MPI_Send and MPI_Recv (pt2pt.c). */
typedef struct {
    MPI_Datatype handle;
    int valid;
    int dense;          /* one element's bytes lie in increasing order, without holes */
    size_t size;
    MPI_Aint lb, extent, textent;
} hmpi_type_entry_t;

enum { HMPI_TYPE_CACHE_SIZE = 128 };
extern hmpi_type_entry_t hmpi_type_cache[HMPI_TYPE_CACHE_SIZE];

static inline hmpi_type_entry_t *hmpi_type_slot(MPI_Datatype type)
{
    uintptr_t v = (uintptr_t)type;
    return &hmpi_type_cache[(v ^ (v >> 7) ^ (v >> 13)) % HMPI_TYPE_CACHE_SIZE];
}

#endif
