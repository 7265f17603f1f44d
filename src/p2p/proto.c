/* proto.c: the receive side of the four protocols, as a dispatch table, and the
 * block copy that sender and receiver share in the synergistic protocol.
 * Runs on the hot path: no allocation except to unpack non-contiguous data read
 * from another process's private memory. */
#include "p2p.h"
#include "../common/knobs.h"
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
    PMPI_Unpack(src, (int)len, &pos, r->buf, whole, r->type, MPI_COMM_SELF);
    if (rest) {
        char *elem = (char *)r->buf + (MPI_Aint)whole * t->extent;
        unsigned char *tmp = hmpi_heap_malloc(t->size);
        if (!tmp)
            return len - rest;
        int p = 0;
        PMPI_Pack(elem, 1, r->type, tmp, (int)t->size, &p, MPI_COMM_SELF);
        memcpy(tmp, (const char *)src + (size_t)whole * t->size, rest);
        p = 0;
        PMPI_Unpack(tmp, (int)t->size, &p, elem, 1, r->type, MPI_COMM_SELF);
        hmpi_heap_free(tmp);
    }
    return len;
}

static size_t deliver_inline(hmpi_env_t *env, hmpi_req_t *r, const hmpi_type_t *t, size_t len)
{
    return place(env->data, r, t, len);
}

uint64_t hmpi_syn_copy_blocks(hmpi_env_t *env)
{
    uint64_t mine = 0;
    const uint64_t n = env->u.syn.nblocks, block = env->u.syn.block, len = env->u.syn.len;
    for (;;) {
        uint64_t b = atomic_fetch_add_explicit(&env->u.syn.next_block, 1, memory_order_relaxed);
        if (b >= n)
            break;
        uint64_t off = b * block;
        uint64_t sz = off + block <= len ? block : len - off;
        memcpy((char *)env->u.syn.dst + off, (const char *)env->data + off, sz);
        atomic_fetch_add_explicit(&env->u.syn.blocks_done, 1, memory_order_release);
        mine++;
    }
    return mine;
}

static size_t deliver_synergistic(hmpi_env_t *env, hmpi_req_t *r, const hmpi_type_t *t,
                                  size_t len)
{
    char *dst = (char *)r->buf + t->lb;
    if (!t->contig || !hmpi_heap_is_shared_range(dst, len))
        return place(env->data, r, t, len); /* the sender cannot write here: copy alone */
    uint64_t block = len > (uint64_t)hmpi_knobs.SYNERGISTIC_LARGE
                         ? (uint64_t)hmpi_knobs.SYNERGISTIC_BLOCK_LARGE
                         : (uint64_t)hmpi_knobs.SYNERGISTIC_BLOCK;
    env->u.syn.dst = dst;
    env->u.syn.len = len;
    env->u.syn.block = block;
    env->u.syn.nblocks = (len + block - 1) / block;
    /* Publish dst/len to a helping sender. */
    atomic_store_explicit(&env->state, HMPI_ENV_MATCHED, memory_order_release);
    hmpi_syn_copy_blocks(env);
    hmpi_backoff_t b = {0};
    while (atomic_load_explicit(&env->u.syn.blocks_done, memory_order_acquire) <
           env->u.syn.nblocks)
        hmpi_backoff(&b); /* the sender finishes a block it claimed: never waits on us */
    return len;
}

static size_t deliver_cma(hmpi_env_t *env, hmpi_req_t *r, const hmpi_type_t *t, size_t len)
{
    void *dst = t->contig ? (char *)r->buf + t->lb : hmpi_heap_malloc(len);
    if (!dst)
        return 0;
    size_t got = 0;
    while (got < len) {
        struct iovec local = {(char *)dst + got, len - got};
        struct iovec remote = {(char *)env->data + got, len - got};
        ssize_t n = process_vm_readv(env->src_pid, &local, 1, &remote, 1, 0);
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

const hmpi_proto_ops_t hmpi_protos[HMPI_PROTO_COUNT] = {
    [HMPI_PROTO_IMMEDIATE] = {"immediate", deliver_inline},
    [HMPI_PROTO_COPY] = {"copy", deliver_inline},
    [HMPI_PROTO_SYNERGISTIC] = {"synergistic", deliver_synergistic},
    [HMPI_PROTO_CMA] = {"cma", deliver_cma},
};
