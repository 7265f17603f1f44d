/* coll_reduce.c: MPI_Reduce and MPI_Allreduce against a reference folded locally in
 * rank order: every predefined op on every predefined datatype it applies to (those
 * the MPI below rejects are skipped and listed), sizes from 0 to several MiB, in
 * place, every root, subset and reordered communicators, buffers on the heap and off
 * it, user-defined ops commutative (on a struct with padding) and not (2x2 matrix
 * products), small reduces in a row while the root sleeps (the non-roots run ahead), a
 * predefined op on a derived datatype. Values are chosen so that every
 * result is exact (no overflow, floating sums of small integers). */
#include "coll_common.h"
#include "coll_ops.h"

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

enum {
    OP_MAX,
    OP_MIN,
    OP_SUM,
    OP_PROD,
    OP_LAND,
    OP_LOR,
    OP_LXOR,
    OP_BAND,
    OP_BOR,
    OP_BXOR,
    OP_MAXLOC,
    OP_MINLOC,
    NOPS
};
static const char *const op_name[NOPS] = {"MAX",  "MIN",  "SUM", "PROD", "LAND",   "LOR",
                                          "LXOR", "BAND", "BOR", "BXOR", "MAXLOC", "MINLOC"};
static MPI_Op op_handle(int op)
{
    const MPI_Op h[NOPS] = {MPI_MAX,  MPI_MIN,  MPI_SUM, MPI_PROD, MPI_LAND,   MPI_LOR,
                            MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    return h[op];
}

/* Which ops apply to which kind of type (MPI-3.1 5.9.2). */
#define ARITH ((1 << OP_MAX) | (1 << OP_MIN) | (1 << OP_SUM) | (1 << OP_PROD))
#define LOGIC ((1 << OP_LAND) | (1 << OP_LOR) | (1 << OP_LXOR))
#define BITS ((1 << OP_BAND) | (1 << OP_BOR) | (1 << OP_BXOR))
#define LOC ((1 << OP_MAXLOC) | (1 << OP_MINLOC))

typedef struct {
    const char *name;
    MPI_Datatype type;
    size_t size;
    unsigned ops;
    void (*gen)(void *buf, int count, uint64_t seed, int rank, int op);
    void (*fold)(void *acc, const void *in, int count, int op); /* acc = in op acc */
    int (*same)(const void *a, const void *b, int count);
} rtype_t;

/* ---- integers ------------------------------------------------------------------------ */

// clang-format off
#define GEN_INT(T, SIGNED)                                                                  \
    static void gen_##T(void *buf, int count, uint64_t seed, int rank, int op)             \
    {                                                                                       \
        T *p = buf;                                                                         \
        for (int i = 0; i < count; i++) {                                                   \
            uint64_t h = tc_h(seed, rank, i);                                               \
            long long v;                                                                    \
            switch (op) {                                                                   \
            case OP_SUM: v = SIGNED ? (long long)(h % 21) - 10 : (long long)(h % 11); break; \
            case OP_PROD:                                                                   \
                v = rank == 0 ? (long long)(h % 3) + 1                                      \
                              : SIGNED ? ((h >> 8) & 1 ? 1 : -1) : (long long)(h % 2) + 1;  \
                break;                                                                      \
            case OP_MAX: case OP_MIN:                                                       \
                v = SIGNED ? (long long)(h % 200) - 100 : (long long)(h % 200);             \
                break;                                                                      \
            case OP_LAND: case OP_LOR: case OP_LXOR:                                        \
                v = h % 3 == 0 ? 0 : (long long)((h >> 8) % 5) + 1;                         \
                break;                                                                      \
            default: v = (long long)(h >> 3); break;                                        \
            }                                                                               \
            p[i] = (T)v;                                                                    \
        }                                                                                   \
    }                                                                                       \
    static void fold_##T(void *acc, const void *in, int count, int op)                     \
    {                                                                                       \
        T *a = acc;                                                                         \
        const T *x = in;                                                                    \
        for (int i = 0; i < count; i++) {                                                   \
            T u = x[i], w = a[i];                                                           \
            switch (op) {                                                                   \
            case OP_MAX: a[i] = u > w ? u : w; break;                                       \
            case OP_MIN: a[i] = u < w ? u : w; break;                                       \
            case OP_SUM: a[i] = (T)(u + w); break;                                          \
            case OP_PROD: a[i] = (T)(u * w); break;                                         \
            case OP_LAND: a[i] = (T)(u && w); break;                                        \
            case OP_LOR: a[i] = (T)(u || w); break;                                         \
            case OP_LXOR: a[i] = (T)(!u != !w); break;                                      \
            case OP_BAND: a[i] = (T)(u & w); break;                                         \
            case OP_BOR: a[i] = (T)(u | w); break;                                          \
            case OP_BXOR: a[i] = (T)(u ^ w); break;                                         \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    static int same_##T(const void *a, const void *b, int count)                           \
    {                                                                                       \
        return memcmp(a, b, sizeof(T) * (size_t)count) == 0;                                \
    }

typedef signed char schar;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned long ulong;
typedef long long llong;
typedef unsigned long long ullong;
typedef long double ldouble;
typedef float _Complex fcomplex;
typedef double _Complex dcomplex;
typedef long double _Complex lcomplex;

GEN_INT(schar, 1) GEN_INT(uchar, 0) GEN_INT(short, 1) GEN_INT(ushort, 0) GEN_INT(int, 1)
GEN_INT(unsigned, 0) GEN_INT(long, 1) GEN_INT(ulong, 0) GEN_INT(llong, 1) GEN_INT(ullong, 0)
GEN_INT(int8_t, 1) GEN_INT(int16_t, 1) GEN_INT(int32_t, 1) GEN_INT(int64_t, 1)
GEN_INT(uint8_t, 0) GEN_INT(uint16_t, 0) GEN_INT(uint32_t, 0) GEN_INT(uint64_t, 0)
GEN_INT(MPI_Aint, 1) GEN_INT(MPI_Offset, 1) GEN_INT(MPI_Count, 1)

static void gen_bool(void *buf, int count, uint64_t seed, int rank, int op)
{
    bool *p = buf;
    for (int i = 0; i < count; i++)
        p[i] = tc_h(seed, rank, i) % 4 != 0;
}
static void fold_bool(void *acc, const void *in, int count, int op)
{
    bool *a = acc;
    const bool *x = in;
    for (int i = 0; i < count; i++)
        a[i] = op == OP_LAND ? (x[i] && a[i]) : op == OP_LOR ? (x[i] || a[i]) : (x[i] != a[i]);
}
static int same_bool(const void *a, const void *b, int count)
{
    return memcmp(a, b, (size_t)count) == 0;
}

/* ---- floating point and complex ------------------------------------------------------ */

#define GEN_FLOAT(T)                                                                        \
    static void gen_##T(void *buf, int count, uint64_t seed, int rank, int op)             \
    {                                                                                       \
        T *p = buf;                                                                         \
        for (int i = 0; i < count; i++) {                                                   \
            uint64_t h = tc_h(seed, rank, i);                                               \
            if (op == OP_PROD)                                                              \
                p[i] = rank == 0 ? (T)((int)(h % 5) - 2) : (T)(((h >> 8) % 2 ? 1 : -1) * (int)((h >> 9) % 2 + 1)); \
            else if (op == OP_SUM)                                                          \
                p[i] = (T)((int)(h % 21) - 10);                                             \
            else                                                                            \
                p[i] = (T)((int)(h % 200) - 100);                                           \
        }                                                                                   \
    }                                                                                       \
    static void fold_##T(void *acc, const void *in, int count, int op)                     \
    {                                                                                       \
        T *a = acc;                                                                         \
        const T *x = in;                                                                    \
        for (int i = 0; i < count; i++) {                                                   \
            T u = x[i], w = a[i];                                                           \
            a[i] = op == OP_MAX ? (u > w ? u : w) : op == OP_MIN ? (u < w ? u : w)          \
                   : op == OP_SUM ? u + w : u * w;                                          \
        }                                                                                   \
    }                                                                                       \
    static int same_##T(const void *a, const void *b, int count)                           \
    {                                                                                       \
        for (int i = 0; i < count; i++)                                                     \
            if (((const T *)a)[i] != ((const T *)b)[i])                                     \
                return 0;                                                                   \
        return 1;                                                                           \
    }
GEN_FLOAT(float) GEN_FLOAT(double) GEN_FLOAT(ldouble)

#define GEN_COMPLEX(T, R)                                                                   \
    static void gen_##T(void *buf, int count, uint64_t seed, int rank, int op)             \
    {                                                                                       \
        T *p = buf;                                                                         \
        static const int unit[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};                   \
        for (int i = 0; i < count; i++) {                                                   \
            uint64_t h = tc_h(seed, rank, i);                                               \
            R re, im;                                                                       \
            if (op == OP_PROD && rank > 0) {                                                \
                re = (R)unit[h % 4][0];                                                     \
                im = (R)unit[h % 4][1];                                                     \
            } else if (op == OP_PROD) {                                                     \
                re = (R)((int)(h % 5) - 2);                                                 \
                im = (R)((int)((h >> 8) % 5) - 2);                                          \
            } else {                                                                        \
                re = (R)((int)(h % 21) - 10);                                               \
                im = (R)((int)((h >> 8) % 21) - 10);                                        \
            }                                                                               \
            R *q = (R *)&p[i];                                                              \
            q[0] = re;                                                                      \
            q[1] = im;                                                                      \
        }                                                                                   \
    }                                                                                       \
    static void fold_##T(void *acc, const void *in, int count, int op)                     \
    {                                                                                       \
        T *a = acc;                                                                         \
        const T *x = in;                                                                    \
        for (int i = 0; i < count; i++) {                                                   \
            const R *u = (const R *)&x[i];                                                  \
            R *w = (R *)&a[i], re, im;                                                      \
            if (op == OP_SUM) {                                                             \
                re = u[0] + w[0];                                                           \
                im = u[1] + w[1];                                                           \
            } else {                                                                        \
                re = u[0] * w[0] - u[1] * w[1];                                             \
                im = u[0] * w[1] + u[1] * w[0];                                             \
            }                                                                               \
            w[0] = re;                                                                      \
            w[1] = im;                                                                      \
        }                                                                                   \
    }                                                                                       \
    static int same_##T(const void *a, const void *b, int count)                           \
    {                                                                                       \
        for (int i = 0; i < count; i++) {                                                   \
            const R *u = (const R *)&((const T *)a)[i], *w = (const R *)&((const T *)b)[i]; \
            if (u[0] != w[0] || u[1] != w[1])                                               \
                return 0;                                                                   \
        }                                                                                   \
        return 1;                                                                           \
    }
GEN_COMPLEX(fcomplex, float) GEN_COMPLEX(dcomplex, double) GEN_COMPLEX(lcomplex, ldouble)

/* ---- value-index pairs (MAXLOC, MINLOC) ------------------------------------------------ */

#define GEN_PAIR(NAME, V)                                                                   \
    typedef struct {                                                                        \
        V v;                                                                                \
        int i;                                                                              \
    } NAME;                                                                                 \
    static void gen_##NAME(void *buf, int count, uint64_t seed, int rank, int op)          \
    {                                                                                       \
        NAME *p = buf;                                                                      \
        for (int i = 0; i < count; i++) {                                                   \
            uint64_t h = tc_h(seed, rank, i);                                               \
            p[i].v = (V)(h % 5);          /* many ties: the smaller index must win */       \
            p[i].i = (int)((h >> 8) % 7); \
        }                                                                                   \
    }                                                                                       \
    static void fold_##NAME(void *acc, const void *in, int count, int op)                  \
    {                                                                                       \
        NAME *a = acc;                                                                      \
        const NAME *x = in;                                                                 \
        for (int i = 0; i < count; i++) {                                                   \
            NAME u = x[i], w = a[i];                                                        \
            int better = op == OP_MAXLOC ? u.v > w.v : u.v < w.v;                           \
            if (u.v == w.v)                                                                 \
                a[i].i = u.i < w.i ? u.i : w.i;                                             \
            else if (better)                                                                \
                a[i] = u;                                                                   \
        }                                                                                   \
    }                                                                                       \
    static int same_##NAME(const void *a, const void *b, int count)                        \
    {                                                                                       \
        for (int i = 0; i < count; i++)                                                     \
            if (((const NAME *)a)[i].v != ((const NAME *)b)[i].v ||                         \
                ((const NAME *)a)[i].i != ((const NAME *)b)[i].i)                           \
                return 0;                                                                   \
        return 1;                                                                           \
    }
GEN_PAIR(p2int, int) GEN_PAIR(pfloat, float) GEN_PAIR(pdouble, double) GEN_PAIR(plong, long)
GEN_PAIR(pshort, short) GEN_PAIR(pldouble, ldouble)
// clang-format on

#define T(name, mpi, ctype, ops)                                               \
    {                                                                          \
        name, mpi, sizeof(ctype), ops, gen_##ctype, fold_##ctype, same_##ctype \
    }
                static const rtype_t rtypes[] = {
                    T("SIGNED_CHAR", MPI_SIGNED_CHAR, schar, ARITH | LOGIC | BITS),
                    T("UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, uchar, ARITH | LOGIC | BITS),
                    T("SHORT", MPI_SHORT, short, ARITH | LOGIC | BITS),
                    T("UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, ushort, ARITH | LOGIC | BITS),
                    T("INT", MPI_INT, int, ARITH | LOGIC | BITS),
                    T("UNSIGNED", MPI_UNSIGNED, unsigned, ARITH | LOGIC | BITS),
                    T("LONG", MPI_LONG, long, ARITH | LOGIC | BITS),
                    T("UNSIGNED_LONG", MPI_UNSIGNED_LONG, ulong, ARITH | LOGIC | BITS),
                    T("LONG_LONG", MPI_LONG_LONG, llong, ARITH | LOGIC | BITS),
                    T("UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, ullong, ARITH | LOGIC | BITS),
                    T("INT8_T", MPI_INT8_T, int8_t, ARITH | LOGIC | BITS),
                    T("INT16_T", MPI_INT16_T, int16_t, ARITH | LOGIC | BITS),
                    T("INT32_T", MPI_INT32_T, int32_t, ARITH | LOGIC | BITS),
                    T("INT64_T", MPI_INT64_T, int64_t, ARITH | LOGIC | BITS),
                    T("UINT8_T", MPI_UINT8_T, uint8_t, ARITH | LOGIC | BITS),
                    T("UINT16_T", MPI_UINT16_T, uint16_t, ARITH | LOGIC | BITS),
                    T("UINT32_T", MPI_UINT32_T, uint32_t, ARITH | LOGIC | BITS),
                    T("UINT64_T", MPI_UINT64_T, uint64_t, ARITH | LOGIC | BITS),
                    T("AINT", MPI_AINT, MPI_Aint, ARITH | BITS),
                    T("OFFSET", MPI_OFFSET, MPI_Offset, ARITH | BITS),
                    T("COUNT", MPI_COUNT, MPI_Count, ARITH | BITS),
                    T("FLOAT", MPI_FLOAT, float, ARITH),
                    T("DOUBLE", MPI_DOUBLE, double, ARITH),
                    T("LONG_DOUBLE", MPI_LONG_DOUBLE, ldouble, ARITH),
                    T("C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, fcomplex,
                      (1 << OP_SUM) | (1 << OP_PROD)),
                    T("C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, dcomplex,
                      (1 << OP_SUM) | (1 << OP_PROD)),
                    T("C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX, lcomplex,
                      (1 << OP_SUM) | (1 << OP_PROD)),
                    T("C_BOOL", MPI_C_BOOL, bool, LOGIC),
                    T("BYTE", MPI_BYTE, uchar, BITS),
                    T("2INT", MPI_2INT, p2int, LOC),
                    T("FLOAT_INT", MPI_FLOAT_INT, pfloat, LOC),
                    T("DOUBLE_INT", MPI_DOUBLE_INT, pdouble, LOC),
                    T("LONG_INT", MPI_LONG_INT, plong, LOC),
                    T("SHORT_INT", MPI_SHORT_INT, pshort, LOC),
                    T("LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, pldouble, LOC),
};
#undef T
enum { NRTYPES = sizeof rtypes / sizeof rtypes[0] };

/* ---- one case ---------------------------------------------------------------------------- */

/* A reduction case: count elements of `type`, each stride bytes apart in memory, whose
 * data (elem bytes, at offset 0 of the element) are made by gen and folded by fold. */
typedef struct {
    const char *what;
    MPI_Datatype type;
    MPI_Op op;
    size_t elem, stride;
    int opcode;
    void (*gen)(void *buf, int count, uint64_t seed, int rank, int op);
    void (*fold)(void *acc, const void *in, int count, int op);
    int (*same)(const void *a, const void *b, int count);
} rcase_t;

/* Strided data <-> packed array of elem-sized values. */
static void spread(void *dst, const void *src, int count, size_t elem, size_t stride)
{
    for (int i = 0; i < count; i++)
        memcpy((char *)dst + i * stride, (const char *)src + i * elem, elem);
}
static void gather_elems(void *dst, const void *src, int count, size_t elem, size_t stride)
{
    for (int i = 0; i < count; i++)
        memcpy((char *)dst + i * elem, (const char *)src + i * stride, elem);
}

static uint64_t seq;

/* Runs one reduce (root >= 0) or allreduce (root < 0) and checks it. */
static void run_case(const tc_comm_t *tc, const rcase_t *rc, int count, int root, int inplace,
                     int skind, int rkind)
{
    uint64_t seed = ++seq;
    int n = tc->size, me = tc->rank;
    size_t packed = rc->elem * (size_t)count, bytes = rc->stride * (size_t)count;
    unsigned char *ref = malloc(packed + 1), *tmp = malloc(packed + 1);
    unsigned char *sbuf = tc_alloc(skind, bytes), *rbuf = tc_alloc(rkind, bytes);
    /* the reference: x[0] op (x[1] op (... op x[n-1])) */
    rc->gen(ref, count, seed, n - 1, rc->opcode);
    for (int j = n - 2; j >= 0; j--) {
        rc->gen(tmp, count, seed, j, rc->opcode);
        rc->fold(ref, tmp, count, rc->opcode);
    }
    rc->gen(tmp, count, seed, me, rc->opcode);
    int at_root = root < 0 || me == root;
    int use_inplace = inplace && at_root;
    spread(use_inplace ? rbuf : sbuf, tmp, count, rc->elem, rc->stride);
    int err;
    if (root < 0)
        err = MPI_Allreduce(use_inplace ? MPI_IN_PLACE : sbuf, rbuf, count, rc->type, rc->op,
                            tc->comm);
    else
        err = MPI_Reduce(use_inplace ? MPI_IN_PLACE : sbuf, at_root ? rbuf : NULL, count, rc->type,
                         rc->op, root, tc->comm);
    CHECK(err == MPI_SUCCESS, "error %d", err);
    if (at_root) {
        gather_elems(tmp, rbuf, count, rc->elem, rc->stride);
        int ok = rc->same(tmp, ref, count);
        if (!ok) {
            int first = 0;
            while (first < count && rc->same(tmp + first * rc->elem, ref + first * rc->elem, 1))
                first++;
            unsigned long long got = 0, want = 0;
            memcpy(&got, tmp + first * rc->elem, rc->elem < 8 ? rc->elem : 8);
            memcpy(&want, ref + first * rc->elem, rc->elem < 8 ? rc->elem : 8);
            CHECK(ok,
                  "%s %s: comm %s rank %d/%d, count %d, root %d, inplace %d, send %s, "
                  "recv %s: element %d differs: got %#llx, want %#llx (first 8 bytes)",
                  root < 0 ? "allreduce" : "reduce", rc->what, tc->name, me, n, count, root,
                  use_inplace, tc_buf_name[skind], tc_buf_name[rkind], first, got, want);
        }
    }
    free(ref);
    free(tmp);
    tc_release();
}

/* ---- the parts -------------------------------------------------------------------------- */

/* Does the MPI below do op on type, and right? MPI_Reduce_local on a sample, errors
 * returned, compared with the reference fold (Debian's MPICH 4.0.2 computes MPI_MAX and
 * MPI_MIN on MPI_UNSIGNED_CHAR as if signed, for one). 0 = fine, 1 = refused, 2 = wrong.
 * This rank's answer: agree with agree_probes(). */
static int probe(MPI_Datatype type, MPI_Op op, size_t elem, size_t stride, int opcode,
                 void (*gen)(void *, int, uint64_t, int, int),
                 void (*fold)(void *, const void *, int, int),
                 int (*same)(const void *, const void *, int))
{
    enum { N = 64 };
    unsigned char x[N * 32], y[N * 32], sx[N * 32], sy[N * 32];
    gen(x, N, 12345, 0, opcode);
    gen(y, N, 12345, 1, opcode);
    spread(sx, x, N, elem, stride);
    spread(sy, y, N, elem, stride);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int bad = stride > 32 || MPI_Reduce_local(sx, sy, N, type, op) != MPI_SUCCESS;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    if (!bad) {
        fold(y, x, N, opcode);
        gather_elems(sx, sy, N, elem, stride);
        bad = same(sx, y, N) ? 0 : 2;
    }
    return bad;
}

static void agree_probes(int *bad, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, bad, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
}

/* Every op on every type it applies to, a few sizes, on two communicators. */
static void part_matrix(void)
{
    int k = 0, skipped = 0, bads[NRTYPES * NOPS];
    char skip[2048] = "";
    for (int t = 0; t < NRTYPES; t++)
        for (int op = 0; op < NOPS; op++)
            bads[t * NOPS + op] =
                rtypes[t].ops & (1u << op)
                    ? probe(rtypes[t].type, op_handle(op), rtypes[t].size, rtypes[t].size, op,
                            rtypes[t].gen, rtypes[t].fold, rtypes[t].same)
                    : 0;
    agree_probes(bads, NRTYPES * NOPS);
    for (int t = 0; t < NRTYPES; t++) {
        const rtype_t *rt = &rtypes[t];
        for (int op = 0; op < NOPS; op++) {
            if (!(rt->ops & (1u << op)))
                continue;
            int bad = bads[t * NOPS + op];
            if (bad) {
                if (skipped++ < 40)
                    snprintf(skip + strlen(skip), sizeof skip - strlen(skip), " %s/%s(%s)",
                             rt->name, op_name[op], bad == 1 ? "refused" : "wrong");
                continue;
            }
            char what[64];
            snprintf(what, sizeof what, "%s %s", rt->name, op_name[op]);
            rcase_t rc = {what, rt->type, op_handle(op), rt->size, rt->size,
                          op,   rt->gen,  rt->fold,      rt->same};
            /* allreduce on world and reduce on reversed, sizes and modes rotating */
            const int counts[] = {1, 7, 300};
            run_case(&tc_comms[0], &rc, counts[k % 3], -1, k % 3 == 0, k % BUF_KINDS,
                     (k / 2) % BUF_KINDS);
            run_case(&tc_comms[1], &rc, counts[(k + 1) % 3], k % tc_comms[1].size, k % 4 == 1,
                     (k + 1) % BUF_KINDS, (k / 3) % BUF_KINDS);
            k++;
        }
    }
    if (tc_rank == 0 && skipped)
        printf("coll_reduce: %d op/type pairs skipped, the MPI below refuses them or gets them "
               "wrong in MPI_Reduce_local:%s\n",
               skipped, skip);
}

/* MPI_SUM on MPI_INT: sizes around every threshold and up to 4 MiB, every comm, every
 * buffer kind, in place or not, every root. */
static void part_sizes(void)
{
    const rtype_t *rt = &rtypes[4]; /* INT */
    rcase_t rc = {"INT SUM", MPI_INT, MPI_SUM,  sizeof(int), sizeof(int),
                  OP_SUM,    rt->gen, rt->fold, rt->same};
    const int counts[] = {0, 1, 2, 3, 5, 17, 255, 511, 512, 513, 4099, 65539, 1 << 20};
    int k = 0;
    for (int c = 0; c < tc_ncomms; c++) {
        const tc_comm_t *tc = &tc_comms[c];
        for (int i = 0; i < 13; i++, k++) {
            int big = counts[i] > 5000;
            if (counts[i] > 100000 && c >= 2)
                continue; /* 4 MiB on world and reversed */
            int reps = big ? (c < 2 ? 2 : 1) : 2;
            for (int r = 0; r < reps; r++, k++) {
                int sk = big ? (r == 0 ? BUF_HEAP : BUF_PREINIT) : k % BUF_KINDS;
                int rk = big ? (r == 0 ? BUF_HEAP : BUF_GLOBAL) : (k / 4) % BUF_KINDS;
                run_case(tc, &rc, counts[i], -1, (k & 1), sk, rk);
                run_case(tc, &rc, counts[i], (k * 7 + r) % tc->size, (k & 2) != 0, rk, sk);
            }
        }
    }
}

/* User ops: commutative on a padded struct, non-commutative on matrices (contiguous, and
 * with holes), on every communicator. */
static void part_user_ops(void)
{
    MPI_Op pair, mat;
    MPI_Op_create(pair_op, 1, &pair);
    MPI_Op_create(mat_op, 0, &mat);
    MPI_Datatype tpair = pair_type(), tmat = mat_type(0), tmat_holes = mat_type(1);
    const rcase_t cases[3] = {
        {"user pair (commutative, padded struct)", tpair, pair, sizeof(pair_t), sizeof(pair_t), 0,
         gen_pairs, fold_pairs, same_pairs},
        {"user 2x2 matrix product (non-commutative)", tmat, mat, 16, 16, 0, gen_mats, fold_mats,
         same_mats},
        {"user 2x2 matrix product with holes", tmat_holes, mat, 16, 24, 0, gen_mats, fold_mats,
         same_mats},
    };
    const int counts[] = {1, 5, 129, 3000, 150000};
    int k = 0;
    for (int c = 0; c < tc_ncomms; c++) {
        const tc_comm_t *tc = &tc_comms[c];
        for (int u = 0; u < 3; u++)
            for (int i = 0; i < 5; i++, k++) {
                if (counts[i] > 10000 && c >= 2)
                    continue; /* the big ones on world and reversed */
                run_case(tc, &cases[u], counts[i], -1, k & 1, k % BUF_KINDS, BUF_HEAP);
                run_case(tc, &cases[u], counts[i], k % tc->size, (k & 2) != 0, BUF_HEAP,
                         (k + 1) % BUF_KINDS);
            }
    }
    MPI_Type_free(&tpair);
    MPI_Type_free(&tmat);
    MPI_Type_free(&tmat_holes);
    MPI_Op_free(&pair);
    MPI_Op_free(&mat);
}

/* Small reduces in a row (the ring, src/coll/coll.h): the non-roots run ahead of the
 * root, lap their rings while it sleeps, and every result is right and in member order
 * (a non-commutative op); inputs on both sides of the ring's capacity (18 matrices, 288
 * bytes, fit; 19 do not), in place or not, roots changing between runs. */
static void part_ring(void)
{
    MPI_Op mat;
    MPI_Op_create(mat_op, 0, &mat);
    MPI_Datatype tmat = mat_type(0);
    rcase_t rc = {"matrix product, in a row", tmat, mat, 16, 16, 0, gen_mats, fold_mats, same_mats};
    const int counts[] = {1, 18, 2};
    for (int c = 0; c < tc_ncomms; c++) {
        const tc_comm_t *tc = &tc_comms[c];
        for (int run = 0; run < 2; run++) {
            int root = (run + c) % tc->size;
            for (int i = 0; i < 80; i++) {
                if (tc->rank == root && i == 10) {
                    struct timespec ts = {0, 5 * 1000 * 1000};
                    nanosleep(&ts, NULL);
                }
                /* the slot's way (19) waits for the root: last, so the others lap first */
                run_case(tc, &rc, i == 79 ? 19 : counts[i % 3], root, i % 5 == 0, i % BUF_KINDS,
                         BUF_HEAP);
            }
        }
    }
    MPI_Type_free(&tmat);
    MPI_Op_free(&mat);
}

/* A predefined op on a derived datatype: MPI_SUM over ints with holes (when the MPI
 * below allows it; MPI only promises predefined types). */
static void part_derived(void)
{
    MPI_Datatype t = tc_strided_ints(1), r;
    MPI_Type_create_resized(t, 0, 2 * sizeof(int), &r); /* one int, then a hole */
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    const rtype_t *rt = &rtypes[4];
    int bad = probe(r, MPI_SUM, sizeof(int), 2 * sizeof(int), OP_SUM, rt->gen, rt->fold, rt->same);
    agree_probes(&bad, 1);
    if (bad) {
        if (tc_rank == 0)
            printf("coll_reduce: the MPI below %s MPI_SUM on a derived type: skipped\n",
                   bad == 1 ? "refuses" : "gets wrong");
        MPI_Type_free(&r);
        return;
    }
    rcase_t rc = {"INT SUM on ints with holes",
                  r,
                  MPI_SUM,
                  sizeof(int),
                  2 * sizeof(int),
                  OP_SUM,
                  rt->gen,
                  rt->fold,
                  rt->same};
    const int counts[] = {1, 6, 1000, 100000};
    int k = 0;
    for (int c = 0; c < tc_ncomms; c++)
        for (int i = 0; i < 4; i++, k++) {
            run_case(&tc_comms[c], &rc, counts[i], -1, k & 1, k % BUF_KINDS, BUF_HEAP);
            run_case(&tc_comms[c], &rc, counts[i], k % tc_comms[c].size, (k & 2) != 0, BUF_HEAP,
                     k % BUF_KINDS);
        }
    MPI_Type_free(&r);
}

static void run(void)
{
    part_matrix();
    part_sizes();
    part_user_ops();
    part_ring();
    part_derived();
}

int main(int argc, char **argv) { return tc_main(argc, argv, run); }
