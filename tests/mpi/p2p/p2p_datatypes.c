/* p2p_datatypes.c: derived datatypes with DIFFERENT layouts on the two sides of one
 * message (same type signature): vector <-> contiguous, indexed <-> reversed
 * indexed_block, struct with holes <-> packed struct, C <-> Fortran subarray,
 * resized strides, nested types; counts from 1 to thousands (so the same layouts
 * cross the protocol thresholds); truncation and partial elements.
 * The expected placement of every byte is computed by a mirror of each type built
 * here (not by MPI), and holes of the receive buffer must stay untouched. */
#include "../p2p_common.h"

#define SEED 0xDA7A7ull
#define HOLE 0x77 /* receive buffer bytes no element covers */
#define SENDHOLE 0xEE

/* ---- a mirror of each datatype: enough to list where its basic elements lie ---- */

enum dkind { D_BASIC, D_HVEC, D_HIDX, D_STRUCT, D_RESIZED };
typedef struct desc {
    enum dkind kind;
    size_t size;             /* D_BASIC */
    int n, *bl;              /* blocks: count and lengths */
    ptrdiff_t *disp, stride; /* D_HIDX/D_STRUCT displacements, D_HVEC stride (bytes) */
    struct desc **child;     /* one child, or n for D_STRUCT */
    ptrdiff_t lb, ub;        /* bounds, as MPI computes them (no struct padding) */
} desc_t;

typedef struct {
    MPI_Datatype t;
    desc_t *d;
} ty_t;

static desc_t *all_descs[512];
static int ndescs;
static MPI_Datatype made[128]; /* every MPI type built here, freed once at the end */
static int nmade;

static MPI_Datatype reg(MPI_Datatype t)
{
    CHECK(nmade < 128, "test bug: too many types");
    made[nmade++] = t;
    return t;
}

static desc_t *new_desc(enum dkind k, int n)
{
    desc_t *d = calloc(1, sizeof *d);
    CHECK(d && ndescs < 512, "out of memory");
    d->kind = k;
    d->n = n;
    d->bl = calloc((size_t)n + 1, sizeof(int));
    d->disp = calloc((size_t)n + 1, sizeof(ptrdiff_t));
    d->child = calloc((size_t)n + 1, sizeof(desc_t *));
    CHECK(d->bl && d->disp && d->child, "out of memory");
    all_descs[ndescs++] = d;
    return d;
}

static ptrdiff_t ext(const desc_t *d) { return d->ub - d->lb; }

/* Bounds of blocks of bl[i] children at disp[i]. */
static void bound_blocks(desc_t *d)
{
    int first = 1;
    for (int i = 0; i < d->n; i++) {
        const desc_t *c = d->child[d->kind == D_STRUCT ? i : 0];
        if (d->bl[i] == 0)
            continue;
        ptrdiff_t lo = d->disp[i] + c->lb, hi = d->disp[i] + (d->bl[i] - 1) * ext(c) + c->ub;
        if (first || lo < d->lb)
            d->lb = lo;
        if (first || hi > d->ub)
            d->ub = hi;
        first = 0;
    }
}

static ty_t t_basic(MPI_Datatype t, size_t size)
{
    desc_t *d = new_desc(D_BASIC, 0);
    d->size = size;
    d->ub = (ptrdiff_t)size;
    return (ty_t){t, d};
}

static ty_t t_hidx_desc(ty_t c, int n, const int *bl, const ptrdiff_t *disp_bytes, MPI_Datatype t)
{
    if (t != MPI_DATATYPE_NULL)
        reg(t);
    desc_t *d = new_desc(D_HIDX, n);
    for (int i = 0; i < n; i++) {
        d->bl[i] = bl[i];
        d->disp[i] = disp_bytes[i];
    }
    d->child[0] = c.d;
    bound_blocks(d);
    return (ty_t){t, d};
}

static ty_t t_contig(int n, ty_t c)
{
    MPI_Datatype t;
    MPI_Type_contiguous(n, c.t, &t);
    int bl[1] = {n};
    ptrdiff_t disp[1] = {0};
    return t_hidx_desc(c, 1, bl, disp, t);
}

/* count blocks of bl children, stride_bytes apart, as MPI type t */
static ty_t hvec_of(int count, int bl, ptrdiff_t stride_bytes, ty_t c, MPI_Datatype t)
{
    int *bls = malloc(sizeof(int) * count);
    ptrdiff_t *disp = malloc(sizeof(ptrdiff_t) * count);
    for (int i = 0; i < count; i++) {
        bls[i] = bl;
        disp[i] = i * stride_bytes;
    }
    ty_t r = t_hidx_desc(c, count, bls, disp, t);
    free(bls);
    free(disp);
    return r;
}

static ty_t t_hvector(int count, int bl, ptrdiff_t stride_bytes, ty_t c)
{
    MPI_Datatype t;
    MPI_Type_create_hvector(count, bl, stride_bytes, c.t, &t);
    return hvec_of(count, bl, stride_bytes, c, t);
}

static ty_t t_vector(int count, int bl, int stride, ty_t c)
{
    MPI_Datatype t;
    MPI_Type_vector(count, bl, stride, c.t, &t);
    return hvec_of(count, bl, stride * ext(c.d), c, t);
}

static ty_t t_indexed(int n, const int *bl, const int *disp, ty_t c)
{
    MPI_Datatype t;
    MPI_Type_indexed(n, bl, disp, c.t, &t);
    ptrdiff_t *db = malloc(sizeof(ptrdiff_t) * n);
    for (int i = 0; i < n; i++)
        db[i] = disp[i] * ext(c.d);
    ty_t r = t_hidx_desc(c, n, bl, db, t);
    free(db);
    return r;
}

static ty_t t_indexed_block(int n, int bl, const int *disp, ty_t c)
{
    MPI_Datatype t;
    MPI_Type_create_indexed_block(n, bl, disp, c.t, &t);
    int *bls = malloc(sizeof(int) * n);
    ptrdiff_t *db = malloc(sizeof(ptrdiff_t) * n);
    for (int i = 0; i < n; i++) {
        bls[i] = bl;
        db[i] = disp[i] * ext(c.d);
    }
    ty_t r = t_hidx_desc(c, n, bls, db, t);
    free(bls);
    free(db);
    return r;
}

static ty_t t_hindexed(int n, const int *bl, const ptrdiff_t *disp, ty_t c)
{
    MPI_Datatype t;
    MPI_Aint *d = malloc(sizeof(MPI_Aint) * n);
    for (int i = 0; i < n; i++)
        d[i] = disp[i];
    MPI_Type_create_hindexed(n, bl, d, c.t, &t);
    free(d);
    return t_hidx_desc(c, n, bl, disp, t);
}

/* A struct, always resized to an explicit extent (MPI pads a struct's extent to the
 * alignment of its members, which the mirror does not model). */
static ty_t t_struct(int n, const int *bl, const ptrdiff_t *disp, const ty_t *c, ptrdiff_t extent)
{
    MPI_Datatype t, r;
    MPI_Aint *d = malloc(sizeof(MPI_Aint) * n);
    MPI_Datatype *ts = malloc(sizeof(MPI_Datatype) * n);
    desc_t *s = new_desc(D_STRUCT, n);
    for (int i = 0; i < n; i++) {
        d[i] = disp[i];
        ts[i] = c[i].t;
        s->bl[i] = bl[i];
        s->disp[i] = disp[i];
        s->child[i] = c[i].d;
    }
    bound_blocks(s);
    MPI_Type_create_struct(n, bl, d, ts, &t);
    MPI_Type_create_resized(t, 0, extent, &r);
    MPI_Type_free(&t);
    reg(r);
    free(d);
    free(ts);
    desc_t *rd = new_desc(D_RESIZED, 1);
    rd->child[0] = s;
    rd->lb = 0;
    rd->ub = extent;
    return (ty_t){r, rd};
}

static ty_t t_resized(ptrdiff_t lb, ptrdiff_t extent, ty_t c)
{
    MPI_Datatype t;
    MPI_Type_create_resized(c.t, lb, extent, &t);
    reg(t);
    desc_t *d = new_desc(D_RESIZED, 1);
    d->child[0] = c.d;
    d->lb = lb;
    d->ub = lb + extent;
    return (ty_t){t, d};
}

/* 2-D subarray of elements of c (c's extent = its size). */
static ty_t t_subarray(const int sizes[2], const int sub[2], const int starts[2], int order, ty_t c)
{
    MPI_Datatype t;
    MPI_Type_create_subarray(2, sizes, sub, starts, order, c.t, &t);
    reg(t);
    /* the mirror: rows (C) or columns (Fortran) of the block, resized to the array */
    int slow = order == MPI_ORDER_C ? 0 : 1, fast = 1 - slow;
    int n = sub[slow], *bl = malloc(sizeof(int) * n);
    ptrdiff_t *disp = malloc(sizeof(ptrdiff_t) * n);
    for (int i = 0; i < n; i++) {
        bl[i] = sub[fast];
        disp[i] = ((ptrdiff_t)(starts[slow] + i) * sizes[fast] + starts[fast]) * ext(c.d);
    }
    ty_t inner = t_hidx_desc(c, n, bl, disp, MPI_DATATYPE_NULL);
    free(bl);
    free(disp);
    desc_t *d = new_desc(D_RESIZED, 1);
    d->child[0] = inner.d;
    d->lb = 0;
    d->ub = (ptrdiff_t)sizes[0] * sizes[1] * ext(c.d);
    return (ty_t){t, d};
}

/* ---- layouts: (offset, length) of every basic element, in type-map order -------- */

typedef struct {
    ptrdiff_t off;
    size_t len;
} el_t;

typedef struct {
    el_t *e;
    int n, cap;
    size_t bytes;   /* sum of lengths: the message size */
    ptrdiff_t span; /* one past the highest byte an element covers */
} layout_t;

static void emit(const desc_t *d, ptrdiff_t base, layout_t *l)
{
    switch (d->kind) {
    case D_BASIC:
        if (l->n == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 64;
            l->e = realloc(l->e, sizeof(el_t) * l->cap);
            CHECK(l->e, "out of memory");
        }
        CHECK(base >= 0, "test bug: an element at negative offset %td", base);
        l->e[l->n++] = (el_t){base, d->size};
        l->bytes += d->size;
        if (base + (ptrdiff_t)d->size > l->span)
            l->span = base + (ptrdiff_t)d->size;
        return;
    case D_RESIZED: emit(d->child[0], base, l); return;
    default:
        for (int i = 0; i < d->n; i++) {
            const desc_t *c = d->child[d->kind == D_STRUCT ? i : 0];
            for (int j = 0; j < d->bl[i]; j++)
                emit(c, base + d->disp[i] + j * ext(c), l);
        }
    }
}

static layout_t layout_of(const ty_t *t, int count)
{
    layout_t l = {0};
    for (int i = 0; i < count; i++)
        emit(t->d, i * ext(t->d), &l);
    return l;
}

/* ---- the exchange ------------------------------------------------------------- */

static int rank, nranks, ncases;
static MPI_Comm comm; /* MPI_ERRORS_RETURN */

/* Sender: holes SENDHOLE, element k = the next len bytes of key's stream. */
static unsigned char *pack_send(const layout_t *l, uint64_t key)
{
    unsigned char *b = malloc((size_t)l->span + 1);
    CHECK(b, "out of memory");
    memset(b, SENDHOLE, (size_t)l->span + 1);
    size_t pos = 0;
    for (int k = 0; k < l->n; k++)
        for (size_t i = 0; i < l->e[k].len; i++)
            b[l->e[k].off + (ptrdiff_t)i] = p2p_byte(key, pos++);
    return b;
}

/* Receiver: the first nel elements hold the stream; every other byte is HOLE. */
static void check_recv(const unsigned char *b, const layout_t *l, int nel, ptrdiff_t span,
                       uint64_t key, const char *what)
{
    unsigned char *mark = calloc((size_t)span + 1, 1);
    CHECK(mark, "out of memory");
    size_t pos = 0;
    for (int k = 0; k < nel; k++)
        for (size_t i = 0; i < l->e[k].len; i++, pos++) {
            ptrdiff_t o = l->e[k].off + (ptrdiff_t)i;
            mark[o] = 1;
            CHECK(b[o] == p2p_byte(key, pos),
                  "%s: element %d byte %zu (buffer offset %td, message byte %zu): expected "
                  "0x%02x, got 0x%02x",
                  what, k, i, o, pos, p2p_byte(key, pos), b[o]);
        }
    for (ptrdiff_t o = 0; o < span; o++)
        CHECK(mark[o] || b[o] == HOLE, "%s: hole byte at offset %td written (0x%02x)", what, o,
              b[o]);
    free(mark);
}

/* s (count sc) from this rank to rank+shift, r (count rc) from rank-shift. */
static void exchange(const char *name, ty_t *s, int sc, ty_t *r, int rc, int shift, int tag)
{
    int dst = (rank + shift) % nranks, src = (rank - shift + nranks) % nranks;
    layout_t ls = layout_of(s, sc), lr = layout_of(r, rc);
    CHECK(ls.bytes == lr.bytes && ls.n == lr.n, "test bug: %s: signatures differ", name);
    unsigned char *sb = pack_send(&ls, p2p_key(rank, tag, (uint64_t)sc, SEED));
    unsigned char *rb = malloc((size_t)lr.span + 64);
    CHECK(rb, "out of memory");
    memset(rb, HOLE, (size_t)lr.span + 64);
    MPI_Request rq;
    MPI_Status st;
    P2P_OK(MPI_Irecv(rb, rc, r->t, src, tag, comm, &rq));
    P2P_OK(MPI_Send(sb, sc, s->t, dst, tag, comm));
    P2P_OK(MPI_Wait(&rq, &st));
    char what[160];
    snprintf(what, sizeof what, "%s, %d -> %d, counts %d/%d (%zu B)", name, src, rank, sc, rc,
             lr.bytes);
    int c = -1, e = -1;
    MPI_Get_count(&st, r->t, &c);
    MPI_Get_elements(&st, r->t, &e);
    CHECK(c == rc && e == lr.n, "%s: Get_count %d (expected %d), Get_elements %d (expected %d)",
          what, c, rc, e, lr.n);
    check_recv(rb, &lr, lr.n, lr.span + 64, p2p_key(src, tag, (uint64_t)sc, SEED), what);
    unsigned char *again = pack_send(&ls, p2p_key(rank, tag, (uint64_t)sc, SEED));
    CHECK(memcmp(again, sb, (size_t)ls.span + 1) == 0, "%s: the send buffer changed", what);
    free(again);
    free(sb);
    free(rb);
    free(ls.e);
    free(lr.e);
    ncases++;
}

/* Type extents of the mirror and of MPI agree (else the test itself is wrong). */
static void same_extent(const ty_t *t, const char *name)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(t->t, &lb, &extent);
    CHECK(lb == t->d->lb && extent == ext(t->d),
          "test bug: %s: MPI says lb %td extent %td, the mirror %td %td", name, (ptrdiff_t)lb,
          (ptrdiff_t)extent, t->d->lb, ext(t->d));
}

typedef struct {
    const char *name;
    ty_t s, r;
    int sper, rper; /* counts per unit: s x (k*sper) carries the signature of r x (k*rper) */
} pair_t;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double t0 = MPI_Wtime();
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    ty_t dbl = t_basic(MPI_DOUBLE, sizeof(double)), in = t_basic(MPI_INT, sizeof(int));
    ty_t chr = t_basic(MPI_CHAR, 1);

    /* vector(5, 2, 3) of doubles: 10 doubles over 14 */
    ty_t vec = t_vector(5, 2, 3, dbl);
    /* indexed {3,1,4} at {0,5,9} ints, and its signature in reverse placement */
    int ibl[3] = {3, 1, 4}, idisp[3] = {0, 5, 9}, rdisp[8] = {7, 6, 5, 4, 3, 2, 1, 0};
    ty_t idx = t_indexed(3, ibl, idisp, in), ridx = t_indexed_block(8, 1, rdisp, in);
    /* struct {int; double} with a hole after the int, and packed */
    ty_t id_c[2] = {in, dbl};
    int bl2[2] = {1, 1};
    ptrdiff_t holey2[2] = {0, 8}, packed2[2] = {0, 4};
    ty_t st_id = t_struct(2, bl2, holey2, id_c, 16), pk_id = t_struct(2, bl2, packed2, id_c, 12);
    /* struct {char; double; int} with holes (extent 24), and packed (extent 13) */
    ty_t cdi_c[3] = {chr, dbl, in};
    int bl3[3] = {1, 1, 1};
    ptrdiff_t holey3[3] = {0, 8, 16}, packed3[3] = {0, 1, 9};
    ty_t st_cdi = t_struct(3, bl3, holey3, cdi_c, 24),
         pk_cdi = t_struct(3, bl3, packed3, cdi_c, 13);
    /* 3x4 ints out of 6x8 (C order) and 4x3 out of 7x3 (Fortran order) */
    int sz_c[2] = {6, 8}, sub_c[2] = {3, 4}, at_c[2] = {2, 3};
    int sz_f[2] = {7, 3}, sub_f[2] = {4, 3}, at_f[2] = {2, 0};
    ty_t sa_c = t_subarray(sz_c, sub_c, at_c, MPI_ORDER_C, in);
    ty_t sa_f = t_subarray(sz_f, sub_f, at_f, MPI_ORDER_FORTRAN, in);
    /* an int every 12 bytes (resized), against vector(2, 5, 7) of ints */
    ty_t strided = t_resized(0, 12, in), vec_i = t_vector(2, 5, 7, in);
    /* nested: 2 x hvector(3, 2, 40 B) of doubles, against hindexed {5 at 64 B, 7 at 0} */
    ty_t hv = t_hvector(3, 2, 40, dbl), nest = t_contig(2, hv);
    int hbl[2] = {5, 7};
    ptrdiff_t hdisp[2] = {64, 0};
    ty_t hix = t_hindexed(2, hbl, hdisp, dbl);
    /* resized with a lower bound: 2 ints at 0 and 4, lb -8, extent 24 */
    ty_t c2 = t_contig(2, in), lbres = t_resized(-8, 24, c2);

    pair_t pairs[] = {
        {"vector of doubles -> doubles", vec, dbl, 1, 10},
        {"doubles -> vector of doubles", dbl, vec, 10, 1},
        {"indexed -> reversed indexed_block", idx, ridx, 1, 1},
        {"struct{int;double} with a hole -> packed struct", st_id, pk_id, 1, 1},
        {"packed struct -> struct{int;double} with a hole", pk_id, st_id, 1, 1},
        {"struct{char;double;int} with holes -> packed", st_cdi, pk_cdi, 1, 1},
        {"packed -> struct{char;double;int} with holes", pk_cdi, st_cdi, 1, 1},
        {"C subarray -> Fortran subarray", sa_c, sa_f, 1, 1},
        {"Fortran subarray -> ints", sa_f, in, 1, 12},
        {"resized stride -> vector of ints", strided, vec_i, 10, 1},
        {"contiguous(hvector) -> reversed hindexed", nest, hix, 1, 1},
        {"resized with lb -> contiguous ints", lbres, c2, 3, 3},
    };
    int npairs = (int)(sizeof pairs / sizeof pairs[0]);
    for (int i = 0; i < nmade; i++)
        MPI_Type_commit(&made[i]);
    for (int i = 0; i < npairs; i++) {
        /* the pairs hold copies of the handles: commit may not change them */
        same_extent(&pairs[i].s, pairs[i].name);
        same_extent(&pairs[i].r, pairs[i].name);
    }

    static const int units[] = {1, 3, 40, 1000};
    int shifts[2] = {1, nranks / 2}, nshifts = nranks / 2 == 1 ? 1 : 2, tag = 0;
    for (int sh = 0; sh < nshifts; sh++)
        for (int i = 0; i < npairs; i++)
            for (int u = 0; u < 4; u++)
                exchange(pairs[i].name, &pairs[i].s, units[u] * pairs[i].sper, &pairs[i].r,
                         units[u] * pairs[i].rper, shifts[sh], tag++);

    /* truncation with a derived type: 4 holey structs into 3 packed ones */
    {
        int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks;
        layout_t ls = layout_of(&st_cdi, 4), lr = layout_of(&pk_cdi, 3);
        unsigned char *sb = pack_send(&ls, p2p_key(rank, 900, 4, SEED));
        unsigned char *rb = malloc((size_t)ls.bytes + 64);
        memset(rb, HOLE, (size_t)ls.bytes + 64);
        MPI_Request rq;
        MPI_Status st;
        P2P_OK(MPI_Isend(sb, 4, st_cdi.t, dst, 900, comm, &rq));
        int rc = MPI_Recv(rb, 3, pk_cdi.t, src, 900, comm, &st);
        CHECK(rc != MPI_SUCCESS && p2p_class(rc) == MPI_ERR_TRUNCATE,
              "4 structs into 3: returned %d (%s), expected class MPI_ERR_TRUNCATE", rc,
              p2p_errstr(rc));
        CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 900, "truncated: status source %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
        for (ptrdiff_t o = lr.span; o < lr.span + 64; o++)
            CHECK(rb[o] == HOLE, "4 structs into 3: byte %td past the 3 structs written", o);
        /* the sender's outcome is not specified; MPICH may raise it on MPI_COMM_WORLD */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        free(sb);
        free(rb);
        free(ls.e);
        free(lr.e);
    }

    /* partial elements: 7 doubles into contiguous(3, double) x 3, and 2 structs and a
     * char into packed structs x 3 */
    {
        int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks;
        ty_t c3 = t_contig(3, dbl);
        MPI_Type_commit(&made[nmade - 1]);
        c3.t = made[nmade - 1];
        ty_t f7c[7] = {chr, dbl, in, chr, dbl, in, chr};
        int b7[7] = {1, 1, 1, 1, 1, 1, 1};
        ptrdiff_t d7[7] = {0, 8, 16, 24, 32, 40, 48}; /* holey, like st_cdi */
        ty_t s7 = t_struct(7, b7, d7, f7c, 56);
        MPI_Type_commit(&made[nmade - 1]);
        s7.t = made[nmade - 1];
        struct {
            ty_t *s, *r;
            int sc, rc, elems;
            const char *name;
        } cases[2] = {{&dbl, &c3, 7, 3, 7, "7 doubles as contiguous(3)"},
                      {&s7, &pk_cdi, 1, 3, 7, "char,double,int x2 + char as packed structs"}};
        for (int k = 0; k < 2; k++) {
            layout_t ls = layout_of(cases[k].s, cases[k].sc),
                     lr = layout_of(cases[k].r, cases[k].rc);
            unsigned char *sb = pack_send(&ls, p2p_key(rank, 910 + k, 0, SEED));
            unsigned char *rb = malloc((size_t)lr.span + 64);
            memset(rb, HOLE, (size_t)lr.span + 64);
            MPI_Request rq;
            MPI_Status st;
            P2P_OK(MPI_Irecv(rb, cases[k].rc, cases[k].r->t, src, 910 + k, comm, &rq));
            P2P_OK(MPI_Send(sb, cases[k].sc, cases[k].s->t, dst, 910 + k, comm));
            P2P_OK(MPI_Wait(&rq, &st));
            int c = -1, e = -1;
            MPI_Get_count(&st, cases[k].r->t, &c);
            MPI_Get_elements(&st, cases[k].r->t, &e);
            CHECK(c == MPI_UNDEFINED && e == cases[k].elems,
                  "%s: Get_count %d (expected MPI_UNDEFINED), Get_elements %d (expected %d)",
                  cases[k].name, c, e, cases[k].elems);
            check_recv(rb, &lr, cases[k].elems, lr.span + 64, p2p_key(src, 910 + k, 0, SEED),
                       cases[k].name);
            free(sb);
            free(rb);
            free(ls.e);
            free(lr.e);
        }
    }

    for (int i = 0; i < nmade; i++)
        MPI_Type_free(&made[i]);
    for (int i = 0; i < ndescs; i++) {
        free(all_descs[i]->bl);
        free(all_descs[i]->disp);
        free(all_descs[i]->child);
        free(all_descs[i]);
    }
    int total = 0;
    MPI_Reduce(&ncases, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Comm_free(&comm);
    if (rank == 0)
        printf("p2p_datatypes: OK, %d typed exchanges on %d ranks in %.2f s\n", total, nranks,
               MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
