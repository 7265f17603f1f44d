/* lane.c: the lanes, one ring of envelopes (shm/lane.h) from each local rank to each
 * (itself included), for small eager messages: their allocation and connection at init,
 * the sender's look ahead for free slots, and the short ways of MPI_Send and MPI_Recv
 * that go by them without the engine lock. A slot is published by its seq (lseq) and
 * given back by its state (DONE): no atomic read-modify-write on either side. */
#include "engine.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../heap/heap.h"
#include "../shm/wait.h"

#include <stdlib.h>

/* hmpi_p2p_lane_claim when no slot is known free: the ring's look, out of line. A slot
 * seen DONE stays DONE until this rank reuses it, so one look (independent loads)
 * serves many sends; after a look found the lane full, the next HMPI_LANE_SKIP sends go
 * by the queue without one. */
hmpi_env_t *hmpi_p2p_lane_look(int dst)
{
    hmpi_p2p_to_t *to = &hmpi_p2p_engine.to[dst];
    return (hmpi_env_t *)hmpi_lane_look(&to->tx, to->lane, hmpi_p2p_engine.lane_k,
                                        hmpi_p2p_engine.env_bytes, HMPI_P2P_LANE_STATE,
                                        HMPI_ENV_DONE);
}

/* MPI_Recv's short way: the message is small and contiguous and comes from local rank
 * src_local by its lane, and nothing stands in the way of taking it straight from the
 * slot (no posted receive, no unexpected message, nothing on the queue: then the next
 * message of src_local is the slot's, or one behind a message of the queue that pseq
 * names). Spins while the cores are not shared; takes nothing and returns 0 when the
 * case is any other (the caller goes the general way, which also checks and logs a
 * corrupted slot), else 1 with *err and the status set. Reads each field of the slot
 * once, as take_in does. */
int hmpi_p2p_recv_lane(const hmpi_comm_t *c, void *buf, size_t cap, int source, int src_local,
                       int tag, MPI_Status *status, int *err)
{
    if (!hmpi_p2p_engine.lane_k || hmpi_p2p_match.posted_head || hmpi_p2p_match.unexp_head ||
        hmpi_bridge_pending)
        return 0;
    hmpi_p2p_from_t *from = &hmpi_p2p_engine.from[src_local];
    hmpi_backoff_t b = {0};
    hmpi_env_t *e;
    for (;;) {
        e = hmpi_lane_peek(&from->rx, from->lane, hmpi_p2p_engine.lane_k,
                           hmpi_p2p_engine.env_bytes);
        if (e)
            break;
        if (!hmpi_queue_empty(&hmpi_p2p_engine.me->incoming) || hmpi_backoff_yielding(&b)) {
            hmpi_wait_handoff(&b, hmpi_p2p_wait_family(c, 0));
            return 0;
        }
        hmpi_backoff(&b);
    }
    uint32_t p = HMPI_READ_ONCE(e->pseq);
    uint32_t ctx = HMPI_READ_ONCE(e->ctx);
    int32_t src = HMPI_READ_ONCE(e->src), etag = HMPI_READ_ONCE(e->tag);
    uint64_t size = HMPI_READ_ONCE(e->size);
    if (p != from->pseq || ctx != c->ctx || src != source || (tag != MPI_ANY_TAG && etag != tag) ||
        etag < 0 || HMPI_READ_ONCE(e->proto) != HMPI_PROTO_IMMEDIATE ||
        HMPI_READ_ONCE(e->src_local) != src_local || size > (uint64_t)hmpi_p2p_immediate_room) {
        hmpi_wait_handoff(&b, hmpi_p2p_wait_family(c, 0));
        return 0; /* (the slot lies in src_local's heap: hmpi_p2p_lanes_connect checked the lane) */
    }
    hmpi_lane_take(&from->rx);
    from->pseq = p + 1;
    size_t len = size <= cap ? size : cap;
    hmpi_p2p_copy_short(buf, e->u.payload, len);
    hmpi_lane_give_back(e, HMPI_P2P_LANE_STATE, HMPI_ENV_DONE);
    hmpi_wait_wake(src_local);
    *err = size > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_fill(status, src, etag, len);
    hmpi_wait_end(&b, hmpi_p2p_wait_family(c, 0));
    return 1;
}

/* MPI_Send's short way: a small contiguous message into the next slot of the lane to
 * local rank dst_local when that slot is free; 0 (nothing sent) when it is not. */
int hmpi_p2p_send_lane(const hmpi_comm_t *c, const void *p, size_t bytes, int dst_local, int tag)
{
    if (!hmpi_p2p_engine.lane_k)
        return 0;
    hmpi_env_t *e = hmpi_p2p_lane_claim(dst_local);
    if (!e)
        return 0;
    hmpi_p2p_copy_short(e->u.payload, p, bytes);
    hmpi_p2p_lane_publish(e, c, tag, bytes, dst_local);
    return 1;
}

/* Bytes of the bell after a rank's lanes (shm/bell.h): none on a node of fewer than
 * HMPI_LANE_SUMMARY ranks. Lanes are whole envelopes, so the bell starts a line. */
static size_t bell_bytes(void)
{
    int min = hmpi_knobs.LANE_SUMMARY;
    return min > 0 && hmpi_p2p_engine.nlocal >= min
               ? hmpi_bell_size((unsigned)hmpi_p2p_engine.nlocal)
               : 0;
}

/* My lanes, all slots DONE (free), and my bell zeroed, published in my control block;
 * the per-peer counters. Lanes are optional: without heap room, none. */
int hmpi_p2p_lanes_alloc(void)
{
    hmpi_p2p_engine.nlocal = hmpi_node.size;
    hmpi_p2p_engine.to = calloc((size_t)hmpi_p2p_engine.nlocal, sizeof *hmpi_p2p_engine.to);
    hmpi_p2p_engine.from = calloc((size_t)hmpi_p2p_engine.nlocal, sizeof *hmpi_p2p_engine.from);
    if (!hmpi_p2p_engine.to || !hmpi_p2p_engine.from) {
        hmpi_log_error("out of memory for the point-to-point counters of %d local ranks",
                       hmpi_p2p_engine.nlocal);
        return -1;
    }
    hmpi_p2p_engine.lane_k = 0;
    for (unsigned k = 1; hmpi_knobs.LANE_SLOTS > 0 && k <= 4096; k *= 2) {
        if (k >= (unsigned)hmpi_knobs.LANE_SLOTS) {
            hmpi_p2p_engine.lane_k = k;
            break;
        }
    }
    /* The node holds lane_k x nlocal^2 envelopes: past HMPI_LANE_TOTAL per rank, fewer
     * slots per lane (the same on every rank: one node size, knobs checked below). */
    while (hmpi_knobs.LANE_TOTAL > 0 && hmpi_p2p_engine.lane_k > 4 &&
           (uint64_t)hmpi_p2p_engine.lane_k * (uint64_t)hmpi_p2p_engine.nlocal >
               (uint64_t)hmpi_knobs.LANE_TOTAL)
        hmpi_p2p_engine.lane_k /= 2;
    hmpi_p2p_engine.lane_bytes = (size_t)hmpi_p2p_engine.lane_k * hmpi_p2p_engine.env_bytes;
    size_t lanes = hmpi_p2p_engine.lane_bytes * (size_t)hmpi_p2p_engine.nlocal;
    size_t bell = bell_bytes();
    hmpi_p2p_engine.lane_out = hmpi_p2p_engine.lane_k ? hmpi_heap_shared_alloc(lanes + bell) : NULL;
    if (!hmpi_p2p_engine.lane_out)
        hmpi_p2p_engine.lane_k = 0;
    else
        memset(hmpi_p2p_engine.lane_out + lanes, 0, bell);
    for (int dst = 0; hmpi_p2p_engine.lane_k && dst < hmpi_p2p_engine.nlocal; dst++) {
        hmpi_p2p_engine.to[dst].lane =
            hmpi_p2p_engine.lane_out + (size_t)dst * hmpi_p2p_engine.lane_bytes;
        hmpi_lane_init(hmpi_p2p_engine.to[dst].lane, hmpi_p2p_engine.lane_k,
                       hmpi_p2p_engine.env_bytes, HMPI_P2P_LANE_STATE, HMPI_ENV_DONE);
    }
    hmpi_p2p_engine.me->lanes = hmpi_p2p_engine.lane_out;
    return 0;
}

/* Whether [p, p + n) lies whole in local rank r's slice. */
static int in_slice(const char *p, size_t n, int r)
{
    return p && hmpi_heap_owner(p) == r && hmpi_heap_is_shared_range(p, n) &&
           hmpi_heap_owner(p + n - 1) == r;
}

/* Every peer's lane to me, and its bell after its lanes with my word there, checked to
 * lie whole in its slice (its lanes' address read once). All ranks of the node use
 * lanes, with one slot count, or none does: a sender writes only where the receiver
 * reads; and all ring bells, or none does (one that answers must hear every sender). */
void hmpi_p2p_lanes_connect(void)
{
    size_t lanes = hmpi_p2p_engine.lane_bytes * (size_t)hmpi_p2p_engine.nlocal;
    size_t bell = bell_bytes();
    unsigned me = (unsigned)hmpi_node.rank;
    int ok = 1, ring = bell != 0;
    if (ring) {
        hmpi_p2p_engine.ring =
            malloc(sizeof *hmpi_p2p_engine.ring * (size_t)hmpi_p2p_engine.nlocal);
        ring = hmpi_p2p_engine.ring != NULL;
        hmpi_p2p_engine.ring_bit = hmpi_bell_bit(me);
    }
    for (int src = 0; src < hmpi_p2p_engine.nlocal && hmpi_p2p_engine.lane_k; src++) {
        char *l = hmpi_ctrl()->rank[src].lanes;
        if (!in_slice(l, lanes, src))
            ok = 0;
        else
            hmpi_p2p_engine.from[src].lane = l + (size_t)me * hmpi_p2p_engine.lane_bytes;
        if (ring && (!ok || !in_slice(l + lanes, bell, src)))
            ring = 0;
        else if (ring)
            hmpi_p2p_engine.ring[src] = hmpi_bell_word((hmpi_bell_t *)(void *)(l + lanes), me);
    }
    int64_t k = ok ? (int64_t)hmpi_p2p_engine.lane_k : 0, all[3] = {k, -k, ring};
    hmpi_node_exchange(all, 3);
    for (int r = 0; r < hmpi_p2p_engine.nlocal; r++)
        for (int i = 0; i < 3; i++)
            if (hmpi_node_said(r)[i] < all[i])
                all[i] = hmpi_node_said(r)[i];
    if (all[0] != -all[1] || all[0] == 0)
        hmpi_p2p_engine.lane_k = 0; /* the lanes stay allocated, unused */
    if (hmpi_p2p_engine.lane_k && all[2] == 1) {
        hmpi_p2p_engine.bell = (hmpi_bell_t *)(void *)(hmpi_p2p_engine.lane_out + lanes);
    } else {
        free(hmpi_p2p_engine.ring);
        hmpi_p2p_engine.ring = NULL;
    }
    if (hmpi_knobs.VERBOSE >= 2 && hmpi_node.rank == 0)
        hmpi_log_info("lanes: %u slots of %zu bytes to each of %d local ranks%s",
                      hmpi_p2p_engine.lane_k, hmpi_p2p_engine.env_bytes, hmpi_p2p_engine.nlocal,
                      hmpi_p2p_engine.bell ? ", a summary bit per sender" : "");
}
