/* coll_op_ext.c: predefined ops on datatypes the MPI standard does not list for them
 * (MPI-4.1 §6.9.2: MPI_LXOR is defined for C integer and logical types, MPI_SUM for
 * numbers, ...). An MPI may accept such a pair as an extension: MPICH computes the
 * logical ops on floating-point types, Open MPI every op on MPI_BYTE. What the MPI
 * accepts in MPI_Reduce_local (asked first, errors returned) it must accept in every
 * reduction and accumulate, with the same results; what it refuses, every call must
 * refuse with MPI_ERR_OP (the class §6.9.2's "erroneous" pairs get), in every rank and
 * without hanging. Checked through MPI_Allreduce (also in place), MPI_Reduce,
 * MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan, MPI_Exscan, MPI_Accumulate,
 * MPI_Get_accumulate and MPI_Fetch_and_op, against folds with MPI_Reduce_local. A pair
 * the standard lists rides along (MPI_LXOR on MPI_INT). Not asked: MPI_LAND and
 * MPI_LOR on floating-point types, which Debian's MPICH 4.0.2 accepts and then aborts
 * on in MPI_Reduce_local itself.
 *
 * The one-sided calls are held to this only under HMPI (its rule: the MPI below's
 * MPI_Reduce_local decides, for a refused pair MPI_ERR_OP): alone, neither MPI checks
 * the pair of a one-sided operation (MPICH 4.0.2 returns success, Open MPI 4.1.4's
 * osc/rdma crashes in MPI_Fetch_and_op), and their results are checked where HMPI
 * computes them, in a window of one node; a window spanning nodes has its accumulates
 * done by the MPI below, and MPICH 4.0.2's are wrong here even for MPI_SUM on MPI_INT
 * (rank 0's five ints land one element off in rank 1's window). */
#define CHECK_WITH_MPI
#include "../../check.h"

#include <complex.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum { CNT = 5, ESZ = 32, MAXR = 16 };

typedef enum { T_FLOAT, T_DOUBLE, T_LDOUBLE, T_BYTE, T_BOOL, T_INT, T_CFLOAT } tkind_t;

typedef struct {
    const char *name;
    MPI_Op op;
    MPI_Datatype type;
    tkind_t kind;
} pair_t;

static int rank, nranks;
static MPI_Comm comm;
static int hmpi_on;  /* HMPI linked and active */
static int one_node; /* every rank on this (simulated) node */

int HMPI_Active(void) __attribute__((weak));

/* Element j of rank r's input: a mix of zero and non-zero values, so that the logical
 * ops see both. */
static void gen(tkind_t k, int r, int j, void *dst)
{
    int z = (r + 2 * j) % 3 == 0;
    switch (k) {
    case T_FLOAT: *(float *)dst = z ? 0.0f : 1.5f + (float)r; break;
    case T_DOUBLE: *(double *)dst = z ? 0.0 : 2.25 + r; break;
    case T_LDOUBLE: *(long double *)dst = z ? 0.0L : 3.5L + r; break;
    case T_BYTE: *(unsigned char *)dst = (unsigned char)(r * 37 + j * 11 + 5); break;
    case T_BOOL: *(bool *)dst = !z; break;
    case T_INT: *(int *)dst = z ? 0 : r + j + 1; break;
    case T_CFLOAT: *(float complex *)dst = z ? 0.0f : (float)r + 1.0f * I; break;
    }
}

static int same(tkind_t k, const void *a, const void *b, size_t size)
{
    switch (k) {
    case T_FLOAT: return *(const float *)a == *(const float *)b;
    case T_DOUBLE: return *(const double *)a == *(const double *)b;
    case T_LDOUBLE: return *(const long double *)a == *(const long double *)b;
    case T_BOOL: return !*(const bool *)a == !*(const bool *)b;
    default: return memcmp(a, b, size) == 0;
    }
}

static size_t size_of(MPI_Datatype t)
{
    int s = 0;
    MPI_Type_size(t, &s);
    return (size_t)s;
}

/* Does the MPI take op on type? MPI_Reduce_local on one element, errors returned. */
static int accepted(const pair_t *p)
{
    unsigned char a[ESZ] = {0}, b[ESZ] = {0};
    gen(p->kind, 0, 1, a);
    gen(p->kind, 1, 1, b);
    return MPI_Reduce_local(a, b, 1, p->type, p->op) == MPI_SUCCESS;
}

/* out[j] = (element j0 + j of) rank first's input op ... op rank last's, j < n. */
static void fold(const pair_t *p, int first, int last, int j0, int n, unsigned char *out)
{
    size_t es = size_of(p->type);
    for (int j = 0; j < n; j++) {
        unsigned char acc[ESZ], in[ESZ];
        memset(acc, 0, sizeof acc);
        gen(p->kind, first, j0 + j, acc);
        for (int r = first + 1; r <= last; r++) {
            memset(in, 0, sizeof in);
            gen(p->kind, r, j0 + j, in);
            CHECK(MPI_Reduce_local(in, acc, 1, p->type, p->op) == MPI_SUCCESS, "fold");
        }
        memcpy(out + (size_t)j * es, acc, es);
    }
}

static void expect_err(int rc, const char *call, const pair_t *p)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_OP,
          "%s with %s: the MPI refuses the pair, the call returned %d (class %d), not "
          "MPI_ERR_OP",
          call, p->name, rc, cls);
}

static void expect_data(const pair_t *p, const unsigned char *got, const unsigned char *want, int n,
                        const char *call)
{
    size_t es = size_of(p->type);
    for (int j = 0; j < n; j++)
        CHECK(same(p->kind, got + (size_t)j * es, want + (size_t)j * es, es),
              "%s with %s: element %d differs", call, p->name, j);
}

static void collectives(const pair_t *p, int ok)
{
    size_t es = size_of(p->type);
    static unsigned char in[MAXR * CNT * ESZ], out[MAXR * CNT * ESZ], want[MAXR * CNT * ESZ];
    int n = nranks, rc;
    for (int j = 0; j < n * CNT; j++)
        gen(p->kind, rank, j, in + (size_t)j * es);
    /* Allreduce */
    memset(out, 0, sizeof out);
    rc = MPI_Allreduce(in, out, CNT, p->type, p->op, comm);
    if (!ok) {
        expect_err(rc, "MPI_Allreduce", p);
    } else {
        CHECK(rc == MPI_SUCCESS, "MPI_Allreduce with %s returned %d", p->name, rc);
        fold(p, 0, n - 1, 0, CNT, want);
        expect_data(p, out, want, CNT, "MPI_Allreduce");
        memcpy(out, in, CNT * es);
        CHECK(MPI_Allreduce(MPI_IN_PLACE, out, CNT, p->type, p->op, comm) == MPI_SUCCESS,
              "MPI_Allreduce in place");
        expect_data(p, out, want, CNT, "MPI_Allreduce in place");
    }
    /* Reduce to the last rank */
    memset(out, 0, sizeof out);
    rc = MPI_Reduce(in, out, CNT, p->type, p->op, n - 1, comm);
    if (!ok) {
        expect_err(rc, "MPI_Reduce", p);
    } else {
        CHECK(rc == MPI_SUCCESS, "MPI_Reduce with %s returned %d", p->name, rc);
        if (rank == n - 1)
            expect_data(p, out, want, CNT, "MPI_Reduce");
    }
    /* Reduce_scatter_block: CNT elements each, block r of everybody's n*CNT */
    memset(out, 0, sizeof out);
    rc = MPI_Reduce_scatter_block(in, out, CNT, p->type, p->op, comm);
    if (!ok) {
        expect_err(rc, "MPI_Reduce_scatter_block", p);
    } else {
        CHECK(rc == MPI_SUCCESS, "MPI_Reduce_scatter_block with %s returned %d", p->name, rc);
        fold(p, 0, n - 1, rank * CNT, CNT, want);
        expect_data(p, out, want, CNT, "MPI_Reduce_scatter_block");
    }
    /* Reduce_scatter: rank r gets r % 3 + 1 elements */
    int counts[MAXR], total = 0, first = 0;
    for (int r = 0; r < n; r++) {
        counts[r] = r % 3 + 1;
        if (r < rank)
            first += counts[r];
        total += counts[r];
    }
    CHECK(total <= n * CNT, "counts");
    memset(out, 0, sizeof out);
    rc = MPI_Reduce_scatter(in, out, counts, p->type, p->op, comm);
    if (!ok) {
        expect_err(rc, "MPI_Reduce_scatter", p);
    } else {
        CHECK(rc == MPI_SUCCESS, "MPI_Reduce_scatter with %s returned %d", p->name, rc);
        fold(p, 0, n - 1, first, counts[rank], want);
        expect_data(p, out, want, counts[rank], "MPI_Reduce_scatter");
    }
    /* Scan and Exscan */
    memset(out, 0, sizeof out);
    rc = MPI_Scan(in, out, CNT, p->type, p->op, comm);
    if (!ok) {
        expect_err(rc, "MPI_Scan", p);
    } else {
        CHECK(rc == MPI_SUCCESS, "MPI_Scan with %s returned %d", p->name, rc);
        fold(p, 0, rank, 0, CNT, want);
        expect_data(p, out, want, CNT, "MPI_Scan");
    }
    memset(out, 0, sizeof out);
    rc = MPI_Exscan(in, out, CNT, p->type, p->op, comm);
    if (!ok) {
        expect_err(rc, "MPI_Exscan", p);
    } else {
        CHECK(rc == MPI_SUCCESS, "MPI_Exscan with %s returned %d", p->name, rc);
        if (rank > 0) {
            fold(p, 0, rank - 1, 0, CNT, want);
            expect_data(p, out, want, CNT, "MPI_Exscan");
        }
    }
}

/* Accumulates into the next rank's window: CNT elements, then MPI_Get_accumulate of
 * them, then MPI_Fetch_and_op of element 0. */
static void accumulates(const pair_t *p, int ok)
{
    if (!hmpi_on)
        return; /* see the top */
    int data = one_node;
    size_t es = size_of(p->type);
    int to = (rank + 1) % nranks, from = (rank - 1 + nranks) % nranks;
    unsigned char *base;
    MPI_Win win;
    CHECK(MPI_Win_allocate((MPI_Aint)(CNT * es), (int)es, MPI_INFO_NULL, comm, &base, &win) ==
              MPI_SUCCESS,
          "MPI_Win_allocate");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    unsigned char org[CNT * ESZ], res[CNT * ESZ], want[CNT * ESZ];
    for (int step = 0; step < 3; step++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        for (int j = 0; j < CNT; j++)
            gen(p->kind, nranks + rank, j, base + (size_t)j * es); /* the target's own */
        MPI_Win_unlock(rank, win);
        for (int j = 0; j < CNT; j++)
            gen(p->kind, rank, j, org + (size_t)j * es);
        memset(res, 0, sizeof res);
        MPI_Barrier(comm);
        MPI_Win_lock_all(0, win);
        const char *call = step == 0   ? "MPI_Accumulate"
                           : step == 1 ? "MPI_Get_accumulate"
                                       : "MPI_Fetch_and_op";
        int n = step == 2 ? 1 : CNT;
        int rc = step == 0   ? MPI_Accumulate(org, CNT, p->type, to, 0, CNT, p->type, p->op, win)
                 : step == 1 ? MPI_Get_accumulate(org, CNT, p->type, res, CNT, p->type, to, 0, CNT,
                                                  p->type, p->op, win)
                             : MPI_Fetch_and_op(org, res, p->type, to, 0, p->op, win);
        MPI_Win_unlock_all(win);
        MPI_Barrier(comm);
        if (!ok) {
            expect_err(rc, call, p);
            continue;
        }
        CHECK(rc == MPI_SUCCESS, "%s with %s returned %d", call, p->name, rc);
        if (!data)
            continue;
        /* The result: the target's own values before; the window here: its own values,
         * the first n of them combined with the values of the rank before. */
        if (step > 0) {
            unsigned char old[CNT * ESZ];
            for (int j = 0; j < n; j++)
                gen(p->kind, nranks + to, j, old + (size_t)j * es);
            expect_data(p, res, old, n, call);
        }
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        for (int j = 0; j < CNT; j++) {
            unsigned char own[ESZ], in[ESZ];
            memset(own, 0, sizeof own);
            memset(in, 0, sizeof in);
            gen(p->kind, nranks + rank, j, own);
            if (j < n) {
                gen(p->kind, from, j, in);
                CHECK(MPI_Reduce_local(in, own, 1, p->type, p->op) == MPI_SUCCESS, "fold");
            }
            memcpy(want + (size_t)j * es, own, es);
        }
        expect_data(p, base, want, CNT, call);
        MPI_Win_unlock(rank, win);
    }
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(nranks <= MAXR, "at most %d ranks", MAXR);
    /* Errors returned everywhere an MPI may raise them. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    hmpi_on = HMPI_Active && HMPI_Active();
    MPI_Comm node;
    int nnode = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nnode);
    MPI_Comm_free(&node);
    int all = nnode == nranks;
    MPI_Allreduce(&all, &one_node, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    const pair_t pairs[] = {
        {"MPI_LXOR on MPI_FLOAT", MPI_LXOR, MPI_FLOAT, T_FLOAT},
        {"MPI_LXOR on MPI_DOUBLE", MPI_LXOR, MPI_DOUBLE, T_DOUBLE},
        {"MPI_LXOR on MPI_LONG_DOUBLE", MPI_LXOR, MPI_LONG_DOUBLE, T_LDOUBLE},
        {"MPI_BXOR on MPI_FLOAT", MPI_BXOR, MPI_FLOAT, T_FLOAT},
        {"MPI_BAND on MPI_DOUBLE", MPI_BAND, MPI_DOUBLE, T_DOUBLE},
        {"MPI_SUM on MPI_BYTE", MPI_SUM, MPI_BYTE, T_BYTE},
        {"MPI_MAX on MPI_BYTE", MPI_MAX, MPI_BYTE, T_BYTE},
        {"MPI_LXOR on MPI_BYTE", MPI_LXOR, MPI_BYTE, T_BYTE},
        {"MPI_SUM on MPI_C_BOOL", MPI_SUM, MPI_C_BOOL, T_BOOL},
        {"MPI_MINLOC on MPI_INT", MPI_MINLOC, MPI_INT, T_INT},
        {"MPI_MAX on MPI_C_FLOAT_COMPLEX", MPI_MAX, MPI_C_FLOAT_COMPLEX, T_CFLOAT},
        {"MPI_LXOR on MPI_INT (standard)", MPI_LXOR, MPI_INT, T_INT},
    };
    int np = (int)(sizeof pairs / sizeof pairs[0]), nacc = 0;
    for (int i = 0; i < np; i++) {
        int ok = accepted(&pairs[i]);
        nacc += ok;
        collectives(&pairs[i], ok);
        accumulates(&pairs[i], ok);
        MPI_Barrier(comm);
    }
    MPI_Comm_free(&comm);
    if (rank == 0)
        printf("coll_op_ext: OK (%d of %d pairs accepted by the MPI)\n", nacc, np);
    MPI_Finalize();
    return 0;
}
