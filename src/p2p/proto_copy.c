/* proto_copy.c: the copy protocol, both halves: the receiver copies the message out of
 * a buffer in the shared heap, the user's own when it lies there (the send completes
 * at DONE), else a bounce copy the sender made (the send completes at once). The
 * synergistic protocol prepares its buffer the same way, and it and the pipe check
 * the buffer the same way (the heap's check, here). */
#include "engine.h"
#include "../common/knobs.h"
#include "../common/stats.h"
#include "../heap/heap.h"

#include <string.h>

int hmpi_proto_copy_prepare(hmpi_env_t *e, hmpi_req_t *r, const char *p, size_t bytes)
{
    hmpi_env_own_t *own = hmpi_env_own(e);
    if (own->user_data) { /* the chooser found it in the heap */
        e->data = p;
        own->reclaim = bytes <= (size_t)hmpi_knobs.RECLAIM_MAX &&
                       hmpi_p2p_rewritten((const unsigned char *)p, bytes);
        return MPI_SUCCESS;
    }
    void *copy = hmpi_p2p_bounce_get(bytes);
    if (!copy)
        return MPI_ERR_NO_MEM;
    if (r->t.contig) {
        memcpy(copy, p, bytes);
        hmpi_stat_add(HMPI_STAT_bounced, 1);
    } else {
        int err = hmpi_p2p_pack_into(r, copy, bytes);
        if (err != MPI_SUCCESS) {
            hmpi_p2p_bounce_put(copy, bytes);
            return err;
        }
        hmpi_stat_add(HMPI_STAT_packed, 1);
    }
    e->data = copy;
    own->bounce = copy;
    return MPI_SUCCESS;
}

/* The data lies in the shared heap, all of it. */
const char *hmpi_proto_copy_check(hmpi_msg_view_t *v)
{
    v->data = HMPI_READ_ONCE(v->env->data);
    return hmpi_heap_is_shared_range(v->data, v->size) ? NULL : "data";
}

size_t hmpi_proto_copy_deliver(const hmpi_msg_view_t *v, hmpi_req_t *r, const hmpi_layout_t *t,
                               size_t len)
{
    return hmpi_proto_place(v->data, r, t, len);
}
