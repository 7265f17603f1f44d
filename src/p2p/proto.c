/* proto.c: the receive side of the protocols, as a dispatch table, and the
 * block copy that sender and receiver share in the synergistic protocol.
 * Runs on the hot path: no allocation except to unpack non-contiguous data read
 * from another process's private memory. What comes from the envelope is checked by
 * each protocol's check before any copy; the copies write at most len bytes, len
 * never more than the receive buffer holds (the caller's truncation). */
#include "p2p.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../common/stats.h"
#include "../heap/heap.h"
#include "../shm/wait.h"

#include <string.h>
#include <sys/uio.h>

/* Copies len bytes of a message from src into r's buffer, by memcpy when the receive
 * datatype is contiguous and by MPI_Unpack otherwise. A last, partial element is
 * merged: the element is packed as it stands, its head overwritten with the bytes
 * received, and unpacked again, so the bytes not received keep their values. */
static size_t place(const void *src, hmpi_req_t *r, const hmpi_type_t *t, size_t len)
{
    if (len == 0)
        return 0;
    if (t->contig) {
        memcpy((char *)r->buf + t->lb, src, len);
        return len;
    }
    int whole = (int)(len / t->size);
    size_t rest = len - (size_t)whole * t->size;
    int pos = 0;
    hmpi_type_unpack(src, (int)len, &pos, r->buf, whole, r->type); /* MPI_BOTTOM too */
    if (rest) {
        char *elem = (char *)r->buf + (MPI_Aint)whole * t->extent;
        unsigned char *tmp = hmpi_heap_malloc(t->size);
        if (!tmp)
            return len - rest;
        int p = 0;
        hmpi_type_pack(elem, 1, r->type, tmp, (int)t->size, &p);
        memcpy(tmp, (const char *)src + (size_t)whole * t->size, rest);
        p = 0;
        hmpi_type_unpack(tmp, (int)t->size, &p, elem, 1, r->type);
        hmpi_heap_free(tmp);
    }
    return len;
}

/* ---- checks: each field read once, then compared ---------------------------------- */

/* Inline payload: no pointer to trust, only a size that must fit the envelope (which
 * the engine found whole in the heap, hmpi_p2p_immediate_room payload bytes included). */
static const char *check_immediate(hmpi_msg_view_t *v)
{
    v->data = v->env->u.payload;
    return v->size <= (uint64_t)hmpi_p2p_immediate_room ? NULL : "size";
}

/* The data lies in the shared heap, all of it. */
static const char *check_heap(hmpi_msg_view_t *v)
{
    v->data = HMPI_READ_ONCE(v->env->data);
    return hmpi_heap_is_shared_range(v->data, v->size) ? NULL : "data";
}

/* The process to read from is the sender's own (the owner of the envelope's slice), as
 * the control area names it: never another process of the user's. A bad address is
 * harmless (process_vm_readv fails). */
static const char *check_cma(hmpi_msg_view_t *v)
{
    v->data = HMPI_READ_ONCE(v->env->data);
    v->pid = hmpi_ctrl()->rank[v->src_local].pid;
    return NULL;
}

/* ---- delivery --------------------------------------------------------------------- */

static size_t deliver_inline(const hmpi_msg_view_t *v, hmpi_req_t *r, const hmpi_type_t *t,
                             size_t len)
{
    return place(v->data, r, t, len);
}

/* Copies blocks of dst/src/len until none is left to claim; returns how many. Every
 * bound is the caller's local: the shared counter only picks a block, and a counter a
 * peer bent still picks one inside [0, n). */
static uint64_t copy_blocks(hmpi_env_t *env, char *dst, const char *src, uint64_t len,
                            uint64_t block, uint64_t n)
{
    uint64_t mine = 0;
    for (;;) {
        uint64_t b = atomic_fetch_add_explicit(&env->u.syn.next_block, 1, memory_order_relaxed);
        if (b >= n)
            break;
        uint64_t off = b * block;
        uint64_t sz = off + block <= len ? block : len - off;
        memcpy(dst + off, src + off, sz);
        atomic_fetch_add_explicit(&env->u.syn.blocks_done, 1, memory_order_release);
        mine++;
    }
    return mine;
}

uint64_t hmpi_syn_help(hmpi_env_t *env)
{
    hmpi_env_own_t *own = hmpi_env_own(env);
    if (own->no_help)
        return 0;
    /* The receiver's plan, read once: it must stay inside the message and the heap,
     * else the receiver copies alone (it never waits for the sender to help). */
    char *dst = HMPI_READ_ONCE(env->u.syn.dst);
    const char *src = HMPI_READ_ONCE(env->data);
    uint64_t len = HMPI_READ_ONCE(env->u.syn.len);
    uint64_t block = HMPI_READ_ONCE(env->u.syn.block);
    uint64_t n = HMPI_READ_ONCE(env->u.syn.nblocks);
    if (len > own->size || block == 0 || n != len / block + (len % block != 0) ||
        !hmpi_heap_is_shared_range(dst, len) || !hmpi_heap_is_shared_range(src, len)) {
        own->no_help = 1;
        hmpi_log_error("synergistic send of %llu bytes: the receiver's block plan is out of "
                       "range (dst %p, len %llu, block %llu, blocks %llu): not helping",
                       (unsigned long long)own->size, (void *)dst, (unsigned long long)len,
                       (unsigned long long)block, (unsigned long long)n);
        return 0;
    }
    uint64_t mine = copy_blocks(env, dst, src, len, block, n);
    if (mine)
        hmpi_wait_wake_all(); /* the receiver waits for the blocks this side claimed */
    return mine;
}

static size_t deliver_synergistic(const hmpi_msg_view_t *v, hmpi_req_t *r,
                                  const hmpi_type_t *t, size_t len)
{
    hmpi_env_t *env = v->env;
    char *dst = (char *)r->buf + t->lb;
    if (!t->contig || !hmpi_heap_is_shared_range(dst, len))
        return place(v->data, r, t, len); /* the sender cannot write here: copy alone */
    uint64_t block = len > (uint64_t)hmpi_knobs.SYNERGISTIC_LARGE
                         ? (uint64_t)hmpi_knobs.SYNERGISTIC_BLOCK_LARGE
                         : (uint64_t)hmpi_knobs.SYNERGISTIC_BLOCK;
    env->u.syn.dst = dst;
    env->u.syn.len = len;
    env->u.syn.block = block;
    uint64_t n = (len + block - 1) / block;
    env->u.syn.nblocks = n;
    /* Publish dst/len to a helping sender. */
    atomic_store_explicit(&env->state, HMPI_ENV_MATCHED, memory_order_release);
    hmpi_wait_wake(v->src_local); /* a sender waiting to help */
    copy_blocks(env, dst, v->data, len, block, n);
    hmpi_backoff_t b = {0};
    while (atomic_load_explicit(&env->u.syn.blocks_done, memory_order_acquire) < n)
        hmpi_backoff(&b); /* the sender finishes a block it claimed: never waits on us */
    hmpi_backoff_end(&b);
    return len;
}

static size_t deliver_cma(const hmpi_msg_view_t *v, hmpi_req_t *r, const hmpi_type_t *t,
                          size_t len)
{
    void *dst = t->contig ? (char *)r->buf + t->lb : hmpi_heap_malloc(len);
    if (!dst)
        return 0;
    size_t got = 0;
    while (got < len) {
        struct iovec local = {(char *)dst + got, len - got};
        struct iovec remote = {(char *)v->data + got, len - got};
        ssize_t n = process_vm_readv(v->pid, &local, 1, &remote, 1, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (!t->contig) {
        place(dst, r, t, got);
        hmpi_heap_free(dst);
    }
    return got;
}

/* Copies out what the sender has filled, chunk by chunk as it lands. Waits for the
 * whole message (also when truncated: the sender still writes the rest, and DONE must
 * not let it free the bounce under its own copy). The counter is clamped to the size:
 * a bent one can only make us copy bytes of the bounce early, never outside it. */
static size_t deliver_pipe(const hmpi_msg_view_t *v, hmpi_req_t *r, const hmpi_type_t *t,
                           size_t len)
{
    const char *src = v->data;
    char *dst = (char *)r->buf + t->lb;
    size_t done = t->contig ? 0 : len; /* a layout with holes is unpacked at the end */
    hmpi_backoff_t b = {0};
    for (;;) {
        uint64_t filled = atomic_load_explicit(&v->env->u.filled, memory_order_acquire);
        if (filled > v->size)
            filled = v->size;
        size_t upto = filled < len ? (size_t)filled : len;
        if (upto > done) {
            memcpy(dst + done, src + done, upto - done);
            done = upto;
            hmpi_backoff_end(&b);
            b = (hmpi_backoff_t){0}; /* progress: spin again before yielding */
        }
        if (filled == v->size)
            break;
        hmpi_backoff(&b);
    }
    hmpi_backoff_end(&b);
    return t->contig ? len : place(src, r, t, len);
}

const hmpi_proto_ops_t hmpi_protos[HMPI_PROTO_COUNT] = {
    [HMPI_PROTO_IMMEDIATE] = {"immediate", check_immediate, deliver_inline},
    [HMPI_PROTO_COPY] = {"copy", check_heap, deliver_inline},
    [HMPI_PROTO_SYNERGISTIC] = {"synergistic", check_heap, deliver_synergistic},
    [HMPI_PROTO_CMA] = {"cma", check_cma, deliver_cma},
    [HMPI_PROTO_PIPE] = {"pipe", check_heap, deliver_pipe},
};
