/* coll_neighbor.c: the neighbourhood collectives (MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v,w)) in their blocking, nonblocking and persistent forms against
 * results computed locally: Cartesian communicators of 1 to 3 dimensions, periodic and
 * not, with dimensions of 1 and 2 (a rank its own neighbour, or the same neighbour twice),
 * a graph, distributed graphs with repeated, missing and self edges (adjacent and not);
 * blocks of 0 to 1.2 MiB, buffers of every kind, derived datatypes on either side, uneven
 * counts and displacements whose gaps must stay untouched; nonblocking ones outstanding
 * together and beside other collectives, completed in reverse order; persistent ones
 * started 1,000 times with their buffers changed between starts. Standard MPI only. The
 * MPI below alone pairs repeated edges its own way (MPICH 4.0.2, Open MPI 4.1.4 and
 * 5.0.7: docs/collectives.md), so without HMPI the blocks of repeated edges are not
 * checked; MPICH 4.0's alltoallw mixes up the degrees (pmodels/mpich#6233), so without
 * HMPI it is not checked where they differ; nor are Open MPI's alltoallv and alltoallw
 * where edges repeat (its nonblocking forms pair them in order: truncated blocks). */
#include "coll_common.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HAVE_INIT 1
#else
#define HAVE_INIT 0
#endif

static int strict; /* HMPI is active: repeated edges are paired as the standard says */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
#define MPICH_40 1
#else
#define MPICH_40 0
#endif
#if defined(OPEN_MPI) /* 4.1.4 and 5.0.7 alike */
#define OMPI_ANY 1
#else
#define OMPI_ANY 0
#endif
static MPI_Datatype hole_int; /* one int, then a hole of one int (extent 8) */

/* ---- topologies --------------------------------------------------------------------- */

typedef struct {
    MPI_Comm comm;
    char name[80];
    int kind, rank, size;
    int indeg, outdeg;
    int *src, *dst;
    int *pair;   /* [indeg] the source's out-edge that in-edge j receives */
    int *repeat; /* [indeg] the source appears more than once */
    int hmpi;    /* HMPI does the calls itself (one node) */
    int skew;    /* some member's in- and out-degrees differ */
    int repeats; /* some member has a source more than once */
} topo_t;

/* The lists of comm's topology, and (from every rank's list of destinations) which block
 * of its source each in-edge receives: on a Cartesian one the block sent in the opposite
 * direction (j ^ 1), on a graph the k-th edge from a source gets the source's k-th edge
 * to this rank. */
static void topo_fill(topo_t *t, MPI_Comm comm, const char *name)
{
    t->comm = comm;
    snprintf(t->name, sizeof t->name, "%s", name);
    MPI_Comm_rank(comm, &t->rank);
    MPI_Comm_size(comm, &t->size);
    MPI_Topo_test(comm, &t->kind);
    int nd = 0, weighted = 0;
    if (t->kind == MPI_CART) {
        MPI_Cartdim_get(comm, &nd);
        t->indeg = t->outdeg = 2 * nd;
    } else if (t->kind == MPI_GRAPH) {
        MPI_Graph_neighbors_count(comm, t->rank, &t->indeg);
        t->outdeg = t->indeg;
    } else {
        MPI_Dist_graph_neighbors_count(comm, &t->indeg, &t->outdeg, &weighted);
    }
    t->src = malloc(sizeof(int) * (size_t)(t->indeg + 1));
    t->dst = malloc(sizeof(int) * (size_t)(t->outdeg + 1));
    t->pair = malloc(sizeof(int) * (size_t)(t->indeg + 1));
    t->repeat = malloc(sizeof(int) * (size_t)(t->indeg + 1));
    CHECK(t->src && t->dst && t->pair && t->repeat, "malloc");
    if (t->kind == MPI_CART) {
        for (int d = 0; d < nd; d++)
            MPI_Cart_shift(comm, d, 1, &t->src[2 * d], &t->src[2 * d + 1]);
        memcpy(t->dst, t->src, sizeof(int) * (size_t)t->indeg);
    } else if (t->kind == MPI_GRAPH) {
        MPI_Graph_neighbors(comm, t->rank, t->indeg, t->src);
        memcpy(t->dst, t->src, sizeof(int) * (size_t)t->indeg);
    } else {
        int *w = malloc(sizeof(int) * (size_t)(t->indeg + t->outdeg + 2));
        MPI_Dist_graph_neighbors(comm, t->indeg, t->src, weighted ? w : MPI_UNWEIGHTED, t->outdeg,
                                 t->dst, weighted ? w + t->indeg + 1 : MPI_UNWEIGHTED);
        free(w);
    }
    /* every rank's destinations */
    int *outs = malloc(sizeof(int) * (size_t)t->size), *at = malloc(sizeof(int) * (size_t)t->size);
    MPI_Allgather(&t->outdeg, 1, MPI_INT, outs, 1, MPI_INT, comm);
    int total = 0;
    for (int r = 0; r < t->size; r++)
        at[r] = total, total += outs[r];
    int *all = malloc(sizeof(int) * (size_t)(total + 1));
    MPI_Allgatherv(t->dst, t->outdeg, MPI_INT, all, outs, at, MPI_INT, comm);
    for (int j = 0; j < t->indeg; j++) {
        int p = t->src[j], c = 0;
        t->pair[j] = -1;
        t->repeat[j] = 0;
        if (p == MPI_PROC_NULL)
            continue;
        for (int i = 0; i < t->indeg; i++)
            if (i != j && t->src[i] == p)
                t->repeat[j] = 1;
        if (t->kind == MPI_CART) {
            t->pair[j] = j ^ 1;
            CHECK(all[at[p] + (j ^ 1)] == t->rank, "%s: Cartesian lists disagree", name);
            continue;
        }
        for (int i = 0; i < j; i++)
            c += t->src[i] == p;
        for (int k = 0; k < outs[p] && t->pair[j] < 0; k++)
            if (all[at[p] + k] == t->rank && c-- == 0)
                t->pair[j] = k;
        CHECK(t->pair[j] >= 0, "%s: edge %d from %d has no edge to match", name, j, p);
    }
    free(all);
    free(at);
    free(outs);
    int mine = t->indeg != t->outdeg;
    MPI_Allreduce(&mine, &t->skew, 1, MPI_INT, MPI_MAX, comm);
    mine = 0;
    for (int j = 0; j < t->indeg; j++)
        mine |= t->repeat[j];
    MPI_Allreduce(&mine, &t->repeats, 1, MPI_INT, MPI_MAX, comm);
    t->hmpi = tc_hmpi_does(comm);
}

static void topo_free(topo_t *t)
{
    free(t->src);
    free(t->dst);
    free(t->pair);
    free(t->repeat);
    MPI_Comm_free(&t->comm);
}

enum { MAX_TOPOS = 24 };
static topo_t topos[MAX_TOPOS];
static int ntopos;

static void add_cart(MPI_Comm base, const char *bname, int nd, const int *dims_in,
                     const int *periods)
{
    int size, dims[3] = {0, 0, 0};
    MPI_Comm_size(base, &size);
    for (int d = 0; d < nd; d++)
        dims[d] = dims_in ? dims_in[d] : 0;
    MPI_Dims_create(size, nd, dims);
    MPI_Comm c;
    MPI_Cart_create(base, nd, dims, periods, 0, &c);
    if (c == MPI_COMM_NULL)
        return;
    char name[80];
    int n = snprintf(name, sizeof name, "%s cart", bname);
    for (int d = 0; d < nd; d++)
        n += snprintf(name + n, sizeof name - (size_t)n, "%s%d%s", d ? "x" : " ", dims[d],
                      periods[d] ? "p" : "");
    topo_fill(&topos[ntopos++], c, name);
}

/* Every topology of the test over base (of size >= 1). */
static void make_topos(MPI_Comm base, const char *bname, int all)
{
    int size, rank;
    MPI_Comm_size(base, &size);
    MPI_Comm_rank(base, &rank);
    const int p1[1] = {1}, n1[1] = {0}, p11[2] = {1, 1}, p10[2] = {1, 0}, p01[2] = {0, 1};
    const int p111[3] = {1, 1, 1}, p010[3] = {0, 1, 0};
    add_cart(base, bname, 1, NULL, p1);
    add_cart(base, bname, 1, NULL, n1);
    add_cart(base, bname, 2, NULL, p11);
    if (!all)
        return;
    add_cart(base, bname, 2, NULL, p10);
    add_cart(base, bname, 3, NULL, p111);
    add_cart(base, bname, 3, NULL, p010);
    /* dimensions of 1: the rank is its own neighbour, twice per periodic one */
    const int d_n1[2] = {size, 1}, d_1n[2] = {1, size}, d_11n[3] = {1, 1, size};
    add_cart(base, bname, 2, d_n1, p01);
    add_cart(base, bname, 2, d_1n, p11);
    add_cart(base, bname, 3, d_11n, p111);
    if (size % 2 == 0) { /* dimensions of 2: the same neighbour twice */
        const int d_2h[2] = {2, size / 2}, d_2h1[3] = {2, size / 2, 1};
        add_cart(base, bname, 2, d_2h, p11);
        add_cart(base, bname, 3, d_2h1, p111);
    }
    char name[80];
    MPI_Comm c;
    /* a graph: a ring with chords from rank 0 to every even rank (symmetric) */
    {
        int *index = malloc(sizeof(int) * (size_t)size),
            *edges = malloc(sizeof(int) * 8 * (size_t)size);
        int ne = 0;
        for (int r = 0; r < size; r++) {
            if (size > 1) {
                edges[ne++] = (r + 1) % size;
                edges[ne++] = (r + size - 1) % size;
            }
            if (r == 0)
                for (int q = 2; q < size; q += 2)
                    edges[ne++] = q;
            else if (r % 2 == 0)
                edges[ne++] = 0;
            index[r] = ne;
        }
        MPI_Graph_create(base, size, index, edges, 0, &c);
        snprintf(name, sizeof name, "%s graph", bname);
        topo_fill(&topos[ntopos++], c, name);
        free(index);
        free(edges);
    }
    /* a distributed graph, adjacent: to r+1 twice and to itself, from r-1 twice and from
     * itself; the last rank has no edge at all, odd ranks no loop */
    {
        int src[3], dst[3], in = 0, out = 0, last = size - 1;
        if (rank != last && size > 1) {
            int next = (rank + 1) % size;
            if (next != last)
                dst[out++] = next, dst[out++] = next;
            if (rank % 2 == 0)
                dst[out++] = rank;
            int prev = (rank + size - 1) % size;
            if (prev != last)
                src[in++] = prev, src[in++] = prev;
            if (rank % 2 == 0)
                src[in++] = rank;
        }
        MPI_Dist_graph_create_adjacent(base, in, src, MPI_UNWEIGHTED, out, dst, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &c);
        snprintf(name, sizeof name, "%s dist graph adjacent", bname);
        topo_fill(&topos[ntopos++], c, name);
    }
    /* a distributed graph made from edges scattered over the ranks, weighted: each rank
     * names a few edges of others (repeated ones among them); the order of the lists is
     * the MPI's own */
    {
        int sources[1] = {rank}, degrees[1], dest[4], weights[4], n = 0;
        for (int k = 1; k <= 3 && size > 1; k++)
            dest[n++] = (rank * 5 + k * 3) % size;
        if (rank % 3 == 0 && size > 2)
            dest[n++] = (rank + 1) % size;
        for (int k = 0; k < n; k++)
            weights[k] = k + 1;
        degrees[0] = n;
        MPI_Dist_graph_create(base, 1, sources, degrees, dest, weights, MPI_INFO_NULL, 0, &c);
        snprintf(name, sizeof name, "%s dist graph", bname);
        topo_fill(&topos[ntopos++], c, name);
    }
}

/* ---- one call ----------------------------------------------------------------------- */

enum { F_ALLGATHER, F_ALLGATHERV, F_ALLTOALL, F_ALLTOALLV, F_ALLTOALLW, FAMS };
static const char *const fam_name[FAMS] = {"allgather", "allgatherv", "alltoall", "alltoallv",
                                           "alltoallw"};
enum { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *const form_name[3] = {"blocking", "nonblocking", "persistent"};

enum { SENTINEL = -777 };

/* A call's buffers: block j of a side is cnt[j] ints at byte displ[j], strided (an int,
 * then a hole) when str[j]. */
typedef struct {
    const topo_t *t;
    int fam, kind, n;       /* n: the uniform count */
    int send_str, recv_str; /* derived types (uniform forms) */
    uint64_t seed;
    int *sb, *rb;
    size_t sbytes, rbytes;
    int *scnt, *sdispl, *rcnt, *rdispl, *sstr, *rstr;
    MPI_Aint *sbd, *rbd;
    MPI_Datatype *stypes, *rtypes;
} call_t;

/* A source p's block k: its count (uneven in the v and w forms), and its values (a
 * gather's blocks are all its block 0). */
static int blk_count(const call_t *x, int p, int k)
{
    if (!x->n)
        return 0;
    if (x->fam == F_ALLGATHERV)
        return x->n + (p * 3) % 7;
    if (x->fam == F_ALLTOALLV || x->fam == F_ALLTOALLW)
        return x->n + (p * 3 + k * 5) % 7;
    return x->n;
}

static int blk_val(const call_t *x, int p, int k, int i)
{
    int kk = x->fam <= F_ALLGATHERV ? 0 : k;
    return tc_int(x->seed * 131 + (uint64_t)kk, p, i);
}

static int *elem(int *buf, size_t displ, int str, int i)
{
    return (int *)((char *)buf + displ) + (str ? 2 * i : i);
}

/* Places n blocks of one side: uniform ones at j * count extents, the others (v, w)
 * with gaps of 1 to 3 ints before each. Returns the bytes they take. */
static size_t place(int n, int uniform, int count, const int *cnt, const int *str, int *displ,
                    MPI_Aint *bd, int shift)
{
    size_t at = 0;
    for (int j = 0; j < n; j++) {
        size_t stride = str[j] ? 8 : 4;
        if (uniform) {
            displ[j] = j * count;
            bd[j] = (MPI_Aint)((size_t)j * (size_t)count * stride);
            at = (size_t)(j + 1) * (size_t)count * stride;
            continue;
        }
        at += 4 * (size_t)(1 + (j + shift) % 3); /* a gap */
        at = (at + stride - 1) / stride * stride;
        displ[j] = (int)(at / stride);
        bd[j] = (MPI_Aint)at;
        at += (size_t)cnt[j] * stride;
    }
    return at;
}

/* Lays the blocks out, allocates and fills. */
static void call_prepare(call_t *x)
{
    const topo_t *t = x->t;
    int gather = x->fam <= F_ALLGATHERV;
    int nsb = gather ? 1 : t->outdeg, nrb = t->indeg;
    x->scnt = malloc(sizeof(int) * (size_t)(nsb + 1));
    x->sdispl = malloc(sizeof(int) * (size_t)(nsb + 1));
    x->sstr = malloc(sizeof(int) * (size_t)(nsb + 1));
    x->sbd = malloc(sizeof(MPI_Aint) * (size_t)(nsb + 1));
    x->stypes = malloc(sizeof(MPI_Datatype) * (size_t)(nsb + 1));
    x->rcnt = malloc(sizeof(int) * (size_t)(nrb + 1));
    x->rdispl = malloc(sizeof(int) * (size_t)(nrb + 1));
    x->rstr = malloc(sizeof(int) * (size_t)(nrb + 1));
    x->rbd = malloc(sizeof(MPI_Aint) * (size_t)(nrb + 1));
    x->rtypes = malloc(sizeof(MPI_Datatype) * (size_t)(nrb + 1));
    CHECK(x->scnt && x->sdispl && x->sstr && x->sbd && x->stypes && x->rcnt && x->rdispl &&
              x->rstr && x->rbd && x->rtypes,
          "malloc");
    for (int k = 0; k < nsb; k++) {
        x->scnt[k] = blk_count(x, t->rank, k);
        x->sstr[k] = x->fam == F_ALLTOALLW ? k % 2 : x->send_str;
        x->stypes[k] = x->sstr[k] ? hole_int : MPI_INT;
    }
    int uniform_r = x->fam == F_ALLGATHER || x->fam == F_ALLTOALL;
    for (int j = 0; j < nrb; j++) {
        int p = t->src[j];
        x->rcnt[j] = p != MPI_PROC_NULL ? blk_count(x, p, gather ? 0 : t->pair[j])
                     : uniform_r ? x->n
                                        : j % 3;
        x->rstr[j] = x->fam == F_ALLTOALLW ? (j / 2) % 2 : x->recv_str;
        x->rtypes[j] = x->rstr[j] ? hole_int : MPI_INT;
    }
    x->sbytes = place(nsb, x->fam != F_ALLTOALLV && x->fam != F_ALLTOALLW, x->n, x->scnt, x->sstr,
                      x->sdispl, x->sbd, 0) +
                64;
    x->rbytes = place(nrb, uniform_r, x->n, x->rcnt, x->rstr, x->rdispl, x->rbd, 1) + 64;
    x->sb = tc_alloc(x->kind, x->sbytes);
    x->rb = tc_alloc(x->kind, x->rbytes);
}

/* Fills the send blocks for round seed and poisons the receive buffer. */
static void call_fill(call_t *x, uint64_t seed)
{
    const topo_t *t = x->t;
    x->seed = seed;
    int nsb = x->fam <= F_ALLGATHERV ? 1 : t->outdeg;
    for (size_t i = 0; i < x->sbytes / 4; i++)
        x->sb[i] = SENTINEL;
    for (size_t i = 0; i < x->rbytes / 4; i++)
        x->rb[i] = SENTINEL;
    for (int k = 0; k < nsb; k++)
        for (int i = 0; i < x->scnt[k]; i++)
            *elem(x->sb, (size_t)x->sbd[k], x->sstr[k], i) = blk_val(x, t->rank, k, i);
}

/* Checks every received block, and that nothing else of the receive buffer changed. */
static void call_check(const call_t *x, int form)
{
    const topo_t *t = x->t;
    char *seen = calloc(x->rbytes / 4 + 1, 1);
    for (int j = 0; j < t->indeg; j++) {
        int p = t->src[j];
        for (int i = 0; i < x->rcnt[j]; i++) {
            int *e = elem(x->rb, (size_t)x->rbd[j], x->rstr[j], i);
            seen[e - x->rb] = 1;
            if (p == MPI_PROC_NULL) {
                CHECK(*e == SENTINEL, "%s: %s %s from MPI_PROC_NULL wrote block %d", t->name,
                      form_name[form], fam_name[x->fam], j);
                continue;
            }
            if (!strict && ((t->repeat[j] && x->fam >= F_ALLTOALL) ||
                            (MPICH_40 && t->skew && x->fam == F_ALLTOALLW)))
                continue; /* the MPI below alone: its own pairing, its bug */
            int want = blk_val(x, p, t->pair[j], i);
            CHECK(*e == want,
                  "%s (rank %d): %s %s of %d (%s, str %d/%d): block %d from %d, [%d] = %d, want %d",
                  t->name, t->rank, form_name[form], fam_name[x->fam], x->n, tc_buf_name[x->kind],
                  x->send_str, x->recv_str, j, p, i, *e, want);
        }
    }
    for (size_t i = 0; i < x->rbytes / 4; i++)
        CHECK(seen[i] || x->rb[i] == SENTINEL, "%s: %s %s of %d wrote a gap at int %zu", t->name,
              form_name[form], fam_name[x->fam], x->n, i);
    free(seen);
}

static void call_free(call_t *x)
{
    free(x->scnt), free(x->sdispl), free(x->sstr), free(x->sbd), free(x->stypes);
    free(x->rcnt), free(x->rdispl), free(x->rstr), free(x->rbd), free(x->rtypes);
}

static MPI_Datatype stype(const call_t *x) { return x->send_str ? hole_int : MPI_INT; }
static MPI_Datatype rtype(const call_t *x) { return x->recv_str ? hole_int : MPI_INT; }

/* Starts (or runs, blocking) the call; persistent: makes its request (not started). */
static void call_start(call_t *x, int form, MPI_Request *q)
{
    MPI_Comm c = x->t->comm;
    switch (x->fam * 3 + form) {
#define FORMS3(F, NAME, ...)                                                  \
    case F * 3 + BLOCKING: MPI_Neighbor_##NAME(__VA_ARGS__, c); break;        \
    case F * 3 + NONBLOCKING: MPI_Ineighbor_##NAME(__VA_ARGS__, c, q); break; \
    case F * 3 + PERSISTENT:                                                  \
        INIT(NAME, __VA_ARGS__);                                              \
        break;
#if HAVE_INIT
#define INIT(NAME, ...) MPI_Neighbor_##NAME##_init(__VA_ARGS__, c, MPI_INFO_NULL, q)
#else
#define INIT(NAME, ...) CHECK(0, "no persistent neighbourhood collectives")
#endif
        FORMS3(F_ALLGATHER, allgather, x->sb, x->n, stype(x), x->rb, x->n, rtype(x))
        FORMS3(F_ALLGATHERV, allgatherv, x->sb, x->scnt[0], stype(x), x->rb, x->rcnt, x->rdispl,
               rtype(x))
        FORMS3(F_ALLTOALL, alltoall, x->sb, x->n, stype(x), x->rb, x->n, rtype(x))
        FORMS3(F_ALLTOALLV, alltoallv, x->sb, x->scnt, x->sdispl, stype(x), x->rb, x->rcnt,
               x->rdispl, rtype(x))
        FORMS3(F_ALLTOALLW, alltoallw, x->sb, x->scnt, x->sbd, x->stypes, x->rb, x->rcnt, x->rbd,
               x->rtypes)
#undef FORMS3
#undef INIT
    }
}

/* ---- cases -------------------------------------------------------------------------- */

static const int counts[] = {0, 1, 33, 3000, 300000};
enum { NCOUNTS = sizeof counts / sizeof counts[0] };

/* The functions run on t: all, but alltoallw where MPICH 4.0 alone would run it with
 * degrees that differ (its bug reads counts past the arrays: wrong blocks, or a hang),
 * and neither alltoallv nor alltoallw where Open MPI (4.1.4, 5.0.7) alone would pair
 * repeated edges of uneven counts in its order (its nonblocking forms: MPI_ERR_TRUNCATE). */
static int fams_of(const topo_t *t)
{
    if (!strict && OMPI_ANY && t->repeats)
        return F_ALLTOALLV;
    return !strict && MPICH_40 && t->skew ? F_ALLTOALLW : FAMS;
}

/* Every function in one form on t: blocking one after the other; nonblocking all five
 * outstanding at once with an MPI_Iallreduce on t and an MPI_Ibarrier on world between
 * them, completed in reverse order; persistent made, started twice, freed. */
static void all_fams(const topo_t *t, int form, int n, int kind, int sstr, int rstr, uint64_t seed)
{
    call_t x[FAMS];
    MPI_Request q[FAMS + 2];
    int sum = 0, one = 1, nf = fams_of(t);
    for (int f = 0; f < nf; f++) {
        x[f] = (call_t){.t = t, .fam = f, .kind = kind, .n = n, .send_str = sstr, .recv_str = rstr};
        if (f == F_ALLTOALLW) /* (its own types per block) */
            x[f].send_str = x[f].recv_str = 0;
        call_prepare(&x[f]);
        call_fill(&x[f], seed + (uint64_t)f);
    }
    if (form == BLOCKING) {
        for (int f = 0; f < nf; f++) {
            call_start(&x[f], form, NULL);
            call_check(&x[f], form);
        }
    } else if (form == NONBLOCKING) {
        for (int f = 0; f < nf; f++) {
            call_start(&x[f], form, &q[f]);
            if (f == 1)
                MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, t->comm, &q[FAMS]);
            if (f == (nf > 3 ? 3 : nf - 1))
                MPI_Ibarrier(MPI_COMM_WORLD, &q[FAMS + 1]);
        }
        for (int f = FAMS + 1; f >= 0; f--)
            if (f < nf || f >= FAMS)
                MPI_Wait(&q[f], MPI_STATUS_IGNORE);
        CHECK(sum == t->size, "%s: Iallreduce among neighbourhood ones: %d", t->name, sum);
        for (int f = 0; f < nf; f++)
            call_check(&x[f], form);
    } else {
        for (int f = 0; f < nf; f++)
            call_start(&x[f], form, &q[f]);
        for (int round = 0; round < 2; round++) {
            for (int f = 0; f < nf; f++)
                call_fill(&x[f], seed + 10 * (uint64_t)round + (uint64_t)f);
            MPI_Startall(nf, q);
            MPI_Waitall(nf, q, MPI_STATUSES_IGNORE);
            for (int f = 0; f < nf; f++)
                call_check(&x[f], form);
        }
        for (int f = 0; f < nf; f++)
            MPI_Request_free(&q[f]);
    }
    for (int f = 0; f < nf; f++)
        call_free(&x[f]);
    tc_release();
}

/* Persistent requests started `rounds` times, the send data changed before each start. */
static void persistent_rounds(const topo_t *t, int rounds)
{
#if HAVE_INIT
    call_t x[3];
    MPI_Request q[3];
    const int fams[3] = {F_ALLTOALL, F_ALLGATHERV, F_ALLTOALLW};
    int nf = fams_of(t) == FAMS ? 3 : 2;
    for (int f = 0; f < nf; f++) {
        x[f] = (call_t){.t = t, .fam = fams[f], .kind = BUF_HEAP, .n = 5, .recv_str = f == 0};
        call_prepare(&x[f]);
        call_fill(&x[f], 0);
        call_start(&x[f], PERSISTENT, &q[f]);
    }
    for (int k = 0; k < rounds; k++) {
        for (int f = 0; f < nf; f++)
            call_fill(&x[f], 1000 + (uint64_t)k);
        MPI_Startall(nf, q);
        MPI_Waitall(nf, q, MPI_STATUSES_IGNORE);
        for (int f = 0; f < nf; f++)
            call_check(&x[f], PERSISTENT);
    }
    for (int f = 0; f < nf; f++) {
        MPI_Request_free(&q[f]);
        call_free(&x[f]);
    }
    tc_release();
#else
    (void)t, (void)rounds;
#endif
}

/* A derived type freed while a nonblocking call that uses it is pending. */
static void type_freed(const topo_t *t)
{
    call_t x = {
        .t = t, .fam = F_ALLTOALL, .kind = BUF_HEAP, .n = 100, .send_str = 1, .recv_str = 1};
    MPI_Datatype mine;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &mine);
    MPI_Type_commit(&mine);
    MPI_Datatype keep = hole_int;
    hole_int = mine;
    call_prepare(&x);
    call_fill(&x, 4242);
    MPI_Request q;
    call_start(&x, NONBLOCKING, &q);
    MPI_Type_free(&mine);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    call_check(&x, NONBLOCKING);
    hole_int = keep;
    call_free(&x);
    tc_release();
}

static void run(void)
{
    strict = HMPI_Active();
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &hole_int);
    MPI_Type_commit(&hole_int);
    make_topos(MPI_COMM_WORLD, "world", 1);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, tc_size - tc_rank, &rev);
    make_topos(rev, "reversed", 0);
    MPI_Comm_free(&rev);
    /* the first use of each topology nonblocking: its state's setup starts there */
    for (int i = 0; i < ntopos; i++)
        all_fams(&topos[i], NONBLOCKING, 3, BUF_HEAP, 0, 0, 7);
    for (int i = 0; i < ntopos; i++) {
        const topo_t *t = &topos[i];
        int big = i == 0; /* the largest blocks (1.2 MB each) on a ring */
        for (int k = 0; k < NCOUNTS - !big; k++)
            for (int form = BLOCKING; form <= (HAVE_INIT ? PERSISTENT : NONBLOCKING); form++) {
                int n = counts[k];
                uint64_t seed = 100 * (uint64_t)k + 10 * (uint64_t)form;
                all_fams(t, form, n, BUF_HEAP, 0, 0, seed);
                if (n <= 3000) /* memory outside the heap, derived types */
                    all_fams(t, form, n, (i + k) % 2 ? BUF_STACK : BUF_PREINIT, k % 2,
                             (k + form) % 2, seed + 1);
            }
        /* 1,000 starts where HMPI runs them on its node; fewer through the MPI below,
         * whose calls take milliseconds with more ranks than cores */
        persistent_rounds(t, i == 2 && t->hmpi ? 1000 : 20);
        type_freed(t);
    }
    for (int i = 0; i < ntopos; i++)
        topo_free(&topos[i]);
    MPI_Type_free(&hole_int);
}

int main(int argc, char **argv) { return tc_main(argc, argv, run); }
