/* op.h: the reduction kernels (op.c): HMPI's own loops for the predefined ops on the
 * basic datatypes, used by the collectives' reductions (coll/) and the accumulates
 * (rma/). Every other op/type pair goes to MPI_Reduce_local of the MPI below. */
#ifndef HMPI_CORE_OP_H
#define HMPI_CORE_OP_H

#include <mpi.h>
#include <stddef.h>

/* HMPI's loop for a predefined op on a basic datatype: out[i] = a[i] op b[i] for n
 * elements, out may be b. NULL when there is none (then MPI_Reduce_local). */
typedef void (*hmpi_op_kernel_t)(void *out, const void *a, const void *b, size_t n);
hmpi_op_kernel_t hmpi_op_kernel(MPI_Op op, MPI_Datatype type);
/* The same, and the type's size in *size_p when there is a loop. */
hmpi_op_kernel_t hmpi_op_kernel_size(MPI_Op op, MPI_Datatype type, int *size_p);
/* Bytes of a basic datatype HMPI knows by handle (extent = size, lb 0), else 0. */
int hmpi_op_basic_size(MPI_Datatype type);
/* 1 for the predefined ops HMPI has loops for (all commutative). */
int hmpi_op_builtin(MPI_Op op);
/* At MPI_Init (mpi/init.c): learns the basic datatypes' sizes from the MPI below. */
void hmpi_op_init(void);

#endif
