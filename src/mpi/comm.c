/* comm.c: every intercepted communicator constructor and destructor. Each blocking one
 * lets the members arrive first (hmpi_comm_arrive, or hmpi_comm_arrive_group for those
 * without a parent), calls the MPI below, and registers the new communicator under the
 * context its rank 0 hands out (core/context.c); MPI_Comm_idup learns its context from
 * the parent's rank 0 by a broadcast over the new communicator, under a polled request
 * of HMPI's. */
#include "../core/comm.h"
#include "../core/errors.h"
#include "../common/knobs.h"
#include "../node/node.h"
#include "../p2p/p2p.h"
#include "session.h"

#include <stdlib.h>
#include <string.h>

static int registered(int rc, MPI_Comm *c)
{
    if (rc == MPI_SUCCESS && c && *c != MPI_COMM_NULL)
        hmpi_comm_register(*c);
    return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_dup");
    return hmpi_comm_dup(comm, newcomm);
}
HMPI_PMPI(Comm_dup)

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_dup_with_info");
    hmpi_comm_arrive(comm);
    return registered(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}
HMPI_PMPI(Comm_dup_with_info)

/* ---- nonblocking constructors ---------------------------------------------------- */

/* A pending MPI_Comm_idup: the MPI below's duplication, started in the call, then the
 * broadcast of the context over the new communicator, which nobody else uses before
 * the request completes (a broadcast over the parent would join the parent's own
 * sequence of nonblocking collectives at a point that differs between members: Open
 * MPI's idup issues its later rounds from its progress). The request (HMPI_REQ_POLL)
 * completes when both have, and only then does the new communicator get its state. */
typedef struct {
    MPI_Comm newcomm;  /* the MPI below's handle, handed to the program at once */
    MPI_Request dup;   /* the MPI below's nonblocking duplication */
    MPI_Request bcast; /* ctx from rank 0, once dup is complete */
    int started;       /* bcast was started */
    uint32_t ctx;      /* 0: not accelerated */
} idup_t;

/* Poll function of an idup's request (engine lock held): 1 once complete. */
static int idup_poll(void *arg, MPI_Status *status)
{
    idup_t *d = arg;
    int flag = 1, err = MPI_SUCCESS;
    if (d->dup != MPI_REQUEST_NULL)
        err = PMPI_Test(&d->dup, &flag, MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS && flag && !d->started) {
        err = PMPI_Ibcast(&d->ctx, 1, MPI_UINT32_T, 0, d->newcomm, &d->bcast);
        d->started = 1;
    }
    if (err == MPI_SUCCESS && flag && d->bcast != MPI_REQUEST_NULL)
        err = PMPI_Test(&d->bcast, &flag, MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS && !flag)
        return 0;
    if (err == MPI_SUCCESS && d->ctx != 0)
        hmpi_comm_add(d->newcomm, d->ctx);
    status->MPI_ERROR = err;
    free(d);
    return 1;
}

typedef int (*idup_below_fn)(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request);

/* MPI_Comm_idup and MPI_Comm_idup_with_info on an accelerated communicator c: the
 * MPI below starts the duplication, rank 0 of comm picks a context for idup_poll to
 * broadcast, and HMPI's request stands for both. */
static int idup_start(hmpi_comm_t *c, MPI_Comm comm, MPI_Info info, idup_below_fn below,
                      MPI_Comm *newcomm, MPI_Request *request, const char *fn)
{
    if (!newcomm || !request)
        return hmpi_raise_in(
            comm, hmpi_err_what(MPI_ERR_ARG, "%s is NULL", !newcomm ? "newcomm" : "request"), fn);
    idup_t *d = malloc(sizeof *d);
    if (!d)
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    *d = (idup_t){MPI_COMM_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, 0, 0};
    c->idup_posted = 1;
    int err = below(comm, info, &d->newcomm, &d->dup); /* raises by itself */
    if (err != MPI_SUCCESS) {
        free(d);
        return err;
    }
    if (c->rank == 0)
        d->ctx = hmpi_comm_ctx_new();
    if (hmpi_p2p_poll_new(idup_poll, d, c, request) != MPI_SUCCESS) {
        PMPI_Wait(&d->dup, MPI_STATUS_IGNORE); /* nothing to stand for it: undone */
        PMPI_Comm_free(&d->newcomm);
        free(d);
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    }
    *newcomm = d->newcomm;
    return MPI_SUCCESS;
}

static int below_idup(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    (void)info;
    return PMPI_Comm_idup(comm, newcomm, request);
}

/* The state of comm for an idup of it by HMPI, or NULL for the MPI below's alone: a
 * communicator HMPI does not know, or an intercommunicator (its duplicate takes the
 * MPI below's context only: the agreement of its two groups, core/context.c, is blocking
 * collectives; it stays the MPI below's, in every member alike). */
static hmpi_comm_t *idup_state(MPI_Comm comm)
{
    hmpi_comm_t *c = hmpi_node.active && !hmpi_comm_starting ? hmpi_comm_get(comm) : NULL;
    if (c && c->inter) {
        c->idup_posted = 1; /* (Open MPI 4.1's later rounds: hmpi_comm_below_nb) */
        return NULL;
    }
    return c;
}

/* Nonblocking: the duplication and the context's broadcast complete in test or wait
 * (idup_poll), so members may post it at different times. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    HMPI_ENTER("MPI_Comm_idup");
    hmpi_comm_t *c = idup_state(comm);
    if (!c)
        return PMPI_Comm_idup(comm, newcomm, request);
    return idup_start(c, comm, MPI_INFO_NULL, below_idup, newcomm, request, "MPI_Comm_idup");
}
HMPI_PMPI(Comm_idup)

#if HMPI_MPI4_CALLS
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    HMPI_ENTER("MPI_Comm_idup_with_info");
    hmpi_comm_t *c = idup_state(comm);
    if (!c)
        return PMPI_Comm_idup_with_info(comm, info, newcomm, request);
    return idup_start(c, comm, info, PMPI_Comm_idup_with_info, newcomm, request,
                      "MPI_Comm_idup_with_info");
}
HMPI_PMPI(Comm_idup_with_info)
#endif

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_split");
    hmpi_comm_arrive(comm);
    return registered(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}
HMPI_PMPI(Comm_split)

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_split_type");
    hmpi_comm_arrive(comm);
    int rc = PMPI_Comm_split_type(comm, type, key, info, newcomm);
    /* Simulated nodes (HMPI_NODE_SIZE) are what a program sees as its node too. */
    if (rc == MPI_SUCCESS && type == MPI_COMM_TYPE_SHARED && hmpi_knobs.NODE_SIZE > 0 &&
        !hmpi_knobs.DISABLE && *newcomm != MPI_COMM_NULL) {
        MPI_Comm phys = *newcomm;
        int r;
        PMPI_Comm_rank(phys, &r);
        int block = 0;
        PMPI_Comm_rank(hmpi_node.world, &block);
        rc = PMPI_Comm_split(phys, (int)(block / hmpi_knobs.NODE_SIZE), r, newcomm);
        PMPI_Comm_free(&phys);
    }
    return registered(rc, newcomm);
}
HMPI_PMPI(Comm_split_type)

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_create");
    hmpi_comm_arrive(comm);
    return registered(PMPI_Comm_create(comm, group, newcomm), newcomm);
}
HMPI_PMPI(Comm_create)

/* Collective over the group's members only: they arrive among themselves. */
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_create_group");
    if (group != MPI_GROUP_NULL && hmpi_comm_get(comm))
        hmpi_comm_arrive_group(group, MPI_GROUP_NULL, NULL, tag);
    return registered(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}
HMPI_PMPI(Comm_create_group)

#if HMPI_MPI4_CALLS
/* MPI 4's constructors from groups (with a session's psets, the only ones there are
 * under sessions): bad groups are HMPI's to refuse (session.h), since the MPI below
 * builds on MPI_GROUP_NULL (Open MPI 5.0) and on a group of a finalized session (both),
 * as errors of no object (MPI-4.1 §9.3); then the members arrive among themselves and
 * the MPI below constructs. Both are accelerated as every other (an intercommunicator's
 * point-to-point, core/comm.h). */
int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                               MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_create_from_group");
    if (!hmpi_knobs.DISABLE) {
        int err = hmpi_session_group_check(group);
        if (err)
            return hmpi_raise_in(MPI_COMM_NULL, err, "MPI_Comm_create_from_group");
        hmpi_comm_arrive_group(group, MPI_GROUP_NULL, stringtag, 0);
    }
    return registered(PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm),
                      newcomm);
}
HMPI_PMPI(Comm_create_from_group)

int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                     MPI_Group remote_group, int remote_leader,
                                     const char *stringtag, MPI_Info info,
                                     MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    HMPI_ENTER("MPI_Intercomm_create_from_groups");
    if (!hmpi_knobs.DISABLE) {
        int err = hmpi_session_group_check(local_group);
        if (!err)
            err = hmpi_session_group_check(remote_group);
        if (err)
            return hmpi_raise_in(MPI_COMM_NULL, err, "MPI_Intercomm_create_from_groups");
        hmpi_comm_arrive_group(local_group, remote_group, stringtag, 1);
    }
    return registered(PMPI_Intercomm_create_from_groups(local_group, local_leader, remote_group,
                                                        remote_leader, stringtag, info, errhandler,
                                                        newintercomm),
                      newintercomm);
}
HMPI_PMPI(Intercomm_create_from_groups)
#endif

/* The members of local_comm arrive among themselves; the leaders' exchange over
 * peer_comm, inside the MPI below, still blocks without HMPI's engine: a member of the
 * other group that waits in a synchronous send to this group for a receive posted before
 * the call can hang it, as it could before (docs/limitations.md). */
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm)
{
    HMPI_ENTER("MPI_Intercomm_create");
    hmpi_comm_arrive(local_comm);
    return registered(PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag,
                                            newintercomm),
                      newintercomm);
}
HMPI_PMPI(Intercomm_create)

/* Over an accelerated intercommunicator both groups arrive first (hmpi_comm_arrive). */
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Intercomm_merge");
    hmpi_comm_arrive(intercomm);
    return registered(PMPI_Intercomm_merge(intercomm, high, newcomm), newcomm);
}
HMPI_PMPI(Intercomm_merge)

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Cart_create");
    hmpi_comm_arrive(comm);
    return registered(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm), newcomm);
}
HMPI_PMPI(Cart_create)

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Cart_sub");
    hmpi_comm_arrive(comm);
    return registered(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}
HMPI_PMPI(Cart_sub)

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Graph_create");
    hmpi_comm_arrive(comm);
    return registered(PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm), newcomm);
}
HMPI_PMPI(Graph_create)

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int dest[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Dist_graph_create");
    hmpi_comm_arrive(comm);
    return registered(
        PMPI_Dist_graph_create(comm, n, sources, degrees, dest, weights, info, reorder, newcomm),
        newcomm);
}
HMPI_PMPI(Dist_graph_create)

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Dist_graph_create_adjacent");
    hmpi_comm_arrive(comm);
    return registered(PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights,
                                                      outdegree, destinations, destweights, info,
                                                      reorder, newcomm),
                      newcomm);
}
HMPI_PMPI(Dist_graph_create_adjacent)

int MPI_Comm_free(MPI_Comm *comm)
{
    HMPI_ENTER("MPI_Comm_free");
    return hmpi_comm_free(comm);
}
HMPI_PMPI(Comm_free)

int MPI_Comm_disconnect(MPI_Comm *comm)
{
    HMPI_ENTER("MPI_Comm_disconnect");
    if (comm)
        hmpi_comm_forget(*comm);
    return PMPI_Comm_disconnect(comm);
}
HMPI_PMPI(Comm_disconnect)
