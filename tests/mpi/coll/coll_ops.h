/* coll_ops.h: the user-defined reduction ops of the collective tests, with their data
 * and reference folds: a commutative op on a struct with padding (a non-contiguous
 * type) and a non-commutative one, 2x2 matrix products mod 2^32, on a contiguous type
 * and on one with holes. */
#ifndef HMPI_TEST_COLL_OPS_H
#define HMPI_TEST_COLL_OPS_H

#include "coll_common.h"

#include <stddef.h>

/* A struct with padding (12 bytes of data in 16): a non-contiguous type. */
typedef struct {
    int a;
    double b;
} pair_t;

static inline void pair_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    pair_t *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        y[i].a += x[i].a;
        y[i].b = x[i].b > y[i].b ? x[i].b : y[i].b;
    }
}

static inline MPI_Datatype pair_type(void)
{
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {offsetof(pair_t, a), offsetof(pair_t, b)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, t, r;
    MPI_Type_create_struct(2, bl, d, ty, &t);
    MPI_Type_create_resized(t, 0, sizeof(pair_t), &r);
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    return r;
}

/* 2x2 matrices of uint32 (arithmetic mod 2^32): inout = in x inout, not commutative. The
 * element stride is the datatype's extent, so the same op serves a type with holes. */
static inline void mat_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(*type, &lb, &ext);
    for (int i = 0; i < *len; i++) {
        const uint32_t *x = (const uint32_t *)((char *)in + i * ext);
        uint32_t *y = (uint32_t *)((char *)inout + i * ext), r[4];
        r[0] = x[0] * y[0] + x[1] * y[2];
        r[1] = x[0] * y[1] + x[1] * y[3];
        r[2] = x[2] * y[0] + x[3] * y[2];
        r[3] = x[2] * y[1] + x[3] * y[3];
        memcpy(y, r, sizeof r);
    }
}

/* Data of the user-op cases: pairs in their struct layout (padding ignored), matrices
 * packed (16 bytes each). */
static inline void gen_pairs(void *buf, int count, uint64_t seed, int rank, int op)
{
    pair_t *p = buf;
    for (int i = 0; i < count; i++) {
        uint64_t h = tc_h(seed, rank, i);
        memset(&p[i], 0, sizeof p[i]);
        p[i].a = (int)(h % 1000) - 500;
        p[i].b = (double)((int)((h >> 16) % 1000) - 500);
    }
}
static inline void fold_pairs(void *acc, const void *in, int count, int op)
{
    int len = count;
    pair_op((void *)in, acc, &len, NULL);
}
static inline int same_pairs(const void *a, const void *b, int count)
{
    for (int i = 0; i < count; i++)
        if (((const pair_t *)a)[i].a != ((const pair_t *)b)[i].a ||
            ((const pair_t *)a)[i].b != ((const pair_t *)b)[i].b)
            return 0;
    return 1;
}
static inline void gen_mats(void *buf, int count, uint64_t seed, int rank, int op)
{
    uint32_t *m = buf;
    for (int i = 0; i < 4 * count; i++)
        m[i] = (uint32_t)tc_h(seed, rank, i);
}
static inline void fold_mats(void *acc, const void *in, int count, int op)
{
    int len = count;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(4, MPI_UINT32_T, &t);
    mat_op((void *)in, acc, &len, &t);
    MPI_Type_free(&t);
}
static inline int same_mats(const void *a, const void *b, int count)
{
    return memcmp(a, b, 16 * (size_t)count) == 0;
}

static inline MPI_Datatype mat_type(int holes)
{
    MPI_Datatype t, r;
    MPI_Type_contiguous(4, MPI_UINT32_T, &t);
    if (!holes) {
        MPI_Type_commit(&t);
        return t;
    }
    MPI_Type_create_resized(t, 0, 24, &r); /* 16 bytes of data every 24 */
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    return r;
}

#endif
