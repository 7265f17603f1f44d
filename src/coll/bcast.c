/* bcast.c: MPI_Bcast. On a node every member copies straight from the root: small data
 * from the root's slot (the root returns at once), a heap buffer from the buffer itself
 * (the root, which would only wait, copies chunks into the readers' heap buffers too),
 * anything else from the root's scratch while the root is still filling it (pipelined
 * by a progress counter). Across nodes: the root's node first, then the leaders with
 * the MPI below, then the other nodes. */
#include "coll.h"
#include "nbc.h"
#include "../core/check.h"
#include "../common/knobs.h"
#include "../heap/heap.h"
#include "../core/errors.h"

#include <stdlib.h>
#include <string.h>

/* Shared copy of a large broadcast from the root's heap buffer into a reader's heap buffer.
 * The reader publishes its destination (addr, bytes) and, in its half's inline data,
 * two counters it zeroes before MID (release): `next`, the next chunk to copy, claimed
 * by fetch_add by the reader and the root alike, and `done`, chunks copied (release
 * after each copy). The reader publishes DONE once done reaches the chunk count
 * (acquire), so the root's copies are complete when it does. */
typedef struct {
    _Atomic uint64_t next, done;
} share_t;

static_assert(sizeof(share_t) <= sizeof(((hmpi_coll_half_t *)0)->data), "in the header line");

enum { SHARE_CHUNK = 64 << 10 };

/* Copies claimed chunks from src into the reader's destination until none is left. */
static void share_copy(share_t *sh, unsigned char *dst, const unsigned char *src, size_t bytes)
{
    uint64_t nchunks = (bytes + SHARE_CHUNK - 1) / SHARE_CHUNK;
    for (;;) {
        uint64_t c = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
        if (c >= nchunks)
            return;
        size_t off = (size_t)c * SHARE_CHUNK,
               k = bytes - off < SHARE_CHUNK ? bytes - off : SHARE_CHUNK;
        memcpy(dst + off, src + off, k);
        atomic_fetch_add_explicit(&sh->done, 1, memory_order_release);
        hmpi_wait_wake_all();
    }
}

/* The root helps every reader that shares its copy (MID): waiting for each to say whether
 * it does (wait), or only those that already said so (a nonblocking broadcast's step). */
static void root_help(hmpi_coll_team_t *t, uint64_t e, const unsigned char *src, size_t bytes,
                      int only, int wait)
{
    HMPI_ASSERT_INTERNAL(only != t->ep.me); /* the root reads nobody's buffer into its own */
    for (int k = 1; k < t->ep.n; k++) {
        int r = (t->ep.me + k) % t->ep.n;
        if (only >= 0 && r != only)
            continue;
        if (wait)
            hmpi_coll_wait(t, r, e, HMPI_COLL_MID);
        hmpi_coll_half_t *hr = hmpi_coll_half(t, r, e);
        if (atomic_load_explicit(&hr->state, memory_order_acquire) !=
            hmpi_epoch_state(e, HMPI_COLL_MID))
            continue;
        /* The reader's destination is read once and must lie in the heap: a corrupted
         * slot makes the root skip helping (the reader copies alone), never write astray. */
        unsigned char *dst = (unsigned char *)(uintptr_t)hr->addr;
        if (hmpi_heap_is_shared_range(dst, bytes))
            share_copy((share_t *)hr->data, dst, src, bytes);
    }
}

/* A small broadcast through the root's ring (coll.h): the root may run ahead. The root
 * writes its entry r of epoch e (claimed) and is done. */
static int ring_write(hmpi_coll_team_t *t, uint64_t e, hmpi_coll_ring_t *r, void *buf, int count,
                      MPI_Datatype type, const hmpi_layout_t *l)
{
    int err = hmpi_coll_pack(r->data, buf, count, type, l);
    r->bytes = (uint32_t)l->size;
    r->off = 0;
    atomic_store_explicit(&r->seq, e, memory_order_release);
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return err;
}

static int ring_root(hmpi_coll_team_t *t, uint64_t e, void *buf, int count, MPI_Datatype type,
                     const hmpi_layout_t *l)
{
    return ring_write(t, e, hmpi_coll_ring_claim(t, e), buf, count, type, l);
}

/* A reader's side of ring_write: copies entry r of epoch e. */
static inline int ring_read(hmpi_coll_team_t *t, uint64_t e, const hmpi_coll_ring_t *r, void *buf,
                            int count, MPI_Datatype type, const hmpi_layout_t *l)
{
    int err = MPI_SUCCESS;
    size_t bytes = r->bytes; /* read once */
    if (bytes > l->size || bytes > HMPI_COLL_RING_BYTES)
        err = MPI_ERR_TRUNCATE;
    else if (l->contig)
        memcpy(hmpi_coll_at(buf, l->lo), r->data, bytes);
    else
        err = hmpi_coll_unpack(buf, count, type, l, r->data, bytes);
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return err;
}

/* The root publishes addr, bytes and progress (bytes readable so far); see coll.h. */
static int root_side(hmpi_coll_team_t *t, uint64_t e, void *buf, int count, MPI_Datatype type,
                     const hmpi_layout_t *l, int only)
{
    hmpi_coll_half_t *h = hmpi_coll_claim(t, e);
    int err = MPI_SUCCESS;
    h->bytes = l->size;
    if (l->size <= t->cap) {
        err = hmpi_coll_pack(h->data, buf, count, type, l);
        h->addr = (uintptr_t)h->data;
        atomic_store_explicit(&h->progress, l->size, memory_order_relaxed);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE); /* readers copy from our slot */
        return err;
    }
    if (hmpi_coll_direct(buf, l)) {
        h->addr = (uintptr_t)hmpi_coll_at(buf, l->lo);
        atomic_store_explicit(&h->progress, l->size, memory_order_relaxed);
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        root_help(t, e, hmpi_coll_at(buf, l->lo), l->size, only, 1);
        if (only >= 0)
            hmpi_coll_wait(t, only, e, HMPI_COLL_DONE);
        else
            hmpi_coll_wait_all(t, e, HMPI_COLL_DONE);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return MPI_SUCCESS;
    }
    /* Stage through the scratch, chunk by chunk, readers following the counter. */
    unsigned char *sc = hmpi_coll_scratch(t, e, l->size);
    h->addr = (uintptr_t)sc;
    atomic_store_explicit(&h->progress, 0, memory_order_relaxed);
    hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    hmpi_stat_add(HMPI_STAT_coll_staged_bytes, l->size);
    size_t chunk = (size_t)hmpi_knobs.COLL_CHUNK;
    if (l->contig) {
        const unsigned char *src = hmpi_coll_at(buf, l->lo);
        for (size_t done = 0; done < l->size;) {
            size_t k = l->size - done < chunk ? l->size - done : chunk;
            memcpy(sc + done, src + done, k);
            done += k;
            atomic_store_explicit(&h->progress, done, memory_order_release);
            hmpi_wait_wake_all();
        }
    } else {
        /* whole elements per step, so that the packed stream grows in order */
        int per = (int)(chunk / (l->size / (size_t)count));
        per = per < 1 ? 1 : per;
        int pos = 0;
        for (int k = 0; k < count && err == MPI_SUCCESS; k += per) {
            int m = count - k < per ? count - k : per;
            err = hmpi_type_pack(hmpi_coll_at(buf, (MPI_Aint)k * l->extent), m, type, sc,
                                 (int)l->size, &pos); /* MPI_BOTTOM too */
            atomic_store_explicit(&h->progress, (uint64_t)pos, memory_order_release);
            hmpi_wait_wake_all();
        }
        if (err != MPI_SUCCESS) /* readers must not wait for bytes that never come */
            atomic_store_explicit(&h->progress, l->size, memory_order_release);
    }
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return err;
}

static int reader_side(hmpi_coll_team_t *t, uint64_t e, void *buf, int count, MPI_Datatype type,
                       const hmpi_layout_t *l, int root, int only)
{
    const hmpi_coll_ring_t *r = hmpi_coll_ring(t, root, e);
    hmpi_coll_half_t *h = hmpi_coll_half(t, root, e);
    uint64_t arrived = hmpi_epoch_state(e, HMPI_COLL_ARRIVED);
    if (only < 0 && l->size <= HMPI_COLL_RING_BYTES) {
        /* most likely the ring: watch its entry, and the root's state in case it used
         * its slot (a larger count than ours: truncation) */
        hmpi_backoff_t b = {0};
        while (atomic_load_explicit(&r->seq, memory_order_acquire) != e &&
               atomic_load_explicit(&h->state, memory_order_acquire) < arrived)
            hmpi_wait_step(&b, 0);
        hmpi_wait_end(&b, HMPI_WAIT_COLL);
    } else {
        hmpi_coll_wait(t, root, e, HMPI_COLL_ARRIVED);
    }
    /* seq is stored before the root's state: either wait saw it if it is e */
    if (only < 0 && atomic_load_explicit(&r->seq, memory_order_acquire) == e)
        return ring_read(t, e, r, buf, count, type, l);
    const unsigned char *src = (const unsigned char *)(uintptr_t)h->addr;
    size_t bytes = h->bytes;
    int err = MPI_SUCCESS;
    if (bytes > l->size) {
        err = MPI_ERR_TRUNCATE;
    } else if (bytes > t->cap &&
               atomic_load_explicit(&h->progress, memory_order_acquire) == bytes &&
               hmpi_coll_direct(buf, l) && h->addr != (uintptr_t)h->data) {
        /* the root's heap buffer, whole: share the copy with the root */
        hmpi_coll_half_t *mine = hmpi_coll_claim(t, e);
        share_t *sh = (share_t *)mine->data;
        unsigned char *dst = hmpi_coll_at(buf, l->lo);
        mine->addr = (uintptr_t)dst;
        mine->bytes = bytes;
        atomic_store_explicit(&sh->next, 0, memory_order_relaxed);
        atomic_store_explicit(&sh->done, 0, memory_order_relaxed);
        hmpi_coll_publish(t, e, HMPI_COLL_MID);
        share_copy(sh, dst, src, bytes);
        hmpi_coll_wait_slow(&sh->done, (bytes + SHARE_CHUNK - 1) / SHARE_CHUNK);
    } else if (l->contig) {
        unsigned char *dst = hmpi_coll_at(buf, l->lo);
        for (size_t got = 0; got < bytes;) {
            size_t avail = atomic_load_explicit(&h->progress, memory_order_acquire);
            if (avail == got) {
                hmpi_coll_wait_slow(&h->progress, got + 1);
                continue;
            }
            memcpy(dst + got, src + got, avail - got);
            got = avail;
        }
    } else {
        hmpi_coll_wait_slow(&h->progress, bytes);
        err = hmpi_coll_unpack(buf, count, type, l, src, bytes);
    }
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return err;
}

int hmpi_coll_team_bcast(hmpi_coll_team_t *t, void *buf, int count, MPI_Datatype type, int root,
                         int only)
{
    HMPI_ASSERT_INTERNAL(root >= 0 && root < t->ep.n && only >= -1 && only < t->ep.n);
    hmpi_layout_t l;
    int err = hmpi_layout_get(type, count, &l);
    if (err != MPI_SUCCESS)
        return err;
    uint64_t e = hmpi_coll_begin(t);
    if (l.size == 0 || (only >= 0 && t->ep.me != root && t->ep.me != only)) {
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return MPI_SUCCESS;
    }
    if (t->ep.me == root)
        return only < 0 && l.size <= HMPI_COLL_RING_BYTES
                   ? ring_root(t, e, buf, count, type, &l)
                   : root_side(t, e, buf, count, type, &l, only);
    return reader_side(t, e, buf, count, type, &l, root, only);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    HMPI_ENTER("MPI_Bcast");
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    HMPI_COLL_COUNT(bcast, s != NULL);
    if (!s && hmpi_check_comm_null(comm, "MPI_Bcast"))
        return MPI_ERR_COMM;
    if (!s)
        HMPI_COLL_RETURN_BELOW(PMPI_Bcast, PMPI_Ibcast, comm, buf, count, type, root, comm);
    int err = hmpi_check_buf(buf, count, type, HMPI_SIDE_ONE);
    if (!err)
        err = hmpi_check_root(root, c->size);
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Bcast");
    hmpi_coll_team_t *t = &s->team;
    if (s->mode == HMPI_COLL_FLAT)
        return hmpi_raise_in(comm, hmpi_coll_team_bcast(t, buf, count, type, root, -1),
                             "MPI_Bcast");
    /* Across nodes: the root's node, the leaders, the other nodes. */
    int lroot = c->local_of[root] >= 0 ? hmpi_coll_member(t, root) : -1;
    if (lroot >= 0) {
        err = hmpi_coll_team_bcast(t, buf, count, type, lroot, -1);
        if (t->ep.me == 0 && err == MPI_SUCCESS)
            err = PMPI_Bcast(buf, count, type, s->leader_of[root], s->leaders);
    } else {
        if (t->ep.me == 0)
            err = PMPI_Bcast(buf, count, type, s->leader_of[root], s->leaders);
        int err2 = hmpi_coll_team_bcast(t, buf, count, type, 0, -1);
        err = err != MPI_SUCCESS ? err : err2;
    }
    return hmpi_raise_in(comm, err, "MPI_Bcast");
}
HMPI_PMPI(Bcast)

/* ---- nonblocking and persistent (nbc.h) -------------------------------------------------- */

/* A broadcast of at most HMPI_COLL_RING_BYTES in epoch e, from member root, as far as it
 * goes without waiting: the root writes its ring entry (as MPI_Bcast's root does), a
 * reader copies the entry once written. 1 when done (DONE published, *err its error),
 * else 0 with nothing done: the root's entry is still read, the root has not arrived, or
 * it used its slot (a count larger than ours), which hmpi_coll_phase_bcast reads. */
static int small_now(hmpi_coll_team_t *t, uint64_t e, void *buf, int count, MPI_Datatype type,
                     const hmpi_layout_t *l, int root, int *err)
{
    HMPI_ASSERT_INTERNAL(l->size <= HMPI_COLL_RING_BYTES);
    if (t->ep.me == root) {
        hmpi_coll_ring_t *r = hmpi_coll_try_ring(t, e);
        if (!r)
            return 0;
        *err = ring_write(t, e, r, buf, count, type, l);
        return 1;
    }
    const hmpi_coll_ring_t *r = hmpi_coll_ring(t, root, e);
    if (atomic_load_explicit(&r->seq, memory_order_acquire) != e)
        return 0;
    *err = ring_read(t, e, r, buf, count, type, l);
    return 1;
}

/* small_now for any broadcast within the slot (the start call's try, and the first step
 * of the operation's phase): beyond the ring, the root packs its data into its slot
 * (once nobody reads it for e - 2) and a reader copies them from there once the root
 * arrived; 0 (nothing done) where the root's data are not in its slot or do not fit
 * ours: the rest of the phase takes those. */
static int slot_now(hmpi_coll_team_t *t, uint64_t e, void *buf, int count, MPI_Datatype type,
                    const hmpi_layout_t *l, int root, int *err)
{
    HMPI_ASSERT_INTERNAL(l->size <= t->cap);
    if (l->size <= HMPI_COLL_RING_BYTES)
        return small_now(t, e, buf, count, type, l, root, err);
    if (t->ep.me == root) {
        hmpi_coll_half_t *h = hmpi_coll_try_claim(t, e);
        if (!h)
            return 0;
        *err = hmpi_coll_pack(h->data, buf, count, type, l);
        h->addr = (uintptr_t)h->data;
        h->bytes = l->size;
        atomic_store_explicit(&h->progress, l->size, memory_order_relaxed);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return 1;
    }
    if (!hmpi_epoch_reached(&t->ep, root, e, HMPI_COLL_ARRIVED))
        return 0;
    const hmpi_coll_ring_t *r = hmpi_coll_ring(t, root, e); /* seq is stored before the state */
    if (atomic_load_explicit(&r->seq, memory_order_acquire) == e) {
        *err = ring_read(t, e, r, buf, count, type, l);
        return 1;
    }
    const hmpi_coll_half_t *h = hmpi_coll_half(t, root, e);
    size_t bytes = h->bytes; /* read once */
    if (h->addr != (uintptr_t)h->data || bytes > l->size || bytes > t->cap)
        return 0;
    if (l->contig) {
        memcpy(hmpi_coll_at(buf, l->lo), h->data, bytes);
        *err = MPI_SUCCESS;
    } else {
        *err = hmpi_coll_unpack(buf, count, type, l, h->data, bytes);
    }
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return 1;
}

/* A broadcast on the team from member op->root of (op->recvbuf, op->count, op->type)
 * without waits: the root publishes its data (in its slot when small, its heap buffer in
 * place, else a packed copy in its scratch) and is done, or for a buffer read in place
 * waits for every reader's DONE; a reader copies once the root arrived. */
int hmpi_coll_phase_bcast(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    uint64_t e = hmpi_coll_op_epoch(op);
    const hmpi_layout_t *l = &op->l;
    if (l->size == 0) {
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return 1;
    }
    int err = MPI_SUCCESS;
    if (op->step == 0 && l->size <= t->cap &&
        slot_now(t, e, op->recvbuf, op->count, op->type, l, op->root, &err)) {
        hmpi_coll_op_note(op, err);
        return 1;
    }
    if (t->ep.me != op->root) {
        if (op->step == 0) {
            if (!hmpi_epoch_reached(&t->ep, op->root, e, HMPI_COLL_ARRIVED))
                return 0;
            /* seq is stored before the root's state: a ring entry is seen now */
            const hmpi_coll_ring_t *r = hmpi_coll_ring(t, op->root, e);
            if (atomic_load_explicit(&r->seq, memory_order_acquire) == e) {
                hmpi_coll_op_note(op, ring_read(t, e, r, op->recvbuf, op->count, op->type, l));
                return 1;
            }
        }
        const hmpi_coll_half_t *h = hmpi_coll_half(t, op->root, e);
        const unsigned char *src = (const unsigned char *)(uintptr_t)h->addr;
        size_t bytes = h->bytes;
        if (op->step == 0 && bytes <= l->size && bytes > t->cap && h->addr != (uintptr_t)h->data &&
            hmpi_coll_direct(op->recvbuf, l)) {
            /* The root's heap buffer into ours: the copy shared with the root, as
             * reader_side's (its half claimed first; until then we wait). */
            hmpi_coll_half_t *mine = hmpi_coll_try_claim(t, e);
            if (!mine)
                return 0;
            share_t *sh = (share_t *)mine->data;
            mine->addr = (uintptr_t)hmpi_coll_at(op->recvbuf, l->lo);
            mine->bytes = bytes;
            atomic_store_explicit(&sh->next, 0, memory_order_relaxed);
            atomic_store_explicit(&sh->done, 0, memory_order_relaxed);
            hmpi_coll_publish(t, e, HMPI_COLL_MID);
            op->step = 1;
        }
        if (op->step == 1) {
            hmpi_coll_half_t *mine = hmpi_coll_half(t, t->ep.me, e);
            share_t *sh = (share_t *)mine->data;
            share_copy(sh, (unsigned char *)(uintptr_t)mine->addr, src, bytes);
            if (atomic_load_explicit(&sh->done, memory_order_acquire) <
                (bytes + SHARE_CHUNK - 1) / SHARE_CHUNK)
                return 0; /* the root copies its last chunks */
        } else if (bytes > l->size) {
            op->err = MPI_ERR_TRUNCATE;
        } else if (l->contig) {
            memcpy(hmpi_coll_at(op->recvbuf, l->lo), src, bytes);
        } else {
            op->err = hmpi_coll_unpack(op->recvbuf, op->count, op->type, l, src, bytes);
        }
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return 1;
    }
    if (op->step == 0 && l->size <= t->cap)
        return 0;        /* the root's ring entry or slot is still read */
    if (op->step == 0) { /* beyond the slot: a packed copy in the scratch, or in place */
        hmpi_coll_half_t *h = hmpi_coll_try_claim(t, e);
        if (!h)
            return 0;
        if (!hmpi_coll_direct(op->recvbuf, l)) {
            unsigned char *to = hmpi_coll_try_scratch(t, e, l->size);
            if (!to)
                return 0;
            hmpi_stat_add(HMPI_STAT_coll_staged_bytes, l->size);
            op->err = hmpi_coll_pack(to, op->recvbuf, op->count, op->type, l);
            h->addr = (uintptr_t)to;
            h->bytes = l->size;
            atomic_store_explicit(&h->progress, l->size, memory_order_relaxed);
            hmpi_coll_publish(t, e, HMPI_COLL_DONE); /* a copy: readers need us no more */
            return 1;
        }
        h->addr = (uintptr_t)hmpi_coll_at(op->recvbuf, l->lo);
        h->bytes = l->size;
        atomic_store_explicit(&h->progress, l->size, memory_order_relaxed);
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        op->step = 1;
    }
    /* The readers read our buffer in place; we copy chunks for those that share. */
    root_help(t, e, hmpi_coll_at(op->recvbuf, l->lo), l->size, -1, 0);
    if (!hmpi_coll_op_all(op, HMPI_COLL_DONE))
        return 0;
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return 1;
}

static int below_ibcast(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Ibcast(op->recvbuf, op->count, op->type, op->croot, op->c->handle, req);
}

static int leaders_ibcast_start(hmpi_coll_op_t *op)
{
    return PMPI_Ibcast(op->recvbuf, op->count, op->type, op->s->leader_of[op->croot],
                       op->s->leaders, &op->below);
}
static int leaders_ibcast(hmpi_coll_op_t *op)
{
    return hmpi_coll_phase_below(op, leaders_ibcast_start);
}

/* The other nodes' broadcast, once their leader has the data. */
static int bcast_from_leader(hmpi_coll_op_t *op)
{
    op->root = 0;
    return hmpi_coll_phase_bcast(op);
}

static int start_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                       int persistent, MPI_Request *request, const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = NULL;
    hmpi_coll_comm_t *s = hmpi_coll_nb_route(hmpi_coll_get_nb(comm, &c), 0, 0);
    if (!s) {
        if (hmpi_check_comm_null(comm, fn))
            return MPI_ERR_COMM;
#if HMPI_MPI4_CALLS
        if (persistent)
            return PMPI_Bcast_init(buf, count, type, root, comm, MPI_INFO_NULL, request);
#endif
        return PMPI_Ibcast(buf, count, type, root, comm, request);
    }
    int err = hmpi_check_buf(buf, count, type, HMPI_SIDE_ONE);
    if (!err)
        err = hmpi_check_root(root, c->size);
    if (!err && !request)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    hmpi_layout_t l;
    if (!err)
        err = hmpi_layout_get(type, count, &l);
    if (err)
        return hmpi_raise_in(comm, err, fn);
    /* Small, on one node, nothing before it: as far as it goes now, an operation only
     * where it must wait. */
    uint64_t e = 0;
    if (!persistent && s->mode == HMPI_COLL_FLAT && l.size <= s->team.cap && hmpi_coll_alone(s)) {
        e = hmpi_coll_begin(&s->team);
        if (slot_now(&s->team, e, buf, count, type, &l, root, &err) && err == MPI_SUCCESS) {
            *request = hmpi_req_handle(hmpi_req_coll_done());
            return MPI_SUCCESS;
        }
    }
    int lroot = hmpi_coll_op_member(s, c, root);
    hmpi_coll_phase_fn flat[] = {hmpi_coll_phase_bcast};
    hmpi_coll_phase_fn root_node[] = {hmpi_coll_phase_bcast, leaders_ibcast};
    hmpi_coll_phase_fn other_node[] = {leaders_ibcast, bcast_from_leader};
    hmpi_coll_op_t *op = s->mode != HMPI_COLL_HIER ? hmpi_coll_op_new(s, c, 1, flat)
                         : lroot >= 0              ? hmpi_coll_op_new(s, c, 2, root_node)
                                                   : hmpi_coll_op_new(s, c, 2, other_node);
    if (!op)
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    op->recvbuf = buf;
    op->count = count;
    op->type = type;
    op->croot = root;
    op->root = lroot >= 0 ? lroot : 0;
    op->persistent = (uint8_t)persistent;
    op->below_start = below_ibcast;
    op->l = l;
    op->err = err; /* it ended above in error: an operation carries it to the wait */
    if (!err)
        hmpi_coll_op_tried(op, e, 0, 0, 0); /* else it goes on from the epoch begun */
    err = l.derived ? hmpi_coll_op_hold(op, type) : MPI_SUCCESS; /* predefined: no hold */
    return hmpi_coll_op_go(op, err, request, comm, fn);
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request *request)
{
    return start_bcast(buf, count, type, root, comm, 0, request, "MPI_Ibcast");
}
HMPI_PMPI(Ibcast)

#if HMPI_MPI4_CALLS
int MPI_Bcast_init(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Info info,
                   MPI_Request *request)
{
    (void)info;
    return start_bcast(buf, count, type, root, comm, 1, request, "MPI_Bcast_init");
}
HMPI_PMPI(Bcast_init)
#endif
