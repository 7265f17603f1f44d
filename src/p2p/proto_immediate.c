/* proto_immediate.c: the immediate protocol, both halves: the sender copies (or packs)
 * a message of at most HMPI_IMMEDIATE_MAX bytes into the envelope's payload and the
 * send completes at once; the receiver copies it out of the envelope. (The lanes carry
 * the same messages their own short way: lane.c.) No allocation, no pointer to trust. */
#include "engine.h"

#include <string.h>

int hmpi_proto_immediate_prepare(hmpi_env_t *e, hmpi_req_t *r, const char *p, size_t bytes)
{
    e->data = e->u.payload;
    if (bytes && r->t.contig) /* an empty message may come from a NULL buffer */
        memcpy(e->u.payload, p, bytes);
    else if (bytes)
        return hmpi_p2p_pack_into(r, e->u.payload, bytes);
    return MPI_SUCCESS;
}

/* Inline payload: no pointer to trust, only a size that must fit the envelope (which
 * the engine found whole in the heap, hmpi_p2p_immediate_room payload bytes included). */
const char *hmpi_proto_immediate_check(hmpi_msg_view_t *v)
{
    v->data = v->env->u.payload;
    return v->size <= (uint64_t)hmpi_p2p_immediate_room ? NULL : "size";
}
