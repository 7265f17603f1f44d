/* neighbor.c: the neighbourhood collectives, MPI_Neighbor_allgather(v) and
 * MPI_Neighbor_alltoall(v,w), blocking, nonblocking (MPI_Ineighbor_*) and persistent
 * (MPI_Neighbor_*_init), on Cartesian, graph and distributed-graph communicators. On a
 * node every member publishes in its slot where its send blocks lie (its buffer when in
 * the shared heap and contiguous, else packed copies in its slot or scratch) and reads the
 * block each in-neighbour sends it straight into its receive buffer: one copy per byte,
 * and only neighbours wait for each other; every member takes part in the epoch, with
 * neighbours or without. Across nodes, and on communicators HMPI does not accelerate, the
 * MPI below carries them (a blocking call as its nonblocking form waited for with HMPI's
 * progress), its receive blocks permuted where it pairs repeated edges otherwise than
 * the standard. The _c forms stay in mpi/neighbor.c. */
#include "coll.h"
#include "nbc.h"
#include "../common/log.h"
#include "../core/check.h"
#include "../core/errors.h"
#include "../heap/heap.h"
#include "../node/node.h"
#include "../p2p/p2p.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the neighbours ----------------------------------------------------------------------
 *
 * In the standard's order (MPI-4.1 §8.6): a Cartesian communicator has 2 * ndims of each
 * kind, the negative then the positive direction of each dimension (MPI_Cart_shift by 1),
 * MPI_PROC_NULL where a non-periodic dimension ends; a graph's are MPI_Graph_neighbors,
 * in and out alike; a distributed graph's MPI_Dist_graph_neighbors, repeated edges and
 * all. Which of a source's blocks an in-edge receives (pair): on a Cartesian
 * communicator the one the source sent in the opposite direction, block j ^ 1 for
 * in-edge j, also where a periodic dimension of size 1 or 2 makes a rank its own
 * neighbour or the same neighbour twice (MPI-4.1 §8.6, Example 8.10); on a graph the k-th
 * edge from a source receives the source's k-th edge to this rank, found in the source's
 * list of destinations (published in its half) at the first call. */
typedef struct hmpi_coll_nbr_s {
    int kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    int indeg, outdeg;
    int dups;     /* some source appears more than once in src */
    int any_dups; /* dups on some member, as far as every member can tell alike: on a
                     Cartesian communicator dups (the dimensions are everybody's); on a
                     graph 1 (the other members' lists are theirs) */
    int *src;     /* [indeg] ranks of the communicator, or MPI_PROC_NULL */
    int *dst;     /* [outdeg] */
    int *pair;    /* [indeg] the source's out-edge each in-edge receives; -1: not found yet */
} hmpi_coll_nbr_t;

/* The neighbours of comm: one block of the shared heap (shared: peers read dst) or of
 * private memory; NULL when comm has no topology (the MPI below raises that). */
static hmpi_coll_nbr_t *nbr_make(MPI_Comm comm, int shared)
{
    int kind = MPI_UNDEFINED, indeg = 0, outdeg = 0, weighted = 0, rank = 0, nd = 0;
    if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS)
        return NULL;
    if (kind == MPI_CART) {
        PMPI_Cartdim_get(comm, &nd);
        indeg = outdeg = 2 * nd;
    } else if (kind == MPI_GRAPH) {
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &indeg);
        outdeg = indeg;
    } else if (kind == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted);
    } else {
        return NULL;
    }
    size_t bytes = sizeof(hmpi_coll_nbr_t) + sizeof(int) * (2 * (size_t)indeg + (size_t)outdeg + 1);
    hmpi_coll_nbr_t *nb = shared ? hmpi_heap_shared_alloc(bytes) : hmpi_coll_alloc(bytes);
    if (!nb) { /* every member must take the same way: peers may be in it already */
        hmpi_log_error("collectives: cannot get %zu bytes of shared memory; stopping", bytes);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    nb->kind = kind;
    nb->indeg = indeg;
    nb->outdeg = outdeg;
    nb->src = (int *)(nb + 1);
    nb->dst = nb->src + indeg;
    nb->pair = nb->dst + outdeg;
    if (kind == MPI_CART) {
        for (int d = 0; d < nd; d++)
            PMPI_Cart_shift(comm, d, 1, &nb->src[2 * d], &nb->src[2 * d + 1]);
        memcpy(nb->dst, nb->src, sizeof(int) * (size_t)indeg);
    } else if (kind == MPI_GRAPH) {
        PMPI_Graph_neighbors(comm, rank, indeg, nb->src);
        memcpy(nb->dst, nb->src, sizeof(int) * (size_t)indeg);
    } else {
        /* weights read or not (an unweighted graph leaves them) */
        int *w = hmpi_coll_alloc(sizeof(int) * ((size_t)indeg + (size_t)outdeg + 1));
        PMPI_Dist_graph_neighbors(comm, indeg, nb->src, w, outdeg, nb->dst, w + indeg);
        hmpi_heap_free(w);
    }
    nb->dups = 0;
    nb->any_dups = kind != MPI_CART;
    for (int j = 0; j < indeg; j++) {
        nb->pair[j] = kind == MPI_CART ? j ^ 1 : -1;
        for (int i = 0; i < j && !nb->dups; i++)
            nb->dups = nb->src[i] == nb->src[j] && nb->src[j] != MPI_PROC_NULL;
    }
    nb->any_dups |= nb->dups;
    return nb;
}

/* The neighbours of a communicator with a collective state, listed once. */
static hmpi_coll_nbr_t *nbr_of(hmpi_coll_comm_t *s, MPI_Comm comm)
{
    if (!s->nbr)
        s->nbr = nbr_make(comm, 1);
    return s->nbr;
}

/* ---- the blocks of a call ----------------------------------------------------------------- */

enum { F_ALLGATHER, F_ALLGATHERV, F_ALLTOALL, F_ALLTOALLV, F_ALLTOALLW };

/* A call's arguments, as the program gave them (the arrays stay the program's: MPI
 * forbids changing them before a nonblocking call completes or while a persistent one
 * exists). */
typedef struct {
    int fam;
    const void *sb;
    int sc;
    const int *scs, *sds;
    const MPI_Aint *sdw;
    MPI_Datatype st;
    const MPI_Datatype *sts;
    void *rb;
    int rc;
    const int *rcs, *rds;
    const MPI_Aint *rdw;
    MPI_Datatype rt;
    const MPI_Datatype *rts;
    MPI_Comm comm;
    const void *scc, *rcc; /* MPI_Count[]: the alltoallw as its _c form (W_BY_C) */
} args_t;

/* One side's blocks: block i is counts[i] (or count) elements of types[i] (or type) at
 * buf + bdispls[i] bytes (w), or + displs[i] extents (v), or + i * count extents; or, for
 * allgather's send side (one), every block is the one at buf. */
typedef struct {
    void *buf;
    const int *counts, *displs;
    const MPI_Aint *bdispls;
    const MPI_Datatype *types;
    int count, one;
    MPI_Datatype type;
    MPI_Aint extent; /* of type */
    int derived;     /* type is a derived one (hmpi_layout_t.derived) */
} side_t;

static int side_count(const side_t *s, int i) { return s->counts ? s->counts[i] : s->count; }
static MPI_Datatype side_type(const side_t *s, int i) { return s->types ? s->types[i] : s->type; }

static void *side_buf(const side_t *s, int i)
{
    if (s->one)
        return s->buf;
    if (s->bdispls)
        return hmpi_coll_at(s->buf, s->bdispls[i]);
    MPI_Aint d = s->displs ? (MPI_Aint)s->displs[i] : (MPI_Aint)i * s->count;
    return hmpi_coll_at(s->buf, d * s->extent);
}

static void sides_of(const args_t *a, side_t *sd, side_t *rv)
{
    *sd = (side_t){.buf = (void *)a->sb,
                   .counts = a->scs,
                   .displs = a->sds,
                   .bdispls = a->sdw,
                   .types = a->sts,
                   .count = a->sc,
                   .type = a->st,
                   .one = a->fam == F_ALLGATHER || a->fam == F_ALLGATHERV};
    *rv = (side_t){.buf = a->rb,
                   .counts = a->rcs,
                   .displs = a->rds,
                   .bdispls = a->rdw,
                   .types = a->rts,
                   .count = a->rc,
                   .type = a->rt};
}

/* The layouts of n blocks of s into l[] (one for a side whose blocks are all one), each
 * count and type checked; MPI_SUCCESS or an error class described. */
static int side_layouts(side_t *s, int n, hmpi_layout_t *l, const char *what)
{
    int err;
    if (!s->types) {
        hmpi_layout_t one;
        if ((err = hmpi_check_type(s->type, what)) != MPI_SUCCESS ||
            (err = hmpi_layout_get(s->type, 1, &one)) != MPI_SUCCESS)
            return err;
        s->extent = one.extent;
        s->derived = one.derived;
    }
    for (int i = 0; i < (s->one ? 1 : n); i++) {
        int count = side_count(s, i);
        if ((err = hmpi_check_count(count, what)) != MPI_SUCCESS ||
            (s->types && (err = hmpi_check_type(s->types[i], what)) != MPI_SUCCESS) ||
            (err = hmpi_layout_get(side_type(s, i), count, &l[i])) != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* A run of one call on the team: what the blocking call keeps on its stack, and a
 * nonblocking or persistent operation after its hmpi_coll_op_t (hmpi_coll_op_ext). */
typedef struct {
    hmpi_coll_nbr_t *nb;
    side_t sd, rv;
    hmpi_layout_t *sl, *rl; /* [outdeg] (1: allgather's), [indeg] */
    int empty;              /* a check failed: take part, publishing and reading nothing */
    /* its place */
    int direct; /* peers read this rank's buffer: wait for their DONE */
    int j;      /* the next in-edge to read */
    int err;
    args_t a;      /* the call, for the MPI below (nbc.h, below_start) */
    int *fix;      /* [indeg] the receive blocks in the MPI below's pairing, or NULL */
    void *fix_mem; /* the v/w arrays built from fix (persistent: kept) */
    int nholds;    /* derived types held (hmpi_type_hold), in holds[] */
    MPI_Datatype *holds;
} run_t;

/* ---- the team: publish, read ------------------------------------------------------------- */

/* The half's inline data: the address of this rank's destinations and their number
 * (graphs' readers find their block there), then the area for a table and copies. */
enum { HEAD = 16 };

/* The other of the pair of small scratch buffers, or NULL while an older epoch's readers
 * are not all gone (nowait), else waiting for them (hmpi_coll_scratch_small). */
static void *scratch_small(hmpi_coll_team_t *t, uint64_t e, size_t len, int nowait)
{
    if (nowait && t->small[e & 1].used > t->ep.seen_done) {
        hmpi_coll_seen_scan(t);
        if (t->small[e & 1].used > t->ep.seen_done)
            return NULL;
    }
    return hmpi_coll_scratch_small(t, e, len);
}

static void *scratch_big(hmpi_coll_team_t *t, uint64_t e, size_t len, int nowait)
{
    return nowait ? hmpi_coll_try_scratch(t, e, len) : hmpi_coll_scratch(t, e, len);
}

/* Publishes this rank's send blocks for epoch e in h: block k for out-edge k (nothing for
 * MPI_PROC_NULL), or allgather's one block, read where it lies (a contiguous run of the
 * shared heap) or packed into the half or the scratch. With more ranks than cores small
 * blocks are always copied, so that this rank need not wait for its readers (alltoall.c
 * says why). Returns 1 when peers read the user's buffer, 0 when not, -1 when nowait and
 * the scratch is still read (nothing published yet). */
static int expose(hmpi_coll_team_t *t, uint64_t e, hmpi_coll_half_t *h, run_t *r, int nowait)
{
    const hmpi_coll_nbr_t *nb = r->nb;
    const side_t *sd = &r->sd;
    int n = sd->one ? nb->outdeg > 0 : nb->outdeg, any_direct = 0;
    uint64_t list = (uintptr_t)nb->dst;
    int32_t outdeg = nb->outdeg;
    memcpy(h->data, &list, sizeof list);
    memcpy(h->data + sizeof list, &outdeg, sizeof outdeg);
    size_t total = 0, staged = 0;
    int uniform = !sd->counts && !sd->types;
    for (int k = 0; k < n && !r->empty; k++) {
        if (!sd->one && nb->dst[k] == MPI_PROC_NULL)
            continue;
        total += r->sl[k].size;
        if (!hmpi_coll_direct(side_buf(sd, k), &r->sl[k])) {
            staged += r->sl[k].size;
            uniform = 0;
        }
    }
    h->table = 0;
    h->aux = 0;
    if (total == 0) { /* nothing to read: every block is empty */
        h->addr = h->bytes = 0;
        return 0;
    }
    int copy = hmpi_node.crowded && total <= 4 * t->cap;
    if (uniform && !copy) { /* block k at addr + k * aux, all read in place */
        h->addr = (uintptr_t)hmpi_coll_at(sd->buf, r->sl[0].lo);
        h->bytes = r->sl[0].size;
        h->aux = sd->one ? 0 : (uint64_t)sd->count * (uint64_t)sd->extent;
        return 1;
    }
    if (copy)
        staged = total;
    size_t tb = sd->one ? 0 : sizeof(hmpi_coll_blk_t) * (size_t)n;
    hmpi_coll_area_t a = {h->data + HEAD, t->cap > HEAD ? t->cap - HEAD : 0, 0};
    hmpi_coll_blk_t *tab = tb ? hmpi_coll_take(&a, tb, 0, 16) : NULL;
    hmpi_coll_area_t sc = a;
    if ((tb && !tab) || staged > a.len - a.used) {
        size_t need = staged + (tb && !tab ? tb + 16 : 0);
        void *p = copy ? scratch_small(t, e, need, nowait) : scratch_big(t, e, need, nowait);
        if (!p)
            return -1;
        sc = (hmpi_coll_area_t){p, need, 0};
        if (tb && !tab)
            tab = hmpi_coll_take(&sc, tb, 0, 16);
        hmpi_stat_add(HMPI_STAT_coll_staged_bytes, staged);
    }
    for (int k = 0; k < n; k++) {
        const hmpi_layout_t *l = &r->sl[k];
        void *b = side_buf(sd, k);
        hmpi_coll_blk_t blk = {0, 0};
        if (!sd->one && nb->dst[k] == MPI_PROC_NULL) {
            /* nobody reads it */
        } else if (!copy && hmpi_coll_direct(b, l)) {
            blk = (hmpi_coll_blk_t){(uintptr_t)hmpi_coll_at(b, l->lo), l->size};
            any_direct = 1;
        } else {
            void *to = hmpi_coll_take(&sc, l->size, 0, 1);
            int err = hmpi_coll_pack(to, b, side_count(sd, k), side_type(sd, k), l);
            r->err = r->err != MPI_SUCCESS ? r->err : err;
            blk = (hmpi_coll_blk_t){(uintptr_t)to, l->size};
        }
        if (tab) {
            tab[k] = blk;
        } else {
            h->addr = blk.addr;
            h->bytes = blk.bytes;
        }
    }
    if (tab) {
        h->table = (uintptr_t)tab;
        h->aux = (uint64_t)n;
    }
    return any_direct;
}

/* The out-edge of source p that in-edge j receives: the k-th edge from p gets p's k-th
 * edge to this rank (me), from p's list of destinations in its half h; -1 when p lists
 * fewer edges to this rank than this rank from p (the graph is not the same on both
 * sides). Cached in pair[]. */
static int pair_of(hmpi_coll_nbr_t *nb, int j, const hmpi_coll_half_t *h, int me)
{
    if (nb->pair[j] >= 0)
        return nb->pair[j];
    uint64_t list;
    int32_t n;
    memcpy(&list, h->data, sizeof list);
    memcpy(&n, h->data + sizeof list, sizeof n);
    const int *pd = (const int *)(uintptr_t)list;
    int p = nb->src[j], c = 0;
    for (int i = 0; i < j; i++)
        c += nb->src[i] == p;
    for (int k = 0; k < n; k++)
        if (pd[k] == me && c-- == 0)
            return nb->pair[j] = k;
    return -1;
}

/* Reads in-edge j's block from its source's half for epoch e (the source arrived) into
 * receive block j; the first error stays in r->err. */
static void read_edge(hmpi_coll_team_t *t, uint64_t e, run_t *r, int j)
{
    int p = r->nb->src[j];
    const hmpi_coll_half_t *h = hmpi_coll_half(t, p, e);
    int k = r->sd.one ? 0 : pair_of(r->nb, j, h, t->ep.me), err = MPI_ERR_TOPOLOGY;
    if (k >= 0) {
        hmpi_coll_blk_t b = hmpi_coll_blk(h, k);
        err = hmpi_coll_unpack(side_buf(&r->rv, j), side_count(&r->rv, j), side_type(&r->rv, j),
                               &r->rl[j], (const void *)(uintptr_t)b.addr, b.bytes);
    }
    if (r->err == MPI_SUCCESS)
        r->err = err;
}

/* The blocking call on the team: publish, read every in-neighbour as it arrives, DONE,
 * then wait for the out-neighbours that read this rank's buffer. */
static int team_run(hmpi_coll_team_t *t, run_t *r)
{
    uint64_t e = hmpi_coll_begin(t);
    hmpi_coll_half_t *h = hmpi_coll_claim(t, e);
    r->direct = expose(t, e, h, r, 0);
    hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    const hmpi_coll_nbr_t *nb = r->nb;
    for (int j = 0; j < nb->indeg && !r->empty; j++) {
        if (nb->src[j] == MPI_PROC_NULL)
            continue;
        hmpi_coll_wait(t, nb->src[j], e, HMPI_COLL_ARRIVED);
        read_edge(t, e, r, j);
    }
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    for (int k = 0; k < nb->outdeg && r->direct > 0; k++)
        if (nb->dst[k] != MPI_PROC_NULL && nb->dst[k] != t->ep.me)
            hmpi_coll_wait(t, nb->dst[k], e, HMPI_COLL_DONE);
    return r->err;
}

/* The same without waits (nbc.h): step 0 publishes, 1 reads from in-edge r->j on, 2 waits
 * for the readers from out-edge op->at on. Errors stay in r->err until the end, so that
 * the program runs to its end (DONE) whatever happens. */
static int phase_neighbor(hmpi_coll_op_t *op)
{
    run_t *r = hmpi_coll_op_ext(op);
    hmpi_coll_team_t *t = &op->s->team;
    const hmpi_coll_nbr_t *nb = r->nb;
    uint64_t e = hmpi_coll_op_epoch(op);
    if (op->step == 0) {
        hmpi_coll_half_t *h = hmpi_coll_try_claim(t, e);
        if (!h)
            return 0;
        r->err = MPI_SUCCESS;
        int direct = expose(t, e, h, r, 1);
        if (direct < 0)
            return 0;
        r->direct = direct;
        r->j = 0;
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        op->step = 1;
    }
    if (op->step == 1) {
        for (; r->j < nb->indeg && !r->empty; r->j++) {
            int p = nb->src[r->j];
            if (p == MPI_PROC_NULL)
                continue;
            if (!hmpi_epoch_reached(&t->ep, p, e, HMPI_COLL_ARRIVED))
                return 0;
            read_edge(t, e, r, r->j);
        }
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        op->step = 2;
        op->at = 0;
    }
    for (; r->direct > 0 && op->at < nb->outdeg; op->at++) {
        int q = nb->dst[op->at];
        if (q != MPI_PROC_NULL && q != t->ep.me &&
            !hmpi_epoch_reached(&t->ep, q, e, HMPI_COLL_DONE))
            return 0;
    }
    op->err = r->err;
    return 1;
}

/* ---- the MPI below ---------------------------------------------------------------------- */

enum { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT, FORMS };

/* MPICH 4.0's MPI_Neighbor_alltoallw and its nonblocking and persistent forms convert the
 * send counts over the in-degree and the receive counts over the out-degree
 * (pmodels/mpich#6233, fixed in 4.1: measured, wrong blocks where the degrees differ);
 * their _c forms take the counts as given, so HMPI calls those. */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000 && MPI_VERSION >= 4
#define W_BY_C 1
#else
#define W_BY_C 0
#endif

#if HMPI_MPI4_CALLS
#define BELOW_INIT(NAME, ...) PMPI_Neighbor_##NAME##_init(__VA_ARGS__, MPI_INFO_NULL, q)
#else
#define BELOW_INIT(NAME, ...) MPI_ERR_INTERN /* never asked for: no such call */
#endif
#define BELOW(NAME, ...)                                                \
    (form == FORM_BLOCKING      ? PMPI_Neighbor_##NAME(__VA_ARGS__)     \
     : form == FORM_NONBLOCKING ? PMPI_Ineighbor_##NAME(__VA_ARGS__, q) \
                                : BELOW_INIT(NAME, __VA_ARGS__))

/* The MPI below's call of a in form (q: the request of a nonblocking or persistent one). */
static int below(const args_t *a, int form, MPI_Request *q)
{
    switch (a->fam) {
    case F_ALLGATHER: return BELOW(allgather, a->sb, a->sc, a->st, a->rb, a->rc, a->rt, a->comm);
    case F_ALLGATHERV:
        return BELOW(allgatherv, a->sb, a->sc, a->st, a->rb, a->rcs, a->rds, a->rt, a->comm);
    case F_ALLTOALL: return BELOW(alltoall, a->sb, a->sc, a->st, a->rb, a->rc, a->rt, a->comm);
    case F_ALLTOALLV:
        return BELOW(alltoallv, a->sb, a->scs, a->sds, a->st, a->rb, a->rcs, a->rds, a->rt,
                     a->comm);
    default:
#if W_BY_C
        if (a->scc && form == FORM_BLOCKING)
            return PMPI_Neighbor_alltoallw_c(a->sb, a->scc, a->sdw, a->sts, a->rb, a->rcc, a->rdw,
                                             a->rts, a->comm);
        if (a->scc && form == FORM_NONBLOCKING)
            return PMPI_Ineighbor_alltoallw_c(a->sb, a->scc, a->sdw, a->sts, a->rb, a->rcc, a->rdw,
                                              a->rts, a->comm, q);
        if (a->scc)
            return PMPI_Neighbor_alltoallw_init_c(a->sb, a->scc, a->sdw, a->sts, a->rb, a->rcc,
                                                  a->rdw, a->rts, a->comm, MPI_INFO_NULL, q);
#endif
        return BELOW(alltoallw, a->sb, a->scs, a->sdw, a->sts, a->rb, a->rcs, a->rdw, a->rts,
                     a->comm);
    }
}

/* How the MPI below pairs the repeated edges between two ranks of a Cartesian
 * communicator (graph 0) and of a graph (1), in each form and for each of the alltoall
 * calls: the k-th edge from a source receiving the source's k-th edge to this rank
 * (ORDER), its (m-1-k)-th of m (REVERSE), or as the standard says (STD). Measured once on
 * MPI_COMM_SELF, where every edge is a loop: a 2-D periodic grid of 1 x 1 (four loops) and
 * a distributed graph of three. MPICH 4.0.2 reverses MPI_Neighbor_alltoall's lists in
 * every form (right for a Cartesian dimension of 2, wrong for graphs and for two
 * dimensions of 1) and keeps the order in its v and w forms (wrong for Cartesian
 * dimensions of 1 and 2); Open MPI 4.1's blocking calls are right and its nonblocking ones
 * keep the order (docs/collectives.md). */
enum { PAIR_UNKNOWN, PAIR_STD, PAIR_ORDER, PAIR_REVERSE, PAIR_OTHER };
static int pairing[2][FORMS][3];
static pthread_mutex_t pairing_lock = PTHREAD_MUTEX_INITIALIZER;

static int probe_pairing(int graph, int form, int fam)
{
    MPI_Comm c = MPI_COMM_NULL;
    int n = graph ? 3 : 4, err;
    if (graph) {
        /* (weights: Open MPI's MPI_UNWEIGHTED is an address GCC reads as an empty array) */
        const int loops[3] = {0, 0, 0}, weights[3] = {1, 1, 1};
        err = PMPI_Dist_graph_create_adjacent(MPI_COMM_SELF, 3, loops, weights, 3, loops, weights,
                                              MPI_INFO_NULL, 0, &c);
    } else {
        const int dims[2] = {1, 1}, periods[2] = {1, 1};
        err = PMPI_Cart_create(MPI_COMM_SELF, 2, dims, periods, 0, &c);
    }
    if (err != MPI_SUCCESS)
        return PAIR_OTHER;
    int sb[4] = {0, 1, 2, 3}, rb[4] = {-1, -1, -1, -1}, counts[4] = {1, 1, 1, 1};
    int displs[4] = {0, 1, 2, 3};
    MPI_Aint bytes[4] = {0, sizeof(int), 2 * sizeof(int), 3 * sizeof(int)};
    MPI_Datatype types[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
    MPI_Request q = MPI_REQUEST_NULL;
    args_t a = {.fam = fam,
                .sb = sb,
                .sc = 1,
                .scs = counts,
                .sds = displs,
                .sdw = bytes,
                .st = MPI_INT,
                .sts = types,
                .rb = rb,
                .rc = 1,
                .rcs = counts,
                .rds = displs,
                .rdw = bytes,
                .rt = MPI_INT,
                .rts = types,
                .comm = c};
    err = below(&a, form, &q);
    if (err == MPI_SUCCESS && form == FORM_PERSISTENT)
        err = PMPI_Start(&q);
    if (err == MPI_SUCCESS && form != FORM_BLOCKING)
        err = PMPI_Wait(&q, MPI_STATUS_IGNORE);
    if (form == FORM_PERSISTENT && q != MPI_REQUEST_NULL)
        PMPI_Request_free(&q);
    PMPI_Comm_free(&c);
    int std = 1, order = 1, reverse = 1;
    for (int j = 0; j < n; j++) {
        std &= rb[j] == (graph ? j : j ^ 1);
        order &= rb[j] == j;
        reverse &= rb[j] == n - 1 - j;
    }
    return err != MPI_SUCCESS ? PAIR_OTHER
           : std              ? PAIR_STD
           : order            ? PAIR_ORDER
           : reverse          ? PAIR_REVERSE
                              : PAIR_OTHER;
}

static int pairing_of(int kind, int form, int fam)
{
    int graph = kind != MPI_CART, f = fam - F_ALLTOALL;
    pthread_mutex_lock(&pairing_lock);
    if (pairing[graph][form][f] == PAIR_UNKNOWN)
        pairing[graph][form][f] = probe_pairing(graph, form, fam);
    int p = pairing[graph][form][f];
    pthread_mutex_unlock(&pairing_lock);
    return p;
}

/* fix[j]: the receive block that must go at place j of the list given to the MPI below,
 * whose pairing is mode, so that the standard's block lands in each (a permutation among
 * the places of one source). */
static void fix_make(const hmpi_coll_nbr_t *nb, int mode, int *fix)
{
    int n = nb->indeg;
    int *at = hmpi_coll_alloc(sizeof(int) * (2 * (size_t)n + 2));
    for (int j = 0; j < n; j++)
        fix[j] = -1;
    for (int j = 0; j < n; j++) {
        int p = nb->src[j], m = 0;
        if (fix[j] >= 0)
            continue;
        if (p == MPI_PROC_NULL) {
            fix[j] = j;
            continue;
        }
        for (int i = j; i < n; i++) /* the places of p */
            if (nb->src[i] == p)
                at[m++] = i;
        /* p's edges to this rank, in p's order: on a Cartesian communicator the edge into
         * place x leaves p from place x ^ 1 (the opposite direction), and the standard
         * puts p's edge from place y into place y ^ 1; on a graph it puts p's o-th edge
         * into p's o-th place. */
        int *from = at + n + 1;
        for (int i = 0; i < m; i++) {
            int y = nb->kind == MPI_CART ? at[i] ^ 1 : at[i], k = i;
            for (; k > 0 && from[k - 1] > y; k--) /* sorted */
                from[k] = from[k - 1];
            from[k] = y;
        }
        for (int i = 0; i < m; i++) {
            /* The MPI below delivers p's o-th edge to this rank at p's i-th place. */
            int o = mode == PAIR_REVERSE ? m - 1 - i : mode == PAIR_ORDER ? i : -1;
            fix[at[i]] = o < 0 ? at[i] : nb->kind == MPI_CART ? from[o] ^ 1 : at[o];
        }
    }
    hmpi_heap_free(at);
}

/* Bytes of the arrays fixed_args builds, and of fix (its last indeg ints). */
static size_t fix_bytes(int indeg, int outdeg)
{
    size_t n = (size_t)indeg + (size_t)outdeg + 1;
    return n * (sizeof(MPI_Count) + sizeof(MPI_Aint) + sizeof(MPI_Datatype) + 3 * sizeof(int));
}

/* a as the v or w call of its family whose receive block at place j is a's block fix[j]
 * (and, W_BY_C, an alltoallw as its _c form), its arrays built in mem (fix_bytes; fix lies
 * at its end). */
static args_t fixed_args(const args_t *a, const int *fix, int indeg, int outdeg, void *mem)
{
    args_t f = *a;
    size_t n = (size_t)indeg + (size_t)outdeg + 1;
    MPI_Count *cc = mem;
    MPI_Aint *rdw = (MPI_Aint *)(cc + n);
    MPI_Datatype *rts = (MPI_Datatype *)(rdw + n);
    if (W_BY_C && a->fam == F_ALLTOALLW) {
        for (int k = 0; k < outdeg; k++)
            cc[k] = a->scs[k];
        for (int j = 0; j < indeg; j++)
            cc[outdeg + j] = a->rcs[fix[j]];
        f.scc = cc;
        f.rcc = cc + outdeg;
    }
    int *rcs = (int *)(rts + n), *rds = rcs + indeg, *scs = rds + indeg, *sds = scs + outdeg;
    if (a->fam == F_ALLTOALL) { /* as alltoallv */
        f.fam = F_ALLTOALLV;
        for (int k = 0; k < outdeg; k++)
            scs[k] = a->sc, sds[k] = k * a->sc;
        f.scs = scs;
        f.sds = sds;
    }
    for (int j = 0; j < indeg; j++) {
        int b = fix[j];
        rcs[j] = a->fam == F_ALLTOALL ? a->rc : a->rcs[b];
        rds[j] = a->fam == F_ALLTOALL ? b * a->rc : a->fam == F_ALLTOALLV ? a->rds[b] : 0;
        if (a->fam == F_ALLTOALLW)
            rdw[j] = a->rdw[b], rts[j] = a->rts[b];
    }
    f.rcs = rcs;
    f.rds = rds;
    f.rdw = rdw;
    f.rts = rts;
    return f;
}

/* What the MPI below must be given otherwise for a's call in form over c (a
 * communicator HMPI knows; NULL: one it does not): its receive blocks permuted where it
 * pairs repeated edges otherwise than the standard (FIX_PAIRS; *mode its pairing for the
 * call it then gets, an alltoall going as alltoallv), and MPICH 4.0's alltoallw by its _c
 * form (FIX_W). The same answer on every member. */
enum { FIX_PAIRS = 1, FIX_W = 2 };
static int fixes_of(const args_t *a, hmpi_comm_t *c, int form, int *kind, int *mode)
{
    *kind = MPI_UNDEFINED;
    *mode = PAIR_STD;
    if (!c || a->fam < F_ALLTOALL || PMPI_Topo_test(a->comm, kind) != MPI_SUCCESS ||
        *kind == MPI_UNDEFINED)
        return 0;
    int p = pairing_of(*kind, form, a->fam), fixes = W_BY_C && a->fam == F_ALLTOALLW ? FIX_W : 0;
    *mode = pairing_of(*kind, form, a->fam == F_ALLTOALL ? F_ALLTOALLV : a->fam);
    if ((p == PAIR_ORDER || p == PAIR_REVERSE) && *mode != PAIR_OTHER)
        fixes |= FIX_PAIRS;
    return fixes;
}

/* The call of a in form as the MPI below must get it on c (fixes_of): head bytes for the
 * caller, then the call's arrays (*f set), in a block of private memory to free once the
 * call completes; NULL when a goes as it is. Every member makes the same call (its
 * receive blocks permuted or not), or the MPI below's sequences of collectives on the
 * communicator would differ (MPICH numbers them: a member whose persistent request took
 * a number once while another's nonblocking calls took one per start received blocks of
 * the next call). */
static void *fix_call(const args_t *a, hmpi_comm_t *c, int form, size_t head, args_t *f)
{
    int kind, mode, fixes = fixes_of(a, c, form, &kind, &mode);
    if (!fixes)
        return NULL;
    hmpi_coll_nbr_t *nb = c->coll ? nbr_of(c->coll, a->comm) : nbr_make(a->comm, 0);
    void *mem = NULL;
    if (nb && ((fixes & FIX_PAIRS && nb->any_dups) || fixes & FIX_W)) {
        size_t fb = fix_bytes(nb->indeg, nb->outdeg);
        mem = hmpi_coll_alloc(head + fb);
        int *fix = (int *)((char *)mem + head + fb) - nb->indeg;
        fix_make(nb, fixes & FIX_PAIRS ? mode : PAIR_STD, fix);
        *f = fixed_args(a, fix, nb->indeg, nb->outdeg, (char *)mem + head);
    }
    if (nb && !c->coll)
        hmpi_heap_free(nb);
    return mem;
}

/* A nonblocking call of the MPI below with arrays of HMPI's: they go once it completes
 * (a polled request of p2p's; arg starts with the MPI below's request). */
static int poll_fixed(void *arg, MPI_Status *status)
{
    MPI_Request *q = arg;
    int flag = 0, err = PMPI_Test(q, &flag, MPI_STATUS_IGNORE);
    if (!flag && err == MPI_SUCCESS)
        return 0;
    status->MPI_ERROR = err;
    hmpi_heap_free(arg);
    return 1;
}

/* The blocking call of the MPI below on c (NULL: a communicator HMPI does not know):
 * its nonblocking form waited for with HMPI's progress, where every member does so alike
 * (hmpi_comm_below_nb), else the blocking one. */
static int below_blocking(const args_t *a, hmpi_comm_t *c)
{
    int form = c && hmpi_comm_below_nb(c) ? FORM_NONBLOCKING : FORM_BLOCKING;
    MPI_Request q = MPI_REQUEST_NULL;
    args_t f = *a;
    void *mem = fix_call(a, c, form, 0, &f);
    int err = below(&f, form, &q);
    if (err == MPI_SUCCESS && form == FORM_NONBLOCKING)
        err = hmpi_p2p_below_wait(&q, MPI_STATUS_IGNORE, HMPI_WAIT_COLL);
    hmpi_heap_free(mem);
    return err;
}

/* The nonblocking call of the MPI below, its pairing fixed where it must be. */
static int below_nonblocking(const args_t *a, hmpi_comm_t *c, MPI_Request *request)
{
    args_t f = *a;
    void *mem = fix_call(a, c, FORM_NONBLOCKING, 64, &f);
    if (!mem)
        return below(a, FORM_NONBLOCKING, request);
    MPI_Request *q = mem;
    int err = below(&f, FORM_NONBLOCKING, q);
    if (err == MPI_SUCCESS)
        err = hmpi_p2p_poll_new(poll_fixed, mem, c, request);
    if (err != MPI_SUCCESS)
        hmpi_heap_free(mem);
    return err;
}

/* ---- operations (nbc.h) ------------------------------------------------------------------ */

/* What an operation holds beside it goes: the holds on its derived types, the arrays. */
static void op_release(hmpi_coll_op_t *op)
{
    run_t *r = hmpi_coll_op_ext(op);
    for (int i = 0; i < r->nholds; i++)
        hmpi_type_release(r->holds[i]);
}

/* The MPI below's nonblocking call in an operation's place (a setup that ends in
 * pass-through, nbc.c; the persistent form's fixed pairing below). */
static int op_below_start(hmpi_coll_op_t *op, MPI_Request *q)
{
    run_t *r = hmpi_coll_op_ext(op);
    if (r->fix) {
        args_t f = fixed_args(&r->a, r->fix, r->nb->indeg, r->nb->outdeg, r->fix_mem);
        return below(&f, FORM_NONBLOCKING, q);
    }
    return below(&r->a, FORM_NONBLOCKING, q);
}

static int op_below_phase_start(hmpi_coll_op_t *op) { return op_below_start(op, &op->below); }

/* A persistent call the MPI below carries with its pairing fixed: its nonblocking call
 * at every start (every member: this phase runs on all). */
static int phase_below_fixed(hmpi_coll_op_t *op)
{
    if (op->step == 0) {
        op->step = 1;
        int err = op_below_phase_start(op);
        if (err != MPI_SUCCESS) {
            op->err = err;
            return 1;
        }
    }
    return hmpi_coll_phase_below_wait(op);
}

/* Holds on the derived types of side s (its type, or the w form's n types), into
 * r->holds: the program may free them while the operation lives (MPI-4.1 §5.1.9). */
static void hold_types(run_t *r, const side_t *s, const hmpi_layout_t *l, int n)
{
    for (int i = 0; i < (s->types ? n : 1); i++) {
        MPI_Datatype t = s->types ? s->types[i] : s->type;
        if (s->types ? l[i].derived : s->derived) {
            hmpi_type_hold(t);
            r->holds[r->nholds++] = t;
        }
    }
}

/* A new operation for a on s, its run after it: the layouts, the holds and (fix) the
 * arrays of a fixed pairing, all in one block. */
static hmpi_coll_op_t *op_make(hmpi_coll_comm_t *s, hmpi_comm_t *c, const args_t *a,
                               hmpi_coll_nbr_t *nb, int fixed, hmpi_coll_phase_fn phase)
{
    int in = nb ? nb->indeg : 0, out = nb ? nb->outdeg : 0;
    size_t lay = sizeof(hmpi_layout_t) * ((size_t)in + (size_t)out + 1);
    size_t holds = sizeof(MPI_Datatype) * ((size_t)in + (size_t)out + 2);
    size_t fb = fixed ? fix_bytes(in, out) : 0;
    size_t extra = sizeof(run_t) + lay + holds + fb;
    hmpi_coll_op_t *op = hmpi_coll_op_new_ext(s, c, 1, &phase, extra);
    if (!op)
        return NULL;
    run_t *r = hmpi_coll_op_ext(op);
    r->nb = nb;
    r->a = *a;
    r->sl = (hmpi_layout_t *)(r + 1);
    r->rl = r->sl + (out ? out : 1);
    r->holds = (MPI_Datatype *)(r->sl + in + out + 1);
    if (fixed) {
        r->fix_mem = r->holds + in + out + 2;
        r->fix = (int *)((char *)r->fix_mem + fb) - in;
    }
    op->below_start = op_below_start;
    op->release = op_release;
    return op;
}

/* ---- the entry points ---------------------------------------------------------------------- */

/* Checks a's blocks into r's layouts (sl, rl set): MPI_SUCCESS or an error described. */
static int check_run(run_t *r, const args_t *a)
{
    sides_of(a, &r->sd, &r->rv);
    int err = side_layouts(&r->sd, r->nb->outdeg, r->sl, "sendtype");
    if (err == MPI_SUCCESS)
        err = side_layouts(&r->rv, r->nb->indeg, r->rl, "recvtype");
    return err;
}

enum { STACK_EDGES = 32 };

/* The blocking call on a node's team: the layouts on the stack when they fit. */
static int blocking_team(hmpi_coll_comm_t *s, hmpi_coll_nbr_t *nb, const args_t *a)
{
    hmpi_layout_t stack[STACK_EDGES];
    size_t n = (size_t)nb->indeg + (size_t)nb->outdeg + 1;
    hmpi_layout_t *l = n <= STACK_EDGES ? stack : hmpi_coll_alloc(sizeof *l * n);
    run_t r = {.nb = nb, .sl = l, .rl = l + (nb->outdeg ? nb->outdeg : 1)};
    int err = check_run(&r, a);
    r.empty = err != MPI_SUCCESS; /* still in the epoch: the others wait for it */
    int err2 = team_run(&s->team, &r);
    if (l != stack)
        hmpi_heap_free(l);
    return err != MPI_SUCCESS ? err : err2;
}

/* A nonblocking or persistent call on a node's team (s may be in its setup: nbc.h). */
static int start_team(hmpi_coll_comm_t *s, hmpi_comm_t *c, hmpi_coll_nbr_t *nb, const args_t *a,
                      int persistent, MPI_Request *request)
{
    hmpi_coll_op_t *op = op_make(s, c, a, nb, 0, phase_neighbor);
    if (!op)
        return MPI_ERR_NO_MEM;
    run_t *r = hmpi_coll_op_ext(op);
    int err = check_run(r, a);
    if (err == MPI_SUCCESS) {
        hold_types(r, &r->sd, r->sl, nb->outdeg);
        hold_types(r, &r->rv, r->rl, nb->indeg);
    }
    /* A check that failed still starts the operation, empty: the others wait for this
     * rank's epoch. */
    r->empty = err != MPI_SUCCESS;
    op->persistent = (uint8_t)persistent;
    int err2 = hmpi_coll_op_start(op, request);
    return err != MPI_SUCCESS ? err : err2;
}

/* A persistent call the MPI below carries: its own, or where that must be given
 * otherwise (fixes_of), an operation of HMPI's that starts the below's nonblocking call,
 * as it must be, at every start (on c's state: made here if need be, by every member
 * alike: fixes_of answers alike). */
static int start_below_persistent(hmpi_comm_t *c, const args_t *a, MPI_Request *request)
{
    int kind, mode;
    if (fixes_of(a, c, FORM_PERSISTENT, &kind, &mode)) {
        hmpi_comm_t *c2;
        hmpi_coll_get(a->comm, &c2); /* collective */
        hmpi_coll_comm_t *s = c->coll;
        hmpi_coll_nbr_t *nb = s ? nbr_of(s, a->comm) : NULL;
        int fixes = fixes_of(a, c, FORM_NONBLOCKING, &kind, &mode);
        if (nb && ((fixes & FIX_PAIRS && nb->any_dups) || fixes & FIX_W)) {
            hmpi_coll_op_t *op = op_make(s, c, a, nb, 1, phase_below_fixed);
            if (!op)
                return MPI_ERR_NO_MEM;
            run_t *r = hmpi_coll_op_ext(op);
            fix_make(nb, fixes & FIX_PAIRS ? mode : PAIR_STD, r->fix);
            op->persistent = 1;
            return hmpi_coll_op_start(op, request);
        }
    }
    return below(a, FORM_PERSISTENT, request);
}

static const char *const fam_name[3][5] = {
    {"MPI_Neighbor_allgather", "MPI_Neighbor_allgatherv", "MPI_Neighbor_alltoall",
     "MPI_Neighbor_alltoallv", "MPI_Neighbor_alltoallw"},
    {"MPI_Ineighbor_allgather", "MPI_Ineighbor_allgatherv", "MPI_Ineighbor_alltoall",
     "MPI_Ineighbor_alltoallv", "MPI_Ineighbor_alltoallw"},
    {"MPI_Neighbor_allgather_init", "MPI_Neighbor_allgatherv_init", "MPI_Neighbor_alltoall_init",
     "MPI_Neighbor_alltoallv_init", "MPI_Neighbor_alltoallw_init"},
};

/* Every entry point: on a node's team when the communicator is accelerated and within one
 * node, else the MPI below. Every member takes the same way: the mode and the topology's
 * kind are the same in all. */
static int neighbor(const args_t *a, int form, MPI_Request *request)
{
    const char *fn = fam_name[form][a->fam];
    HMPI_ENTER(fn);
    hmpi_comm_t *c = NULL;
    hmpi_coll_comm_t *s =
        form == FORM_BLOCKING ? hmpi_coll_get(a->comm, &c) : hmpi_coll_get_nb(a->comm, &c);
    hmpi_coll_nbr_t *nb = NULL;
    if (s && (s->mode == HMPI_COLL_FLAT || s->mode == HMPI_COLL_SETUP))
        nb = nbr_of(s, a->comm);
    if (form == FORM_BLOCKING)
        HMPI_COLL_COUNT(neighbor, nb != NULL);
    else
        HMPI_COLL_COUNT(nonblocking, nb != NULL);
    if (!nb) {
        if (hmpi_check_comm_null(a->comm, fn))
            return MPI_ERR_COMM;
        if (!c && hmpi_node.active)
            c = hmpi_comm_get(a->comm);
        if (form == FORM_BLOCKING)
            return below_blocking(a, c);
        if (form == FORM_NONBLOCKING)
            return below_nonblocking(a, c, request);
        return start_below_persistent(c, a, request);
    }
    if (form != FORM_BLOCKING && !request)
        return hmpi_raise_in(a->comm, hmpi_err_what(MPI_ERR_ARG, "request is NULL"), fn);
    int err = form == FORM_BLOCKING ? blocking_team(s, nb, a)
                                    : start_team(s, c, nb, a, form == FORM_PERSISTENT, request);
    return hmpi_raise_in(a->comm, err, fn);
}

/* The family's entry points: ARGS fills an args_t from the call's parameters. */
#define ENTRY(NAME, FORM, PARAMS, ...)                \
    int MPI_##NAME PARAMS                             \
    {                                                 \
        const args_t a = {__VA_ARGS__, .comm = comm}; \
        return neighbor(&a, FORM, REQ_##FORM);        \
    }                                                 \
    HMPI_PMPI(NAME)
#define REQ_FORM_BLOCKING NULL
#define REQ_FORM_NONBLOCKING request
#define REQ_FORM_PERSISTENT request

#define AG_PARAMS const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt
#define AG_ARGS .fam = F_ALLGATHER, .sb = sb, .sc = sc, .st = st, .rb = rb, .rc = rc, .rt = rt
#define AGV_PARAMS                                                                     \
    const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int rd[], \
        MPI_Datatype rt
#define AGV_ARGS \
    .fam = F_ALLGATHERV, .sb = sb, .sc = sc, .st = st, .rb = rb, .rcs = rc, .rds = rd, .rt = rt
#define A2A_ARGS .fam = F_ALLTOALL, .sb = sb, .sc = sc, .st = st, .rb = rb, .rc = rc, .rt = rt
#define A2AV_PARAMS                                                                            \
    const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb, const int rc[], \
        const int rd[], MPI_Datatype rt
#define A2AV_ARGS                                                                                 \
    .fam = F_ALLTOALLV, .sb = sb, .scs = sc, .sds = sd, .st = st, .rb = rb, .rcs = rc, .rds = rd, \
    .rt = rt
#define A2AW_PARAMS                                                                         \
    const void *sb, const int sc[], const MPI_Aint sd[], const MPI_Datatype st[], void *rb, \
        const int rc[], const MPI_Aint rd[], const MPI_Datatype rt[]
#define A2AW_ARGS                                                                                  \
    .fam = F_ALLTOALLW, .sb = sb, .scs = sc, .sdw = sd, .sts = st, .rb = rb, .rcs = rc, .rdw = rd, \
    .rts = rt

ENTRY(Neighbor_allgather, FORM_BLOCKING, (AG_PARAMS, MPI_Comm comm), AG_ARGS)
ENTRY(Neighbor_allgatherv, FORM_BLOCKING, (AGV_PARAMS, MPI_Comm comm), AGV_ARGS)
ENTRY(Neighbor_alltoall, FORM_BLOCKING, (AG_PARAMS, MPI_Comm comm), A2A_ARGS)
ENTRY(Neighbor_alltoallv, FORM_BLOCKING, (A2AV_PARAMS, MPI_Comm comm), A2AV_ARGS)
ENTRY(Neighbor_alltoallw, FORM_BLOCKING, (A2AW_PARAMS, MPI_Comm comm), A2AW_ARGS)

ENTRY(Ineighbor_allgather, FORM_NONBLOCKING, (AG_PARAMS, MPI_Comm comm, MPI_Request *request),
      AG_ARGS)
ENTRY(Ineighbor_allgatherv, FORM_NONBLOCKING, (AGV_PARAMS, MPI_Comm comm, MPI_Request *request),
      AGV_ARGS)
ENTRY(Ineighbor_alltoall, FORM_NONBLOCKING, (AG_PARAMS, MPI_Comm comm, MPI_Request *request),
      A2A_ARGS)
ENTRY(Ineighbor_alltoallv, FORM_NONBLOCKING, (A2AV_PARAMS, MPI_Comm comm, MPI_Request *request),
      A2AV_ARGS)
ENTRY(Ineighbor_alltoallw, FORM_NONBLOCKING, (A2AW_PARAMS, MPI_Comm comm, MPI_Request *request),
      A2AW_ARGS)

#if HMPI_MPI4_CALLS
/* The persistent forms: info carries no hint HMPI reads. */
#define ENTRY_INIT(NAME, P, ...)                                          \
    int MPI_##NAME(P, MPI_Comm comm, MPI_Info info, MPI_Request *request) \
    {                                                                     \
        (void)info;                                                       \
        const args_t a = {__VA_ARGS__, .comm = comm};                     \
        return neighbor(&a, FORM_PERSISTENT, request);                    \
    }                                                                     \
    HMPI_PMPI(NAME)
ENTRY_INIT(Neighbor_allgather_init, AG_PARAMS, AG_ARGS)
ENTRY_INIT(Neighbor_allgatherv_init, AGV_PARAMS, AGV_ARGS)
ENTRY_INIT(Neighbor_alltoall_init, AG_PARAMS, A2A_ARGS)
ENTRY_INIT(Neighbor_alltoallv_init, A2AV_PARAMS, A2AV_ARGS)
ENTRY_INIT(Neighbor_alltoallw_init, A2AW_PARAMS, A2AW_ARGS)
#endif
