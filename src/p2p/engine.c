/* engine.c: matching and progress for peers on this node (the Hybrid MPI paper, §4.1).
 * Senders push envelopes on the receiver's shared incoming queue; the receiver moves
 * them, oldest first, onto its private lists: matched against posted receives, else
 * kept as unexpected. Both lists are in arrival/post order, so the first match is the
 * one MPI's non-overtaking rule asks for (the rules themselves: match.h). Everything
 * here is private to the process except the envelopes and queues, and runs under the
 * engine lock. An envelope is another process's memory: its header is read once at
 * arrival into a private record, checked, and a wrong one fails the receive it
 * matches (MPI_ERR_INTERN, and a line naming the peer and the field) without a copy. */
#include "p2p.h"
#include "../common/assert.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../common/stats.h"
#include "../heap/heap.h"
#include "../node/node.h"
#include "../shm/cache.h"
#include "../shm/wait.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int hmpi_req_table_init(void);

static hmpi_rank_ctrl_t *me;              /* my block in the control area */
hmpi_match_t hmpi_p2p_match;              /* posted receives, unexpected messages */
static hmpi_env_t *inflight_head;        /* my envelopes not yet DONE (via snext) */
static hmpi_env_t **inflight_tailp = &inflight_head;
static hmpi_env_t *env_pool;             /* recycled envelopes (via snext) */
static unsigned inflight_count;           /* envelopes in the in-flight list */
static unsigned inflight_watched;         /* of those, the ones progress polls */
static size_t env_bytes;                 /* envelope, payload, then hmpi_env_own_t */
size_t hmpi_env_own_offset;
static int cma_ok;
static int nlocal;                        /* local ranks: lanes and sequence numbers */

/* Lanes. Each rank owns one lane per local receiver (itself included): lane_k envelopes
 * in its slice, receiver-major, published in its control block. A small eager message
 * goes into the next slot of the lane when that slot is DONE, and is published by the
 * slot's use count (lseq); the receiver polls the next slot of each lane. Otherwise the
 * message goes by the receiver's incoming queue. pseq numbers one sender's messages to
 * one receiver across both ways; the receiver takes them in that order. */
static unsigned lane_k;                   /* slots per lane, a power of two; 0: no lanes */
static char *lane_out;                    /* my lanes: receiver r's from r * lane_bytes */
static size_t lane_bytes;                 /* one lane */
static char **lane_in;                    /* [sender]: the sender's lane to me */
static uint64_t *lane_head;               /* [receiver]: slots of my lane used */
static uint64_t *lane_free;               /* [receiver]: slots known DONE up to here */
static uint32_t *lane_skip;               /* [receiver]: sends by the queue before a look */
static uint64_t *lane_next;               /* [sender]: slots of its lane taken in */
static uint32_t *pseq_to, *pseq_from;     /* [peer]: messages numbered, taken in */
static int draining;                      /* inside take_queue: no nested take */
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;
int hmpi_p2p_threaded;
size_t hmpi_p2p_immediate_room;

void hmpi_p2p_lock_slow(void) { pthread_mutex_lock(&engine_lock); }
void hmpi_p2p_unlock_slow(void) { pthread_mutex_unlock(&engine_lock); }

void hmpi_status_fill(MPI_Status *st, int source, int tag, size_t bytes)
{
    st->MPI_SOURCE = source;
    st->MPI_TAG = tag;
    /* The hidden count fields, written directly where their layout is known (the
     * MPI below reads them back in MPI_Get_count); otherwise through the MPI below. */
#if defined(MPICH_VERSION)
    st->count_lo = (int)bytes;
    st->count_hi_and_cancelled = (int)(((uint64_t)bytes >> 32) << 1);
#elif defined(OPEN_MPI)
    st->_ucount = bytes;
    st->_cancelled = 0;
#else
    PMPI_Status_set_elements_x(st, MPI_BYTE, (MPI_Count)bytes);
    PMPI_Status_set_cancelled(st, 0);
#endif
}

/* ---- envelopes ------------------------------------------------------------------- */

static hmpi_env_t *env_get(void)
{
    hmpi_env_t *e = env_pool;
    if (e) {
        env_pool = hmpi_env_own(e)->snext;
        return e;
    }
    return hmpi_heap_shared_alloc(env_bytes);
}

static void env_put(hmpi_env_t *e)
{
    hmpi_env_own(e)->snext = env_pool;
    env_pool = e;
}

/* Bounce copies of small messages go back to a private list of blocks of one size
 * (BOUNCE_SMALL bytes, at most BOUNCE_KEEP of them) rather than through the allocator
 * for every message; a bigger copy is allocated and freed as it comes. */
enum { BOUNCE_SMALL = 2048, BOUNCE_KEEP = 64 };
static void *bounce_pool; /* free blocks, linked through their first word */
static int bounce_pooled;

static void *bounce_get(size_t bytes)
{
    void *p = bounce_pool;
    if (bytes > BOUNCE_SMALL || !p)
        return hmpi_heap_shared_alloc(bytes > BOUNCE_SMALL ? bytes : BOUNCE_SMALL);
    bounce_pool = *(void **)p;
    bounce_pooled--;
    return p;
}

/* p came from bounce_get(bytes). */
static void bounce_put(void *p, size_t bytes)
{
    if (bytes > BOUNCE_SMALL || bounce_pooled >= BOUNCE_KEEP) {
        hmpi_heap_free(p);
        return;
    }
    *(void **)p = bounce_pool;
    bounce_pool = p;
    bounce_pooled++;
}

/* Envelopes in the in-flight list, counted by walking it (HMPI_ASSERT_EXPENSIVE). */
static unsigned inflight_length(void)
{
    unsigned n = 0;
    for (hmpi_env_t *e = inflight_head; e; e = hmpi_env_own(e)->snext)
        n++;
    return n;
}

static void inflight_add(hmpi_env_t *e)
{
    hmpi_env_own(e)->snext = NULL;
    inflight_count++;
    *inflight_tailp = e;
    inflight_tailp = &hmpi_env_own(e)->snext;
}

/* ---- completion ------------------------------------------------------------------ */

void hmpi_p2p_finish(hmpi_req_t *r)
{
    r->complete = 1; /* a persistent request stays active until Wait/Test returns it */
    if (r->wild) {
        r->wild = 0;
        r->comm->nwild--;
        hmpi_bridge_pending--;
        hmpi_bridge_wild_done(r->comm);
    }
    if (r->freed && !r->persistent)
        hmpi_req_release(r);
}

/* Whether the program rewrites a send buffer between its sends of it: taking its lines
 * back (below) pays for a buffer refilled before its next send, as a halo exchange's
 * packed faces are, and costs one sent again unchanged, as a ping-pong's is (its
 * receiver's next read in place misses). A few words spread over the buffer are hashed
 * at each send and kept per address (a small table, direct-mapped: a buffer pushed out
 * counts as new); a buffer is taken back when its hash differs from its last send's.
 * A new one is not (nothing known yet), nor one rewritten with the same values where
 * the words were sampled (only speed is at stake either way). Engine lock held. */
enum { REWRITE_SLOTS = 64, REWRITE_WORDS = 8 };
static struct {
    uintptr_t addr;
    uint64_t hash;
} rewrite_seen[REWRITE_SLOTS];

static int rewritten(const unsigned char *p, size_t n)
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
    int yes = rewrite_seen[i].addr == a && rewrite_seen[i].hash != h;
    rewrite_seen[i].addr = a;
    rewrite_seen[i].hash = h;
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
    const char *p = (const char *)r->buf + r->t.lb;
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
        hmpi_p2p_finish(r);
    }
    if (hmpi_env_own(e)->bounce)
        bounce_put(hmpi_env_own(e)->bounce, hmpi_env_own(e)->size);
    if (hmpi_env_own(e)->watched)
        inflight_watched--;
    if (hmpi_env_own(e)->buffered)
        hmpi_bsend_release(hmpi_env_own(e)->size);
    env_put(e);
}

/* ---- arrival: what the receiver reads of an envelope, once ---------------------- */

/* A message as this rank took it in. Unexpected ones wait in records of a private
 * pool, so matching, probes and statuses never read the envelope again. */
typedef struct arrival_s {
    hmpi_match_msg_t key;  /* first: the unexpected list links the records by it */
    hmpi_msg_view_t v;     /* env, size, src_local; data and pid once checked */
    uint8_t proto;
    const char *bad;       /* a header field found wrong at arrival, or NULL */
} arrival_t;

static arrival_t *arrival_pool; /* free records, via key.next */

static arrival_t *arrival_get(void)
{
    arrival_t *a = arrival_pool;
    if (a) {
        arrival_pool = (arrival_t *)(void *)a->key.next;
        return a;
    }
    a = malloc(sizeof *a);
    if (!a) {
        hmpi_log_error("out of memory for the record of an unexpected message");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    return a;
}

static void arrival_put(arrival_t *a)
{
    a->key.next = (hmpi_match_msg_t *)(void *)arrival_pool;
    arrival_pool = a;
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

/* memcpy of a short message's payload, inline from 8 to 16 bytes (two overlapping
 * words): the common sizes of the short ways. */
static inline void copy_short(void *d, const void *s, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, (const char *)s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy((char *)d + n - 8, &b, 8);
    } else if (n) { /* an empty message may come from a NULL buffer */
        memcpy(d, s, n);
    }
}

/* Takes the envelope from the sender (see the state protocol in p2p.h); -1 when its
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
    size_t cap = r->t.size * (size_t)r->count;
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
            copy_short((char *)r->buf + r->t.lb, a->v.data, len);
            got = len;
        } else {
            got = hmpi_protos[a->proto].deliver(&a->v, r, &r->t, len);
        }
        err = a->v.size > cap ? MPI_ERR_TRUNCATE : got != len ? MPI_ERR_OTHER : MPI_SUCCESS;
    }
    hmpi_status_set(&r->status, a->key.src, a->key.tag, err, got);
    /* Last touch of the envelope: from here on it is the sender's again. */
    atomic_store_explicit(&a->v.env->state, HMPI_ENV_DONE, memory_order_release);
    hmpi_wait_wake(a->v.src_local); /* a sender waiting for DONE may sleep */
    hmpi_p2p_finish(r);
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

void hmpi_p2p_unpost(hmpi_req_t *r)
{
    hmpi_match_unpost(&hmpi_p2p_match, &r->m);
}

void hmpi_p2p_post(hmpi_req_t *r)
{
    pattern_of(&r->m, r->comm, r->peer, r->tag);
    hmpi_match_post(&hmpi_p2p_match, &r->m);
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
}

/* The oldest unexpected message that pattern p matches, removed when remove. */
static arrival_t *take_unexpected(const hmpi_match_recv_t *p, int remove)
{
    return (arrival_t *)(void *)hmpi_match_find(&hmpi_p2p_match, p, remove);
}

static inline hmpi_env_t *lane_slot(char *lane, uint64_t n)
{
    HMPI_ASSERT_INTERNAL(lane_k && (lane_k & (lane_k - 1)) == 0);
    return (hmpi_env_t *)(void *)(lane + (size_t)(n & (lane_k - 1)) * env_bytes);
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
    char *lane = lane_in[src];
    for (;;) {
        hmpi_env_t *e = lane_slot(lane, lane_next[src]);
        if (atomic_load_explicit(&e->lseq, memory_order_acquire) != lane_next[src] + 1)
            return;
        uint32_t p = HMPI_READ_ONCE(e->pseq);
        if (bounded && (int32_t)(p - upto) >= 0)
            return;
        if (p != pseq_from[src] && !draining) {
            uint32_t before = pseq_from[src];
            take_queue();
            if (pseq_from[src] != before)
                continue; /* the queue held messages of src: look at the lane again */
        }
        lane_next[src]++;
        pseq_from[src] = p + 1;
        arrive(e);
    }
}

static void take_queue(void)
{
    /* Links are followed only inside the heap, to envelopes that lie whole there,
     * payload room included (env_bytes: the same in every rank, from the same knob). */
    int broken = HMPI_QUEUE_WHOLE;
    hmpi_qnode_t *n = hmpi_queue_take_within(&me->incoming, hmpi_region.slices,
                                             hmpi_region.slices_len, env_bytes, &broken);
    if (broken && n) /* the oldest node reached holds the bad link */
        hmpi_log_error("incoming queue: the link in envelope %p from local rank %d %s; "
                       "messages pushed before it are lost", (void *)n, hmpi_heap_owner(n),
                       broken == HMPI_QUEUE_LOOP ? "leads back into the queue (a loop)"
                                                 : "points outside the shared heap");
    else if (broken)
        hmpi_log_error("incoming queue: the head points outside the shared heap; the "
                       "messages in the queue are lost");
    draining = 1;
    while (n) {
        hmpi_qnode_t *next = hmpi_queue_next(n);
        hmpi_env_t *e = (hmpi_env_t *)n;
        if (lane_k) {
            int src = hmpi_heap_owner(e); /* a local rank: the queue took it in the heap */
            uint32_t p = HMPI_READ_ONCE(e->pseq);
            if (p != pseq_from[src])
                take_lane(src, p, 1); /* sent before it, by the lane */
            pseq_from[src] = p + 1;
        }
        arrive(e);
        n = next;
    }
    draining = 0;
}

/* Everything that arrived: the queue, then each lane. */
static void take_arrivals(void)
{
    take_queue();
    for (int src = 0; src < (lane_k ? nlocal : 0); src++)
        take_lane(src, 0, 0);
}

static void walk_inflight(void)
{
    hmpi_env_t **pp = &inflight_head;
    while (*pp) {
        hmpi_env_t *e = *pp;
        uint32_t s = atomic_load_explicit(&e->state, memory_order_acquire);
        if (s == HMPI_ENV_DONE) {
            *pp = hmpi_env_own(e)->snext;
            if (inflight_tailp == &hmpi_env_own(e)->snext)
                inflight_tailp = pp;
            HMPI_ASSERT_INTERNAL(inflight_count > 0);
            inflight_count--;
            complete_send(e);
            continue;
        }
        if (s == HMPI_ENV_MATCHED && e->proto == HMPI_PROTO_SYNERGISTIC)
            hmpi_stat_add(HMPI_STAT_blocks_by_sender, hmpi_syn_help(e));
        pp = &hmpi_env_own(e)->snext;
    }
    HMPI_ASSERT_INTERNAL(inflight_tailp == pp);
    HMPI_ASSERT_EXPENSIVE(inflight_length() == inflight_count);
}

/* The MPI below progresses only inside its own calls. A rank spinning in HMPI may be
 * what a remote peer waits for (a rendezvous, a nonblocking collective, a passive-target
 * lock), so every so often progress asks the MPI below to move too. MPI_Iprobe is not
 * enough for that in MPICH (its one-sided operations stay put); testing a pending
 * receive runs the whole progress engine in both MPIs. So one receive that never
 * matches stays posted on a private copy of MPI_COMM_SELF while HMPI runs. */
static MPI_Comm poke_comm = MPI_COMM_NULL;
static MPI_Request poke_req = MPI_REQUEST_NULL;

static void poke_below_now(void)
{
    if (poke_req != MPI_REQUEST_NULL) {
        int flag;
        PMPI_Test(&poke_req, &flag, MPI_STATUS_IGNORE);
    }
}

static void poke_below(void)
{
    static unsigned calls;
    /* and at once after a wait napped (shm/wait.h): a sleeping rank serves remote peers */
    if ((++calls & 63) == 0 || atomic_load_explicit(&hmpi_wait_napped, memory_order_relaxed)) {
        atomic_store_explicit(&hmpi_wait_napped, 0, memory_order_relaxed);
        poke_below_now();
    }
}

/* What every wait of HMPI moves (shm/wait.h, hmpi_wait_progress). */
static void wait_progress(int below)
{
    hmpi_p2p_lock();
    hmpi_p2p_progress();
    if (below)
        poke_below_now();
    hmpi_p2p_unlock();
}

int hmpi_p2p_busy(void)
{
    return hmpi_p2p_match.posted_head != NULL;
}

/* Recycles finished envelopes from the head of the in-flight list only: O(1) per send
 * on average, where a full walk would read every envelope in flight. */
static void reclaim_oldest(void)
{
    while (inflight_head &&
           atomic_load_explicit(&inflight_head->state, memory_order_acquire) == HMPI_ENV_DONE) {
        hmpi_env_t *e = inflight_head;
        inflight_head = hmpi_env_own(e)->snext;
        if (!inflight_head)
            inflight_tailp = &inflight_head;
        HMPI_ASSERT_INTERNAL(inflight_count > 0);
        inflight_count--;
        complete_send(e);
    }
}

void hmpi_p2p_progress(void)
{
    if (!me)
        return; /* HMPI is off: nothing of ours can be pending */
    poke_below();
    take_arrivals();
    /* Only envelopes someone waits on are polled: reading the state of an immediate
     * message the receiver is about to mark DONE would steal its cache line. Those are
     * recycled from the head of the list as the sender needs envelopes. */
    if (inflight_watched)
        walk_inflight();
    if (hmpi_bridge_pending)
        hmpi_bridge_progress();
}

void hmpi_p2p_progress_locked(void)
{
    hmpi_p2p_lock();
    hmpi_p2p_progress();
    hmpi_p2p_unlock();
}

/* A waiting sender whose receiver is late copies its heap messages out (up to
 * EAGER_MAX) and completes them, as an eager protocol would: programs that send
 * before they receive (unsafe, but common) keep working. */
static void unblock_sends(void)
{
    for (hmpi_env_t *e = inflight_head; e; e = hmpi_env_own(e)->snext) {
        /* The size as sent, not e->size: a receiver could have rewritten that one. */
        uint64_t size = hmpi_env_own(e)->size;
        if (!hmpi_env_own(e)->user_data || e->sync || !hmpi_env_own(e)->sreq ||
            size > (uint64_t)hmpi_knobs.EAGER_MAX || e->proto == HMPI_PROTO_CMA)
            continue;
        uint32_t s = HMPI_ENV_PENDING;
        if (!atomic_compare_exchange_strong_explicit(&e->state, &s, HMPI_ENV_BOUNCING,
                                                     memory_order_acquire, memory_order_relaxed))
            continue;
        void *copy = bounce_get(size);
        if (copy) {
            memcpy(copy, e->data, size);
            e->data = copy;
            hmpi_env_own(e)->bounce = copy;
            hmpi_env_own(e)->user_data = 0;
            hmpi_req_t *r = hmpi_env_own(e)->sreq;
            hmpi_env_own(e)->sreq = NULL;
            hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
            r->env = NULL;
            hmpi_p2p_finish(r);
            hmpi_stat_add(HMPI_STAT_eager_copies, 1);
        }
        atomic_store_explicit(&e->state, copy ? HMPI_ENV_EAGER : HMPI_ENV_PENDING,
                              memory_order_release);
        hmpi_wait_wake_all(); /* a receiver waiting in claim() for the copy */
    }
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int hmpi_p2p_check(hmpi_req_t *r)
{
    if (!r->complete) {
        if (r->kind == HMPI_REQ_POLL) {
            if (r->poll(r))
                hmpi_p2p_finish(r);
        } else if (r->below != MPI_REQUEST_NULL) {
            int flag = 0;
            PMPI_Test(&r->below, &flag, &r->status);
            if (flag)
                hmpi_p2p_finish(r);
        }
    }
    return r->complete;
}

int hmpi_p2p_test(hmpi_req_t *r)
{
    if (!hmpi_p2p_check(r))
        hmpi_p2p_progress();
    return r->complete;
}

void hmpi_p2p_wait(hmpi_req_t *r)
{
    hmpi_backoff_t b = {0};
    uint64_t since = 0;
    while (!hmpi_p2p_test(r)) {
        if (hmpi_backoff_yielding(&b) && inflight_head) {
            uint64_t t = now_us();
            if (!since)
                since = t;
            else if (t - since >= (uint64_t)hmpi_knobs.EAGER_DELAY_US)
                unblock_sends(), since = t;
        }
        hmpi_p2p_unlock();
        hmpi_backoff(&b);
        hmpi_p2p_lock();
    }
    hmpi_wait_end(&b, hmpi_p2p_wait_family(r->comm, r->kind == HMPI_REQ_SEND));
}

/* Called by multi-request waits (mpi/request.c) between passes. */
void hmpi_p2p_waiting(hmpi_backoff_t *b, uint64_t *since)
{
    hmpi_p2p_progress();
    if (hmpi_backoff_yielding(b) && inflight_head) {
        uint64_t t = now_us();
        if (!*since)
            *since = t;
        else if (t - *since >= (uint64_t)hmpi_knobs.EAGER_DELAY_US)
            unblock_sends(), *since = t;
    }
    hmpi_p2p_unlock();
    hmpi_backoff(b);
    hmpi_p2p_lock();
}

/* ---- operations ------------------------------------------------------------------- */

static void count_proto(hmpi_proto_t p, size_t bytes)
{
    static const hmpi_stat_t msgs[HMPI_PROTO_COUNT] = {
        HMPI_STAT_msgs_immediate, HMPI_STAT_msgs_copy, HMPI_STAT_msgs_synergistic,
        HMPI_STAT_msgs_cma, HMPI_STAT_msgs_pipe};
    static const hmpi_stat_t byts[HMPI_PROTO_COUNT] = {
        HMPI_STAT_bytes_immediate, HMPI_STAT_bytes_copy, HMPI_STAT_bytes_synergistic,
        HMPI_STAT_bytes_cma, HMPI_STAT_bytes_pipe};
    if (__builtin_expect(hmpi_stats_counting(), 0)) {
        int threads = hmpi_stats_threads; /* inside an MPI call: no locked instruction */
        hmpi_stat_bump_as(threads, msgs[p], 1);
        hmpi_stat_bump_as(threads, byts[p], bytes);
    }
}

/* Packs r's message into dst (from MPI_BOTTOM too: hmpi_type_pack). */
static int pack_into(hmpi_req_t *r, void *dst, size_t bytes)
{
    int pos = 0;
    return hmpi_type_pack(r->buf, r->count, r->type, dst, (int)bytes, &pos);
}

/* Sends that go by the queue after a look found the lane full, before the next look:
 * a look reads lines the receiver is writing. */
enum { LANE_SKIP = 16 };

/* lane_claim when no slot is known free: looks ahead. A slot seen DONE stays DONE
 * until this rank reuses it, so one look (independent loads) serves many sends. */
static hmpi_env_t *lane_look(int dst)
{
    char *lane = lane_out + (size_t)dst * lane_bytes;
    uint64_t h = lane_head[dst];
    if (lane_skip[dst]) { /* the last look found the lane full: no read per send */
        lane_skip[dst]--;
        return NULL;
    }
    uint64_t n = h;
    while (n - h < lane_k &&
           atomic_load_explicit(&lane_slot(lane, n)->state, memory_order_acquire) == HMPI_ENV_DONE)
        n++;
    lane_free[dst] = n;
    if (n == h) {
        lane_skip[dst] = LANE_SKIP;
        return NULL;
    }
    return lane_slot(lane, h);
}

/* The next slot of my lane to dst when it is free, else NULL. */
static inline hmpi_env_t *lane_claim(int dst)
{
    uint64_t h = lane_head[dst];
    /* Slots [h, lane_free) were seen DONE: never more than the lane holds. */
    HMPI_ASSERT_INTERNAL(lane_free[dst] - h <= lane_k);
    if (__builtin_expect(h == lane_free[dst], 0))
        return lane_look(dst);
    return lane_slot(lane_out + (size_t)dst * lane_bytes, h);
}

/* Publishes lane slot e, its payload written: no atomic read-modify-write, and the
 * receiver reads one line for a short message. */
static void lane_publish(hmpi_env_t *e, const hmpi_comm_t *c, int tag, size_t bytes, int dst)
{
    e->ctx = c->ctx;
    e->src = c->rank;
    e->tag = tag;
    e->proto = HMPI_PROTO_IMMEDIATE;
    e->sync = 0;
    e->src_local = (uint16_t)hmpi_node.rank;
    e->size = bytes;
    e->data = e->u.payload;
    /* e is the slot lane_claim gave out: the next of the lane, known free. */
    HMPI_ASSERT_INTERNAL(e == lane_slot(lane_out + (size_t)dst * lane_bytes, lane_head[dst]) &&
                         lane_head[dst] != lane_free[dst]);
    e->pseq = pseq_to[dst]++;
    atomic_store_explicit(&e->state, HMPI_ENV_PENDING, memory_order_relaxed);
    atomic_store_explicit(&e->lseq, ++lane_head[dst], memory_order_release);
    hmpi_wait_wake(dst);
    /* The 8-byte ping-pong's one place of counting: one test when off; when on, two
     * plain adds, not locked ones, each of which would wait for the store buffer on
     * every send of the message rate (docs/observability.md, what counting costs).
     * msgs_immediate counts the queue's only: hmpi_stat_get adds msgs_lane. */
    if (__builtin_expect(hmpi_stats_counting(), 0)) {
        int threads = hmpi_stats_threads;
        hmpi_stat_bump_as(threads, HMPI_STAT_bytes_immediate, bytes);
        hmpi_stat_bump_as(threads, HMPI_STAT_msgs_lane, 1);
    }
}

/* A small eager message into lane slot e. */
static int lane_send(hmpi_req_t *r, hmpi_env_t *e, int dst, const char *p, size_t bytes)
{
    int err;
    if (bytes && r->t.contig)
        memcpy(e->u.payload, p, bytes);
    else if (bytes && (err = pack_into(r, e->u.payload, bytes)) != MPI_SUCCESS)
        return err; /* the slot stays free */
    lane_publish(e, r->comm, r->tag, bytes, dst);
    hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    r->complete = 1;
    return MPI_SUCCESS;
}

/* A pipelined bounce: the envelope is already queued, so a receiver that matched it
 * copies each chunk out while this side copies the next in (the two copies of a
 * bounce overlap, as in an MPI's shared-memory cells). The send completes here, eager;
 * the receiver marks DONE only once everything has landed, so the bounce is never
 * freed while this loop writes it. */
static void pipe_fill(hmpi_env_t *e, char *copy, const char *p, size_t bytes)
{
    size_t chunk = (size_t)hmpi_knobs.PIPE_CHUNK;
    for (size_t off = 0; off < bytes; off += chunk) {
        size_t n = bytes - off < chunk ? bytes - off : chunk;
        memcpy(copy + off, p + off, n);
        atomic_store_explicit(&e->u.filled, off + n, memory_order_release);
        hmpi_wait_wake_all(); /* the receiver, copying out as chunks land */
    }
}

int hmpi_p2p_send_start(hmpi_req_t *r, int dst_local)
{
    size_t bytes = r->t.size * (size_t)r->count;
    const char *p = (const char *)r->buf + r->t.lb;
    if (lane_k && bytes <= (size_t)hmpi_knobs.IMMEDIATE_MAX && r->mode != HMPI_MODE_SYNC &&
        r->mode != HMPI_MODE_BUFFERED) {
        hmpi_env_t *slot = lane_claim(dst_local);
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
    hmpi_env_own(e)->buffered = r->mode == HMPI_MODE_BUFFERED;
    atomic_store_explicit(&e->state, HMPI_ENV_PENDING, memory_order_relaxed);
    int eager = 1;
    if (bytes <= (size_t)hmpi_knobs.IMMEDIATE_MAX) {
        e->proto = HMPI_PROTO_IMMEDIATE;
        e->data = e->u.payload;
        if (bytes && r->t.contig) /* an empty message may come from a NULL buffer */
            memcpy(e->u.payload, p, bytes);
        else if (bytes && (err = pack_into(r, e->u.payload, bytes)) != MPI_SUCCESS) {
            env_put(e);
            return err;
        }
    } else {
        e->proto = bytes >= (size_t)hmpi_knobs.SYNERGISTIC_MIN ? HMPI_PROTO_SYNERGISTIC
                                                               : HMPI_PROTO_COPY;
        if (r->t.contig && !hmpi_env_own(e)->buffered && hmpi_heap_is_shared_range(p, bytes)) {
            e->data = p;
            hmpi_env_own(e)->user_data = 1;
            hmpi_env_own(e)->reclaim =
                bytes <= (size_t)hmpi_knobs.RECLAIM_MAX && rewritten((const unsigned char *)p, bytes);
            eager = 0;
        } else if (r->t.contig && !hmpi_env_own(e)->buffered && cma_ok && bytes >= (size_t)hmpi_knobs.CMA_MIN) {
            e->proto = HMPI_PROTO_CMA;
            e->data = p;
            hmpi_env_own(e)->user_data = 1;
            eager = 0;
        } else {
            void *copy = bounce_get(bytes);
            if (!copy) {
                env_put(e);
                return MPI_ERR_NO_MEM;
            }
            if (r->t.contig) {
                if (hmpi_knobs.PIPE_CHUNK && !hmpi_env_own(e)->buffered) {
                    e->proto = HMPI_PROTO_PIPE; /* filled after the push, below */
                    atomic_store_explicit(&e->u.filled, 0, memory_order_relaxed);
                } else {
                    memcpy(copy, p, bytes);
                }
                hmpi_stat_add(HMPI_STAT_bounced, 1);
            } else {
                if ((err = pack_into(r, copy, bytes)) != MPI_SUCCESS) {
                    bounce_put(copy, bytes);
                    env_put(e);
                    return err;
                }
                hmpi_stat_add(HMPI_STAT_packed, 1);
            }
            e->data = copy;
            hmpi_env_own(e)->bounce = copy;
        }
    }
    if (e->proto == HMPI_PROTO_SYNERGISTIC) {
        atomic_store_explicit(&e->u.syn.next_block, 0, memory_order_relaxed);
        atomic_store_explicit(&e->u.syn.blocks_done, 0, memory_order_relaxed);
    }
    count_proto((hmpi_proto_t)e->proto, bytes);
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
    inflight_watched += hmpi_env_own(e)->watched;
    if (inflight_count >= 64)
        reclaim_oldest(); /* a rank that only sends still recycles its envelopes */
    inflight_add(e);
    e->pseq = pseq_to[dst_local]++;
    hmpi_queue_push(&hmpi_ctrl()->rank[dst_local].incoming, &e->link);
    hmpi_wait_wake(dst_local);
    if (e->proto == HMPI_PROTO_PIPE)
        pipe_fill(e, hmpi_env_own(e)->bounce, p, bytes);
    return MPI_SUCCESS;
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
    hmpi_match_post(&hmpi_p2p_match, &r->m); /* its pattern is set */
    if (r->peer == MPI_ANY_SOURCE && r->comm->has_remote) {
        r->wild = 1;
        r->comm->nwild++;
        hmpi_bridge_pending++;
    }
    return MPI_SUCCESS;
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
    if (!lane_k || hmpi_p2p_match.posted_head || hmpi_p2p_match.unexp_head ||
        hmpi_bridge_pending)
        return 0;
    char *lane = lane_in[src_local];
    hmpi_backoff_t b = {0};
    for (;;) {
        hmpi_env_t *e = lane_slot(lane, lane_next[src_local]);
        if (atomic_load_explicit(&e->lseq, memory_order_acquire) == lane_next[src_local] + 1)
            break;
        if (!hmpi_queue_empty(&me->incoming) || hmpi_backoff_yielding(&b)) {
            hmpi_wait_handoff(&b, hmpi_p2p_wait_family(c, 0));
            return 0;
        }
        hmpi_backoff(&b);
    }
    hmpi_env_t *e = lane_slot(lane, lane_next[src_local]);
    uint32_t p = HMPI_READ_ONCE(e->pseq);
    uint32_t ctx = HMPI_READ_ONCE(e->ctx);
    int32_t src = HMPI_READ_ONCE(e->src), etag = HMPI_READ_ONCE(e->tag);
    uint64_t size = HMPI_READ_ONCE(e->size);
    if (p != pseq_from[src_local] || ctx != c->ctx || src != source ||
        (tag != MPI_ANY_TAG && etag != tag) || etag < 0 ||
        HMPI_READ_ONCE(e->proto) != HMPI_PROTO_IMMEDIATE ||
        HMPI_READ_ONCE(e->src_local) != src_local || size > (uint64_t)hmpi_p2p_immediate_room) {
        hmpi_wait_handoff(&b, hmpi_p2p_wait_family(c, 0));
        return 0; /* (the slot lies in src_local's heap: lanes_connect checked the lane) */
    }
    lane_next[src_local]++;
    pseq_from[src_local] = p + 1;
    size_t len = size <= cap ? size : cap;
    copy_short(buf, e->u.payload, len);
    atomic_store_explicit(&e->state, HMPI_ENV_DONE, memory_order_release);
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
    if (!lane_k)
        return 0;
    hmpi_env_t *e = lane_claim(dst_local);
    if (!e)
        return 0;
    copy_short(e->u.payload, p, bytes);
    lane_publish(e, c, tag, bytes, dst_local);
    return 1;
}

int hmpi_p2p_cancel(hmpi_req_t *r)
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
    hmpi_p2p_finish(r);
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

void hmpi_p2p_recv_message(hmpi_req_t *r, hmpi_env_t *e)
{
    /* The record went with take_message: the header is read and checked again. */
    arrival_t in;
    take_in(e, &in);
    complete_recv(r, &in);
}

/* ---- init ------------------------------------------------------------------------- */

static volatile uint64_t cma_probe_word = 0x484d5049434d4131ULL;

/* Can this rank read a local peer's private memory? Each rank publishes the address
 * of a private word and reads every peer's. */
static int cma_check(void)
{
    if (!hmpi_knobs.CMA)
        return 0;
    uintptr_t mine = (uintptr_t)&cma_probe_word, *all;
    all = hmpi_heap_malloc(sizeof(uintptr_t) * (size_t)hmpi_node.size);
    if (!all)
        return 0;
    PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, hmpi_node.comm);
    int ok = hmpi_node.cma_allowed; /* Yama may forbid it (node.c); still collective */
    for (int l = 0; l < hmpi_node.size && ok; l++) {
        uint64_t v = 0;
        struct iovec local = {&v, sizeof v}, remote = {(void *)all[l], sizeof v};
        ok = process_vm_readv(hmpi_ctrl()->rank[l].pid, &local, 1, &remote, 1, 0) ==
                 (ssize_t)sizeof v &&
             v == cma_probe_word;
    }
    hmpi_heap_free(all);
    int all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, hmpi_node.comm);
    return all_ok;
}

/* My lanes, all slots DONE (free), published in my control block; the per-peer
 * counters. Lanes are optional: without heap room, none. */
static int lanes_alloc(void)
{
    nlocal = hmpi_node.size;
    lane_in = calloc((size_t)nlocal, sizeof *lane_in);
    lane_head = calloc((size_t)nlocal, sizeof *lane_head);
    lane_free = calloc((size_t)nlocal, sizeof *lane_free);
    lane_skip = calloc((size_t)nlocal, sizeof *lane_skip);
    lane_next = calloc((size_t)nlocal, sizeof *lane_next);
    pseq_to = calloc((size_t)nlocal, sizeof *pseq_to);
    pseq_from = calloc((size_t)nlocal, sizeof *pseq_from);
    if (!lane_in || !lane_head || !lane_free || !lane_skip || !lane_next || !pseq_to ||
        !pseq_from) {
        hmpi_log_error("out of memory for the point-to-point counters of %d local ranks",
                       nlocal);
        return -1;
    }
    lane_k = 0;
    for (unsigned k = 1; hmpi_knobs.LANE_SLOTS > 0 && k <= 4096; k *= 2) {
        if (k >= (unsigned)hmpi_knobs.LANE_SLOTS) {
            lane_k = k;
            break;
        }
    }
    lane_bytes = (size_t)lane_k * env_bytes;
    lane_out = lane_k ? hmpi_heap_shared_alloc(lane_bytes * (size_t)nlocal) : NULL;
    if (!lane_out)
        lane_k = 0;
    for (size_t i = 0; lane_k && i < (size_t)lane_k * (size_t)nlocal; i++) {
        hmpi_env_t *e = (hmpi_env_t *)(void *)(lane_out + i * env_bytes);
        atomic_store_explicit(&e->lseq, 0, memory_order_relaxed);
        atomic_store_explicit(&e->state, HMPI_ENV_DONE, memory_order_relaxed);
    }
    me->lanes = lane_out;
    return 0;
}

/* Every peer's lane to me, checked to lie whole in its slice. All ranks of the node
 * use lanes, with one slot count, or none does: a sender writes only where the
 * receiver reads. */
static void lanes_connect(void)
{
    int ok = 1;
    for (int src = 0; src < nlocal && lane_k; src++) {
        char *l = hmpi_ctrl()->rank[src].lanes;
        size_t all = lane_bytes * (size_t)nlocal;
        if (!l || hmpi_heap_owner(l) != src || !hmpi_heap_is_shared_range(l, all) ||
            hmpi_heap_owner(l + all - 1) != src)
            ok = 0;
        else
            lane_in[src] = l + (size_t)hmpi_node.rank * lane_bytes;
    }
    int mine[2] = {ok ? (int)lane_k : 0, ok ? -(int)lane_k : 0}, all[2];
    PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, hmpi_node.comm);
    if (all[0] != -all[1] || all[0] == 0)
        lane_k = 0; /* the lanes stay allocated, unused */
    if (hmpi_knobs.VERBOSE >= 2 && hmpi_node.rank == 0)
        hmpi_log_info("lanes: %u slots of %zu bytes to each of %d local ranks", lane_k,
                      env_bytes, nlocal);
}

int hmpi_p2p_init(void)
{
    if (hmpi_req_table_init() != 0)
        return -1;
    hmpi_ctrl_t *ctrl = hmpi_ctrl();
    me = &ctrl->rank[hmpi_node.rank];
    me->pid = getpid();
    if (hmpi_node.rank == 0) {
        ctrl->nranks = hmpi_node.size;
        ctrl->magic = HMPI_CTRL_MAGIC;
    }
    size_t line = HMPI_CACHE_LINE;
    size_t payload = hmpi_p2p_immediate_room = (size_t)hmpi_knobs.IMMEDIATE_MAX;
    size_t body = sizeof(((hmpi_env_t *)0)->u) > payload ? sizeof(((hmpi_env_t *)0)->u) : payload;
    hmpi_env_own_offset = (offsetof(hmpi_env_t, u) + body + line - 1) / line * line;
    env_bytes = hmpi_env_own_offset + (sizeof(hmpi_env_own_t) + line - 1) / line * line;
    if (lanes_alloc() != 0)
        return -1;
    PMPI_Barrier(hmpi_node.comm); /* every pid and lane is published */
    if (ctrl->magic != HMPI_CTRL_MAGIC || ctrl->nranks != hmpi_node.size) {
        hmpi_log_error("the shared region holds no control block of this node's %d ranks "
                       "(magic %#llx, %d ranks): not the region local rank 0 set up",
                       hmpi_node.size, (unsigned long long)ctrl->magic, ctrl->nranks);
        return -1;
    }
    lanes_connect();
    if (PMPI_Comm_dup(MPI_COMM_SELF, &poke_comm) == MPI_SUCCESS)
        PMPI_Irecv(NULL, 0, MPI_BYTE, 0, 0, poke_comm, &poke_req);
    cma_ok = cma_check();
    me->cma_ok = cma_ok;
    hmpi_wait_progress = wait_progress;
    return 0;
}

void hmpi_p2p_finalize(void)
{
    hmpi_wait_progress = NULL;
    me = NULL;
    lane_k = 0;
    free(lane_in), free(lane_head), free(lane_free), free(lane_skip), free(lane_next);
    free(pseq_to), free(pseq_from);
    lane_in = NULL, lane_head = lane_free = lane_next = NULL, lane_skip = NULL;
    pseq_to = pseq_from = NULL;
    if (poke_req != MPI_REQUEST_NULL) {
        PMPI_Cancel(&poke_req);
        PMPI_Wait(&poke_req, MPI_STATUS_IGNORE);
    }
    if (poke_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&poke_comm);
    /* Nothing to wait for: envelopes and bounce copies live in the shared file, which
     * stays mapped (and readable by peers) until the last local rank exits. */
}
