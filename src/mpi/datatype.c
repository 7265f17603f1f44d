/* datatype.c: datatype queries for the p2p fast path, cached per handle. A handle's
 * layout never changes while it lives; MPI_Type_free drops its entry, since the MPI
 * below may hand the same handle to the next new type. */
#include "datatype.h"

#include "../p2p/p2p.h"

#include <stdint.h>

enum { CACHE_SIZE = 128 };

typedef struct {
    MPI_Datatype handle;
    int valid;
    size_t size;
    MPI_Aint lb, extent, textent;
} entry_t;

static entry_t cache[CACHE_SIZE];

static entry_t *slot(MPI_Datatype type)
{
    uintptr_t v = (uintptr_t)type;
    return &cache[(v ^ (v >> 7) ^ (v >> 13)) % CACHE_SIZE];
}

int hmpi_type_get(MPI_Datatype type, int count, hmpi_type_t *t)
{
    if (type == MPI_DATATYPE_NULL)
        return MPI_ERR_TYPE;
    entry_t fresh, *e = hmpi_p2p_threaded ? &fresh : slot(type); /* no cache across threads */
    if (e == &fresh || !e->valid || e->handle != type) {
        int size;
        MPI_Aint lb, extent, tlb, textent;
        if (PMPI_Type_size(type, &size) != MPI_SUCCESS ||
            PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
            PMPI_Type_get_true_extent(type, &tlb, &textent) != MPI_SUCCESS)
            return MPI_ERR_TYPE;
        *e = (entry_t){type, 1, (size_t)size, tlb, extent, textent};
    }
    t->size = e->size;
    t->lb = e->lb;
    t->contig = (MPI_Aint)e->size == e->textent && (count <= 1 || e->extent == (MPI_Aint)e->size);
    return MPI_SUCCESS;
}

int MPI_Type_free(MPI_Datatype *type)
{
    if (type && !hmpi_p2p_threaded) {
        entry_t *e = slot(*type);
        if (e->handle == *type)
            e->valid = 0;
    }
    return PMPI_Type_free(type);
}
