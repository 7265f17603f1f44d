/* arrival.c: matching for peers on this node (the Hybrid MPI paper, §4.1): what the
 * receiver takes in. Senders push envelopes on the receiver's shared incoming queue or
 * publish them in their lanes; the receiver moves them, in each sender's order, onto its
 * private lists: matched against posted receives, else kept as unexpected. Both lists
 * are in arrival/post order, so the first match is the one MPI's non-overtaking rule
 * asks for (the rules themselves: match.h). Claims, the completion of receives, probes,
 * cancels and matched probes are here too. An envelope is another process's memory: its
 * header is read once at arrival into a private record, checked, and a wrong one fails
 * the receive it matches (MPI_ERR_INTERN, and a line naming the peer and the field)
 * without a copy. Engine lock held throughout. */
#include "short.h"
#include "../common/log.h"
#include "../heap/heap.h"
#include "../shm/wait.h"

#include <stdlib.h>

/* A message as this rank took it in. Unexpected ones wait in records of a private
 * pool, so matching, probes and statuses never read the envelope again. */
typedef struct arrival_s {
    hmpi_match_msg_t key; /* first: the unexpected list links the records by it */
    hmpi_msg_view_t v;    /* env, size, src_local; data and pid once checked */
    uint8_t proto;
    const char *bad; /* a header field found wrong at arrival, or NULL */
} arrival_t;

static arrival_t *arrival_get(void)
{
    arrival_t *a = hmpi_p2p_engine.arrival_pool;
    if (a) {
        hmpi_p2p_engine.arrival_pool = (arrival_t *)(void *)a->key.next;
        return a;
    }
    a = malloc(sizeof *a);
    if (!a) {
        hmpi_log_error("out of memory for the record of an unexpected message");
        PMPI_Abort(hmpi_node.world, 1);
    }
    return a;
}

static void arrival_put(arrival_t *a)
{
    a->key.next = (hmpi_match_msg_t *)(void *)hmpi_p2p_engine.arrival_pool;
    hmpi_p2p_engine.arrival_pool = a;
}

/* Reads the header of e (already known to lie whole in the heap) once into a, and
 * checks what needs no receive to check against: a few compares. */
static void take_in(hmpi_env_t *e, arrival_t *a)
{
    a->key.ctx = HMPI_READ_ONCE(e->ctx);
    a->key.src = HMPI_READ_ONCE(e->src);
    a->key.tag = HMPI_READ_ONCE(e->tag);
    a->proto = HMPI_READ_ONCE(e->proto);
    a->v.env = e;
    a->v.size = HMPI_READ_ONCE(e->size);
    a->v.data = NULL;
    a->v.pid = 0;
    a->v.src_local = hmpi_heap_owner(e); /* envelopes live in their sender's slice, */
                                         /* one per local rank: a valid local rank */
    a->bad = NULL;
    if (a->proto >= HMPI_PROTO_COUNT)
        a->bad = "proto";
    else if (HMPI_READ_ONCE(e->src_local) != a->v.src_local)
        a->bad = "src_local";
    else if (a->key.tag < 0)
        a->bad = "tag";
}

/* Takes the envelope from the sender (see the state protocol in engine.h); -1 when its
 * state is none the protocol allows. */
static int claim(hmpi_env_t *e, int proto)
{
    if (proto == HMPI_PROTO_IMMEDIATE)
        return 0; /* never converted by the sender */
    hmpi_backoff_t b = {0};
    for (;;) {
        uint32_t s = atomic_load_explicit(&e->state, memory_order_acquire);
        if ((s == HMPI_ENV_PENDING || s == HMPI_ENV_EAGER) &&
            atomic_compare_exchange_strong_explicit(&e->state, &s, HMPI_ENV_CLAIMED,
                                                    memory_order_acquire, memory_order_relaxed))
            return hmpi_backoff_end(&b), 0;
        if (s != HMPI_ENV_PENDING && s != HMPI_ENV_EAGER && s != HMPI_ENV_BOUNCING)
            return hmpi_backoff_end(&b), -1;
        hmpi_backoff(&b); /* BOUNCING: the sender is copying its data out */
    }
}

/* The first wrong field of a's envelope for receive r, or NULL. The source must be
 * the member of r's communicator that sits on the sender's local rank. */
static const char *check_arrival(const hmpi_req_t *r, arrival_t *a)
{
    if (a->bad)
        return a->bad;
    const hmpi_comm_t *c = r->comm;
    if ((uint32_t)a->key.src >= (uint32_t)c->size || c->local_of[a->key.src] != a->v.src_local)
        return "src";
    if (claim(a->v.env, a->proto) != 0)
        return "state";
    return hmpi_protos[a->proto].check(&a->v);
}

static void complete_recv(hmpi_req_t *r, arrival_t *a)
{
    HMPI_ASSERT_INTERNAL(!r->complete && !r->m.posted && r->kind == HMPI_REQ_RECV);
    size_t cap = r->t.size;
    size_t len = a->v.size <= cap ? a->v.size : cap;
    size_t got = 0;
    int err;
    const char *bad = check_arrival(r, a);
    if (bad) {
        hmpi_log_error("corrupted envelope %p from local rank %d (source %d, tag %d, "
                       "protocol %u, %llu bytes): field '%s' is out of range; the receive "
                       "fails with MPI_ERR_INTERN and nothing is copied",
                       (void *)a->v.env, a->v.src_local, (int)a->key.src, (int)a->key.tag,
                       (unsigned)a->proto, (unsigned long long)a->v.size, bad);
        err = MPI_ERR_INTERN;
    } else {
        if (a->proto == HMPI_PROTO_IMMEDIATE && r->t.contig) { /* the common case, inline */
            hmpi_p2p_lane_copy((char *)r->buf + r->t.lo, a->v.data, len);
            got = len;
        } else {
            got = hmpi_protos[a->proto].deliver(&a->v, r, &r->t, len);
        }
        err = a->v.size > cap ? MPI_ERR_TRUNCATE : got != len ? MPI_ERR_OTHER : MPI_SUCCESS;
    }
    hmpi_status_set(&r->status, a->key.src, a->key.tag, err, got);
    /* Last touch of the envelope: from here on it is the sender's again (for a lane
     * slot, the ring's give back, in any order: shm/lane.h). */
    atomic_store_explicit(&a->v.env->state, HMPI_ENV_DONE, memory_order_release);
    hmpi_wait_wake(a->v.src_local); /* a sender waiting for DONE may sleep */
    hmpi_req_finish(r);
}

/* ---- the private lists ------------------------------------------------------------ */

static void pattern_of(hmpi_match_recv_t *m, const hmpi_comm_t *c, int source, int tag)
{
    m->ctx = c->ctx;
    m->src = source;
    m->tag = tag;
    m->any_src = source == MPI_ANY_SOURCE;
    m->any_tag = tag == MPI_ANY_TAG;
}

void hmpi_p2p_unpost(hmpi_req_t *r) { hmpi_match_unpost(&hmpi_p2p_match, &r->m); }

void hmpi_p2p_post(hmpi_req_t *r)
{
    pattern_of(&r->m, r->comm, r->peer, r->tag);
    hmpi_match_post(&hmpi_p2p_match, &r->m);
    HMPI_ASSERT_EXPENSIVE(hmpi_match_valid(&hmpi_p2p_match));
}

static void arrive(hmpi_env_t *e)
{
    arrival_t in;
    take_in(e, &in);
    hmpi_match_recv_t *m = hmpi_match_arrive(&hmpi_p2p_match, &in.key);
    if (m) {
        complete_recv(hmpi_req_of(m), &in);
        return;
    }
    arrival_t *a = arrival_get();
    *a = in;
    hmpi_match_park(&hmpi_p2p_match, &a->key);
    HMPI_ASSERT_EXPENSIVE(hmpi_match_valid(&hmpi_p2p_match));
}

/* The oldest unexpected message that pattern p matches, removed when remove. */
static arrival_t *take_unexpected(const hmpi_match_recv_t *p, int remove)
{
    return (arrival_t *)(void *)hmpi_match_find(&hmpi_p2p_match, p, remove);
}

static void take_queue(void);

/* Takes in the published slots of src's lane, oldest first; when bounded, only the
 * messages numbered before upto. A slot numbered past the next expected message means
 * older messages of src went by the queue: pushed before the slot was written, so a
 * take of the queue finds them (every time: between two slots of one loop the sender
 * may have queued more). Inside a take of the queue (bounded) no such gap can be
 * honest: the queue's older messages came first in its chain. A number that is simply
 * wrong (a corrupted slot) costs order, never a message. */
static void take_lane(int src, uint32_t upto, int bounded)
{
    hmpi_p2p_from_t *from = &hmpi_p2p_engine.from[src];
    for (;;) {
        hmpi_env_t *e = hmpi_lane_peek(&from->rx, from->lane, hmpi_p2p_engine.lane_k,
                                       hmpi_p2p_engine.env_bytes);
        if (!e)
            return;
        uint32_t p = HMPI_READ_ONCE(e->pseq);
        if (bounded && (int32_t)(p - upto) >= 0)
            return;
        if (p != from->pseq && !hmpi_p2p_engine.draining) {
            uint32_t before = from->pseq;
            take_queue();
            if (from->pseq != before)
                continue; /* the queue held messages of src: look at the lane again */
        }
        hmpi_lane_take(&from->rx, from->lane, hmpi_p2p_engine.lane_k, hmpi_p2p_engine.env_bytes, e);
        from->pseq = p + 1;
        arrive(e); /* complete_recv gives the slot back */
    }
}

static void take_queue(void)
{
    /* Links are followed only inside the heap, to envelopes that lie whole there,
     * payload room included (env_bytes: the same in every rank, from the same knob). */
    int broken = HMPI_QUEUE_WHOLE;
    hmpi_qnode_t *n =
        hmpi_queue_take_within(&hmpi_p2p_engine.me->incoming, hmpi_region.slices,
                               hmpi_region.slices_len, hmpi_p2p_engine.env_bytes, &broken);
    if (broken && n) /* the oldest node reached holds the bad link */
        hmpi_log_error("incoming queue: the link in envelope %p from local rank %d %s; "
                       "messages pushed before it are lost",
                       (void *)n, hmpi_heap_owner(n),
                       broken == HMPI_QUEUE_LOOP ? "leads back into the queue (a loop)"
                                                 : "points outside the shared heap");
    else if (broken)
        hmpi_log_error("incoming queue: the head points outside the shared heap; the "
                       "messages in the queue are lost");
    hmpi_p2p_engine.draining = 1;
    while (n) {
        hmpi_qnode_t *next = hmpi_queue_next(n);
        hmpi_env_t *e = (hmpi_env_t *)n;
        if (hmpi_p2p_engine.lane_k) {
            int src = hmpi_heap_owner(e); /* a local rank: the queue took it in the heap */
            uint32_t p = HMPI_READ_ONCE(e->pseq);
            if (p != hmpi_p2p_engine.from[src].pseq)
                take_lane(src, p, 1); /* sent before it, by the lane */
            hmpi_p2p_engine.from[src].pseq = p + 1;
            if (HMPI_READ_ONCE(e->proto) == HMPI_P2P_LANE_OPEN) {
                hmpi_p2p_lane_attach(e, src);
                n = next;
                continue;
            }
        }
#if HMPI_MPI4_CALLS
        if (HMPI_READ_ONCE(e->proto) == HMPI_P2P_PART_SETUP) {
            hmpi_p2p_part_arrive(e, hmpi_heap_owner(e)); /* never a receive's match */
            n = next;
            continue;
        }
#endif
        arrive(e);
        n = next;
    }
    hmpi_p2p_engine.draining = 0;
}

/* Everything that arrived: the queue, then each lane, or each lane that rang my bell
 * (its words answered in turn; a bit past the node's ranks is a peer's corruption). */
void hmpi_p2p_take_arrivals(void)
{
    take_queue();
    int n = hmpi_p2p_engine.lane_k ? hmpi_p2p_engine.nlocal : 0;
    if (!hmpi_p2p_engine.bell) {
        for (int src = 0; src < n; src++)
            take_lane(src, 0, 0);
        return;
    }
    for (int w = 0; w * 64 < n; w++)
        for (uint64_t rung = hmpi_bell_answer(hmpi_p2p_engine.bell, (size_t)w); rung;
             rung &= rung - 1) {
            int src = w * 64 + __builtin_ctzll(rung);
            if (src < n)
                take_lane(src, 0, 0);
        }
}

/* Messages not yet taken in are not looked for: taken in later, they meet the posted
 * receive as if they had arrived after it (which MPI cannot tell apart), and one
 * sender's messages are still taken in order. */
int hmpi_p2p_recv_start(hmpi_req_t *r)
{
    pattern_of(&r->m, r->comm, r->peer, r->tag);
    arrival_t *a = take_unexpected(&r->m, 1);
    if (a) {
        complete_recv(r, a);
        arrival_put(a);
        return MPI_SUCCESS;
    }
    HMPI_ASSERT_INTERNAL(!r->complete && hmpi_req_valid(r));
    hmpi_match_post(&hmpi_p2p_match, &r->m); /* its pattern is set */
    HMPI_ASSERT_EXPENSIVE(hmpi_match_valid(&hmpi_p2p_match));
    if (r->peer == MPI_ANY_SOURCE && r->comm->has_remote) {
        r->wild = 1;
        r->comm->nwild++;
        hmpi_bridge_pending++;
    }
    return MPI_SUCCESS;
}

int hmpi_p2p_cancel_req(hmpi_req_t *r)
{
    if (r->complete)
        return 0;
    if (r->below != MPI_REQUEST_NULL)
        return PMPI_Cancel(&r->below) == MPI_SUCCESS; /* completes through PMPI_Test */
    if (!r->m.posted)
        return 0; /* sends are not cancelled: they complete normally */
    hmpi_p2p_unpost(r);
    if (r->m.held)
        hmpi_bridge_pending--;
    r->m.held = 0;
    hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    PMPI_Status_set_cancelled(&r->status, 1);
    r->cancelled = 1;
    hmpi_req_finish(r);
    return 1;
}

int hmpi_p2p_iprobe(hmpi_comm_t *c, int source, int tag, int *flag, MPI_Status *status)
{
    hmpi_p2p_progress();
    hmpi_match_recv_t probe = {0};
    pattern_of(&probe, c, source, tag);
    arrival_t *a = take_unexpected(&probe, 0);
    if (a) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            hmpi_status_fill(status, a->key.src, a->key.tag, a->v.size);
        return MPI_SUCCESS;
    }
    *flag = 0;
    if (source == MPI_ANY_SOURCE && c->has_remote)
        return PMPI_Iprobe(source, tag, c->handle, flag, status);
    return MPI_SUCCESS;
}

hmpi_env_t *hmpi_p2p_take_message(hmpi_comm_t *c, int source, int tag)
{
    hmpi_p2p_progress();
    hmpi_match_recv_t probe = {0};
    pattern_of(&probe, c, source, tag);
    arrival_t *a = take_unexpected(&probe, 1);
    if (!a)
        return NULL;
    hmpi_env_t *e = a->v.env;
    arrival_put(a);
    return e;
}

void hmpi_p2p_message_info(const hmpi_env_t *e, int *source_p, int *tag_p, size_t *bytes_p)
{
    *source_p = e->src;
    *tag_p = e->tag;
    *bytes_p = e->size;
}

void hmpi_p2p_recv_message(hmpi_req_t *r, hmpi_env_t *e)
{
    /* The record went with take_message: the header is read and checked again. */
    arrival_t in;
    take_in(e, &in);
    complete_recv(r, &in);
}
