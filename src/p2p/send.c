/* send.c: the sender's side of a local message: envelopes and bounce copies from pools
 * of the sender's own, the in-flight list of envelopes not yet DONE, the choice of
 * protocol (hmpi_p2p_send_start) and the completion of sends once the receiver is done.
 * Only the sender writes these lists; the receiver writes only an envelope's state. */
#include "engine.h"
#include "../common/knobs.h"
#include "../heap/heap.h"
#include "../shm/cache.h"

#include <string.h>

/* ---- envelopes ------------------------------------------------------------------- */

static hmpi_env_t *env_get(void)
{
    hmpi_env_t *e = hmpi_p2p_engine.env_pool;
    if (e) {
        hmpi_p2p_engine.env_pool = hmpi_env_own(e)->snext;
        return e;
    }
    return hmpi_heap_shared_alloc(hmpi_p2p_engine.env_bytes);
}

static void env_put(hmpi_env_t *e)
{
    hmpi_env_own(e)->snext = hmpi_p2p_engine.env_pool;
    hmpi_p2p_engine.env_pool = e;
}

/* Bounce copies of small messages go back to a private list of blocks of one size
 * (BOUNCE_SMALL bytes, at most BOUNCE_KEEP of them) rather than through the allocator
 * for every message; a bigger copy is allocated and freed as it comes. */
enum { BOUNCE_SMALL = 2048, BOUNCE_KEEP = 64 };

void *hmpi_p2p_bounce_get(size_t bytes)
{
    void *p = hmpi_p2p_engine.bounce_pool;
    if (bytes > BOUNCE_SMALL || !p)
        return hmpi_heap_shared_alloc(bytes > BOUNCE_SMALL ? bytes : BOUNCE_SMALL);
    hmpi_p2p_engine.bounce_pool = *(void **)p;
    hmpi_p2p_engine.bounce_pooled--;
    return p;
}

/* p came from hmpi_p2p_bounce_get(bytes). */
void hmpi_p2p_bounce_put(void *p, size_t bytes)
{
    if (bytes > BOUNCE_SMALL || hmpi_p2p_engine.bounce_pooled >= BOUNCE_KEEP) {
        hmpi_heap_free(p);
        return;
    }
    *(void **)p = hmpi_p2p_engine.bounce_pool;
    hmpi_p2p_engine.bounce_pool = p;
    hmpi_p2p_engine.bounce_pooled++;
}

/* The in-flight list's invariants (HMPI_ASSERT_EXPENSIVE): it holds inflight_count
 * envelopes of this rank's slice, ends where inflight_tailp points, no more of them
 * watched than inflight_watched says there are, and each envelope's request is a send
 * of the table (or of a blocking call's stack) that points back at it while in flight. */
static int inflight_valid(void)
{
    unsigned n = 0, watched = 0;
    hmpi_env_t **tail = &hmpi_p2p_engine.inflight_head;
    for (hmpi_env_t *e = hmpi_p2p_engine.inflight_head; e; e = hmpi_env_own(e)->snext) {
        const hmpi_env_own_t *own = hmpi_env_own(e);
        if (++n > hmpi_p2p_engine.inflight_count || hmpi_heap_owner(e) != hmpi_node.rank)
            return 0;
        if (own->sreq && (own->sreq->kind != HMPI_REQ_SEND || own->sreq->complete))
            return 0;
        watched += own->watched;
        tail = &hmpi_env_own(e)->snext;
    }
    return n == hmpi_p2p_engine.inflight_count && tail == hmpi_p2p_engine.inflight_tailp &&
           watched == hmpi_p2p_engine.inflight_watched;
}

static void inflight_add(hmpi_env_t *e)
{
    HMPI_ASSERT_INTERNAL(hmpi_heap_owner(e) == hmpi_node.rank);
    hmpi_env_own(e)->snext = NULL;
    hmpi_p2p_engine.inflight_count++;
    *hmpi_p2p_engine.inflight_tailp = e;
    hmpi_p2p_engine.inflight_tailp = &hmpi_env_own(e)->snext;
}

/* Whether the program rewrites a send buffer between its sends of it: taking its lines
 * back (below) pays for a buffer refilled before its next send, as a halo exchange's
 * packed faces are, and costs one sent again unchanged, as a ping-pong's is (its
 * receiver's next read in place misses). A few words spread over the buffer are hashed
 * at each send and kept per address (a small table, direct-mapped: a buffer pushed out
 * counts as new); a buffer is taken back when its hash differs from its last send's.
 * A new one is not (nothing known yet), nor one rewritten with the same values where
 * the words were sampled (only speed is at stake either way). Engine lock held. */
enum { REWRITE_SLOTS = HMPI_P2P_REWRITE_SLOTS, REWRITE_WORDS = 8 };

int hmpi_p2p_rewritten(const unsigned char *p, size_t n)
{
    uint64_t h = n; /* n > the immediate size, so at least 8 */
    size_t step = (n - sizeof h) / (REWRITE_WORDS - 1);
    for (size_t k = 0; k < REWRITE_WORDS; k++) {
        uint64_t w;
        memcpy(&w, p + k * step, sizeof w);
        h = (h ^ w) * 0x100000001b3u;
    }
    uintptr_t a = (uintptr_t)p;
    size_t i = (a >> 6 ^ a >> 14) % REWRITE_SLOTS;
    int yes =
        hmpi_p2p_engine.rewrite_seen[i].addr == a && hmpi_p2p_engine.rewrite_seen[i].hash != h;
    hmpi_p2p_engine.rewrite_seen[i].addr = a;
    hmpi_p2p_engine.rewrite_seen[i].hash = h;
    return yes;
}

/* The receiver read the user's buffer in place (copy, synergistic), so its lines sit
 * shared in the receiver's cache too; the program's next store loop into it would take
 * them back one at a time (shm/cache.h). Taken back here, all at once, while the request
 * still holds the buffer, when the program rewrites it (rewritten, at the start): not
 * for a freed request, whose buffer the program may already be writing. Only a buffer
 * in the heap (a CMA one may be read-only); the range is the request's, never the
 * envelope's (a receiver may rewrite that). */
static void reclaim_buffer(const hmpi_env_t *e, const hmpi_req_t *r)
{
    const hmpi_env_own_t *own = hmpi_env_own((hmpi_env_t *)e);
    const char *p = (const char *)r->buf + r->t.lo;
    if (own->reclaim && own->user_data && !r->freed && hmpi_heap_is_shared_range(p, own->size)) {
        hmpi_cache_own(p, own->size);
        hmpi_stat_add(HMPI_STAT_reclaimed, 1);
    }
}

static void complete_send(hmpi_env_t *e)
{
    hmpi_req_t *r = hmpi_env_own(e)->sreq;
    if (r) {
        reclaim_buffer(e, r);
        hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
        r->env = NULL;
        hmpi_req_finish(r);
    }
    if (hmpi_env_own(e)->bounce)
        hmpi_p2p_bounce_put(hmpi_env_own(e)->bounce, hmpi_env_own(e)->size);
    if (hmpi_env_own(e)->watched)
        hmpi_p2p_engine.inflight_watched--;
    if (hmpi_env_own(e)->buffered)
        hmpi_bsend_release(hmpi_env_own(e)->size, hmpi_env_own(e)->buffered);
    env_put(e);
}

void hmpi_p2p_inflight_walk(void)
{
    hmpi_env_t **pp = &hmpi_p2p_engine.inflight_head;
    while (*pp) {
        hmpi_env_t *e = *pp;
        uint32_t s = atomic_load_explicit(&e->state, memory_order_acquire);
        if (s == HMPI_ENV_DONE) {
            *pp = hmpi_env_own(e)->snext;
            if (hmpi_p2p_engine.inflight_tailp == &hmpi_env_own(e)->snext)
                hmpi_p2p_engine.inflight_tailp = pp;
            HMPI_ASSERT_INTERNAL(hmpi_p2p_engine.inflight_count > 0);
            hmpi_p2p_engine.inflight_count--;
            complete_send(e);
            continue;
        }
        if (s == HMPI_ENV_MATCHED && e->proto == HMPI_PROTO_SYNERGISTIC)
            hmpi_stat_add(HMPI_STAT_blocks_by_sender, hmpi_syn_help(e));
        pp = &hmpi_env_own(e)->snext;
    }
    HMPI_ASSERT_INTERNAL(hmpi_p2p_engine.inflight_tailp == pp);
    HMPI_ASSERT_EXPENSIVE(inflight_valid());
}

/* Recycles finished envelopes from the head of the in-flight list only: O(1) per send
 * on average, where a full walk would read every envelope in flight. */
static void reclaim_oldest(void)
{
    while (hmpi_p2p_engine.inflight_head &&
           atomic_load_explicit(&hmpi_p2p_engine.inflight_head->state, memory_order_acquire) ==
               HMPI_ENV_DONE) {
        hmpi_env_t *e = hmpi_p2p_engine.inflight_head;
        hmpi_p2p_engine.inflight_head = hmpi_env_own(e)->snext;
        if (!hmpi_p2p_engine.inflight_head)
            hmpi_p2p_engine.inflight_tailp = &hmpi_p2p_engine.inflight_head;
        HMPI_ASSERT_INTERNAL(hmpi_p2p_engine.inflight_count > 0);
        hmpi_p2p_engine.inflight_count--;
        complete_send(e);
    }
}

/* A waiting sender whose receiver is late copies its heap messages out (up to
 * EAGER_MAX) and completes them, as an eager protocol would: programs that send
 * before they receive (unsafe, but common) keep working. */
void hmpi_p2p_unblock_sends(void)
{
    for (hmpi_env_t *e = hmpi_p2p_engine.inflight_head; e; e = hmpi_env_own(e)->snext) {
        /* The size as sent, not e->size: a receiver could have rewritten that one. */
        uint64_t size = hmpi_env_own(e)->size;
        if (!hmpi_env_own(e)->user_data || e->sync || !hmpi_env_own(e)->sreq ||
            size > (uint64_t)hmpi_knobs.EAGER_MAX || e->proto == HMPI_PROTO_CMA)
            continue;
        uint32_t s = HMPI_ENV_PENDING;
        if (!atomic_compare_exchange_strong_explicit(&e->state, &s, HMPI_ENV_BOUNCING,
                                                     memory_order_acquire, memory_order_relaxed))
            continue;
        void *copy = hmpi_p2p_bounce_get(size);
        if (copy) {
            memcpy(copy, e->data, size);
            e->data = copy;
            hmpi_env_own(e)->bounce = copy;
            hmpi_env_own(e)->user_data = 0;
            hmpi_req_t *r = hmpi_env_own(e)->sreq;
            hmpi_env_own(e)->sreq = NULL;
            hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
            r->env = NULL;
            hmpi_req_finish(r);
            hmpi_stat_add(HMPI_STAT_eager_copies, 1);
        }
        atomic_store_explicit(&e->state, copy ? HMPI_ENV_EAGER : HMPI_ENV_PENDING,
                              memory_order_release);
        hmpi_wait_wake_all(); /* a receiver waiting in claim() for the copy */
    }
}

/* ---- starting a send ----------------------------------------------------------------- */

static void count_proto(hmpi_proto_t p, size_t bytes)
{
    if (__builtin_expect(hmpi_stats_counting(), 0)) {
        int threads = hmpi_stats_threads; /* inside an MPI call: no locked instruction */
        hmpi_stat_bump_as(threads, hmpi_protos[p].msgs, 1);
        hmpi_stat_bump_as(threads, hmpi_protos[p].bytes, bytes);
    }
}

/* Packs r's message into dst (from MPI_BOTTOM too: hmpi_type_pack). */
int hmpi_p2p_pack_into(hmpi_req_t *r, void *dst, size_t bytes)
{
    int pos = 0;
    return hmpi_type_pack(r->buf, r->count, r->type, dst, (int)bytes, &pos);
}

/* A small eager message into lane slot e. */
static int lane_send(hmpi_req_t *r, hmpi_env_t *e, int dst, const char *p, size_t bytes)
{
    int err;
    if (bytes && r->t.contig)
        memcpy(e->u.payload, p, bytes);
    else if (bytes && (err = hmpi_p2p_pack_into(r, e->u.payload, bytes)) != MPI_SUCCESS)
        return err; /* the slot stays free */
    hmpi_p2p_lane_publish(e, r->comm, r->tag, bytes, dst);
    hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    r->complete = 1;
    return MPI_SUCCESS;
}

/* Envelope e, filled, into the in-flight list and onto local rank dst's queue, numbered
 * among my messages to dst. */
static void push(hmpi_env_t *e, int dst)
{
    if (hmpi_p2p_engine.inflight_count >= 64)
        reclaim_oldest(); /* a rank that only sends still recycles its envelopes */
    inflight_add(e);
    e->pseq = hmpi_p2p_engine.to[dst].pseq++;
    hmpi_queue_push(&hmpi_ctrl()->rank[dst].incoming, &e->link);
    hmpi_wait_wake(dst);
}

int hmpi_p2p_send_notice(int dst, int proto, uint32_t ctx, int src, int tag, const void *data,
                         uint64_t size)
{
    hmpi_env_t *e = env_get();
    if (!e)
        return -1;
    e->ctx = ctx;
    e->src = src;
    e->tag = tag;
    e->proto = (uint8_t)proto;
    e->sync = 0;
    e->src_local = (uint16_t)hmpi_node.rank;
    e->size = size;
    e->data = data;
    hmpi_env_own(e)->sreq = NULL;
    hmpi_env_own(e)->bounce = NULL;
    hmpi_env_own(e)->user_data = 0;
    hmpi_env_own(e)->buffered = 0;
    hmpi_env_own(e)->reclaim = 0;
    hmpi_env_own(e)->watched = 0;
    hmpi_env_own(e)->size = 0;
    atomic_store_explicit(&e->state, HMPI_ENV_PENDING, memory_order_relaxed);
    push(e, dst);
    return 0;
}

/* The protocol of a message of bytes at p that goes by the queue. Marks e's user_data
 * when the receiver is to read the user's buffer in place (it lies in the heap, or CMA
 * reads it); the protocols of other messages copy it out, to a bounce or the envelope. */
static hmpi_proto_t choose(const hmpi_req_t *r, hmpi_env_t *e, const char *p, size_t bytes)
{
    if (bytes <= (size_t)hmpi_knobs.IMMEDIATE_MAX)
        return HMPI_PROTO_IMMEDIATE;
    hmpi_proto_t heap =
        bytes >= (size_t)hmpi_knobs.SYNERGISTIC_MIN ? HMPI_PROTO_SYNERGISTIC : HMPI_PROTO_COPY;
    if (!r->t.contig || hmpi_env_own(e)->buffered)
        return heap; /* packed, or the attached buffer holds it: a bounce */
    if (hmpi_heap_is_shared_range(p, bytes)) {
        hmpi_env_own(e)->user_data = 1;
        return heap;
    }
    if (hmpi_p2p_engine.cma_ok && bytes >= (size_t)hmpi_knobs.CMA_MIN) {
        hmpi_env_own(e)->user_data = 1;
        return HMPI_PROTO_CMA;
    }
    return hmpi_knobs.PIPE_CHUNK ? HMPI_PROTO_PIPE : heap;
}

int hmpi_p2p_send_start(hmpi_req_t *r, int dst_local)
{
    size_t bytes = r->t.size;
    const char *p = (const char *)r->buf + r->t.lo;
    int lane = hmpi_p2p_engine.lane_k && bytes <= (size_t)hmpi_knobs.IMMEDIATE_MAX &&
               r->mode != HMPI_MODE_SYNC && r->mode != HMPI_MODE_BUFFERED;
    if (lane) {
        hmpi_env_t *slot = hmpi_p2p_lane_claim(dst_local, 1);
        if (slot)
            return lane_send(r, slot, dst_local, p, bytes);
    }
    hmpi_env_t *e = env_get();
    int err;
    if (!e)
        return MPI_ERR_NO_MEM;
    e->ctx = r->comm->ctx;
    e->src = r->comm->rank;
    e->tag = r->tag;
    e->sync = r->mode == HMPI_MODE_SYNC;
    e->src_local = (uint16_t)hmpi_node.rank;
    e->size = bytes;
    hmpi_env_own(e)->size = bytes;
    hmpi_env_own(e)->no_help = 0;
    hmpi_env_own(e)->bounce = NULL;
    hmpi_env_own(e)->user_data = 0;
    hmpi_env_own(e)->reclaim = 0;
    hmpi_env_own(e)->buffered = r->mode == HMPI_MODE_BUFFERED ? hmpi_bsend_generation() : 0;
    atomic_store_explicit(&e->state, HMPI_ENV_PENDING, memory_order_relaxed);
    hmpi_proto_t proto = choose(r, e, p, bytes);
    e->proto = (uint8_t)proto;
    if ((err = hmpi_protos[proto].prepare(e, r, p, bytes)) != MPI_SUCCESS) {
        env_put(e);
        return err;
    }
    count_proto(proto, bytes);
    int eager = !hmpi_env_own(e)->user_data; /* the data is copied out: complete now */
    if (eager && !e->sync) {
        hmpi_env_own(e)->sreq = NULL;
        hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
        r->complete = 1;
    } else {
        hmpi_env_own(e)->sreq = r;
        r->env = e;
    }
    hmpi_env_own(e)->watched = /* DONE frees something besides the envelope */
        hmpi_env_own(e)->sreq || hmpi_env_own(e)->bounce || hmpi_env_own(e)->buffered;
    hmpi_p2p_engine.inflight_watched += hmpi_env_own(e)->watched;
    push(e, dst_local);
    if (hmpi_protos[proto].pushed)
        hmpi_protos[proto].pushed(e, p, bytes);
    if (lane && !hmpi_p2p_engine.to[dst_local].tried)
        hmpi_p2p_lane_open(dst_local);
    return MPI_SUCCESS;
}
