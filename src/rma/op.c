/* op.c: predefined reduction ops applied by HMPI itself for the accumulate family, with
 * the reduction kernels (src/core/op.c: every predefined op on the basic types it
 * knows). Elements that are not aligned to their size (a window with displacement unit
 * 1) and every other op/type pair go to MPI_Reduce_local of the MPI below (acc.c). No
 * locking in here: the caller holds the target's accumulate lock. */
#include "rma.h"
#include "../core/op.h"

int hmpi_rma_op_named(MPI_Datatype type, size_t *size_p)
{
    int size = hmpi_op_basic_size(type);
    *size_p = (size_t)size;
    return size > 0;
}

int hmpi_rma_op_apply(MPI_Op op, MPI_Datatype elem, const void *in, void *inout, size_t n)
{
    int size = 0;
    hmpi_op_kernel_t k = hmpi_op_kernel_size(op, elem, &size);
    if (!k || ((uintptr_t)in | (uintptr_t)inout) % (uintptr_t)size != 0)
        return 0;
    k(inout, in, inout, n); /* inout[i] = in[i] op inout[i] */
    return 1;
}
