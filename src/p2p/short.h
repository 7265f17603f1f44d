/* short.h: the short ways of MPI_Send and MPI_Recv written inline into their entry
 * points (mpi/pt2pt.c, the one file outside p2p/ that includes this header), and the
 * pieces they share with the ways of lane.c and arrival.c (the copy, the put, the
 * receive's key and take). A small contiguous message by a lane whose slot is ready
 * goes with no call between the entry point's start and the slot's publish (sending)
 * or between seeing the slot and returning (receiving): a call costs more than its own
 * two instructions there, since every register live across it is saved at the entry
 * and restored at the exit (docs/design.md, "Short ways"). Each short way does nothing
 * and returns 0 in any other case; the entry point then goes out of line to the way of
 * lane.c, which also looks for free slots, waits past a few spins, counts its waits,
 * and leaves a corrupted slot to the general way to report. */
#ifndef HMPI_P2P_SHORT_H
#define HMPI_P2P_SHORT_H

#include "engine.h"

/* The largest payload the short ways copy inline (without a call to memcpy). */
enum { HMPI_P2P_SHORT_MAX = 32 };

/* n bytes, at most HMPI_P2P_SHORT_MAX, copied by overlapping loads and stores. */
static inline void hmpi_p2p_copy_inline(void *d, const void *s, size_t n)
{
    HMPI_ASSERT_INTERNAL(n <= HMPI_P2P_SHORT_MAX);
    const char *f = s;
    char *t = d;
    if (n >= 8 && n <= 16) { /* the common sizes first */
        uint64_t a, b;
        memcpy(&a, f, 8);
        memcpy(&b, f + n - 8, 8);
        memcpy(t, &a, 8);
        memcpy(t + n - 8, &b, 8);
    } else if (n > 16) {
        char a[16], b[16];
        memcpy(a, f, 16);
        memcpy(b, f + n - 16, 16);
        memcpy(t, a, 16);
        memcpy(t + n - 16, b, 16);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, f, 4);
        memcpy(&b, f + n - 4, 4);
        memcpy(t, &a, 4);
        memcpy(t + n - 4, &b, 4);
    } else if (n) { /* 1 to 3 bytes: the first, the middle and the last */
        char a = f[0], b = f[n / 2], z = f[n - 1];
        t[0] = a;
        t[n / 2] = b;
        t[n - 1] = z;
    }
}

/* A lane message's payload: inline up to HMPI_P2P_SHORT_MAX bytes, memcpy past that
 * (a branch a caller with a smaller bound drops). */
static inline void hmpi_p2p_lane_copy(void *d, const void *s, size_t n)
{
    if (n <= HMPI_P2P_SHORT_MAX)
        hmpi_p2p_copy_inline(d, s, n);
    else
        memcpy(d, s, n);
}

/* Sends bytes from p by my lane to local rank dst in slot e (hmpi_p2p_lane_claim's). */
static inline void hmpi_p2p_lane_put(const hmpi_comm_t *c, hmpi_env_t *e, const void *p,
                                     size_t bytes, int dst, int tag)
{
    hmpi_p2p_lane_copy(e->u.payload, p, bytes);
    hmpi_p2p_lane_publish(e, c, tag, bytes, dst);
}

/* MPI_Send's: bytes (at most HMPI_P2P_SHORT_MAX) from p into my lane to local rank
 * dst_local when a slot is free without a look at the ring (my last slot again, or the
 * ring's next known free); never under MPI_THREAD_MULTIPLE (no engine lock here). */
static inline int hmpi_p2p_send_short(const hmpi_comm_t *c, const void *p, size_t bytes,
                                      int dst_local, int tag)
{
    hmpi_env_t *e;
    if (bytes > HMPI_P2P_SHORT_MAX || !hmpi_p2p_engine.lane_k || hmpi_p2p_threaded ||
        !(e = hmpi_p2p_lane_claim(dst_local, 0)))
        return 0;
    hmpi_p2p_lane_put(c, e, p, bytes, dst_local, tag);
    return 1;
}

/* An envelope's 16 bytes from ctx to src_local, as a receive by a lane compares them:
 * at once, with what it wants worked out before its wait. */
typedef struct {
    uint32_t ctx;
    int32_t src, tag;
    uint8_t proto, sync;
    uint16_t src_local;
} hmpi_p2p_key_t;
static_assert(
    sizeof(hmpi_p2p_key_t) == 16 &&
        offsetof(hmpi_env_t, src) - offsetof(hmpi_env_t, ctx) == offsetof(hmpi_p2p_key_t, src) &&
        offsetof(hmpi_env_t, tag) - offsetof(hmpi_env_t, ctx) == offsetof(hmpi_p2p_key_t, tag) &&
        offsetof(hmpi_env_t, proto) - offsetof(hmpi_env_t, ctx) ==
            offsetof(hmpi_p2p_key_t, proto) &&
        offsetof(hmpi_env_t, sync) - offsetof(hmpi_env_t, ctx) == offsetof(hmpi_p2p_key_t, sync) &&
        offsetof(hmpi_env_t, src_local) - offsetof(hmpi_env_t, ctx) ==
            offsetof(hmpi_p2p_key_t, src_local),
    "the key is the envelope's bytes from ctx to src_local");

/* The key a receive of (source, tag) in c wants from local rank src_local, and the
 * bits it compares: an immediate message, not synchronous; any tag: not compared (its
 * sign is, after). */
typedef struct {
    uint64_t key[2], mask[2];
} hmpi_p2p_want_t;

static inline hmpi_p2p_want_t hmpi_p2p_lane_want(const hmpi_comm_t *c, int source, int src_local,
                                                 int tag)
{
    int any = tag == MPI_ANY_TAG;
    hmpi_p2p_key_t k = {
        c->ctx, source, any ? 0 : tag, HMPI_PROTO_IMMEDIATE, 0, (uint16_t)src_local};
    hmpi_p2p_key_t m = {UINT32_MAX, -1, any ? 0 : -1, UINT8_MAX, UINT8_MAX, UINT16_MAX};
    hmpi_p2p_want_t w;
    memcpy(w.key, &k, sizeof k);
    memcpy(w.mask, &m, sizeof m);
    return w;
}

/* Slot e, published and next of src_local's lane to me, taken into buf (cap bytes)
 * when it is the message w wants, at most max bytes, and next by pseq (not behind a
 * message of the queue); then *err and the status are set and 1 returned. Else 0,
 * nothing taken. Reads each field of the slot once, as take_in does. */
static inline int hmpi_p2p_lane_take_msg(hmpi_env_t *e, const hmpi_p2p_want_t *w, size_t max,
                                         int src_local, void *buf, size_t cap, MPI_Status *status,
                                         int *err)
{
    hmpi_p2p_from_t *from = &hmpi_p2p_engine.from[src_local];
    uint64_t got[2];
    memcpy(got, &e->ctx, sizeof got);
    uint32_t p = HMPI_READ_ONCE(e->pseq);
    uint64_t size = HMPI_READ_ONCE(e->size);
    hmpi_p2p_key_t g;
    memcpy(&g, got, sizeof g);
    if (((got[0] ^ w->key[0]) & w->mask[0]) | ((got[1] ^ w->key[1]) & w->mask[1]) || g.tag < 0 ||
        p != from->pseq || size > max)
        return 0; /* (the slot lies in src_local's slice: checked when its lane was attached) */
    hmpi_lane_take(&from->rx, from->lane, hmpi_p2p_engine.lane_k, hmpi_p2p_engine.env_bytes, e);
    from->pseq = p + 1;
    size_t len = size <= cap ? size : cap;
    hmpi_p2p_lane_copy(buf, e->u.payload, len);
    hmpi_lane_give_back(e, HMPI_P2P_LANE_STATE, HMPI_ENV_DONE);
    *err = size > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_fill(status, g.src, g.tag, len);
    hmpi_wait_wake(src_local); /* last: nothing is live across its rare call */
    return 1;
}

/* Whether a receive may take its message from a lane: the node has lanes, and no posted
 * receive, unexpected message or bridged request stands before it (then the next
 * message of the source is in its lane, or behind one of the queue that pseq names). */
static inline int hmpi_p2p_lane_receivable(void)
{
    return hmpi_p2p_engine.lane_k && !hmpi_p2p_match.posted_head && !hmpi_p2p_match.unexp_head &&
           !hmpi_bridge_pending;
}

/* MPI_Recv's: the next message of local rank src_local when it is in src_local's lane
 * or comes within HMPI_SPIN_EARLY pause steps, carries at most HMPI_P2P_SHORT_MAX
 * bytes and is the receive's (hmpi_p2p_lane_take_msg). Not while counting statistics
 * (the wait would go uncounted). */
static inline int hmpi_p2p_recv_short(const hmpi_comm_t *c, void *buf, size_t cap, int source,
                                      int src_local, int tag, MPI_Status *status, int *err)
{
    if (!hmpi_p2p_lane_receivable() || hmpi_stats_counting() || hmpi_p2p_threaded)
        return 0;
    hmpi_p2p_want_t w = hmpi_p2p_lane_want(c, source, src_local, tag);
    /* The two slots where the message may be (shm/lane.h), worked out once. */
    hmpi_p2p_from_t *from = &hmpi_p2p_engine.from[src_local];
    uint64_t seq = from->rx.seq;
    hmpi_env_t *last = seq ? hmpi_lane_last(&from->rx, from->lane, hmpi_p2p_engine.lane_k,
                                            hmpi_p2p_engine.env_bytes)
                           : NULL;
    hmpi_env_t *e = hmpi_p2p_lane_slot(from->lane, from->rx.next);
    for (unsigned spins = 0;; spins++) {
        if (last && hmpi_lane_holds(last, seq)) {
            e = last;
            break;
        }
        if (hmpi_lane_holds(e, seq))
            break;
        if (spins == HMPI_SPIN_EARLY || !hmpi_queue_empty(&hmpi_p2p_engine.me->incoming))
            return 0;
        hmpi_cpu_relax();
    }
    return hmpi_p2p_lane_take_msg(e, &w, HMPI_P2P_SHORT_MAX, src_local, buf, cap, status, err);
}

#endif
