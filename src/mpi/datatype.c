/* datatype.c: datatype queries for the p2p fast path. */
#include "datatype.h"

int hmpi_type_get(MPI_Datatype type, int count, hmpi_type_t *t)
{
    if (type == MPI_DATATYPE_NULL)
        return MPI_ERR_TYPE;
    int size;
    MPI_Aint lb, extent, tlb, textent;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &tlb, &textent) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    t->size = (size_t)size;
    t->lb = tlb;
    t->contig = (MPI_Aint)size == textent && (count <= 1 || extent == (MPI_Aint)size);
    return MPI_SUCCESS;
}
