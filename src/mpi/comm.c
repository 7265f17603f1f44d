/* comm.c: every intercepted communicator constructor and destructor, and the contexts
 * they agree on for the communicator table (core/comm.c). Contexts, two disjoint ranges:
 *  - blocking constructors (below IDUP_BASE): each rank counts up; a new communicator
 *    takes the MAX of its members' next values (an allreduce over it), so all members
 *    agree and no two communicators of one rank share a context. COMM_WORLD is 0 and
 *    COMM_SELF 1.
 *  - nonblocking ones (MPI_Comm_idup, from IDUP_BASE): rank 0 of the parent hands out
 *    a context of its own range (its world rank in the high bits, a count below) and
 *    the members learn it from a nonblocking broadcast over the new communicator,
 *    started once the MPI below's duplication is complete; test and wait move both.
 *    Unique in the whole job, so several pending at once, or blocking ones made
 *    meanwhile, never meet it; no MAX needed. */
#include "../core/comm.h"
#include "../core/errors.h"
#include "../common/knobs.h"
#include "../node/node.h"
#include "../p2p/p2p.h"

#include <stdlib.h>
#include <string.h>

static uint32_t next_ctx = 2;

#define IDUP_BASE 0x80000000u
static uint32_t idup_next; /* contexts this rank handed out as a parent's rank 0; engine
                              lock (p2p.h) */

static int hmpi_comm_register(MPI_Comm c)
{
    if (!hmpi_node.active || c == MPI_COMM_NULL)
        return 0;
    int inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    if (inter)
        return 0;
    uint32_t ctx = next_ctx; /* at MPI_Init the same in every rank */
    MPI_Request q;
    if (!hmpi_comm_starting &&
        (PMPI_Iallreduce(&next_ctx, &ctx, 1, MPI_UINT32_T, MPI_MAX, c, &q) != MPI_SUCCESS ||
         hmpi_p2p_below_wait(&q, MPI_STATUS_IGNORE, HMPI_WAIT_COLL) != MPI_SUCCESS))
        return -1; /* the below raised it; c stays with the below */
    next_ctx = ctx + 1;
    if (ctx >= IDUP_BASE)
        return -1; /* the blocking range is used up (2^31 constructors) */
    return hmpi_comm_add(c, ctx);
}

/* A context of the nonblocking range, handed out by this rank as a parent's rank 0:
 * its world rank above, its count below. 0 (never such a context) when its count is
 * used up: the new communicator is then not accelerated. */
static uint32_t idup_ctx_new(void)
{
    int wbits = 0;
    while (wbits < 31 && (1u << wbits) < (uint32_t)hmpi_node.world_size)
        wbits++;
    int cbits = 31 - wbits;
    if (cbits <= 0 || idup_next >= (1u << cbits))
        return 0;
    return IDUP_BASE | ((uint32_t)hmpi_node.world_rank << cbits) | idup_next++;
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
    hmpi_p2p_lock(); /* (also over idup_next: threads may post idups on other parents) */
    if (err == MPI_SUCCESS && c->rank == 0)
        d->ctx = idup_ctx_new();
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

#if HMPI_MPI4_CALLS
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
        PMPI_Comm_rank(MPI_COMM_WORLD, &block);
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

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_create_group");
    return registered(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}
HMPI_PMPI(Comm_create_group)

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
