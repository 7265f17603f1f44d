/* engine.h: the point-to-point engine's private state and the pieces its files share:
 * the envelope, the protocols' table, the lanes, the operations the engine's files call
 * on one another (starting a send or a receive, matching, the bridge, progress, the one
 * wait). For the files of p2p/ only, and mpi/pt2pt.c through short.h, the short ways it
 * inlines (docs/design.md). The state is one struct: the sender's pools and in-flight
 * list (send.c), the lanes (lane.c), the receiver's counters (arrival.c), the poke of the
 * MPI below (progress.c). All of it is private to the process and guarded by the engine
 * lock, but for the envelopes and lanes it points to, which live in the shared heap. */
#ifndef HMPI_P2P_ENGINE_H
#define HMPI_P2P_ENGINE_H

#include "p2p.h"
#include "match.h"
#include "../shm/ctrl.h"
#include "../common/assert.h"
#include "../common/hidden.h"
#include "../common/stats.h"
#include "../node/node.h"
#include "../shm/bell.h"
#include "../shm/lane.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* ---- envelopes ------------------------------------------------------------------- */

typedef enum {
    HMPI_PROTO_IMMEDIATE,   /* payload inline after the envelope */
    HMPI_PROTO_COPY,        /* receiver copies from a heap buffer (the sender's or a bounce) */
    HMPI_PROTO_SYNERGISTIC, /* receiver and sender copy blocks, claimed by one counter */
    HMPI_PROTO_CMA,         /* receiver reads the sender's private buffer (process_vm_readv) */
    HMPI_PROTO_PIPE,        /* sender fills a heap bounce in chunks while the receiver drains it */
    HMPI_PROTO_COUNT
} hmpi_proto_t;

/* The protos of envelopes that carry no message, notices the receiver takes from the
 * queue in the order of the sender's messages and never matches against a receive:
 * LANE_OPEN announces the sender's new lane (lane.c); PART_SETUP a partitioned send's
 * control block (part.c), which only a partitioned receive can match. */
enum { HMPI_P2P_PART_SETUP = 0xfe, HMPI_P2P_LANE_OPEN = 0xff };

/* Envelope states. The receiver moves PENDING -> MATCHED (synergistic only) -> DONE;
 * after DONE it never touches the envelope again and the sender may reuse it. A sender
 * whose receiver is late may take PENDING -> BOUNCING -> EAGER (copying its data out);
 * the receiver claims with a CAS from PENDING or EAGER, so exactly one side wins. */
enum {
    HMPI_ENV_PENDING,
    HMPI_ENV_MATCHED,
    HMPI_ENV_DONE,
    HMPI_ENV_BOUNCING,
    HMPI_ENV_EAGER,
    HMPI_ENV_CLAIMED,
};

struct hmpi_req_s;

/* A message announced to a local receiver. Allocated in the sender's slice of the
 * shared heap (so every local rank reads it at the same address) and only ever freed
 * by the sender, once state is DONE. It reaches the receiver one of two ways: pushed on
 * the receiver's incoming queue, or, for a small eager message, written into the next
 * slot of the sender's lane to that receiver (a ring of envelopes the receiver polls:
 * no atomic read-modify-write on either side, one cache line crossing for a short
 * message). pseq numbers the messages of one sender to one receiver across both ways,
 * so the receiver takes them in the order they were sent. The receiver's first cache
 * line holds the whole header and the first 16 bytes of an immediate payload.
 * Another process writes it, so the receiver trusts none of it: it reads each field
 * once into a local, checks it (arrival.c: the envelope's place and its key; each
 * protocol's check in proto.c: sizes, pointers) and uses only the local. A CMA read
 * goes to the pid the control area names for the envelope's slice, never to a field. */
typedef struct hmpi_env_s {
    union {
        hmpi_qnode_t link;     /* queued: the receiver's incoming queue */
        _Atomic uint64_t lseq; /* lane slot: its seq (shm/lane.h), published last */
    };
    uint32_t ctx; /* communicator context */
    int32_t src;  /* sender's rank in the communicator */
    int32_t tag;
    uint8_t proto;          /* hmpi_proto_t */
    uint8_t sync;           /* synchronous send: completes at the match */
    uint16_t src_local;     /* sender's local rank */
    uint64_t size;          /* bytes of the message */
    const void *data;       /* where the bytes are (shared, or private for CMA) */
    _Atomic uint32_t state; /* HMPI_ENV_*, written by the receiver (and see above) */
    uint32_t pseq;          /* per (sender, receiver): orders lane and queue */
    union {
        unsigned char payload[16]; /* immediate: IMMEDIATE_MAX bytes from here */
        _Atomic uint64_t filled;   /* pipe: bytes of the bounce written, by the sender */
        struct {                   /* synergistic: written by the receiver before MATCHED */
            void *dst;             /* receive buffer, in the shared heap */
            uint64_t len;          /* bytes to copy (truncation applied) */
            uint64_t block;        /* block size */
            uint64_t nblocks;
            char pad0[HMPI_CACHE_LINE - 32];
            _Atomic uint64_t next_block; /* claim counter: own line */
            char pad1[HMPI_CACHE_LINE - 8];
            _Atomic uint64_t blocks_done; /* copied blocks: own line */
        } syn;
    } u;
} hmpi_env_t;

static_assert(offsetof(hmpi_env_t, u) == 48, "header and 16 payload bytes share a line");
static_assert(offsetof(hmpi_env_t, lseq) == 0, "a lane slot's seq is its first word");

/* The sender's own bookkeeping, placed after the envelope's payload (the receiver
 * never reads it, so it never shares a line with what the receiver reads). */
typedef struct {
    struct hmpi_req_s *sreq;  /* send request to complete at DONE, or NULL */
    struct hmpi_env_s *snext; /* in-flight list, or the free pool */
    void *bounce;             /* heap copy to free at DONE */
    uint8_t user_data;        /* data points at the user's buffer */
    uint8_t buffered; /* MPI_Bsend: the generation of the room it holds (bsend.c); 0: none */
    uint8_t watched;  /* progress polls it: DONE frees more than the envelope */
    uint8_t no_help;  /* synergistic: the receiver's block plan was bad */
    uint8_t reclaim;  /* take the buffer's lines back at DONE (send.c) */
    uint64_t size;    /* e->size as sent: the receiver may overwrite that one */
} hmpi_env_own_t;

extern size_t hmpi_env_own_offset;
static inline hmpi_env_own_t *hmpi_env_own(hmpi_env_t *e)
{
    return (hmpi_env_own_t *)((char *)e + hmpi_env_own_offset);
}

/* What the receiver read from an envelope, each field once, and checked: delivery
 * uses these and never reads the fields again. */
typedef struct {
    hmpi_env_t *env;
    uint64_t size;    /* bytes the sender announced */
    const void *data; /* where they are (filled by the protocol's check) */
    int src_local;    /* the sender: owner of the envelope's slice */
    int pid;          /* CMA: the sender's process, from the control area */
} hmpi_msg_view_t;

/* Protocol table (proto.c), one entry a protocol, both halves: the sender's prepare, the
 * receiver's check and deliver, and the statistics its messages count in. Each protocol
 * lives in its own file (proto_immediate.c, proto_copy.c, proto_synergistic.c,
 * proto_cma.c, proto_pipe.c); send.c chooses one per message and calls its prepare. */
typedef struct {
    const char *name;
    /* Sender: fills what the protocol puts in envelope e (not yet pushed) for r's bytes
     * at p (its first byte: r's buffer plus the type's lower bound): data, the
     * protocol's fields, and the sender's bounce if it copies the message out. The
     * chooser set hmpi_env_own(e)->user_data when the receiver reads the user's buffer
     * in place; the send then completes at DONE, else at once (eager). Returns an MPI
     * error code; on an error nothing of the protocol's is held (the caller puts the
     * envelope back). */
    int (*prepare)(hmpi_env_t *e, hmpi_req_t *r, const char *p, size_t bytes);
    /* Sender, optional: runs once e is pushed (the pipe fills its bounce here). */
    void (*pushed)(hmpi_env_t *e, const char *p, size_t bytes);
    /* Reads and checks what the protocol takes from the envelope (after the claim)
     * into v; returns NULL, or the name of the field that is wrong. */
    const char *(*check)(hmpi_msg_view_t *v);
    /* Moves the message into r's buffer; returns the bytes received. The envelope is
     * still the receiver's when it returns (the caller marks it DONE). */
    size_t (*deliver)(const hmpi_msg_view_t *v, hmpi_req_t *r, const hmpi_layout_t *t, size_t len);
    hmpi_stat_t msgs, bytes; /* counted at the send (the lane's: lane.c) */
} hmpi_proto_ops_t;

extern const hmpi_proto_ops_t hmpi_protos[HMPI_PROTO_COUNT];

/* The halves of each protocol, for the table. */
int hmpi_proto_immediate_prepare(hmpi_env_t *e, hmpi_req_t *r, const char *p, size_t bytes);
const char *hmpi_proto_immediate_check(hmpi_msg_view_t *v);
int hmpi_proto_copy_prepare(hmpi_env_t *e, hmpi_req_t *r, const char *p, size_t bytes);
const char *hmpi_proto_copy_check(hmpi_msg_view_t *v);
size_t hmpi_proto_copy_deliver(const hmpi_msg_view_t *v, hmpi_req_t *r, const hmpi_layout_t *t,
                               size_t len);
int hmpi_proto_synergistic_prepare(hmpi_env_t *e, hmpi_req_t *r, const char *p, size_t bytes);
size_t hmpi_proto_synergistic_deliver(const hmpi_msg_view_t *v, hmpi_req_t *r,
                                      const hmpi_layout_t *t, size_t len);
int hmpi_proto_cma_prepare(hmpi_env_t *e, hmpi_req_t *r, const char *p, size_t bytes);
const char *hmpi_proto_cma_check(hmpi_msg_view_t *v);
size_t hmpi_proto_cma_deliver(const hmpi_msg_view_t *v, hmpi_req_t *r, const hmpi_layout_t *t,
                              size_t len);
int hmpi_proto_pipe_prepare(hmpi_env_t *e, hmpi_req_t *r, const char *p, size_t bytes);
void hmpi_proto_pipe_pushed(hmpi_env_t *e, const char *p, size_t bytes);
size_t hmpi_proto_pipe_deliver(const hmpi_msg_view_t *v, hmpi_req_t *r, const hmpi_layout_t *t,
                               size_t len);

/* What the protocols share (proto.c). Copies len bytes of a message from src into r's
 * buffer (memcpy, or MPI_Unpack for a datatype with holes); returns the bytes placed. */
size_t hmpi_proto_place(const void *src, hmpi_req_t *r, const hmpi_layout_t *t, size_t len);

/* The sender's help in the synergistic protocol: copies blocks of the receiver's plan
 * (checked first) until none is left; returns how many it copied. */
uint64_t hmpi_syn_help(hmpi_env_t *env);

/* ---- the engine's state -------------------------------------------------------- */

struct arrival_s;

enum { HMPI_P2P_REWRITE_SLOTS = 64 }; /* buffers whose rewrites send.c tells apart */

/* My side of the way to local receiver r (lane.c, send.c): my lane to it (in my slice;
 * NULL until opened, or when refused) with my cursor as its writer, whether I tried to
 * open it, and the messages numbered to it by both ways. A power of two in size (a
 * line), so an index is one shift. */
typedef struct {
    hmpi_lane_tx_t tx;
    char *lane;
    uint32_t pseq;
    uint32_t tried;
    uint64_t pad[3];
} hmpi_p2p_to_t;

/* My side of the way from local sender s (lane.c, arrival.c): its lane to me (in its
 * slice, checked when attached; until then a line that never holds a message) with my
 * cursor as its reader, and its messages taken in by both ways. */
typedef struct {
    hmpi_lane_rx_t rx;
    char *lane;
    uint32_t pseq;
    uint32_t pad;
} hmpi_p2p_from_t;

static_assert(sizeof(hmpi_p2p_to_t) == 64 && sizeof(hmpi_p2p_from_t) == 32, "one shift an index");

/* Lanes. A rank opens a lane to a local receiver (itself included) with its first small
 * eager message to it, up to lanes_max of them: a ring (shm/lane.h) of lane_k envelopes
 * in its slice, announced by the queue (HMPI_P2P_LANE_OPEN). A small eager message goes
 * into the next slot of the lane when that slot is DONE (the ring's free value; PENDING
 * its busy one), and is published by the slot's seq (lseq); the receiver polls the
 * next slot of each lane (of each lane that rang its bell, on a node of
 * HMPI_LANE_SUMMARY ranks or more). Otherwise the message goes by the receiver's
 * incoming queue. pseq numbers one sender's messages to one receiver across both ways;
 * the receiver takes them in that order. */
typedef struct {
    hmpi_rank_ctrl_t *me; /* my block in the control area; NULL: HMPI is off */
    int nlocal;           /* local ranks: lanes and sequence numbers */
    size_t env_bytes;     /* envelope, payload, then hmpi_env_own_t */
    /* send.c */
    hmpi_env_t *inflight_head; /* my envelopes not yet DONE (via snext) */
    hmpi_env_t **inflight_tailp;
    hmpi_env_t *env_pool;      /* recycled envelopes (via snext) */
    unsigned inflight_count;   /* envelopes in the in-flight list */
    unsigned inflight_watched; /* of those, the ones progress polls */
    int cma_ok;                /* every local rank reads every other's memory */
    void *bounce_pool;         /* free bounce blocks, linked through their first word */
    int bounce_pooled;
    struct { /* buffers sent, by address (send.c, rewritten) */
        uintptr_t addr;
        uint64_t hash;
    } rewrite_seen[HMPI_P2P_REWRITE_SLOTS];
    /* lane.c */
    unsigned lane_k;       /* slots per lane, a power of two; 0: no lanes */
    size_t lane_bytes;     /* one lane */
    int lanes_open;        /* lanes I opened */
    int lanes_max;         /* lanes I may open: HMPI_LANE_TOTAL / lane_k, at most nlocal */
    hmpi_p2p_to_t *to;     /* [receiver]: my lane to it, messages numbered */
    hmpi_p2p_from_t *from; /* [sender]: its lane to me, messages taken in */
    /* The summary of my lanes from HMPI_LANE_SUMMARY local ranks (shm/bell.h): a sender
     * rings its bit in its receiver's bell with each lane message, and my progress
     * looks only at the lanes that rang. NULL: none, progress looks at every lane. */
    hmpi_bell_t *bell;  /* mine, in my slice */
    hmpi_bell_t **ring; /* [receiver]: my word of its bell, set when my lane to it opens */
    uint64_t ring_bit;  /* my bit there */
    /* arrival.c */
    int draining;                   /* inside take_queue: no nested take */
    struct arrival_s *arrival_pool; /* free records of unexpected messages */
    /* progress.c */
    pthread_mutex_t engine_lock;
    MPI_Comm poke_comm;   /* private copy of HMPI's self (node.h; progress.c) */
    MPI_Request poke_req; /* its receive that never matches */
    unsigned poke_calls;
} hmpi_p2p_engine_t;

extern HMPI_HIDDEN hmpi_p2p_engine_t hmpi_p2p_engine;

/* ---- the engine's operations (each runs with the engine lock held) ------------------- */

/* Starts a send to local peer dst_local; r is complete on return when the send could
 * finish eagerly. Returns an MPI error code. */
int hmpi_p2p_send_start(hmpi_req_t *r, int dst_local);
/* Starts a receive (local source, or ANY_SOURCE); may complete at once. */
int hmpi_p2p_recv_start(hmpi_req_t *r);
/* Starts r, a receive described by its fields: locally, or through the bridge. */
int hmpi_p2p_recv_post(hmpi_req_t *r);

/* One pass of the engine: incoming messages, sends in flight, the bridge, the listed
 * requests (req.c), a poke of the MPI below now and then. */
void hmpi_p2p_progress(void);
/* True when local peers may be waiting for this rank's progress (posted receives that
 * a synchronous or rendezvous send waits to see matched, partitioned receives whose
 * senders wait for them to copy): then the engine does not block inside the MPI below
 * but polls both. */
int hmpi_p2p_busy(void);
/* Advances r (progress included) and tells whether it is complete; without the
 * engine's progress (check). */
int hmpi_p2p_test(hmpi_req_t *r);
int hmpi_p2p_check(hmpi_req_t *r);
/* The one wait of the engine: one step of a wait loop whose condition the caller tests
 * with the lock held. Moves the engine, unblocks late sends once the wait yields for a
 * while (HMPI_EAGER_DELAY_US), then a backoff step of shm/wait.h with the lock let go.
 * A loop of steps ends with hmpi_wait_end (or handoff). */
void hmpi_p2p_wait_step(hmpi_backoff_t *b, uint64_t *since);
/* Waits for r to complete (the one wait), counted as a send's or a receive's. */
void hmpi_p2p_wait(hmpi_req_t *r);

/* What a wait for a send (send = 1) or a receive on c waits as (statistics): as c says
 * (OPI's shadows: OPI), else by the operation. */
static inline hmpi_wait_family_t hmpi_p2p_wait_family(const hmpi_comm_t *c, int send)
{
    if (c && c->wait_as)
        return (hmpi_wait_family_t)(c->wait_as - 1);
    return send ? HMPI_WAIT_SEND : HMPI_WAIT_RECV;
}

/* The short ways out of line (lane.c): a small contiguous message by the lane, when
 * nothing else is in the way; 0 when they did nothing. The receive sets *err and the
 * status (unless MPI_STATUS_IGNORE) when it returns 1. */
int hmpi_p2p_send_lane(const hmpi_comm_t *c, const void *p, size_t bytes, int dst_local, int tag);
int hmpi_p2p_recv_lane(const hmpi_comm_t *c, void *buf, size_t cap, int source, int src_local,
                       int tag, MPI_Status *status, int *err);

/* Cancels a receive not yet matched; returns 1 when cancelled. */
int hmpi_p2p_cancel_req(hmpi_req_t *r);
/* Looks for a matching message without receiving it: local ones, then (for a
 * wildcard on a comm with remote members) the MPI below. */
int hmpi_p2p_iprobe(hmpi_comm_t *c, int source, int tag, int *flag, MPI_Status *status);
/* Matched probe: removes the oldest local message matching (source, tag) on c, or
 * returns NULL; hmpi_p2p_recv_message later receives it into r. */
hmpi_env_t *hmpi_p2p_take_message(hmpi_comm_t *c, int source, int tag);
/* The source, tag and size of message e, as its sender announced them (a status). */
void hmpi_p2p_message_info(const hmpi_env_t *e, int *source_p, int *tag_p, size_t *bytes_p);
void hmpi_p2p_recv_message(hmpi_req_t *r, hmpi_env_t *e);

/* The posted and unexpected lists, shared by the engine and the bridge (oldest first). */
extern HMPI_HIDDEN hmpi_match_t hmpi_p2p_match;
void hmpi_p2p_unpost(hmpi_req_t *r);
void hmpi_p2p_post(hmpi_req_t *r);

/* ---- req.c and op.c ---------------------------------------------------------------- */

int hmpi_req_table_init(void);
/* Whether any request is listed, and progress's pass over them (the number completed). */
int hmpi_req_listed(void);
int hmpi_req_progress_listed(void);
/* The row of HMPI_REQ_SENDRECV (op.c). */
extern const hmpi_req_ops_t hmpi_p2p_sendrecv_ops;

/* ---- bridge.c: where HMPI's matching meets the MPI below's ----------------------------- */

/* A send of mode (HMPI_MODE_*) to dest on another node, counted as remote (t: the layout
 * of count elements of type), blocking and not; and the MPI below's own send of each
 * mode, uncounted (a communicator HMPI does not accelerate). */
int hmpi_bridge_send(const hmpi_layout_t *t, const void *buf, int count, MPI_Datatype type,
                     int dest, int tag, MPI_Comm comm, int mode);
int hmpi_bridge_isend(const hmpi_layout_t *t, const void *buf, int count, MPI_Datatype type,
                      int dest, int tag, MPI_Comm comm, int mode, MPI_Request *req);
int hmpi_bridge_send_below(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, int mode);
int hmpi_bridge_isend_below(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm, int mode, MPI_Request *req);
/* The MPI below's persistent send of each mode (a remote peer's, kept for the request's
 * life). */
int hmpi_bridge_send_init_below(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                                MPI_Comm comm, int mode, MPI_Request *req);
/* A receive from a remote source on r->comm, posted below at once unless an earlier
 * ANY_SOURCE receive could take its message. */
int hmpi_bridge_recv_remote(hmpi_req_t *r);
/* Receives remote messages for pending wildcards; posts deferred receives. */
void hmpi_bridge_progress(void);
/* A wildcard receive on c completed or was cancelled: deferred ones may go below. */
void hmpi_bridge_wild_done(hmpi_comm_t *c);
/* Wildcard and deferred receives waiting in the bridge. */
extern HMPI_HIDDEN int hmpi_bridge_pending;

/* ---- bsend.c: buffered sends to local peers ----------------------------------------- */

/* Room in the attached buffer, as the MPI standard counts it (bytes + MPI_BSEND_OVERHEAD
 * per message); MPI_ERR_BUFFER when the message does not fit. Lock NOT held. */
int hmpi_bsend_reserve(const hmpi_layout_t *t);
/* The generation a buffered message reserved now belongs to (its envelope keeps it). */
uint8_t hmpi_bsend_generation(void);
/* Room of a delivered buffered message of generation gen goes back to the buffers. */
void hmpi_bsend_release(size_t bytes, uint8_t gen);

/* ---- send.c ---------------------------------------------------------------------- */

/* A bounce block of at least bytes in the shared heap (a pool of small ones), or NULL;
 * back with the same bytes. */
void *hmpi_p2p_bounce_get(size_t bytes);
void hmpi_p2p_bounce_put(void *p, size_t bytes);
/* Packs r's message into dst (from MPI_BOTTOM too: hmpi_type_pack). */
int hmpi_p2p_pack_into(hmpi_req_t *r, void *dst, size_t bytes);
/* Whether the program rewrote the n bytes at p since their last send (send.c). */
int hmpi_p2p_rewritten(const unsigned char *p, size_t n);

/* A notice to local receiver dst by its queue, numbered among my messages to it: proto
 * (HMPI_P2P_LANE_OPEN, HMPI_P2P_PART_SETUP), and the envelope's ctx, src, tag, data and
 * size as the notice's reader takes them. Complete as it is pushed (nothing watched);
 * the receiver gives the envelope back DONE as it takes the notice in. 0, or -1
 * without an envelope. */
int hmpi_p2p_send_notice(int dst, int proto, uint32_t ctx, int src, int tag, const void *data,
                         uint64_t size);

/* Completes the sends whose envelopes are DONE and lets the sender help the
 * synergistic copies its receivers matched (progress polls only watched envelopes). */
void hmpi_p2p_inflight_walk(void);
/* A waiting sender whose receiver is late copies its heap messages out. */
void hmpi_p2p_unblock_sends(void);

/* ---- lane.c ---------------------------------------------------------------------- */

int hmpi_p2p_lanes_alloc(void);
void hmpi_p2p_lanes_connect(void);
hmpi_env_t *hmpi_p2p_lane_look(int dst);
/* Opens my lane to dst, once (send.c: after a small eager message went by the queue
 * for want of one); refused, my messages to dst stay on the queue. */
void hmpi_p2p_lane_open(int dst);
/* The receiver's side of an announcement (arrival.c takes it from the queue). */
void hmpi_p2p_lane_attach(hmpi_env_t *e, int src);

/* ---- part.c ---------------------------------------------------------------------- */

/* The receiver's side of a partitioned send's setup notice from local rank src (arrival.c
 * takes it from the queue): matched against the partitioned receives in the order of
 * their initialization, or kept until one is made. Gives the envelope back DONE. */
void hmpi_p2p_part_arrive(hmpi_env_t *e, int src);
/* The row of HMPI_REQ_PART, and the partitioned receives started and not complete (a
 * local sender waits for this rank to copy their partitions: hmpi_p2p_busy). */
extern const hmpi_req_ops_t hmpi_p2p_part_ops;
extern HMPI_HIDDEN int hmpi_p2p_part_receiving;

/* ---- arrival.c ------------------------------------------------------------------- */

/* Everything that arrived: the queue, then each lane. */
void hmpi_p2p_take_arrivals(void);

/* The ring words of an envelope for shm/lane.h: its state, free when DONE. */
#define HMPI_P2P_LANE_STATE offsetof(hmpi_env_t, state)

/* Slot n of lane (mine to a receiver, or a sender's to me). */
static inline hmpi_env_t *hmpi_p2p_lane_slot(char *lane, uint64_t n)
{
    return (hmpi_env_t *)hmpi_lane_slot(lane, hmpi_p2p_engine.lane_k, hmpi_p2p_engine.env_bytes, n);
}

/* The slot of my lane to dst for my next message when one is free (shm/lane.h: my
 * last again, or the ring's next), else NULL (the look out of line, unless known). */
static inline hmpi_env_t *hmpi_p2p_lane_claim(int dst, int look)
{
    hmpi_p2p_to_t *to = &hmpi_p2p_engine.to[dst];
    void *s = hmpi_lane_again(&to->tx, to->lane, hmpi_p2p_engine.lane_k, hmpi_p2p_engine.env_bytes,
                              HMPI_P2P_LANE_STATE, HMPI_ENV_DONE);
    if (s)
        return s;
    if (__builtin_expect(!hmpi_lane_known_free(&to->tx), 0))
        return look ? hmpi_p2p_lane_look(dst) : NULL;
    return hmpi_p2p_lane_slot(to->lane, to->tx.head);
}

/* Publishes lane slot e, its payload written: no atomic read-modify-write, and the
 * receiver reads one line for a short message. */
static inline void hmpi_p2p_lane_publish(hmpi_env_t *e, const hmpi_comm_t *c, int tag, size_t bytes,
                                         int dst)
{
    e->ctx = c->ctx;
    e->src = c->rank;
    e->tag = tag;
    e->proto = HMPI_PROTO_IMMEDIATE;
    e->sync = 0;
    e->src_local = (uint16_t)hmpi_node.rank;
    e->size = bytes;
    e->data = e->u.payload;
    /* e is the slot hmpi_p2p_lane_claim gave out. */
    hmpi_p2p_to_t *to = &hmpi_p2p_engine.to[dst];
    e->pseq = to->pseq++;
    hmpi_lane_publish(&to->tx, to->lane, hmpi_p2p_engine.lane_k, hmpi_p2p_engine.env_bytes, e,
                      HMPI_P2P_LANE_STATE, HMPI_ENV_PENDING);
    if (hmpi_p2p_engine.ring)
        hmpi_bell_ring(hmpi_p2p_engine.ring[dst], hmpi_p2p_engine.ring_bit);
    /* The 8-byte ping-pong's one place of counting: one test when off; when on, two
     * plain adds, not locked ones, each of which would wait for the store buffer on
     * every send of the message rate (docs/observability.md, what counting costs).
     * msgs_immediate counts the queue's only: hmpi_stat_get adds msgs_lane. */
    if (__builtin_expect(hmpi_stats_counting(), 0)) {
        int threads = hmpi_stats_threads;
        hmpi_stat_bump_as(threads, HMPI_STAT_bytes_immediate, bytes);
        hmpi_stat_bump_as(threads, HMPI_STAT_msgs_lane, 1);
    }
    hmpi_wait_wake(dst); /* last: nothing is live across its rare call (p2p/short.h) */
}

#endif
