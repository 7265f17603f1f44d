/* proto_pipe.c: the pipe protocol, both halves: a contiguous message outside the shared
 * heap (and not read by CMA) goes through a bounce the sender fills in chunks of
 * HMPI_PIPE_CHUNK bytes after the envelope is pushed, while a receiver that matched it
 * copies each chunk out as it lands (the filled counter). The send completes once the
 * bounce is full. */
#include "engine.h"
#include "../common/knobs.h"
#include "../common/stats.h"
#include "../shm/wait.h"

#include <string.h>

int hmpi_proto_pipe_prepare(hmpi_env_t *e, hmpi_req_t *r, const char *p, size_t bytes)
{
    (void)r, (void)p;
    void *copy = hmpi_p2p_bounce_get(bytes);
    if (!copy)
        return MPI_ERR_NO_MEM;
    atomic_store_explicit(&e->u.filled, 0, memory_order_relaxed); /* filled once pushed */
    hmpi_stat_add(HMPI_STAT_bounced, 1);
    e->data = copy;
    hmpi_env_own(e)->bounce = copy;
    return MPI_SUCCESS;
}

/* A pipelined bounce: the envelope is already queued, so a receiver that matched it
 * copies each chunk out while this side copies the next in (the two copies of a
 * bounce overlap, as in an MPI's shared-memory cells). The send completes here, eager;
 * the receiver marks DONE only once everything has landed, so the bounce is never
 * freed while this loop writes it. */
void hmpi_proto_pipe_pushed(hmpi_env_t *e, const char *p, size_t bytes)
{
    char *copy = hmpi_env_own(e)->bounce;
    size_t chunk = (size_t)hmpi_knobs.PIPE_CHUNK;
    for (size_t off = 0; off < bytes; off += chunk) {
        size_t n = bytes - off < chunk ? bytes - off : chunk;
        memcpy(copy + off, p + off, n);
        atomic_store_explicit(&e->u.filled, off + n, memory_order_release);
        hmpi_wait_wake_all(); /* the receiver, copying out as chunks land */
    }
}

/* Copies out what the sender has filled, chunk by chunk as it lands. Waits for the
 * whole message (also when truncated: the sender still writes the rest, and DONE must
 * not let it free the bounce under its own copy). The counter is clamped to the size:
 * a bent one can only make us copy bytes of the bounce early, never outside it. */
size_t hmpi_proto_pipe_deliver(const hmpi_msg_view_t *v, hmpi_req_t *r, const hmpi_layout_t *t,
                               size_t len)
{
    const char *src = v->data;
    char *dst = (char *)r->buf + t->lo;
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
    return t->contig ? len : hmpi_proto_place(src, r, t, len);
}
