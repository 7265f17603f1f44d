/* move.c: moving bytes between an origin's memory and a local target's window: memcpy
 * when the target is in the shared heap, process_vm_readv/writev when it is the target's
 * private memory. Derived datatypes on either side go through MPI_Pack/MPI_Unpack of the
 * MPI below (hmpi_type_pack/unpack: MPI_BOTTOM with absolute addresses included, as an
 * origin, a result, or a dynamic window's target at displacement 0), on local memory
 * only. Never synchronizes and never sends a message. */
#include "rma.h"
#include "../common/log.h"
#include "../heap/heap.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

enum { CMA_IOV_MAX = 1024 }; /* IOV_MAX on Linux */

int hmpi_rma_buf(const void *addr, int count, MPI_Datatype type, hmpi_rma_buf_t *b_p)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    hmpi_layout_t l;
    int err = hmpi_layout_get(type, count, &l);
    if (err != MPI_SUCCESS)
        return err;
    *b_p = (hmpi_rma_buf_t){(void *)addr, count, type, l};
    return MPI_SUCCESS;
}

int hmpi_rma_region(const hmpi_win_t *w, const hmpi_rma_member_t *m, MPI_Aint disp, int count,
                    MPI_Datatype type, hmpi_rma_region_t *r_p)
{
    hmpi_rma_buf_t b;
    int err = hmpi_rma_buf(NULL, count, type, &b);
    if (err != MPI_SUCCESS)
        return err;
    hmpi_rma_region_t r = {.count = count, .type = type, .l = b.l, .path = m->path, .pid = m->pid};
    if (r.l.size == 0) { /* touches nothing: no range to check */
        r.l.lo = 0;
        r.l.span = 0;
    }
    if (w->dynamic) { /* the displacement is an address of the target's */
        r.addr = (char *)(uintptr_t)disp;
        if (r.l.span > 0 && hmpi_heap_is_shared_range(r.addr + r.l.lo, r.l.span))
            r.path = HMPI_RMA_DIRECT;
    } else {
        MPI_Aint off = disp * m->disp_unit;
        if (r.l.span > 0 &&
            (disp < 0 || off + r.l.lo < 0 || off + r.l.lo + (MPI_Aint)r.l.span > (MPI_Aint)m->size))
            return MPI_ERR_RMA_RANGE;
        /* a remote member's base is an address in another node: never used here */
        r.addr = m->path == HMPI_RMA_BELOW ? NULL : m->base + off;
    }
    *r_p = r;
    return MPI_SUCCESS;
}

int hmpi_rma_check_below(const hmpi_win_t *w, int t, MPI_Aint disp, int count, MPI_Datatype type)
{
    hmpi_rma_region_t r;
    return w->dynamic ? MPI_SUCCESS : hmpi_rma_region(w, &w->mem[t], disp, count, type, &r);
}

/* ---- process_vm_readv / writev ----------------------------------------------------------- */

/* Moves n runs (local[i] <-> remote[i], same lengths) in calls of at most CMA_IOV_MAX. A
 * single run is retried on a short transfer; several must move whole. */
static int cma_move(pid_t pid, struct iovec *local, struct iovec *remote, size_t n, int write)
{
    for (size_t i = 0; i < n; i += CMA_IOV_MAX) {
        size_t k = n - i < CMA_IOV_MAX ? n - i : CMA_IOV_MAX;
        size_t want = 0;
        for (size_t j = 0; j < k; j++)
            want += local[i + j].iov_len;
        while (want > 0) {
            ssize_t got = write ? process_vm_writev(pid, local + i, k, remote + i, k, 0)
                                : process_vm_readv(pid, local + i, k, remote + i, k, 0);
            if (got <= 0 || (k > 1 && (size_t)got != want)) {
                hmpi_log_error("process_vm_%s of %zu bytes from pid %d failed: %s",
                               write ? "writev" : "readv", want, (int)pid,
                               got < 0 ? strerror(errno) : "short transfer");
                return MPI_ERR_OTHER;
            }
            want -= (size_t)got;
            local[i].iov_base = (char *)local[i].iov_base + got;
            local[i].iov_len -= (size_t)got;
            remote[i].iov_base = (char *)remote[i].iov_base + got;
            remote[i].iov_len -= (size_t)got;
        }
    }
    return MPI_SUCCESS;
}

static int cma_contig(const hmpi_rma_region_t *r, void *buf, int write)
{
    struct iovec local = {buf, r->l.size}, remote = {r->addr + r->l.lo, r->l.size};
    return cma_move(r->pid, &local, &remote, 1, write);
}

/* A non-contiguous region of private memory: its byte runs are found by unpacking 0xFF
 * bytes with the type into a zeroed map of its span; the data is staged in a buffer of
 * the span (unpacked into it before a write, packed out of it after a read), and only the
 * runs move, so bytes between them, which other origins may be writing, are not. */
static int cma_scatter(const hmpi_rma_region_t *r, void *packed, int write)
{
    size_t span = r->l.span;
    if (r->l.size > INT_MAX)
        return MPI_ERR_COUNT;
    unsigned char *map = hmpi_heap_calloc(span, 1);
    unsigned char *stage = hmpi_heap_malloc(span);
    unsigned char *ones = hmpi_heap_malloc(r->l.size);
    struct iovec *iov = NULL;
    int err = MPI_ERR_NO_MEM;
    if (!map || !stage || !ones)
        goto out;
    memset(ones, 0xFF, r->l.size);
    int pos = 0;
    /* the type's displacements are relative to addr; the span starts at addr + lo (an
     * origin computed so may even be NULL: the MPI_BOTTOM-proof pack and unpack) */
    void *map_origin = (void *)((uintptr_t)map - (uintptr_t)r->l.lo);
    void *stage_origin = (void *)((uintptr_t)stage - (uintptr_t)r->l.lo);
    err = MPI_ERR_TYPE;
    if (hmpi_type_unpack(ones, (int)r->l.size, &pos, map_origin, r->count, r->type))
        goto out;
    size_t nruns = 0;
    for (size_t i = 0; i < span; i++)
        nruns += map[i] && (i == 0 || !map[i - 1]);
    err = MPI_ERR_NO_MEM;
    if (!(iov = hmpi_heap_malloc(2 * nruns * sizeof *iov)))
        goto out;
    size_t k = 0;
    for (size_t i = 0; i < span;) {
        if (!map[i]) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < span && map[j])
            j++;
        iov[k] = (struct iovec){stage + i, j - i};
        iov[nruns + k] = (struct iovec){r->addr + r->l.lo + i, j - i};
        k++;
        i = j;
    }
    HMPI_ASSERT_INTERNAL(k == nruns); /* the map read twice: the runs counted */
    err = MPI_ERR_TYPE;
    pos = 0;
    if (write && hmpi_type_unpack(packed, (int)r->l.size, &pos, stage_origin, r->count, r->type))
        goto out;
    if ((err = cma_move(r->pid, iov, iov + nruns, nruns, write)) != MPI_SUCCESS)
        goto out;
    err = MPI_SUCCESS;
    if (!write && hmpi_type_pack(stage_origin, r->count, r->type, packed, (int)r->l.size, &pos))
        err = MPI_ERR_TYPE;
out:
    hmpi_heap_free(iov);
    hmpi_heap_free(ones);
    hmpi_heap_free(stage);
    hmpi_heap_free(map);
    return err;
}

/* ---- packed bytes to and from a region ----------------------------------------------------- */

int hmpi_rma_write(const hmpi_rma_region_t *r, const void *packed)
{
    if (r->l.size == 0)
        return MPI_SUCCESS;
    /* a remote member's region has no address here (hmpi_rma_region) */
    HMPI_ASSERT_INTERNAL(r->path != HMPI_RMA_BELOW);
    if (r->path == HMPI_RMA_CMA)
        return r->l.contig ? cma_contig(r, (void *)packed, 1) : cma_scatter(r, (void *)packed, 1);
    if (r->l.contig) {
        memcpy(r->addr + r->l.lo, packed, r->l.size);
        return MPI_SUCCESS;
    }
    int pos = 0;
    if (r->l.size > INT_MAX)
        return MPI_ERR_COUNT;
    return hmpi_type_unpack(packed, (int)r->l.size, &pos, r->addr, r->count, r->type) ? MPI_ERR_TYPE
                                                                                      : MPI_SUCCESS;
}

int hmpi_rma_read(const hmpi_rma_region_t *r, void *packed)
{
    if (r->l.size == 0)
        return MPI_SUCCESS;
    HMPI_ASSERT_INTERNAL(r->path != HMPI_RMA_BELOW); /* as in hmpi_rma_write */
    if (r->path == HMPI_RMA_CMA)
        return r->l.contig ? cma_contig(r, packed, 0) : cma_scatter(r, packed, 0);
    if (r->l.contig) {
        memcpy(packed, r->addr + r->l.lo, r->l.size);
        return MPI_SUCCESS;
    }
    int pos = 0;
    if (r->l.size > INT_MAX)
        return MPI_ERR_COUNT;
    return hmpi_type_pack(r->addr, r->count, r->type, packed, (int)r->l.size, &pos) ? MPI_ERR_TYPE
                                                                                    : MPI_SUCCESS;
}

/* ---- origin-side buffers ----------------------------------------------------------------- */

int hmpi_rma_pack(const hmpi_rma_buf_t *b, void *packed)
{
    if (b->l.contig) {
        memcpy(packed, (const char *)b->addr + b->l.lo, b->l.size);
        return MPI_SUCCESS;
    }
    int pos = 0;
    if (b->l.size > INT_MAX)
        return MPI_ERR_COUNT;
    return hmpi_type_pack(b->addr, b->count, b->type, packed, (int)b->l.size, &pos) ? MPI_ERR_TYPE
                                                                                    : MPI_SUCCESS;
}

int hmpi_rma_unpack(const void *packed, const hmpi_rma_buf_t *b)
{
    if (b->l.contig) {
        memcpy((char *)b->addr + b->l.lo, packed, b->l.size);
        return MPI_SUCCESS;
    }
    int pos = 0;
    if (b->l.size > INT_MAX)
        return MPI_ERR_COUNT;
    return hmpi_type_unpack(packed, (int)b->l.size, &pos, b->addr, b->count, b->type) ? MPI_ERR_TYPE
                                                                                      : MPI_SUCCESS;
}

int hmpi_rma_put(const hmpi_rma_buf_t *o, const hmpi_rma_region_t *r)
{
    if (r->l.size == 0)
        return MPI_SUCCESS;
    if (o->l.contig)
        return hmpi_rma_write(r, (const char *)o->addr + o->l.lo);
    if (r->path == HMPI_RMA_DIRECT && r->l.contig) /* pack straight into the target */
        return hmpi_rma_pack(o, r->addr + r->l.lo);
    void *tmp = hmpi_heap_malloc(r->l.size);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    int err = hmpi_rma_pack(o, tmp);
    if (err == MPI_SUCCESS)
        err = hmpi_rma_write(r, tmp);
    hmpi_heap_free(tmp);
    return err;
}

int hmpi_rma_get(const hmpi_rma_buf_t *o, const hmpi_rma_region_t *r)
{
    if (r->l.size == 0)
        return MPI_SUCCESS;
    if (o->l.contig)
        return hmpi_rma_read(r, (char *)o->addr + o->l.lo);
    if (r->path == HMPI_RMA_DIRECT && r->l.contig) /* unpack straight from the target */
        return hmpi_rma_unpack(r->addr + r->l.lo, o);
    void *tmp = hmpi_heap_malloc(r->l.size);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    int err = hmpi_rma_read(r, tmp);
    if (err == MPI_SUCCESS)
        err = hmpi_rma_unpack(tmp, o);
    hmpi_heap_free(tmp);
    return err;
}
