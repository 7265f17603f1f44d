/* proto_cma.c: the CMA protocol, both halves: a contiguous message outside the shared
 * heap, at least HMPI_CMA_MIN bytes, is read by the receiver straight from the sender's
 * private memory (process_vm_readv) where every local rank may do so (progress.c,
 * cma_check); the send completes at DONE. */
#include "engine.h"
#include "../heap/heap.h"

#include <sys/uio.h>

/* The chooser marked the user's buffer as read in place. */
int hmpi_proto_cma_prepare(hmpi_env_t *e, hmpi_req_t *r, const char *p, size_t bytes)
{
    (void)r, (void)bytes;
    e->data = p;
    return MPI_SUCCESS;
}

/* The process to read from is the sender's own (the owner of the envelope's slice), as
 * the control area names it: never another process of the user's. A bad address is
 * harmless (process_vm_readv fails). */
const char *hmpi_proto_cma_check(hmpi_msg_view_t *v)
{
    v->data = HMPI_READ_ONCE(v->env->data);
    v->pid = hmpi_ctrl()->rank[v->src_local].pid;
    return NULL;
}

size_t hmpi_proto_cma_deliver(const hmpi_msg_view_t *v, hmpi_req_t *r, const hmpi_layout_t *t,
                              size_t len)
{
    void *dst = t->contig ? (char *)r->buf + t->lo : hmpi_heap_malloc(len);
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
        hmpi_proto_place(dst, r, t, got);
        hmpi_heap_free(dst);
    }
    return got;
}
