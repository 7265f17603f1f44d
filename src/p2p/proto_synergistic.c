/* proto_synergistic.c: the synergistic protocol, both halves: a message of at least
 * HMPI_SYNERGISTIC_MIN bytes in the shared heap (the user's buffer, or a bounce as for
 * copy) is copied in blocks by the receiver and, while its send waits, by the sender
 * too: the receiver publishes its plan (MATCHED), and both claim blocks from one
 * counter. A bad plan only stops the sender's help. */
#include "engine.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../heap/heap.h"
#include "../shm/wait.h"

#include <string.h>

int hmpi_proto_synergistic_prepare(hmpi_env_t *e, hmpi_req_t *r, const char *p, size_t bytes)
{
    int err = hmpi_proto_copy_prepare(e, r, p, bytes);
    if (err == MPI_SUCCESS) {
        atomic_store_explicit(&e->u.syn.next_block, 0, memory_order_relaxed);
        atomic_store_explicit(&e->u.syn.blocks_done, 0, memory_order_relaxed);
    }
    return err;
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

size_t hmpi_proto_synergistic_deliver(const hmpi_msg_view_t *v, hmpi_req_t *r,
                                      const hmpi_layout_t *t, size_t len)
{
    hmpi_env_t *env = v->env;
    char *dst = (char *)r->buf + t->lo;
    if (!t->contig || !hmpi_heap_is_shared_range(dst, len))
        return hmpi_proto_place(v->data, r, t, len); /* the sender cannot write here: copy alone */
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
