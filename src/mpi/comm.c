/* comm.c: every intercepted communicator constructor and destructor, and the contexts
 * they agree on for the communicator table (core/comm.c). Contexts, two disjoint ranges:
 *  - below RANGE_BASE: MPI_COMM_WORLD's is 0, MPI_COMM_SELF's 1, and the communicators
 *    HMPI makes for itself while it sets up (OPI's shadow of MPI_COMM_WORLD) count up
 *    from 2, the same in every rank (hmpi_comm_starting: no agreement).
 *  - from RANGE_BASE, every other one: rank 0 of the new communicator (of the parent,
 *    for MPI_Comm_idup) hands out a context of its own range (its world rank in the
 *    high bits, a count below) and the members learn it from a nonblocking broadcast
 *    over the new communicator (for MPI_Comm_idup started once the MPI below's
 *    duplication is complete; test and wait move both). Unique in the whole job with no
 *    agreement, so constructors running at once in several threads of a rank never meet
 *    (two communicators made at once by two threads once took the same context from a
 *    MAX over the members' next values), nor idups pending meanwhile. */
#include "../core/comm.h"
#include "../core/errors.h"
#include "../common/knobs.h"
#include "../node/node.h"
#include "../p2p/p2p.h"
#include "session.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static uint32_t next_ctx = 2; /* set-up's own constructors: one thread */

#define RANGE_BASE 0x80000000u
static _Atomic uint32_t range_next; /* contexts this rank handed out as a rank 0 */

/* HMPI's end (mpi/init.c): every state is gone with the communicator table, and no
 * message of it is in flight past the last barrier, so a later set-up counts anew, from
 * the same value in every rank (its own constructors at set-up take it unagreed). */
void hmpi_comm_contexts_reset(void)
{
    next_ctx = 2;
    atomic_store(&range_next, 0);
}

/* A context of this rank's range, handed out as a new communicator's rank 0: its world
 * rank above, its count below (2^31 / the world size of them: 33 million at 64 ranks).
 * 0 (never such a context) when its count is used up: the new communicator is then not
 * accelerated. */
static uint32_t ctx_new(void)
{
    int wbits = 0;
    while (wbits < 31 && (1u << wbits) < (uint32_t)hmpi_node.world_size)
        wbits++;
    int cbits = 31 - wbits;
    uint32_t n = atomic_fetch_add(&range_next, 1);
    if (cbits <= 0 || n >= (1u << cbits))
        return 0;
    return RANGE_BASE | ((uint32_t)hmpi_node.world_rank << cbits) | n;
}

static int hmpi_comm_register(MPI_Comm c)
{
    if (!hmpi_node.active || c == MPI_COMM_NULL)
        return 0;
    int inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    if (inter)
        return 0;
    uint32_t ctx = 0;
    if (hmpi_comm_starting) {
        ctx = next_ctx++;
    } else {
        int rank = 0, size = 0;
        PMPI_Comm_rank(c, &rank);
        PMPI_Comm_size(c, &size);
        if (rank == 0)
            ctx = ctx_new();
        MPI_Request q;
        if (size > 1 && /* (one member: nothing to tell anyone) */
            (PMPI_Ibcast(&ctx, 1, MPI_UINT32_T, 0, c, &q) != MPI_SUCCESS ||
             hmpi_p2p_below_wait(&q, MPI_STATUS_IGNORE, HMPI_WAIT_COLL) != MPI_SUCCESS))
            return -1; /* the below raised it; c stays with the below */
    }
    return ctx ? hmpi_comm_add(c, ctx) : -1;
}

/* ---- constructors and destructors ------------------------------------------------ */

/* Before a constructor of the MPI below that blocks until the members of comm arrive:
 * a member may have posted a receive that a peer, not here yet, waits in a synchronous
 * send to see matched, and the below's blocking call would not move HMPI's engine. The
 * nonblocking barrier, waited for with that progress, lets every member in first
 * (p2p.h, hmpi_p2p_below_arrive). Only over a communicator HMPI knows, so every member
 * does it alike (an intercommunicator or a bad handle goes straight to the below). */
static void arrive(MPI_Comm comm)
{
    hmpi_comm_t *c = hmpi_node.active && !hmpi_comm_starting ? hmpi_comm_get(comm) : NULL;
    if (c && hmpi_p2p_below_nb(c))
        hmpi_p2p_below_arrive(comm);
}

/* The same for a constructor whose members are those of groups a and b (MPI_GROUP_NULL:
 * a alone), with no parent communicator to hold a barrier over (p2p.h,
 * hmpi_p2p_below_arrive_group): only while HMPI accelerates, which every member knows
 * alike. */
static void arrive_group(MPI_Group a, MPI_Group b, const char *name, int key)
{
    if (hmpi_node.active && !hmpi_comm_starting)
        hmpi_p2p_below_arrive_group(a, b, name, key);
}

static int registered(int rc, MPI_Comm *c)
{
    if (rc == MPI_SUCCESS && c && *c != MPI_COMM_NULL)
        hmpi_comm_register(*c);
    return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_dup");
    arrive(comm);
    if (hmpi_comm_starting) { /* OPI's dup of MPI_COMM_WORLD: waits as MPI_Init's do */
        MPI_Request q;
        int rc = PMPI_Comm_idup(comm, newcomm, &q);
        return registered(rc ? rc : hmpi_node_below_wait(1, &q), newcomm);
    }
    return registered(PMPI_Comm_dup(comm, newcomm), newcomm);
}
HMPI_PMPI(Comm_dup)

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_dup_with_info");
    arrive(comm);
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
    MPI_Comm newcomm;    /* the MPI below's handle, handed to the program at once */
    MPI_Request dup;     /* the MPI below's nonblocking duplication */
    MPI_Request bcast;   /* ctx from rank 0, once dup is complete */
    int started;         /* bcast was started */
    uint32_t ctx;        /* 0: not accelerated */
} idup_t;

/* Poll function of an idup's request (engine lock held): 1 once complete. */
static int idup_poll(hmpi_req_t *r)
{
    idup_t *d = r->arg;
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
    hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, err, 0);
    r->arg = NULL;
    free(d);
    return 1;
}

typedef int (*idup_below_fn)(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                             MPI_Request *request);

/* MPI_Comm_idup and MPI_Comm_idup_with_info on an accelerated communicator c: the
 * MPI below starts the duplication, rank 0 of comm picks a context for idup_poll to
 * broadcast, and HMPI's request stands for both. */
static int idup_start(hmpi_comm_t *c, MPI_Comm comm, MPI_Info info, idup_below_fn below,
                      MPI_Comm *newcomm, MPI_Request *request, const char *fn)
{
    if (!newcomm || !request)
        return hmpi_raise_in(comm, hmpi_err_what(MPI_ERR_ARG, "%s is NULL",
                                                 !newcomm ? "newcomm" : "request"), fn);
    idup_t *d = malloc(sizeof *d);
    if (!d)
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    *d = (idup_t){MPI_COMM_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, 0, 0};
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_new(HMPI_REQ_POLL);
    hmpi_p2p_unlock();
    if (!r) {
        free(d);
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    }
    c->idup_posted = 1;
    int err = below(comm, info, &d->newcomm, &d->dup); /* raises by itself */
    hmpi_p2p_lock();
    if (err == MPI_SUCCESS && c->rank == 0)
        d->ctx = ctx_new();
    if (err == MPI_SUCCESS) {
        r->poll = idup_poll;
        r->arg = d;
        hmpi_req_bind(r, c);
        *newcomm = d->newcomm;
        *request = hmpi_req_handle(r);
    } else {
        hmpi_req_release(r);
    }
    hmpi_p2p_unlock();
    if (err != MPI_SUCCESS)
        free(d);
    return err;
}

static int below_idup(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    (void)info;
    return PMPI_Comm_idup(comm, newcomm, request);
}

/* Nonblocking: the duplication and the context's broadcast complete in test or wait
 * (idup_poll), so members may post it at different times. Intercommunicators are not
 * accelerated: theirs is the MPI below's own. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    HMPI_ENTER("MPI_Comm_idup");
    hmpi_comm_t *c = hmpi_node.active && !hmpi_comm_starting ? hmpi_comm_get(comm) : NULL;
    if (!c)
        return PMPI_Comm_idup(comm, newcomm, request);
    return idup_start(c, comm, MPI_INFO_NULL, below_idup, newcomm, request, "MPI_Comm_idup");
}
HMPI_PMPI(Comm_idup)

#if MPI_VERSION >= 4
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                            MPI_Request *request)
{
    HMPI_ENTER("MPI_Comm_idup_with_info");
    hmpi_comm_t *c = hmpi_node.active && !hmpi_comm_starting ? hmpi_comm_get(comm) : NULL;
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
    arrive(comm);
    return registered(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}
HMPI_PMPI(Comm_split)

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_split_type");
    arrive(comm);
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
    arrive(comm);
    return registered(PMPI_Comm_create(comm, group, newcomm), newcomm);
}
HMPI_PMPI(Comm_create)

/* Collective over the group's members only: they arrive among themselves. */
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_create_group");
    if (group != MPI_GROUP_NULL && hmpi_comm_get(comm))
        arrive_group(group, MPI_GROUP_NULL, NULL, tag);
    return registered(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}
HMPI_PMPI(Comm_create_group)

#ifdef HMPI_HAVE_SESSIONS
/* MPI 4's constructors from groups (with a session's psets, the only ones there are
 * under sessions): bad groups are HMPI's to refuse (session.h), since the MPI below
 * builds on MPI_GROUP_NULL (Open MPI 5.0) and on a group of a finalized session (both),
 * as errors of no object (MPI-4.1 §9.3); then the members arrive among themselves and
 * the MPI below constructs. The intracommunicator is accelerated as every other; an
 * intercommunicator is the MPI below's alone, as MPI_Intercomm_create's. */
int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                               MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_create_from_group");
    if (!hmpi_knobs.DISABLE) {
        int err = hmpi_session_group_check(group);
        if (err)
            return hmpi_raise_in(MPI_COMM_NULL, err, "MPI_Comm_create_from_group");
        arrive_group(group, MPI_GROUP_NULL, stringtag, 0);
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
        arrive_group(local_group, remote_group, stringtag, 1);
    }
    return PMPI_Intercomm_create_from_groups(local_group, local_leader, remote_group, remote_leader,
                                             stringtag, info, errhandler, newintercomm);
}
HMPI_PMPI(Intercomm_create_from_groups)
#endif

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Intercomm_merge");
    return registered(PMPI_Intercomm_merge(intercomm, high, newcomm), newcomm);
}
HMPI_PMPI(Intercomm_merge)

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Cart_create");
    arrive(comm);
    return registered(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm), newcomm);
}
HMPI_PMPI(Cart_create)

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Cart_sub");
    arrive(comm);
    return registered(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}
HMPI_PMPI(Cart_sub)

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Graph_create");
    arrive(comm);
    return registered(PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm), newcomm);
}
HMPI_PMPI(Graph_create)

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int dest[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Dist_graph_create");
    arrive(comm);
    return registered(PMPI_Dist_graph_create(comm, n, sources, degrees, dest, weights, info,
                                             reorder, newcomm),
                      newcomm);
}
HMPI_PMPI(Dist_graph_create)

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Dist_graph_create_adjacent");
    arrive(comm);
    return registered(PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights,
                                                      outdegree, destinations, destweights,
                                                      info, reorder, newcomm),
                      newcomm);
}
HMPI_PMPI(Dist_graph_create_adjacent)

int MPI_Comm_free(MPI_Comm *comm)
{
    HMPI_ENTER("MPI_Comm_free");
    if (comm && (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF))
        return PMPI_Comm_free(comm); /* the MPI below reports the error */
    if (comm)
        hmpi_comm_forget(*comm);
    return PMPI_Comm_free(comm);
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
