/* coll_rs_scan.c: MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan and
 * MPI_Exscan against references folded locally in rank order: MPI_SUM on ints,
 * MAXLOC on double-int pairs, a commutative user op on a padded struct and a
 * non-commutative one (matrix products) on a contiguous type and on one with holes;
 * block sizes from 0 to MiBs, uneven and empty blocks, in place, every communicator,
 * every buffer kind. */
#include "coll_common.h"
#include "coll_ops.h"

typedef struct {
    double v;
    int i;
} dint_t;

static void gen_int(void *buf, int count, uint64_t seed, int rank, int op)
{
    for (int i = 0; i < count; i++)
        ((int *)buf)[i] = (int)(tc_h(seed, rank, i) % 2001) - 1000;
}
static void fold_int(void *acc, const void *in, int count, int op)
{
    for (int i = 0; i < count; i++)
        ((int *)acc)[i] += ((const int *)in)[i];
}
static int same_int(const void *a, const void *b, int count)
{
    return memcmp(a, b, sizeof(int) * (size_t)count) == 0;
}
static void gen_dint(void *buf, int count, uint64_t seed, int rank, int op)
{
    dint_t *p = buf;
    for (int i = 0; i < count; i++) {
        uint64_t h = tc_h(seed, rank, i);
        memset(&p[i], 0, sizeof p[i]);
        p[i].v = (double)(h % 4);
        p[i].i = (int)((h >> 8) % 9);
    }
}
static void fold_dint(void *acc, const void *in, int count, int op)
{
    dint_t *a = acc;
    const dint_t *x = in;
    for (int i = 0; i < count; i++) {
        if (x[i].v > a[i].v)
            a[i] = x[i];
        else if (x[i].v == a[i].v && x[i].i < a[i].i)
            a[i].i = x[i].i;
    }
}
static int same_dint(const void *a, const void *b, int count)
{
    for (int i = 0; i < count; i++)
        if (((const dint_t *)a)[i].v != ((const dint_t *)b)[i].v ||
            ((const dint_t *)a)[i].i != ((const dint_t *)b)[i].i)
            return 0;
    return 1;
}

typedef struct {
    const char *what;
    MPI_Datatype type;
    MPI_Op op;
    size_t elem, stride; /* data bytes of an element (at its start), and its extent */
    void (*gen)(void *, int, uint64_t, int, int);
    void (*fold)(void *, const void *, int, int);
    int (*same)(const void *, const void *, int);
} scase_t;

static scase_t cases[5];
enum { NCASES = 5 };
static uint64_t seq;

static void spread(void *dst, const void *src, int count, size_t elem, size_t stride)
{
    for (int i = 0; i < count; i++)
        memcpy((char *)dst + i * stride, (const char *)src + i * elem, elem);
}
static void collect(void *dst, const void *src, int count, size_t elem, size_t stride)
{
    for (int i = 0; i < count; i++)
        memcpy((char *)dst + i * elem, (const char *)src + i * stride, elem);
}

/* Folds ranks lo..hi (inclusive, in rank order) over elements [first, first + count) into
 * ref (packed). */
static void reference(const scase_t *sc, uint64_t seed, int lo, int hi, int total, int first,
                      int count, unsigned char *ref)
{
    unsigned char *all = malloc(sc->elem * (size_t)total + 1);
    sc->gen(all, total, seed, hi, 0);
    memcpy(ref, all + sc->elem * (size_t)first, sc->elem * (size_t)count);
    for (int j = hi - 1; j >= lo; j--) {
        sc->gen(all, total, seed, j, 0);
        sc->fold(ref, all + sc->elem * (size_t)first, count, 0);
    }
    free(all);
}

static void verify(const scase_t *sc, const char *coll, const tc_comm_t *tc, const void *rbuf,
                   const unsigned char *ref, int count, int inplace, int sk, int rk)
{
    unsigned char *got = malloc(sc->elem * (size_t)count + 1);
    collect(got, rbuf, count, sc->elem, sc->stride);
    if (!sc->same(got, ref, count)) {
        int first = 0;
        while (sc->same(got + first * sc->elem, ref + first * sc->elem, 1))
            first++;
        unsigned g = 0, w = 0;
        memcpy(&g, got + first * sc->elem, 4);
        memcpy(&w, ref + first * sc->elem, 4);
        CHECK(0,
              "%s %s: comm %s rank %d/%d, count %d, inplace %d, send %s, recv %s: element %d "
              "differs (first 4 bytes %#x, want %#x)",
              coll, sc->what, tc->name, tc->rank, tc->size, count, inplace, tc_buf_name[sk],
              tc_buf_name[rk], first, g, w);
    }
    free(got);
}

/* Reduce_scatter (counts != NULL) or _block (block elements each). */
static void rs_case(const tc_comm_t *tc, const scase_t *sc, const int *counts, int block,
                    int inplace, int sk, int rk)
{
    uint64_t seed = ++seq;
    int n = tc->size, me = tc->rank, total = 0, first = 0;
    for (int i = 0; i < n; i++) {
        if (i == me)
            first = total;
        total += counts ? counts[i] : block;
    }
    int mine = counts ? counts[me] : block;
    unsigned char *in = malloc(sc->elem * (size_t)total + 1);
    unsigned char *ref = malloc(sc->elem * (size_t)mine + 1);
    unsigned char *sbuf = tc_alloc(sk, sc->stride * (size_t)total);
    unsigned char *rbuf = tc_alloc(rk, sc->stride * (size_t)(inplace ? total : mine));
    sc->gen(in, total, seed, me, 0);
    spread(inplace ? rbuf : sbuf, in, total, sc->elem, sc->stride);
    reference(sc, seed, 0, n - 1, total, first, mine, ref);
    int err = counts ? MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : sbuf, rbuf, counts, sc->type,
                                          sc->op, tc->comm)
                     : MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : sbuf, rbuf, block,
                                                sc->type, sc->op, tc->comm);
    CHECK(err == MPI_SUCCESS, "error %d", err);
    verify(sc, counts ? "reduce_scatter" : "reduce_scatter_block", tc, rbuf, ref, mine, inplace, sk,
           rk);
    free(in);
    free(ref);
    tc_release();
}

static void scan_case(const tc_comm_t *tc, const scase_t *sc, int count, int exclusive, int inplace,
                      int sk, int rk)
{
    uint64_t seed = ++seq;
    int me = tc->rank;
    unsigned char *in = malloc(sc->elem * (size_t)count + 1);
    unsigned char *ref = malloc(sc->elem * (size_t)count + 1);
    unsigned char *sbuf = tc_alloc(sk, sc->stride * (size_t)count);
    unsigned char *rbuf = tc_alloc(rk, sc->stride * (size_t)count);
    sc->gen(in, count, seed, me, 0);
    spread(inplace ? rbuf : sbuf, in, count, sc->elem, sc->stride);
    int last = exclusive ? me - 1 : me;
    if (last >= 0)
        reference(sc, seed, 0, last, count, 0, count, ref);
    int err =
        exclusive
            ? MPI_Exscan(inplace ? MPI_IN_PLACE : sbuf, rbuf, count, sc->type, sc->op, tc->comm)
            : MPI_Scan(inplace ? MPI_IN_PLACE : sbuf, rbuf, count, sc->type, sc->op, tc->comm);
    CHECK(err == MPI_SUCCESS, "error %d", err);
    if (last >= 0) /* rank 0's exscan result is undefined */
        verify(sc, exclusive ? "exscan" : "scan", tc, rbuf, ref, count, inplace, sk, rk);
    free(in);
    free(ref);
    tc_release();
}

static void run(void)
{
    MPI_Op pair, mat;
    MPI_Op_create(pair_op, 1, &pair);
    MPI_Op_create(mat_op, 0, &mat);
    MPI_Datatype tpair = pair_type(), tmat = mat_type(0), tholes = mat_type(1);
    cases[0] = (scase_t){"INT SUM", MPI_INT, MPI_SUM, 4, 4, gen_int, fold_int, same_int};
    cases[1] = (scase_t){"DOUBLE_INT MAXLOC", MPI_DOUBLE_INT, MPI_MAXLOC, sizeof(dint_t),
                         sizeof(dint_t),      gen_dint,       fold_dint,  same_dint};
    cases[2] = (scase_t){"user pair",    tpair,     pair,       sizeof(pair_t),
                         sizeof(pair_t), gen_pairs, fold_pairs, same_pairs};
    cases[3] = (scase_t){"user matrix", tmat, mat, 16, 16, gen_mats, fold_mats, same_mats};
    cases[4] =
        (scase_t){"user matrix with holes", tholes, mat, 16, 24, gen_mats, fold_mats, same_mats};
    const int blocks[] = {0, 1, 3, 100, 700, 40000};
    int k = 0;
    for (int c = 0; c < tc_ncomms; c++) {
        const tc_comm_t *tc = &tc_comms[c];
        int n = tc->size, *counts = malloc(sizeof(int) * (size_t)n);
        /* Where the MPI below does the work, dodge two bugs of MPICH 4.0.2: wrong data
         * from MPI_Reduce_scatter(_block) with a non-commutative op on a type whose
         * extent exceeds its true extent, and a crash (overlapping memcpy) in an in-place
         * MPI_Reduce_scatter of a few hundred KiB. */
        int dodge = 0;
#ifdef MPICH_VERSION
        dodge = !tc_hmpi_does(tc->comm);
#endif
        for (int s = 0; s < NCASES; s++) {
            const scase_t *sc = &cases[s];
            for (int b = 0; b < 6; b++, k++) {
                if (blocks[b] > 1000 && (c >= 2 || s == 1 || s == 2))
                    continue; /* the big ones: world and reversed, ints and matrices */
                int inplace = k % 3 == 1;
                if (s == 4 && dodge) {
                    seq += 2; /* the same seeds on every rank, whatever runs here */
                    goto scans;
                }
                rs_case(tc, sc, NULL, blocks[b], inplace && !(dodge && blocks[b] > 1000),
                        k % BUF_KINDS, (k / 2) % BUF_KINDS);
                for (int i = 0; i < n; i++) /* uneven, some empty */
                    counts[i] = (i * 7 + b) % 3 == 0 ? 0 : blocks[b] + i;
                rs_case(tc, sc, counts, 0, !inplace && !(dodge && blocks[b] > 1000),
                        (k + 1) % BUF_KINDS, (k / 3) % BUF_KINDS);
            scans:
                scan_case(tc, sc, blocks[b] * 2 + 1, 0, inplace, (k + 2) % BUF_KINDS,
                          k % BUF_KINDS);
                scan_case(tc, sc, blocks[b] * 2 + 1, 1, !inplace, k % BUF_KINDS,
                          (k + 3) % BUF_KINDS);
            }
        }
        free(counts);
    }
    MPI_Type_free(&tpair);
    MPI_Type_free(&tmat);
    MPI_Type_free(&tholes);
    MPI_Op_free(&pair);
    MPI_Op_free(&mat);
}

int main(int argc, char **argv) { return tc_main(argc, argv, run); }
