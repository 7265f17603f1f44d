/* move.c: how the collectives move and combine typed data: layouts of (count, type),
 * pack/unpack between a layout and contiguous bytes (memcpy when the layout is one
 * run, the MPI below's MPI_Pack/MPI_Unpack otherwise), and the reduction of a slice of
 * elements over many inputs with MPI_Reduce_local. No waiting and no shared state in
 * here: callers decide whose memory is touched and when. */
#include "coll.h"
#include "../heap/heap.h"

#include <stdlib.h>
#include <string.h>

int hmpi_coll_pack(void *dst, const void *buf, int count, MPI_Datatype type, const hmpi_layout_t *l)
{
    if (l->size == 0)
        return MPI_SUCCESS;
    if (l->contig) {
        memcpy(dst, hmpi_coll_at(buf, l->lo), l->size);
        return MPI_SUCCESS;
    }
    int pos = 0;
    int err = hmpi_type_pack(buf, count, type, dst, (int)l->size, &pos); /* MPI_BOTTOM too */
    if (err == MPI_SUCCESS && (size_t)pos != l->size)
        err = MPI_ERR_INTERN; /* packed data is not the plain bytes: never on one node */
    return err;
}

int hmpi_coll_unpack(void *buf, int count, MPI_Datatype type, const hmpi_layout_t *l,
                     const void *src, size_t bytes)
{
    if (bytes > l->size)
        return MPI_ERR_TRUNCATE;
    if (bytes == 0)
        return MPI_SUCCESS;
    if (l->contig) {
        memcpy(hmpi_coll_at(buf, l->lo), src, bytes);
        return MPI_SUCCESS;
    }
    int pos = 0;
    return hmpi_type_unpack(src, (int)bytes, &pos, buf, count, type); /* MPI_BOTTOM too */
}

int hmpi_coll_move(void *dst, int rcount, MPI_Datatype rtype, const hmpi_layout_t *rl,
                   const void *src, int scount, MPI_Datatype stype, const hmpi_layout_t *sl)
{
    if (sl->size > rl->size)
        return MPI_ERR_TRUNCATE;
    if (sl->contig)
        return hmpi_coll_unpack(dst, rcount, rtype, rl, hmpi_coll_at(src, sl->lo), sl->size);
    if (rl->contig)
        return hmpi_coll_pack(hmpi_coll_at(dst, rl->lo), src, scount, stype, sl);
    void *tmp = hmpi_coll_alloc(sl->size);
    int err = hmpi_coll_pack(tmp, src, scount, stype, sl);
    if (err == MPI_SUCCESS)
        err = hmpi_coll_unpack(dst, rcount, rtype, rl, tmp, sl->size);
    hmpi_heap_free(tmp);
    return err;
}

int hmpi_coll_copy_typed(void *dst, const void *src, int count, MPI_Datatype type,
                         const hmpi_layout_t *l)
{
    if (l->contig) {
        if (l->size)
            memcpy(hmpi_coll_at(dst, l->lo), hmpi_coll_at(src, l->lo), l->size);
        return MPI_SUCCESS;
    }
    return hmpi_coll_move(dst, count, type, l, src, count, type, l);
}

void *hmpi_coll_take(hmpi_coll_area_t *a, size_t n, uintptr_t like, size_t align)
{
    HMPI_ASSERT_INTERNAL(align && (align & (align - 1)) == 0 && a->used <= a->len);
    uintptr_t at = (uintptr_t)a->base + a->used;
    at += (like - at) & (align - 1);
    if (at + n > (uintptr_t)a->base + a->len)
        return NULL;
    a->used = at + n - (uintptr_t)a->base;
    return (void *)at;
}

int hmpi_coll_commutative(MPI_Op op)
{
    if (hmpi_op_builtin(op) || op == MPI_MAXLOC || op == MPI_MINLOC)
        return 1;
    int commute = 0;
    if (PMPI_Op_commutative(op, &commute) != MPI_SUCCESS)
        return 0;
    return commute;
}

/* Elements per step of a reduction, so that the accumulator stays in cache while all
 * the inputs stream through it. */
static int chunk_of(const hmpi_layout_t *one)
{
    MPI_Aint ext = one->extent < 0 ? -one->extent : one->extent;
    if (ext <= 0)
        return 1 << 30;
    MPI_Aint k = (MPI_Aint)(32 << 10) / ext;
    return k < 1 ? 1 : (int)k;
}

int hmpi_coll_reduce_slice(void *dst, const void *const *x, int n, int self, MPI_Aint first,
                           int count, MPI_Datatype type, MPI_Op op, const hmpi_layout_t *one,
                           int commute)
{
    HMPI_ASSERT_INTERNAL(n >= 1 && self >= -1 && self < n && count >= 0);
    int err = MPI_SUCCESS, step = chunk_of(one);
    hmpi_op_kernel_t k = hmpi_op_kernel(op, type);
    if (k) { /* a basic type (extent = size) and a predefined op: commutative */
        size_t es = one->size;
        for (int c = 0; c < count; c += step) {
            size_t m = (size_t)(count - c < step ? count - c : step);
            MPI_Aint off = (first + c) * one->extent;
            void *d = hmpi_coll_at(dst, off);
#define X(i) hmpi_coll_at(x[i], off)
            if (self >= 0) {
                for (int i = 0; i < n; i++)
                    if (i != self)
                        k(d, X(i), d, m);
            } else if (n == 1) {
                memcpy(d, X(0), m * es);
            } else {
                k(d, X(1), X(0), m);
                for (int i = 2; i < n; i++)
                    k(d, X(i), d, m);
            }
#undef X
        }
        return MPI_SUCCESS;
    }
    void *tmp = NULL;
    hmpi_layout_t lt = {0};
    /* Non-commutative ops fold from the last input (inout = in op inout), which would
     * overwrite the input dst aliases before it is read: fold in a temporary then. */
    int use_tmp = !commute && self >= 0 && self != n - 1 && n > 1;
    if (use_tmp) {
        lt = hmpi_layout_n(one, count < step ? count : step);
        tmp = hmpi_coll_alloc(lt.span);
    }
    for (int k = 0; k < count && err == MPI_SUCCESS; k += step) {
        int m = count - k < step ? count - k : step;
        MPI_Aint off = (first + k) * one->extent;
        void *d = hmpi_coll_at(dst, off);
        hmpi_layout_t lm = hmpi_layout_n(one, m);
#define X(i) hmpi_coll_at(x[i], off)
        if (commute) {
            int start = self >= 0 ? self : 0;
            if (self < 0)
                err = hmpi_coll_copy_typed(d, X(0), m, type, &lm);
            for (int i = 0; i < n && err == MPI_SUCCESS; i++)
                if (i != start)
                    err = PMPI_Reduce_local(X(i), d, m, type, op);
        } else {
            void *acc = use_tmp ? hmpi_coll_at(tmp, -lm.lo) : d;
            if (self != n - 1 || use_tmp)
                err = hmpi_coll_copy_typed(acc, X(n - 1), m, type, &lm);
            for (int i = n - 2; i >= 0 && err == MPI_SUCCESS; i--)
                err = PMPI_Reduce_local(X(i), acc, m, type, op);
            if (use_tmp && err == MPI_SUCCESS)
                err = hmpi_coll_copy_typed(d, acc, m, type, &lm);
        }
#undef X
    }
    hmpi_heap_free(tmp);
    return err;
}
