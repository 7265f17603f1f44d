/* lane.c: the lanes, one ring of envelopes (shm/lane.h) from a local rank to a local
 * receiver (itself included), for small eager messages: opened on the first message
 * that would take one (so a rank keeps lanes only to the peers it talks to, at most
 * HMPI_LANE_TOTAL / slots of them), announced to the receiver by the queue, the
 * sender's look ahead for free slots, and the short ways of MPI_Send and MPI_Recv that
 * go by them without the engine lock. A slot is published by its seq (lseq) and given
 * back by its state (DONE): no atomic read-modify-write on either side. */
#include "short.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../common/stats.h"
#include "../heap/heap.h"
#include "../shm/wait.h"

#include <stdlib.h>

/* What a receiver reads as the lane of a sender that has opened none: a slot 0 whose
 * seq never says published (its cursor stays at 0 until the lane is attached, so no
 * other slot is read). The hot paths need no test for a lane not yet there. */
static alignas(HMPI_CACHE_LINE) char no_lane[HMPI_CACHE_LINE];

static int in_slice(const char *p, size_t n, int r);
static size_t bell_bytes(void);

/* Opens my lane to dst once my first small message to it went by the queue (send.c): a
 * ring in my slice, all slots free, announced by the queue after that message (the
 * receiver attaches it as it takes the announcement, in the order of my messages to
 * it). Tried once a receiver: a lane refused (my lanes at their limit, no heap room, the
 * receiver's bell not where it should be) leaves my messages to dst on the queue. */
void hmpi_p2p_lane_open(int dst)
{
    hmpi_p2p_to_t *to = &hmpi_p2p_engine.to[dst];
    to->tried = 1;
    if (hmpi_p2p_engine.lanes_open >= hmpi_p2p_engine.lanes_max)
        return;
    if (hmpi_p2p_engine.ring) {
        char *b = hmpi_ctrl()->rank[dst].bell;
        if (!in_slice(b, bell_bytes(), dst)) {
            hmpi_log_error("local rank %d's summary word lies outside its slice (%p): its "
                           "messages from local rank %d go by its queue",
                           dst, (void *)b, hmpi_node.rank);
            return;
        }
        hmpi_p2p_engine.ring[dst] =
            hmpi_bell_word((hmpi_bell_t *)(void *)b, (unsigned)hmpi_node.rank);
    }
    char *l = hmpi_heap_shared_alloc(hmpi_p2p_engine.lane_bytes);
    if (!l)
        return;
    hmpi_lane_init(l, hmpi_p2p_engine.lane_k, hmpi_p2p_engine.env_bytes, HMPI_P2P_LANE_STATE,
                   HMPI_ENV_DONE);
    if (hmpi_p2p_send_notice(dst, HMPI_P2P_LANE_OPEN, 0, hmpi_node.rank, 0, l,
                             hmpi_p2p_engine.lane_bytes) != 0) {
        hmpi_heap_free(l);
        return;
    }
    to->lane = l;
    hmpi_p2p_engine.lanes_open++;
    hmpi_stat_bump(HMPI_STAT_lanes_opened, 1);
}

/* hmpi_p2p_lane_claim when no slot is known free: the ring's look, out of line. A slot
 * seen DONE stays DONE until this rank reuses it, so one look (independent loads)
 * serves many sends; after a look found the lane full, the next HMPI_LANE_SKIP sends go
 * by the queue without one. A lane not yet opened (its cursor zero: never known free)
 * has no slot: the message goes by the queue, whose way opens the lane. The look calls
 * nothing, so the short way that inlines the claim keeps its registers across it (GCC
 * sees what a function of the file clobbers: opening the lane from here cost the 8-byte
 * round trip 3 instructions). */
hmpi_env_t *hmpi_p2p_lane_look(int dst)
{
    hmpi_p2p_to_t *to = &hmpi_p2p_engine.to[dst];
    if (__builtin_expect(!to->lane, 0))
        return NULL;
    return (hmpi_env_t *)hmpi_lane_look(&to->tx, to->lane, hmpi_p2p_engine.lane_k,
                                        hmpi_p2p_engine.env_bytes, HMPI_P2P_LANE_STATE,
                                        HMPI_ENV_DONE);
}

/* MPI_Recv's short way out of line (p2p/short.h has the inline one): the message is
 * small and contiguous and comes from local rank src_local by its lane, and nothing
 * stands in the way of taking it straight from the slot (hmpi_p2p_lane_receivable,
 * nothing on the queue). Spins while the cores are not shared; takes nothing and
 * returns 0 when the case is any other (the caller goes the general way, which also
 * checks and logs a corrupted slot), else 1 with *err and the status set. */
int hmpi_p2p_recv_lane(const hmpi_comm_t *c, void *buf, size_t cap, int source, int src_local,
                       int tag, MPI_Status *status, int *err)
{
    if (!hmpi_p2p_lane_receivable())
        return 0;
    hmpi_p2p_want_t w = hmpi_p2p_lane_want(c, source, src_local, tag);
    hmpi_p2p_from_t *from = &hmpi_p2p_engine.from[src_local];
    hmpi_backoff_t b = {0};
    hmpi_env_t *e;
    while (!(e = hmpi_lane_peek(&from->rx, from->lane, hmpi_p2p_engine.lane_k,
                                hmpi_p2p_engine.env_bytes))) {
        if (!hmpi_queue_empty(&hmpi_p2p_engine.me->incoming) || hmpi_backoff_yielding(&b)) {
            hmpi_wait_handoff(&b, hmpi_p2p_wait_family(c, 0));
            return 0;
        }
        hmpi_backoff(&b);
    }
    if (!hmpi_p2p_lane_take_msg(e, &w, hmpi_p2p_immediate_room, src_local, buf, cap, status, err)) {
        hmpi_wait_handoff(&b, hmpi_p2p_wait_family(c, 0));
        return 0;
    }
    hmpi_wait_end(&b, hmpi_p2p_wait_family(c, 0));
    return 1;
}

/* MPI_Send's short way out of line: a small contiguous message into my lane to local
 * rank dst_local when a slot is free (looking at the ring when none is known); 0
 * (nothing sent) when none is. */
int hmpi_p2p_send_lane(const hmpi_comm_t *c, const void *p, size_t bytes, int dst_local, int tag)
{
    hmpi_env_t *e;
    if (!hmpi_p2p_engine.lane_k || !(e = hmpi_p2p_lane_claim(dst_local, 1)))
        return 0;
    hmpi_p2p_lane_put(c, e, p, bytes, dst_local, tag);
    return 1;
}

/* Bytes of a rank's bell (shm/bell.h): none on a node of fewer than HMPI_LANE_SUMMARY
 * ranks. */
static size_t bell_bytes(void)
{
    int min = hmpi_knobs.LANE_SUMMARY;
    return min > 0 && hmpi_p2p_engine.nlocal >= min
               ? hmpi_bell_size((unsigned)hmpi_p2p_engine.nlocal)
               : 0;
}

/* The slots of a lane, the lanes a rank may open, my bell zeroed and published in my
 * control block; the per-peer counters, every sender's lane not yet attached. Lanes are
 * optional: with 0 slots, none. */
int hmpi_p2p_lanes_alloc(void)
{
    int n = hmpi_p2p_engine.nlocal = hmpi_node.size;
    hmpi_p2p_engine.to = calloc((size_t)n, sizeof *hmpi_p2p_engine.to);
    hmpi_p2p_engine.from = calloc((size_t)n, sizeof *hmpi_p2p_engine.from);
    if (!hmpi_p2p_engine.to || !hmpi_p2p_engine.from) {
        hmpi_log_error("out of memory for the point-to-point counters of %d local ranks", n);
        return -1;
    }
    for (int src = 0; src < n; src++)
        hmpi_p2p_engine.from[src].lane = no_lane;
    hmpi_p2p_engine.lane_k = 0;
    for (unsigned k = 1; hmpi_knobs.LANE_SLOTS > 0 && k <= 4096; k *= 2) {
        if (k >= (unsigned)hmpi_knobs.LANE_SLOTS) {
            hmpi_p2p_engine.lane_k = k;
            break;
        }
    }
    /* A rank's lanes hold at most HMPI_LANE_TOTAL slots: with more local ranks each gets
     * fewer (the same on every rank: one node size, knobs checked at connect), down to
     * 4; past that, fewer lanes (from 256 ranks at the defaults). */
    while (hmpi_knobs.LANE_TOTAL > 0 && hmpi_p2p_engine.lane_k > 4 &&
           (uint64_t)hmpi_p2p_engine.lane_k * (uint64_t)n > (uint64_t)hmpi_knobs.LANE_TOTAL)
        hmpi_p2p_engine.lane_k /= 2;
    int max = hmpi_knobs.LANE_TOTAL > 0 && hmpi_p2p_engine.lane_k
                  ? hmpi_knobs.LANE_TOTAL / (int)hmpi_p2p_engine.lane_k
                  : n;
    hmpi_p2p_engine.lanes_max = max < 1 ? 1 : max < n ? max : n;
    hmpi_p2p_engine.lane_bytes = (size_t)hmpi_p2p_engine.lane_k * hmpi_p2p_engine.env_bytes;
    size_t bell = hmpi_p2p_engine.lane_k ? bell_bytes() : 0;
    hmpi_p2p_engine.bell = bell ? hmpi_heap_shared_alloc(bell) : NULL;
    if (hmpi_p2p_engine.bell)
        memset(hmpi_p2p_engine.bell, 0, bell);
    hmpi_p2p_engine.me->bell = hmpi_p2p_engine.bell;
    return 0;
}

/* Whether [p, p + n) lies whole in local rank r's slice. */
static int in_slice(const char *p, size_t n, int r)
{
    return p && hmpi_heap_owner(p) == r && hmpi_heap_is_shared_range(p, n) &&
           hmpi_heap_owner(p + n - 1) == r;
}

/* The node agrees: all ranks use lanes, with one slot count, or none does (a sender
 * writes only where the receiver reads); and all ring bells, or none does (one that
 * answers must hear every sender). Nothing is read of the peers here: a sender checks
 * its receiver's bell when it opens a lane to it, a receiver the lane when it attaches
 * it. O(1) a rank besides the exchange. */
void hmpi_p2p_lanes_connect(void)
{
    int ring = hmpi_p2p_engine.bell != NULL;
    if (ring) {
        hmpi_p2p_engine.ring = calloc((size_t)hmpi_p2p_engine.nlocal, sizeof *hmpi_p2p_engine.ring);
        ring = hmpi_p2p_engine.ring != NULL;
        hmpi_p2p_engine.ring_bit = hmpi_bell_bit((unsigned)hmpi_node.rank);
    }
    int64_t k = (int64_t)hmpi_p2p_engine.lane_k, all[3] = {k, -k, ring};
    hmpi_node_exchange(all, 3);
    for (int r = 0; r < hmpi_p2p_engine.nlocal; r++)
        for (int i = 0; i < 3; i++)
            if (hmpi_node_said(r)[i] < all[i])
                all[i] = hmpi_node_said(r)[i];
    if (all[0] != -all[1] || all[0] == 0)
        hmpi_p2p_engine.lane_k = 0; /* no lane is opened */
    if (!hmpi_p2p_engine.lane_k || all[2] != 1) {
        free(hmpi_p2p_engine.ring);
        hmpi_p2p_engine.ring = NULL;
        hmpi_p2p_engine.bell = NULL; /* progress looks at every lane */
    }
    if (hmpi_knobs.VERBOSE >= 2 && hmpi_node.rank == 0)
        hmpi_log_info("lanes: %u slots of %zu bytes, opened on a rank's first small message "
                      "to a local rank, at most %d a rank (of %d local ranks)%s",
                      hmpi_p2p_engine.lane_k, hmpi_p2p_engine.env_bytes, hmpi_p2p_engine.lanes_max,
                      hmpi_p2p_engine.nlocal,
                      hmpi_p2p_engine.ring ? ", a summary bit per sender" : "");
}

/* A lane announced by local rank src (its envelope e, taken from my queue in the order
 * of src's messages): attached when it lies whole in src's slice and src has none yet,
 * else an error logged (what src then sends by it is lost: a peer gone wrong). My bell
 * rings for src, since its first slot may have rung before I knew where to look. The
 * envelope goes back to src. */
void hmpi_p2p_lane_attach(hmpi_env_t *e, int src)
{
    char *l = (char *)(uintptr_t)HMPI_READ_ONCE(e->data);
    hmpi_p2p_from_t *from = &hmpi_p2p_engine.from[src];
    if (!hmpi_p2p_engine.lane_k || from->lane != no_lane ||
        !in_slice(l, hmpi_p2p_engine.lane_bytes, src)) {
        hmpi_log_error("local rank %d announced a lane at %p that %s: its messages by it "
                       "are lost",
                       src, (void *)l,
                       !hmpi_p2p_engine.lane_k ? "this node does not use"
                       : from->lane != no_lane ? "it had already (a second one)"
                                               : "does not lie whole in its slice");
    } else {
        from->lane = l;
        if (hmpi_p2p_engine.ring)
            hmpi_bell_ring(hmpi_bell_word(hmpi_p2p_engine.bell, (unsigned)src),
                           hmpi_bell_bit((unsigned)src));
    }
    atomic_store_explicit(&e->state, HMPI_ENV_DONE, memory_order_release);
}
