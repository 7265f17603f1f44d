/* comm.c: the communicator table and every intercepted constructor and destructor.
 * Contexts: each rank counts up; a new communicator takes the MAX of its members'
 * next values, so all members agree and no two communicators of one rank share a
 * context. COMM_WORLD is 0 and COMM_SELF 1. */
#include "comm.h"
#include "errors.h"
#include "../common/knobs.h"
#include "../heap/heap.h"
#include "../node/node.h"
#include "../p2p/p2p.h"

#include <stdlib.h>
#include <string.h>

enum { NBUCKETS = 256 };

static hmpi_comm_t *buckets[NBUCKETS];
hmpi_comm_t *hmpi_comm_world;
static uint32_t next_ctx = 2;

static unsigned bucket_of(MPI_Comm c)
{
    uintptr_t v = (uintptr_t)c;
    v ^= v >> 17;
    v *= 0x9E3779B97F4A7C15ULL;
    return (unsigned)(v >> 56) % NBUCKETS;
}

hmpi_comm_t *hmpi_comm_find(MPI_Comm c)
{
    for (hmpi_comm_t *s = buckets[bucket_of(c)]; s; s = s->next)
        if (s->handle == c)
            return s;
    return NULL;
}

static hmpi_comm_t *make_state(MPI_Comm c, uint32_t ctx)
{
    hmpi_comm_t *s = hmpi_heap_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->handle = c;
    s->ctx = ctx;
    s->refs = 1;
    PMPI_Comm_rank(c, &s->rank);
    PMPI_Comm_size(c, &s->size);
    s->local_of = hmpi_heap_malloc(sizeof(int) * (size_t)s->size);
    s->rank_of_local = hmpi_heap_malloc(sizeof(int) * (size_t)hmpi_node.size);
    int *mine = hmpi_heap_malloc(sizeof(int) * (size_t)s->size);
    int *inworld = hmpi_heap_malloc(sizeof(int) * (size_t)s->size);
    if (!s->local_of || !s->rank_of_local || !mine || !inworld) {
        hmpi_heap_free(mine);
        hmpi_heap_free(inworld);
        hmpi_heap_free(s->local_of);
        hmpi_heap_free(s->rank_of_local);
        hmpi_heap_free(s);
        return NULL;
    }
    MPI_Group g, wg;
    PMPI_Comm_group(c, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < s->size; i++)
        mine[i] = i;
    PMPI_Group_translate_ranks(g, s->size, mine, wg, inworld);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    for (int l = 0; l < hmpi_node.size; l++)
        s->rank_of_local[l] = -1;
    for (int i = 0; i < s->size; i++) {
        int w = inworld[i];
        int l = (w == MPI_UNDEFINED) ? -1 : hmpi_node.local_of_world[w];
        s->local_of[i] = l;
        if (l >= 0) {
            s->rank_of_local[l] = i;
            s->nlocal++;
        } else {
            s->has_remote = 1;
        }
    }
    hmpi_heap_free(mine);
    hmpi_heap_free(inworld);
    return s;
}

static void insert(hmpi_comm_t *s)
{
    unsigned b = bucket_of(s->handle);
    s->next = buckets[b];
    buckets[b] = s;
}

int hmpi_comm_register(MPI_Comm c)
{
    if (!hmpi_node.active || c == MPI_COMM_NULL)
        return 0;
    int inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    if (inter)
        return 0;
    uint32_t ctx = 0;
    PMPI_Allreduce(&next_ctx, &ctx, 1, MPI_UINT32_T, MPI_MAX, c);
    next_ctx = ctx + 1;
    hmpi_comm_t *s = make_state(c, ctx);
    if (!s)
        return -1; /* not accelerated, still correct */
    insert(s);
    return 0;
}

static void destroy(hmpi_comm_t *s)
{
    hmpi_heap_free(s->local_of);
    hmpi_heap_free(s->rank_of_local);
    hmpi_heap_free(s->coll);
    hmpi_heap_free(s);
}

void hmpi_comm_forget(MPI_Comm c)
{
    if (c == MPI_COMM_WORLD || c == MPI_COMM_NULL)
        return;
    hmpi_comm_t **pp = &buckets[bucket_of(c)];
    for (; *pp; pp = &(*pp)->next) {
        if ((*pp)->handle == c) {
            hmpi_comm_t *s = *pp;
            *pp = s->next;
            hmpi_comm_unref(s);
            return;
        }
    }
}

void hmpi_comm_unref(hmpi_comm_t *s)
{
    if (--s->refs == 0)
        destroy(s);
}

int hmpi_comm_init(void)
{
    hmpi_comm_world = make_state(MPI_COMM_WORLD, 0);
    hmpi_comm_t *self = make_state(MPI_COMM_SELF, 1);
    if (!hmpi_comm_world || !self)
        return -1;
    insert(self);
    return 0;
}

void hmpi_comm_finalize(void)
{
    for (int b = 0; b < NBUCKETS; b++) {
        while (buckets[b]) {
            hmpi_comm_t *s = buckets[b];
            buckets[b] = s->next;
            destroy(s);
        }
    }
    if (hmpi_comm_world)
        destroy(hmpi_comm_world);
    hmpi_comm_world = NULL;
}

/* ---- constructors and destructors ------------------------------------------------ */

static int registered(int rc, MPI_Comm *c)
{
    if (rc == MPI_SUCCESS && c && *c != MPI_COMM_NULL)
        hmpi_comm_register(*c);
    return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_dup");
    return registered(PMPI_Comm_dup(comm, newcomm), newcomm);
}
HMPI_PMPI(Comm_dup)

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_dup_with_info");
    return registered(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}
HMPI_PMPI(Comm_dup_with_info)

/* Nonblocking in name: the context agreement is a blocking allreduce on the new
 * communicator, so HMPI completes the duplication at once (docs/design.md). */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    HMPI_ENTER("MPI_Comm_idup");
    if (!hmpi_node.active || !hmpi_comm_get(comm))
        return PMPI_Comm_idup(comm, newcomm, request);
    int rc = registered(PMPI_Comm_dup(comm, newcomm), newcomm);
    if (rc == MPI_SUCCESS && (*request = hmpi_req_done(0)) == MPI_REQUEST_NULL)
        rc = MPI_ERR_NO_MEM;
    return rc;
}
HMPI_PMPI(Comm_idup)

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_split");
    return registered(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}
HMPI_PMPI(Comm_split)

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Comm_split_type");
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
    return registered(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm), newcomm);
}
HMPI_PMPI(Cart_create)

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Cart_sub");
    return registered(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}
HMPI_PMPI(Cart_sub)

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Graph_create");
    return registered(PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm), newcomm);
}
HMPI_PMPI(Graph_create)

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int dest[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *newcomm)
{
    HMPI_ENTER("MPI_Dist_graph_create");
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
