/* op.c: HMPI's own loops for the predefined reduction ops on the basic datatypes (no
 * call into the MPI below per slice, which costs a tenth of a small allreduce: figures in
 * docs/collectives.md, "The algorithms"), and the layouts of the basic
 * datatypes without asking the MPI below. Everything else (MINLOC/MAXLOC pairs, long
 * double, complex, derived types, user ops) goes to MPI_Reduce_local. Results are those
 * of the MPI standard's definitions: integer arithmetic wraps, logical ops give 0 or 1.
 * The accumulates of src/rma use these kernels too. No shared state in here. */
#include "op.h"
#include "check.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The basic datatypes HMPI knows by handle (extent = size, lower bound 0). */
typedef enum { K_SINT, K_UINT, K_FLOAT, K_BOOL, K_BYTE, K_CHAR, K_OTHER } kind_t;

typedef struct {
    MPI_Datatype type;
    uint8_t size, kind;
} basic_t;

static basic_t basics[40];
static int nbasics;

static void add(MPI_Datatype t, size_t size, kind_t kind)
{
    if (t == MPI_DATATYPE_NULL || nbasics == (int)(sizeof basics / sizeof basics[0]))
        return;
    for (int i = 0; i < nbasics; i++)
        if (basics[i].type == t)
            return;
    int tsize = 0; /* trust the MPI below over C, e.g. for MPI_AINT */
    if (PMPI_Type_size(t, &tsize) != MPI_SUCCESS || (size_t)tsize != size)
        return;
    basics[nbasics++] = (basic_t){t, (uint8_t)size, (uint8_t)kind};
}

/* MPI_CHAR: the standard defines no op on it (MPI-4.1 §6.9.2), but an MPI may take some
 * (MPICH takes the integer ones; what it refuses it refuses in MPI_Reduce_local, where
 * HMPI's reductions then find the error). HMPI's integer loops, signed as C's char is,
 * run the ops the MPI below accepts on it (bit o of char_ops, asked once here of its
 * MPI_Reduce_local on one zeroed element), whose results are the same: a reduction of
 * a few chars costs a call into the MPI below per slice otherwise. */
static unsigned char_ops;
static void char_init(void);

void hmpi_op_init(void)
{
    nbasics = 0;
    add(MPI_INT, sizeof(int), K_SINT);
    add(MPI_DOUBLE, sizeof(double), K_FLOAT);
    add(MPI_BYTE, 1, K_BYTE);
    add(MPI_FLOAT, sizeof(float), K_FLOAT);
    add(MPI_LONG, sizeof(long), K_SINT);
    add(MPI_UNSIGNED, sizeof(unsigned), K_UINT);
    add(MPI_CHAR, 1, K_CHAR);
    add(MPI_LONG_LONG, sizeof(long long), K_SINT);
    add(MPI_UNSIGNED_LONG, sizeof(unsigned long), K_UINT);
    add(MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long), K_UINT);
    add(MPI_SHORT, sizeof(short), K_SINT);
    add(MPI_UNSIGNED_SHORT, sizeof(unsigned short), K_UINT);
    add(MPI_SIGNED_CHAR, 1, K_SINT);
    add(MPI_UNSIGNED_CHAR, 1, K_UINT);
    add(MPI_INT8_T, 1, K_SINT);
    add(MPI_INT16_T, 2, K_SINT);
    add(MPI_INT32_T, 4, K_SINT);
    add(MPI_INT64_T, 8, K_SINT);
    add(MPI_UINT8_T, 1, K_UINT);
    add(MPI_UINT16_T, 2, K_UINT);
    add(MPI_UINT32_T, 4, K_UINT);
    add(MPI_UINT64_T, 8, K_UINT);
    add(MPI_AINT, sizeof(MPI_Aint), K_SINT);
    add(MPI_OFFSET, sizeof(MPI_Offset), K_SINT);
    add(MPI_COUNT, sizeof(MPI_Count), K_SINT);
    add(MPI_C_BOOL, sizeof(bool), K_BOOL);
    add(MPI_WCHAR, sizeof(wchar_t), K_OTHER);
    add(MPI_PACKED, 1, K_OTHER);
    char_init();
}

static const basic_t *basic_of(MPI_Datatype t)
{
    for (int i = 0; i < nbasics; i++) /* the most used first */
        if (basics[i].type == t)
            return &basics[i];
    return NULL;
}

int hmpi_op_basic_size(MPI_Datatype t)
{
    const basic_t *b = basic_of(t);
    return b ? b->size : 0;
}

/* ---- kernels: out[i] = a[i] op b[i] (out may be b) ------------------------------------ */

// clang-format off
#define LOOP(T, EXPR)                                                                       \
    {                                                                                       \
        T *o = out;                                                                         \
        const T *x = a, *y = b;                                                             \
        for (size_t i = 0; i < n; i++) {                                                    \
            T u = x[i], w = y[i];                                                           \
            o[i] = (EXPR);                                                                  \
        }                                                                                   \
    }

/* Integers: arithmetic in the unsigned type of that width (wraps, no undefined
 * behaviour), comparisons in the real one. */
#define INT_KERNELS(NAME, T, U)                                                             \
    static void NAME##_sum(void *out, const void *a, const void *b, size_t n)              \
        LOOP(T, (T)((U)u + (U)w))                                                           \
    static void NAME##_prod(void *out, const void *a, const void *b, size_t n)             \
        LOOP(T, (T)((U)u * (U)w))                                                           \
    static void NAME##_max(void *out, const void *a, const void *b, size_t n)              \
        LOOP(T, u > w ? u : w)                                                              \
    static void NAME##_min(void *out, const void *a, const void *b, size_t n)              \
        LOOP(T, u < w ? u : w)                                                              \
    static void NAME##_land(void *out, const void *a, const void *b, size_t n)             \
        LOOP(T, (T)(u && w))                                                                \
    static void NAME##_lor(void *out, const void *a, const void *b, size_t n)              \
        LOOP(T, (T)(u || w))                                                                \
    static void NAME##_lxor(void *out, const void *a, const void *b, size_t n)             \
        LOOP(T, (T)(!u != !w))                                                              \
    static void NAME##_band(void *out, const void *a, const void *b, size_t n)             \
        LOOP(T, (T)(u & w))                                                                 \
    static void NAME##_bor(void *out, const void *a, const void *b, size_t n)              \
        LOOP(T, (T)(u | w))                                                                 \
    static void NAME##_bxor(void *out, const void *a, const void *b, size_t n)             \
        LOOP(T, (T)(u ^ w))

INT_KERNELS(s8, int8_t, uint8_t)
INT_KERNELS(s16, int16_t, uint16_t)
INT_KERNELS(s32, int32_t, uint32_t)
INT_KERNELS(s64, int64_t, uint64_t)
INT_KERNELS(u8, uint8_t, uint8_t)
INT_KERNELS(u16, uint16_t, uint16_t)
INT_KERNELS(u32, uint32_t, uint32_t)
INT_KERNELS(u64, uint64_t, uint64_t)

#define FLOAT_KERNELS(NAME, T)                                                              \
    static void NAME##_sum(void *out, const void *a, const void *b, size_t n)              \
        LOOP(T, u + w)                                                                      \
    static void NAME##_prod(void *out, const void *a, const void *b, size_t n)             \
        LOOP(T, u * w)                                                                      \
    static void NAME##_max(void *out, const void *a, const void *b, size_t n)              \
        LOOP(T, u > w ? u : w)                                                              \
    static void NAME##_min(void *out, const void *a, const void *b, size_t n)              \
        LOOP(T, u < w ? u : w)

FLOAT_KERNELS(f32, float)
FLOAT_KERNELS(f64, double)

static void b_land(void *out, const void *a, const void *b, size_t n) LOOP(bool, u && w)
static void b_lor(void *out, const void *a, const void *b, size_t n) LOOP(bool, u || w)
static void b_lxor(void *out, const void *a, const void *b, size_t n) LOOP(bool, u != w)

enum { O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, NOPS };
// clang-format on

#define ROW(P)                                                                               \
    {                                                                                        \
        P##_sum, P##_prod, P##_max, P##_min, P##_land, P##_lor, P##_lxor, P##_band, P##_bor, \
            P##_bxor                                                                         \
    }
static const hmpi_op_kernel_t int_table[2][4][NOPS] = {
    {ROW(s8), ROW(s16), ROW(s32), ROW(s64)},
    {ROW(u8), ROW(u16), ROW(u32), ROW(u64)},
};

static int op_index(MPI_Op op)
{
    if (op == MPI_SUM)
        return O_SUM;
    if (op == MPI_MAX)
        return O_MAX;
    if (op == MPI_MIN)
        return O_MIN;
    if (op == MPI_PROD)
        return O_PROD;
    if (op == MPI_BAND)
        return O_BAND;
    if (op == MPI_BOR)
        return O_BOR;
    if (op == MPI_BXOR)
        return O_BXOR;
    if (op == MPI_LAND)
        return O_LAND;
    if (op == MPI_LOR)
        return O_LOR;
    if (op == MPI_LXOR)
        return O_LXOR;
    return -1;
}

static void char_init(void)
{
    const MPI_Op ops[NOPS] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
                              MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    char_ops = 0;
    if (!basic_of(MPI_CHAR))
        return;
    for (int o = 0; o < NOPS; o++)
        if (hmpi_op_below_accepts(ops[o], MPI_CHAR))
            char_ops |= 1u << o;
}

int hmpi_op_builtin(MPI_Op op) { return op_index(op) >= 0; }

static int log2_size(int size)
{
    return size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
}

hmpi_op_kernel_t hmpi_op_kernel(MPI_Op op, MPI_Datatype type)
{
    int size;
    return hmpi_op_kernel_size(op, type, &size);
}

hmpi_op_kernel_t hmpi_op_kernel_size(MPI_Op op, MPI_Datatype type, int *size_p)
{
    int o = op_index(op);
    const basic_t *b = o < 0 ? NULL : basic_of(type);
    if (!b)
        return NULL;
    *size_p = b->size;
    switch (b->kind) {
    case K_SINT:
    case K_UINT: {
        int l = log2_size(b->size);
        return l < 0 ? NULL : int_table[b->kind == K_UINT][l][o];
    }
    case K_CHAR: return char_ops & 1u << o ? int_table[CHAR_MIN == 0][0][o] : NULL;
    case K_BYTE: /* bitwise ops only */ return o >= O_BAND ? int_table[1][0][o] : NULL;
    case K_FLOAT:
        if (o > O_MIN)
            return NULL;
        if (b->size == sizeof(float))
            return (hmpi_op_kernel_t[]){f32_sum, f32_prod, f32_max, f32_min}[o];
        if (b->size == sizeof(double))
            return (hmpi_op_kernel_t[]){f64_sum, f64_prod, f64_max, f64_min}[o];
        return NULL;
    case K_BOOL:
        if (b->size != sizeof(bool) || o < O_LAND || o > O_LXOR)
            return NULL;
        return (hmpi_op_kernel_t[]){b_land, b_lor, b_lxor}[o - O_LAND];
    default: return NULL;
    }
}
