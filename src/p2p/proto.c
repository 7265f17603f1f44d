/* proto.c: the protocol table (both halves of each protocol: proto_*.c) and what the
 * receive halves share, the placing of bytes into a receive buffer.
 * Runs on the hot path: no allocation except to unpack non-contiguous data read
 * from another process's private memory. What comes from the envelope is checked by
 * each protocol's check before any copy; the copies write at most len bytes, len
 * never more than the receive buffer holds (the caller's truncation). */
#include "engine.h"
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
size_t hmpi_proto_place(const void *src, hmpi_req_t *r, const hmpi_layout_t *t, size_t len)
{
    if (len == 0)
        return 0;
    if (t->contig) {
        memcpy((char *)r->buf + t->lo, src, len);
        return len;
    }
    size_t one = t->size / (size_t)r->count; /* len > 0: count > 0 */
    int whole = (int)(len / one);
    size_t rest = len - (size_t)whole * one;
    int pos = 0;
    hmpi_type_unpack(src, (int)len, &pos, r->buf, whole, r->type); /* MPI_BOTTOM too */
    if (rest) {
        char *elem = (char *)r->buf + (MPI_Aint)whole * t->extent;
        unsigned char *tmp = hmpi_heap_malloc(one);
        if (!tmp)
            return len - rest;
        int p = 0;
        hmpi_type_pack(elem, 1, r->type, tmp, (int)one, &p);
        memcpy(tmp, (const char *)src + (size_t)whole * one, rest);
        p = 0;
        hmpi_type_unpack(tmp, (int)one, &p, elem, 1, r->type);
        hmpi_heap_free(tmp);
    }
    return len;
}

const hmpi_proto_ops_t hmpi_protos[HMPI_PROTO_COUNT] = {
    [HMPI_PROTO_IMMEDIATE] = {.name = "immediate",
                              .prepare = hmpi_proto_immediate_prepare,
                              .check = hmpi_proto_immediate_check,
                              .deliver = hmpi_proto_copy_deliver,
                              .msgs = HMPI_STAT_msgs_immediate,
                              .bytes = HMPI_STAT_bytes_immediate},
    [HMPI_PROTO_COPY] = {.name = "copy",
                         .prepare = hmpi_proto_copy_prepare,
                         .check = hmpi_proto_copy_check,
                         .deliver = hmpi_proto_copy_deliver,
                         .msgs = HMPI_STAT_msgs_copy,
                         .bytes = HMPI_STAT_bytes_copy},
    [HMPI_PROTO_SYNERGISTIC] = {.name = "synergistic",
                                .prepare = hmpi_proto_synergistic_prepare,
                                .check = hmpi_proto_copy_check,
                                .deliver = hmpi_proto_synergistic_deliver,
                                .msgs = HMPI_STAT_msgs_synergistic,
                                .bytes = HMPI_STAT_bytes_synergistic},
    [HMPI_PROTO_CMA] = {.name = "cma",
                        .prepare = hmpi_proto_cma_prepare,
                        .check = hmpi_proto_cma_check,
                        .deliver = hmpi_proto_cma_deliver,
                        .msgs = HMPI_STAT_msgs_cma,
                        .bytes = HMPI_STAT_bytes_cma},
    [HMPI_PROTO_PIPE] = {.name = "pipe",
                         .prepare = hmpi_proto_pipe_prepare,
                         .pushed = hmpi_proto_pipe_pushed,
                         .check = hmpi_proto_copy_check,
                         .deliver = hmpi_proto_pipe_deliver,
                         .msgs = HMPI_STAT_msgs_pipe,
                         .bytes = HMPI_STAT_bytes_pipe},
};
