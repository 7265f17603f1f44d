/* op.c: predefined reduction operations applied by HMPI itself, for the accumulate
 * family's common cases: every predefined arithmetic, logical and bitwise op on the C
 * integer types (signed arithmetic wraps, as in unsigned) and MIN/MAX/SUM/PROD on float
 * and double; MPI_BYTE for the bitwise ops. Anything else (pair types for MAXLOC/MINLOC,
 * complex, long double, Fortran types) is left to MPI_Reduce_local of the MPI below.
 * Elements may be unaligned (displacement units of 1): they are loaded and stored with
 * memcpy, which compiles to plain moves. No locking in here: the caller holds the
 * target's accumulate lock. */
#include "rma.h"

#include <stdint.h>
#include <string.h>

typedef enum { K_NONE, K_I8, K_I16, K_I32, K_I64, K_U8, K_U16, K_U32, K_U64, K_F32, K_F64,
               K_BYTE } kind_t;

static kind_t int_kind(size_t size, int is_signed)
{
    switch (size) {
    case 1: return is_signed ? K_I8 : K_U8;
    case 2: return is_signed ? K_I16 : K_U16;
    case 4: return is_signed ? K_I32 : K_U32;
    case 8: return is_signed ? K_I64 : K_U64;
    default: return K_NONE;
    }
}

/* The kind of a predefined type HMPI applies itself, or K_NONE. */
static kind_t kind_of(MPI_Datatype t)
{
    if (t == MPI_INT) return int_kind(sizeof(int), 1);
    if (t == MPI_LONG) return int_kind(sizeof(long), 1);
    if (t == MPI_DOUBLE) return K_F64;
    if (t == MPI_INT64_T) return K_I64;
    if (t == MPI_UINT64_T) return K_U64;
    if (t == MPI_INT32_T) return K_I32;
    if (t == MPI_UINT32_T) return K_U32;
    if (t == MPI_UNSIGNED) return int_kind(sizeof(unsigned), 0);
    if (t == MPI_UNSIGNED_LONG) return int_kind(sizeof(unsigned long), 0);
    if (t == MPI_LONG_LONG_INT || t == MPI_LONG_LONG) return int_kind(sizeof(long long), 1);
    if (t == MPI_UNSIGNED_LONG_LONG) return int_kind(sizeof(unsigned long long), 0);
    if (t == MPI_FLOAT) return K_F32;
    if (t == MPI_SHORT) return int_kind(sizeof(short), 1);
    if (t == MPI_UNSIGNED_SHORT) return int_kind(sizeof(unsigned short), 0);
    if (t == MPI_SIGNED_CHAR || t == MPI_INT8_T) return K_I8;
    if (t == MPI_UNSIGNED_CHAR || t == MPI_UINT8_T) return K_U8;
    if (t == MPI_INT16_T) return K_I16;
    if (t == MPI_UINT16_T) return K_U16;
    if (t == MPI_AINT) return int_kind(sizeof(MPI_Aint), 1);
    if (t == MPI_BYTE) return K_BYTE;
    return K_NONE;
}

int hmpi_rma_op_named(MPI_Datatype type, size_t *size_p)
{
    static const size_t sizes[] = {[K_I8] = 1, [K_I16] = 2, [K_I32] = 4, [K_I64] = 8,
                                   [K_U8] = 1, [K_U16] = 2, [K_U32] = 4, [K_U64] = 8,
                                   [K_F32] = 4, [K_F64] = 8, [K_BYTE] = 1};
    kind_t k = kind_of(type);
    if (k == K_NONE)
        return 0;
    *size_p = sizes[k];
    return 1;
}

/* inout[i] = EXPR(a = in[i], b = inout[i]) for n elements of type T. */
#define LOOP(T, EXPR)                                                                     \
    do {                                                                                  \
        for (size_t i = 0; i < n; i++) {                                                  \
            T a, b, c;                                                                    \
            memcpy(&a, (const char *)in + i * sizeof(T), sizeof(T));                      \
            memcpy(&b, (char *)inout + i * sizeof(T), sizeof(T));                         \
            c = (T)(EXPR);                                                                \
            memcpy((char *)inout + i * sizeof(T), &c, sizeof(T));                         \
        }                                                                                 \
        return 1;                                                                         \
    } while (0)

/* An integer type T whose arithmetic is done in its unsigned twin U. */
#define INT_OPS(T, U)                                                                     \
    do {                                                                                  \
        if (op == MPI_SUM) LOOP(T, (U)b + (U)a);                                          \
        if (op == MPI_PROD) LOOP(T, (U)b * (U)a);                                         \
        if (op == MPI_MAX) LOOP(T, a > b ? a : b);                                        \
        if (op == MPI_MIN) LOOP(T, a < b ? a : b);                                        \
        if (op == MPI_BAND) LOOP(T, a & b);                                               \
        if (op == MPI_BOR) LOOP(T, a | b);                                                \
        if (op == MPI_BXOR) LOOP(T, a ^ b);                                               \
        if (op == MPI_LAND) LOOP(T, a && b);                                              \
        if (op == MPI_LOR) LOOP(T, a || b);                                               \
        if (op == MPI_LXOR) LOOP(T, !a != !b);                                            \
        return 0;                                                                         \
    } while (0)

#define FLOAT_OPS(T)                                                                      \
    do {                                                                                  \
        if (op == MPI_SUM) LOOP(T, b + a);                                                \
        if (op == MPI_PROD) LOOP(T, b * a);                                               \
        if (op == MPI_MAX) LOOP(T, a > b ? a : b);                                        \
        if (op == MPI_MIN) LOOP(T, a < b ? a : b);                                        \
        return 0;                                                                         \
    } while (0)

int hmpi_rma_op_apply(MPI_Op op, MPI_Datatype elem, const void *in, void *inout, size_t n)
{
    switch (kind_of(elem)) {
    case K_I8: INT_OPS(int8_t, uint8_t);
    case K_I16: INT_OPS(int16_t, uint16_t);
    case K_I32: INT_OPS(int32_t, uint32_t);
    case K_I64: INT_OPS(int64_t, uint64_t);
    case K_U8: INT_OPS(uint8_t, uint8_t);
    case K_U16: INT_OPS(uint16_t, uint16_t);
    case K_U32: INT_OPS(uint32_t, uint32_t);
    case K_U64: INT_OPS(uint64_t, uint64_t);
    case K_F32: FLOAT_OPS(float);
    case K_F64: FLOAT_OPS(double);
    case K_BYTE: /* the standard allows only the bitwise ops on MPI_BYTE */
        if (op == MPI_BAND) LOOP(uint8_t, a & b);
        if (op == MPI_BOR) LOOP(uint8_t, a | b);
        if (op == MPI_BXOR) LOOP(uint8_t, a ^ b);
        return 0;
    default: return 0;
    }
}
