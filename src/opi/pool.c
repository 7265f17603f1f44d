/* pool.c: OPI buffers and the per-rank pools (the OPI paper, §3.2, "receiver's
 * pool"). A freed buffer goes to the pool of the rank that frees it, whichever slice it
 * lies in, and serves that rank's next OPI_Alloc of its size class. Past the limits
 * (HMPI_OPI_POOL_DEPTH buffers per class, HMPI_OPI_POOL_MAX bytes) a buffer is trimmed:
 * freed to the heap when it lies in this rank's slice, otherwise pushed on its owner's
 * return queue (shm/ctrl.h), since only the process owning a slice may mi_free in it.
 * The owner drains its queue in its gives and takes, and when its pool misses.
 * Process-private except the return queues; no MPI calls; the hot path
 * (OPI_Free(OPI_Alloc(8))) takes no shared cache line. */
#include "opi.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../common/stats.h"
#include "../heap/heap.h"
#include "../shm/ctrl.h"

/* Size classes: 64 B, then four per power of two (80, 96, 112, 128, 160, ...), so a
 * buffer wastes at most a quarter of its size. */
enum { NCLS = 4 * (46 - 6) + 1 };

static inline unsigned cls_of(size_t n)
{
    if (n <= 64)
        return 0;
    unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)(n - 1)); /* 2^k < n */
    unsigned sub = (unsigned)(((n - 1) - ((size_t)1 << k)) >> (k - 2)) + 1;    /* 1..4 */
    return (k - 6) * 4 + sub;
}

static inline size_t cls_size(unsigned c)
{
    if (c == 0)
        return 64;
    unsigned k = (c - 1) / 4 + 6, sub = (c - 1) % 4 + 1;
    return ((size_t)1 << k) + ((size_t)sub << (k - 2));
}

static inline size_t block_bytes(unsigned c) { return sizeof(hmpi_opi_hdr_t) + cls_size(c); }

/* This rank's pool. Guarded by hmpi_opi_lock. Invariant: bin[c] holds depth[c] FREE
 * buffers of class c, and cached_* add up what all bins hold. */
static struct {
    hmpi_opi_hdr_t *bin[NCLS];
    uint32_t depth[NCLS];
    unsigned long long cached_blocks, cached_bytes;
    unsigned long long owned_blocks, owned_bytes; /* from this rank's heap, not yet freed */
    unsigned long long allocs, hits, heap_allocs, heap_frees, returned;
} pool;

static hmpi_queue_t *my_returns(void)
{
    return hmpi_opi.active ? &hmpi_ctrl()->rank[hmpi_opi.me].opi_return : NULL;
}

static hmpi_opi_hdr_t *new_block(unsigned c)
{
    size_t bytes = block_bytes(c);
    /* Under HMPI every OPI buffer must be readable by local peers: shared or nothing. */
    hmpi_opi_hdr_t *h =
        hmpi_opi.active ? hmpi_heap_shared_alloc(bytes) : hmpi_heap_aligned(64, bytes);
    if (!h)
        return NULL;
    h->magic = OPI_HDR_MAGIC ^ (uintptr_t)h;
    h->len = 0;
    h->cls = c;
    h->data = h + 1;
    hmpi_opi_lock();
    if (!hmpi_opi.active && hmpi_opi_known_add_locked(h) != 0) {
        hmpi_opi_unlock();
        hmpi_heap_free(h);
        return NULL;
    }
    pool.owned_blocks++;
    pool.owned_bytes += bytes;
    pool.heap_allocs++;
    hmpi_opi_unlock();
    hmpi_stat_add(HMPI_STAT_opi_heap_allocs, 1);
    return h;
}

static void free_block_locked(hmpi_opi_hdr_t *h)
{
    pool.owned_blocks--;
    pool.owned_bytes -= block_bytes(h->cls);
    pool.heap_frees++;
    hmpi_stat_add(HMPI_STAT_opi_heap_frees, 1);
    h->magic = 0; /* a stale pointer to it is no OPI buffer any more */
    if (!hmpi_opi.active)
        hmpi_opi_known_remove_locked(h);
    hmpi_heap_free(h);
}

/* Out of the pool for good: to the heap if it is ours, else back to its owner. */
static void trim_locked(hmpi_opi_hdr_t *h)
{
    int owner = hmpi_heap_owner(h);
    if (owner < 0 || owner == hmpi_opi.me) {
        free_block_locked(h);
        return;
    }
    /* Header writes (state, link) are published by the push's release CAS. The ctrl
     * area stays mapped for the life of the process, so a finalized owner is harmless. */
    pool.returned++;
    hmpi_stat_add(HMPI_STAT_opi_returned, 1);
    hmpi_queue_push(&hmpi_ctrl()->rank[owner].opi_return, &h->link);
}

void hmpi_opi_pool_put_locked(hmpi_opi_hdr_t *h)
{
    unsigned c = h->cls; /* the header is shared memory: its class is checked, never trusted */
    if (c >= NCLS) {
        hmpi_log_error("OPI buffer %p has a corrupted header (size class %u): not reused",
                       (void *)h, c);
        return;
    }
    atomic_store_explicit(&h->state, OPI_STATE(hmpi_opi.me, OPI_FREE), memory_order_relaxed);
    size_t bytes = block_bytes(c);
    if (pool.depth[c] < (uint64_t)hmpi_knobs.OPI_POOL_DEPTH &&
        pool.cached_bytes + bytes <= (unsigned long long)hmpi_knobs.OPI_POOL_MAX) {
        h->link.next = pool.bin[c] ? &pool.bin[c]->link : NULL;
        pool.bin[c] = h;
        pool.depth[c]++;
        pool.cached_blocks++;
        pool.cached_bytes += bytes;
    } else {
        trim_locked(h);
    }
}

void hmpi_opi_pool_put(hmpi_opi_hdr_t *h)
{
    hmpi_opi_lock();
    hmpi_opi_pool_put_locked(h);
    hmpi_opi_unlock();
}

/* Our buffers that other ranks trimmed: into our pool, or to the heap when it is full.
 * The take's acquire exchange makes the trimmers' header writes visible. */
static void drain_locked(hmpi_queue_t *q)
{
    hmpi_qnode_t *n = hmpi_queue_take(q);
    while (n) {
        hmpi_qnode_t *next = n->next;
        hmpi_opi_pool_put_locked((hmpi_opi_hdr_t *)n);
        n = next;
    }
}

void hmpi_opi_pool_reclaim(void)
{
    hmpi_queue_t *q = my_returns();
    if (q && !hmpi_queue_empty(q)) { /* a relaxed load while nobody pushed */
        hmpi_opi_lock();
        drain_locked(q);
        hmpi_opi_unlock();
    }
}

static hmpi_opi_hdr_t *pop_locked(unsigned c)
{
    hmpi_opi_hdr_t *h = pool.bin[c];
    if (h) {
        pool.bin[c] = (hmpi_opi_hdr_t *)h->link.next;
        pool.depth[c]--;
        pool.cached_blocks--;
        pool.cached_bytes -= block_bytes(c);
    }
    return h;
}

int hmpi_opi_pool_get(size_t len, hmpi_opi_hdr_t **h_p)
{
    unsigned c = cls_of(len);
    hmpi_queue_t *q = my_returns();
    hmpi_opi_lock();
    pool.allocs++;
    hmpi_opi_hdr_t *h = pop_locked(c);
    if (!h && q && !hmpi_queue_empty(q)) {
        drain_locked(q);
        h = pop_locked(c);
    }
    pool.hits += h != NULL;
    hmpi_opi_unlock();
    if (!h && hmpi_opi_give_progress() > 0) { /* sends done: their buffers came back */
        hmpi_opi_lock();
        h = pop_locked(c);
        pool.hits += h != NULL;
        hmpi_opi_unlock();
    }
    hmpi_stat_add(HMPI_STAT_opi_allocs, 1);
    if (h)
        hmpi_stat_add(HMPI_STAT_opi_pool_hits, 1);
    else if (!(h = new_block(c)))
        return MPI_ERR_NO_MEM;
    h->size = len;
    atomic_store_explicit(&h->state, OPI_STATE(hmpi_opi.me, OPI_HELD), memory_order_relaxed);
    *h_p = h;
    return MPI_SUCCESS;
}

int hmpi_opi_buf_claim(void *data, uint32_t to, hmpi_opi_hdr_t **h_p)
{
    if (!data)
        return hmpi_opi_code(OPI_E_BUF_NULL);
    if ((uintptr_t)data % 64 != 0)
        return hmpi_opi_code(OPI_E_FOREIGN);
    hmpi_opi_hdr_t *h = hmpi_opi_hdr(data);
    /* Every OPI buffer is in the shared heap under HMPI, in the known set otherwise:
     * the header of a pointer that fails this test is never read. */
    int ours;
    if (hmpi_opi.active) {
        ours = hmpi_heap_is_shared_range(h, sizeof *h);
    } else {
        hmpi_opi_lock();
        ours = hmpi_opi_known_has_locked(h);
        hmpi_opi_unlock();
    }
    if (!ours)
        return hmpi_opi_code(OPI_E_FOREIGN);
    if (h->magic != (OPI_HDR_MAGIC ^ (uintptr_t)h) || h->data != data)
        return hmpi_opi_code(OPI_E_FOREIGN);
    uint32_t s = OPI_STATE(hmpi_opi.me, OPI_HELD);
    if (!atomic_compare_exchange_strong_explicit(&h->state, &s, OPI_STATE(hmpi_opi.me, to),
                                                 memory_order_relaxed, memory_order_relaxed))
        return hmpi_opi_code((s & 0xff) == OPI_FREE ? OPI_E_FREED : OPI_E_NOT_HELD);
    *h_p = h;
    return MPI_SUCCESS;
}

/* ---- the API -------------------------------------------------------------------------- */

int OPI_Alloc(void **ptr, size_t len)
{
    int err = hmpi_opi_ready();
    if (err)
        return hmpi_opi_raise(MPI_COMM_NULL, err);
    if (!ptr)
        return hmpi_opi_raise(MPI_COMM_NULL, hmpi_opi_code(OPI_E_ARG_NULL));
    if (len > OPI_MAX_LEN)
        return hmpi_opi_raise(MPI_COMM_NULL, hmpi_opi_code(OPI_E_TOO_LARGE));
    hmpi_opi_hdr_t *h = NULL;
    err = hmpi_opi_pool_get(len, &h);
    if (err)
        return hmpi_opi_raise(MPI_COMM_NULL, err);
    *ptr = h->data;
    return MPI_SUCCESS;
}

int OPI_Free(void **ptr)
{
    if (!ptr)
        return hmpi_opi_raise(MPI_COMM_NULL, hmpi_opi_code(OPI_E_ARG_NULL));
    hmpi_opi_hdr_t *h = NULL;
    int err = hmpi_opi_buf_claim(*ptr, OPI_FREE, &h);
    if (err)
        return hmpi_opi_raise(MPI_COMM_NULL, err);
    hmpi_opi_pool_put(h);
    *ptr = NULL;
    return MPI_SUCCESS;
}

int OPI_Pool_query(OPI_Pool_info *info)
{
    if (!info)
        return hmpi_opi_raise(MPI_COMM_NULL, hmpi_opi_code(OPI_E_ARG_NULL));
    hmpi_opi_lock();
    *info = (OPI_Pool_info){
        .cached_blocks = pool.cached_blocks,
        .cached_bytes = pool.cached_bytes,
        .owned_blocks = pool.owned_blocks,
        .owned_bytes = pool.owned_bytes,
        .allocs = pool.allocs,
        .pool_hits = pool.hits,
        .heap_allocs = pool.heap_allocs,
        .heap_frees = pool.heap_frees,
        .returned = pool.returned,
    };
    hmpi_opi_unlock();
    return MPI_SUCCESS;
}
