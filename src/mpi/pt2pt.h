/* pt2pt.h: helpers shared by the point-to-point entry points (mpi/). */
#ifndef HMPI_MPI_PT2PT_H
#define HMPI_MPI_PT2PT_H

#include "../common/hidden.h"

#include "../core/check.h"
#include "../core/comm.h"
#include "../core/datatype.h"

extern HMPI_HIDDEN int hmpi_tag_ub;

/* Zero elements of MPI_DATATYPE_NULL: MPICH takes them in point-to-point calls (its own
 * suite sends and receives such messages: part/nonblocking_pready), Open MPI refuses them
 * (MPI_ERR_TYPE; 4.1.4 checked). HMPI takes what the MPI below takes: then 1, and *t is
 * the layout of nothing. */
static inline int hmpi_check_null_empty(MPI_Datatype type, long long count, hmpi_layout_t *t)
{
#ifdef MPICH_VERSION
    if (type == MPI_DATATYPE_NULL && count == 0) {
        *t = (hmpi_layout_t){0, 0, 0, 0, 1, 0};
        return 1;
    }
#else
    (void)type, (void)count, (void)t;
#endif
    return 0;
}

/* Checks the arguments of a send or a receive on c (buffer, count, datatype, rank, tag)
 * and fills *t; returns MPI_SUCCESS or the class, described for hmpi_raise_in. The full
 * checks: pt2pt.c's entry points try the common case inline first. */
int hmpi_check_send(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type, int dest,
                    int tag, hmpi_layout_t *t);
int hmpi_check_recv(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type, int source,
                    int tag, hmpi_layout_t *t);

#endif
