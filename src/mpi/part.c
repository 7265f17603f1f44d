/* part.c: the partitioned entry points (MPI-4.1 §4): MPI_Psend_init, MPI_Precv_init,
 * MPI_Pready, MPI_Pready_range, MPI_Pready_list and MPI_Parrived. Each checks what the
 * standard asks of its arguments that the request need not be looked at for, and makes
 * one call of p2p/part.c, which checks the rest against the request (its side, whether
 * it is active, the partitions named) and raises those errors itself on the request's
 * communicator. Defined where
 * the MPI below has these calls (core/below.h: HMPI_MPI4_CALLS). */
#include "../core/check.h"
#include "../core/comm.h"
#include "../core/datatype.h"
#include "../p2p/p2p.h"
#include "pt2pt.h"

#include <limits.h>
#include <stdint.h>

#if HMPI_MPI4_CALLS

/* The arguments of MPI_Psend_init (send) or MPI_Precv_init on c: partitions, count,
 * datatype (*t: the layout of one element), buffer, rank, tag and request. MPI-4.1
 * §4.2.2: partitions must be positive, and neither wildcard is allowed. */
static int check_init(const hmpi_comm_t *c, const void *buf, int partitions, MPI_Count count,
                      MPI_Datatype type, int peer, int tag, int send, const MPI_Request *req,
                      hmpi_layout_t *t)
{
    if (partitions <= 0)
        return hmpi_err_what(MPI_ERR_ARG, "partitions %d is not positive", partitions);
    if (count < 0)
        return hmpi_err_what(MPI_ERR_COUNT, "count %lld is negative", (long long)count);
    if (!hmpi_check_null_empty(type, count, t)) {
        int err = hmpi_layout_get(type, 1, t);
        if (err)
            return err;
    }
    int err = hmpi_check_buf_only(buf, count ? 1 : 0, type, "buf");
    if (err)
        return err;
    if (t->size && (uint64_t)count > SIZE_MAX / t->size / (uint64_t)partitions)
        return hmpi_err_what(MPI_ERR_COUNT, "%d partitions of %lld elements do not fit in memory",
                             partitions, (long long)count);
    /* A partition with holes moves through MPI_Pack/MPI_Unpack, whose sizes are ints. */
    if ((!t->contig || t->extent != (MPI_Aint)t->size) &&
        (count > INT_MAX || t->size * (size_t)count > INT_MAX))
        return hmpi_err_what(MPI_ERR_COUNT,
                             "a partition of %lld non-contiguous elements: more than MPI_Pack "
                             "can pack (2 GiB)",
                             (long long)count);
    if (tag < 0 || tag > hmpi_tag_ub)
        return hmpi_err_what(
            MPI_ERR_TAG, "tag %d is outside 0..%d (MPI_TAG_UB)%s", tag, hmpi_tag_ub,
            tag == MPI_ANY_TAG ? ": no wildcard in partitioned communication" : "");
    if (!send && peer == MPI_ANY_SOURCE)
        return hmpi_err_what(MPI_ERR_RANK,
                             "source is MPI_ANY_SOURCE: no wildcard in partitioned communication");
    err = hmpi_check_rank(MPI_ERR_RANK, peer, c->size, MPI_PROC_NULL, MPI_PROC_NULL,
                          send ? "dest" : "source");
    if (!err && !req)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    return err;
}

static int init_any(const void *buf, int partitions, MPI_Count count, MPI_Datatype type, int peer,
                    int tag, MPI_Comm comm, MPI_Info info, MPI_Request *req, int send,
                    const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (c && c->inter) /* an intercommunicator's: the MPI below's, on both sides alike */
        c = NULL;
    if (!c && hmpi_check_comm_null(comm, fn))
        return MPI_ERR_COMM;
    hmpi_p2p_args_t a = {c, comm, (void *)buf, 0, type, {0}, peer, tag, HMPI_MODE_STANDARD};
    int err =
        c ? check_init(c, buf, partitions, count, type, peer, tag, send, req, &a.t) : MPI_SUCCESS;
    if (err)
        return hmpi_raise_in(comm, err, fn);
    return hmpi_p2p_part_init(&a, send, partitions, count, info, req, fn);
}

int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init_any(buf, partitions, count, datatype, dest, tag, comm, info, request, 1,
                    "MPI_Psend_init");
}
HMPI_PMPI(Psend_init)

int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                   int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init_any(buf, partitions, count, datatype, source, tag, comm, info, request, 0,
                    "MPI_Precv_init");
}
HMPI_PMPI(Precv_init)

int MPI_Pready(int partition, MPI_Request request)
{
    HMPI_ENTER("MPI_Pready");
    return hmpi_p2p_pready(request, HMPI_P2P_PREADY_ONE, partition, partition, NULL, "MPI_Pready");
}
HMPI_PMPI(Pready)

int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    HMPI_ENTER("MPI_Pready_range");
    return hmpi_p2p_pready(request, HMPI_P2P_PREADY_RANGE, partition_low, partition_high, NULL,
                           "MPI_Pready_range");
}
HMPI_PMPI(Pready_range)

int MPI_Pready_list(int length, HMPI_PREADY_LIST_CONST int array_of_partitions[],
                    MPI_Request request)
{
    HMPI_ENTER("MPI_Pready_list");
    return hmpi_p2p_pready(request, HMPI_P2P_PREADY_LIST, 0, length, array_of_partitions,
                           "MPI_Pready_list");
}
HMPI_PMPI(Pready_list)

int MPI_Parrived(MPI_Request request, int partition, int *flag)
{
    HMPI_ENTER("MPI_Parrived");
    return hmpi_p2p_parrived(request, partition, flag, "MPI_Parrived");
}
HMPI_PMPI(Parrived)

#endif
