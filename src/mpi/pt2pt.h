/* pt2pt.h: helpers shared by the point-to-point entry points (mpi/). */
#ifndef HMPI_MPI_PT2PT_H
#define HMPI_MPI_PT2PT_H

#include "../common/hidden.h"

#include "../core/check.h"
#include "../core/comm.h"
#include "../core/datatype.h"

extern HMPI_HIDDEN int hmpi_tag_ub;

/* Checks the arguments of a send or a receive on c (buffer, count, datatype, rank, tag)
 * and fills *t; returns MPI_SUCCESS or the class, described for hmpi_raise_in. The full
 * checks: pt2pt.c's entry points try the common case inline first. */
int hmpi_check_send(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type, int dest,
                    int tag, hmpi_layout_t *t);
int hmpi_check_recv(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type, int source,
                    int tag, hmpi_layout_t *t);

#endif
