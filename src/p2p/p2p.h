/* p2p.h: HMPI's point-to-point engine: requests, envelopes, matching, protocols and
 * progress for peers on this node, and the bridge to the MPI below for the others.
 * The mpi/ entry points validate arguments and call these. */
#ifndef HMPI_P2P_H
#define HMPI_P2P_H

#include "../common/hidden.h"

#include "../core/comm.h"
#include "../core/datatype.h"
#include "../shm/ctrl.h"
#include "../shm/wait.h"
#include "match.h"

#include <mpi.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A message announced to a local receiver: its layout is private to p2p (engine.h). */
typedef struct hmpi_env_s hmpi_env_t;

/* ---- requests -------------------------------------------------------------------- */

typedef enum {
    HMPI_REQ_SEND,
    HMPI_REQ_RECV,
    HMPI_REQ_DONE,     /* completed at creation (PROC_NULL, local RMA, ...) */
    HMPI_REQ_MESSAGE,  /* an MPI_Message of MPI_Mprobe: env holds the message */
    HMPI_REQ_POLL,     /* completed by its poll function (OPI takes, MPI_Comm_idup) */
} hmpi_req_kind_t;

enum { HMPI_MODE_STANDARD, HMPI_MODE_SYNC, HMPI_MODE_READY, HMPI_MODE_BUFFERED };

typedef struct hmpi_req_s {
    uint8_t kind;          /* hmpi_req_kind_t */
    uint8_t mode;          /* send mode */
    uint8_t persistent;    /* made by *_init: survives completion */
    uint8_t active;        /* persistent: started, not yet completed */
    uint8_t freed;         /* MPI_Request_free'd while active: release at completion */
    uint8_t wild;          /* ANY_SOURCE receive that a remote sender may satisfy */
    uint8_t cancelled;
    uint8_t holds_comm;    /* holds a reference on comm (requests of the table) */
    uint8_t below_persistent; /* below is the MPI below's persistent request (remote) */
    uint8_t holds_type;    /* holds type (a derived one) until its release */
    int complete;          /* set once; read by wait loops of the same process */
    MPI_Status status;
    hmpi_comm_t *comm;
    void *buf;
    int count;
    MPI_Datatype type;
    hmpi_layout_t t;       /* layout of count elements of type */
    int peer;              /* rank in comm: destination, or source (MPI_ANY_SOURCE) */
    int tag;
    hmpi_env_t *env;       /* send: its envelope while in flight */
    MPI_Request below;     /* the MPI below's request carrying this one, if any */
    /* HMPI_REQ_POLL: called (engine lock held) by every test of the request until it
     * returns 1; it fills status and may use arg and below freely. */
    int (*poll)(struct hmpi_req_s *r);
    void *arg;
    /* Its pattern in the posted list (match.h): m.posted while there; m.held for a
     * remote receive the bridge holds back behind a wildcard. */
    hmpi_match_recv_t m;
    uint32_t free_next;
} hmpi_req_t;

/* A request all zero but for below (MPI_REQUEST_NULL). memset compiles to `rep stos`
 * for this size, which slowed the 8-byte message rate (docs/performance-history.md,
 * "Figures that were in code comments"): plain 16-byte stores instead. */
typedef uint64_t hmpi_req_words_t __attribute__((vector_size(16), aligned(8), may_alias));
static inline void hmpi_req_zero(hmpi_req_t *r)
{
    hmpi_req_words_t *w = (hmpi_req_words_t *)(void *)r;
#pragma GCC unroll 32
    for (size_t k = 0; k < sizeof *r / sizeof *w; k++)
        w[k] = (hmpi_req_words_t){0, 0};
    if (sizeof *r % sizeof *w) /* MPI_Status differs between MPIs */
        memset((char *)r + sizeof *r / sizeof *w * sizeof *w, 0, sizeof *r % sizeof *w);
    r->below = MPI_REQUEST_NULL;
}

static inline hmpi_req_t *hmpi_req_of(hmpi_match_recv_t *m)
{
    return (hmpi_req_t *)(void *)((char *)m - offsetof(hmpi_req_t, m));
}

/* Handles: HMPI requests live in one reserved table, so an MPI_Request value tells
 * whose it is. With integer handles (MPICH) ours carry a tag MPICH never makes (handle
 * kind "invalid", object 0); with pointer handles (Open MPI) ours point into the table. */
enum { HMPI_REQ_MAX = 1 << 22 };
extern hmpi_req_t *hmpi_req_table; /* reserved at init (request.c) */
/* The request of every send that completed as it started (a short message in a lane):
 * one complete send request, read only, that release leaves alone, as MPICH returns one
 * "lightweight" request for all its operations complete at once. MPI promises no
 * distinct handles; waits and tests give it back as MPI_REQUEST_NULL. Slot 0 of the
 * table, made at init. */
static inline hmpi_req_t *hmpi_req_sent(void) { return &hmpi_req_table[0]; }
/* The same for every nonblocking receive from MPI_PROC_NULL: complete, with the status
 * MPI gives one (source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0). Slot 1. A halo
 * exchange at a boundary posts several a step (stencil: 5 of 6 faces at 2 ranks). */
static inline hmpi_req_t *hmpi_req_proc_null(void) { return &hmpi_req_table[1]; }
#ifdef OPEN_MPI
static inline int hmpi_req_is_ours(MPI_Request h)
{
    return (uintptr_t)h - (uintptr_t)hmpi_req_table < (uintptr_t)HMPI_REQ_MAX * sizeof(hmpi_req_t);
}
static inline hmpi_req_t *hmpi_req_obj(MPI_Request h) { return (hmpi_req_t *)(void *)h; }
static inline MPI_Request hmpi_req_handle(hmpi_req_t *r) { return (MPI_Request)(void *)r; }
#else
enum { HMPI_REQ_TAG = 0x01000000u, HMPI_REQ_MASK = 0xff000000u };
_Static_assert(HMPI_REQ_MAX <= (1 << 24), "request index fits under the tag");
static inline int hmpi_req_is_ours(MPI_Request h)
{
    return ((uint32_t)h & HMPI_REQ_MASK) == HMPI_REQ_TAG && hmpi_req_table;
}
static inline hmpi_req_t *hmpi_req_obj(MPI_Request h)
{
    return &hmpi_req_table[(uint32_t)h & ~HMPI_REQ_MASK];
}
static inline MPI_Request hmpi_req_handle(hmpi_req_t *r)
{
    return (MPI_Request)(HMPI_REQ_TAG | (uint32_t)(r - hmpi_req_table));
}
#endif

hmpi_req_t *hmpi_req_new(hmpi_req_kind_t kind);   /* NULL when the table is full */
/* Binds a request of the table to c, keeping c's state alive until its release, and
 * its derived datatype (filled in before) usable though the program may free it. */
static inline void hmpi_req_bind(hmpi_req_t *r, hmpi_comm_t *c)
{
    if (r->holds_comm)
        hmpi_comm_unref(r->comm);
    hmpi_comm_ref(c);
    r->comm = c;
    r->holds_comm = 1;
    if (__builtin_expect(r->t.derived, 0) && !r->holds_type) {
        hmpi_type_hold(r->type);
        r->holds_type = 1;
    }
}
void hmpi_req_release(hmpi_req_t *r);
/* A request that is already complete with an empty status. */
MPI_Request hmpi_req_new_done(void);
/* The same for a caller outside the engine lock (the table is guarded by that lock
 * alone under MPI_THREAD_MULTIPLE); with proc_null, a receive from MPI_PROC_NULL's
 * status. MPI_REQUEST_NULL when the table is full. */
MPI_Request hmpi_req_done(int proc_null);

/* ---- operations (the mpi/ layer validated the arguments) ---------------------------- */

/* Starts a send to local peer dst_local; r is complete on return when the send
 * could finish eagerly. Returns an MPI error code. */
int hmpi_p2p_send_start(hmpi_req_t *r, int dst_local);

/* Starts a receive (local source, or ANY_SOURCE); may complete at once. */
int hmpi_p2p_recv_start(hmpi_req_t *r);

/* One pass of the engine: incoming messages, sends in flight, the bridge. */
void hmpi_p2p_progress(void);
/* The same, engine lock taken: for a query the MPI below answered "not yet" (MPI_Test,
 * MPI_Request_get_status, MPI_Iprobe of its requests and messages). A program polling
 * such a query may wait for something that needs this rank's local progress first. */
void hmpi_p2p_progress_locked(void);

/* True when local peers may be waiting for this rank's progress (posted receives that
 * a synchronous or rendezvous send waits to see matched): then the mpi/ layer does
 * not block inside the MPI below but polls both. */
int hmpi_p2p_busy(void);

/* Waits for a request of the MPI below. When local peers may need this rank's
 * progress meanwhile (hmpi_p2p_busy), it polls the request and moves the engine: a
 * send and a receive that match, both started, complete whatever else either rank
 * does (MPI-4.1 §3.5), also while one of them is inside a call of the MPI below. When
 * statistics are counted, the wait is counted as one of family f. Every call HMPI makes
 * to the MPI below that waits for other ranks, inside a call of the program after
 * MPI_Init, waits here: collectives as their nonblocking form (MPI_Iallgather, ...)
 * then this, the others (MPI_Comm_split, MPI_Win_create, ...) after
 * hmpi_p2p_below_arrive. */
int hmpi_p2p_below_wait(MPI_Request *req, MPI_Status *status, hmpi_wait_family_t f);
/* A barrier of the MPI below over comm, waited for as above: once it returns, every
 * member of comm is inside the same collective call, so none waits for this rank's
 * point-to-point progress any more (one thread per rank), and a blocking call of the
 * MPI below over comm that follows cannot hold a matching send back. Collective: every
 * member calls it, or none. */
int hmpi_p2p_below_arrive(MPI_Comm comm);
/* MPI_Allgather of bytes from every member of comm (c's state) into all, waited for as
 * above where hmpi_p2p_below_nb allows, else the blocking call: the setups' exchanges
 * (collectives, windows). Returns the below's error code. */
int hmpi_p2p_below_allgather(const hmpi_comm_t *c, const void *mine, int bytes, void *all,
                             MPI_Comm comm, hmpi_wait_family_t f);
/* Whether HMPI may add nonblocking collectives of its own (the two above, the setups'
 * allgathers) to c's sequence in the MPI below; where not, it keeps the blocking call.
 * Not over Open MPI 4.1 once an MPI_Comm_idup was posted on c: its idup issues later
 * rounds on c from its progress, at a point in c's sequence that differs between
 * members, so a nonblocking collective of HMPI's there could match the wrong one (a
 * hang, seen in comm_idup). Every member posts its idups in the same order among its
 * collectives on c, so every member answers alike. */
static inline int hmpi_p2p_below_nb(const hmpi_comm_t *c)
{
#ifdef OPEN_MPI
    return !c->idup_posted;
#else
    (void)c;
    return 1;
#endif
}

/* Advances r (progress included) and tells whether it is complete. */
int hmpi_p2p_test(hmpi_req_t *r);
int hmpi_p2p_check(hmpi_req_t *r); /* hmpi_p2p_test without the engine's progress */

/* Waits for r to complete, making progress and yielding when oversubscribed. */
void hmpi_p2p_wait(hmpi_req_t *r);

/* Payload bytes an envelope holds: HMPI_IMMEDIATE_MAX as MPI_Init read it. The knob may
 * be lowered later (MPI_T); receivers check an immediate message against this. */
extern size_t hmpi_p2p_immediate_room;

/* What a wait for a send (send = 1) or a receive on c waits as (statistics): as c says
 * (OPI's shadows: OPI), else by the operation. */
static inline hmpi_wait_family_t hmpi_p2p_wait_family(const hmpi_comm_t *c, int send)
{
    if (c && c->wait_as)
        return (hmpi_wait_family_t)(c->wait_as - 1);
    return send ? HMPI_WAIT_SEND : HMPI_WAIT_RECV;
}

/* The short ways of MPI_Send and MPI_Recv (engine lock not taken, so not under
 * MPI_THREAD_MULTIPLE): a small contiguous message by the lane, when nothing else is in
 * the way. 0 when they did nothing: then the caller goes the general way. The receive
 * sets *err and the status (unless MPI_STATUS_IGNORE) when it returns 1. */
int hmpi_p2p_send_lane(const hmpi_comm_t *c, const void *p, size_t bytes, int dst_local, int tag);
int hmpi_p2p_recv_lane(const hmpi_comm_t *c, void *buf, size_t cap, int source, int src_local,
                       int tag, MPI_Status *status, int *err);

/* Cancels a receive not yet matched; returns 1 when cancelled. */
int hmpi_p2p_cancel(hmpi_req_t *r);

/* Looks for a matching message without receiving it: local ones, then (for a
 * wildcard on a comm with remote members) the MPI below. */
int hmpi_p2p_iprobe(hmpi_comm_t *c, int source, int tag, int *flag, MPI_Status *status);

/* Bridge to the MPI below (bridge.c). A send of mode (HMPI_MODE_*) to dest on another
 * node, counted as remote (t: the layout of count elements of type), blocking and not;
 * and the MPI below's own send of each mode, uncounted (a communicator HMPI does not
 * accelerate). */
int hmpi_bridge_send(const hmpi_layout_t *t, const void *buf, int count, MPI_Datatype type,
                     int dest, int tag, MPI_Comm comm, int mode);
int hmpi_bridge_isend(const hmpi_layout_t *t, const void *buf, int count, MPI_Datatype type,
                      int dest, int tag, MPI_Comm comm, int mode, MPI_Request *req);
int hmpi_bridge_send_below(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, int mode);
int hmpi_bridge_isend_below(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm, int mode, MPI_Request *req);
/* A receive from a remote source on r->comm,
 * posted below at once unless an earlier ANY_SOURCE receive could take its message. */
int hmpi_bridge_recv_remote(hmpi_req_t *r);
/* Receives remote messages for pending wildcards; posts deferred receives. */
void hmpi_bridge_progress(void);
/* A wildcard receive on c completed or was cancelled: deferred ones may go below. */
void hmpi_bridge_wild_done(hmpi_comm_t *c);
/* Wildcard and deferred receives waiting in the bridge. */
extern HMPI_HIDDEN int hmpi_bridge_pending;

/* The posted and unexpected lists, shared by the engine and the bridge (oldest first). */
extern HMPI_HIDDEN hmpi_match_t hmpi_p2p_match;
void hmpi_p2p_unpost(hmpi_req_t *r);
void hmpi_p2p_post(hmpi_req_t *r);
/* One step of a multi-request wait: unblocks late sends, then yields or spins. */
void hmpi_p2p_waiting(hmpi_backoff_t *b, uint64_t *since);
/* Completes r (and releases it when it was freed). */
void hmpi_p2p_finish(hmpi_req_t *r);

/* Matched probe: removes the oldest local message matching (source, tag) on c, or
 * returns NULL; hmpi_p2p_recv_message later receives it into r. */
hmpi_env_t *hmpi_p2p_take_message(hmpi_comm_t *c, int source, int tag);
/* The source, tag and size of message e, as its sender announced them (a status). */
void hmpi_p2p_message_info(const hmpi_env_t *e, int *source_p, int *tag_p, size_t *bytes_p);
void hmpi_p2p_recv_message(hmpi_req_t *r, hmpi_env_t *e);

/* Statuses. A request's own status (r->status) carries its error in MPI_ERROR. A
 * program's status gets everything but MPI_ERROR: MPI-4.1 §3.2.5 lets only the calls
 * that return several statuses write that field, and only when they return
 * MPI_ERR_IN_STATUS (mpi/request.c). None of these take MPI_STATUS_IGNORE. */
/* Not MPI_ERROR. Inline: the short way of MPI_Recv fills a status with it. */
static inline void hmpi_status_fill(MPI_Status *st, int source, int tag, size_t bytes)
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
static inline void hmpi_status_set(MPI_Status *st, int source, int tag, int error, size_t bytes)
{
    hmpi_status_fill(st, source, tag, bytes);
    st->MPI_ERROR = error;
}
/* A request's status into a program's: the MPI_ERROR the program set stays. */
static inline void hmpi_status_out(MPI_Status *dst, const MPI_Status *src)
{
    int error = dst->MPI_ERROR;
    *dst = *src;
    dst->MPI_ERROR = error;
}

/* The engine lock: taken only when the program asked for MPI_THREAD_MULTIPLE. */
extern HMPI_HIDDEN int hmpi_p2p_threaded;
void hmpi_p2p_lock_slow(void);
void hmpi_p2p_unlock_slow(void);
static inline void hmpi_p2p_lock(void)
{
    if (hmpi_p2p_threaded)
        hmpi_p2p_lock_slow();
}
static inline void hmpi_p2p_unlock(void)
{
    if (hmpi_p2p_threaded)
        hmpi_p2p_unlock_slow();
}

/* Buffered sends to local peers (bsend.c): room in the attached buffer, as the MPI
 * standard counts it (bytes + MPI_BSEND_OVERHEAD per message); MPI_ERR_BUFFER when
 * the message does not fit. */
int hmpi_bsend_reserve(const hmpi_layout_t *t);
/* Room of a delivered buffered message goes back to the attached buffer (lock held). */
void hmpi_bsend_release(size_t bytes);
/* A buffer of size bytes was attached (sign 1) or detached (-1) in the MPI below: the
 * process's (MPI_Buffer_attach), or a communicator's or a session's (MPI 4.1). All count
 * as one room (mpi/bsend.c says why); HMPI_BSEND_AUTOMATIC stands for a buffer attached as
 * MPI_BUFFER_AUTOMATIC (MPI 4.1), which bounds nothing. */
#define HMPI_BSEND_AUTOMATIC SIZE_MAX
void hmpi_bsend_attach(size_t size, int sign);
/* Whether buffered local messages are still to be received (lock held). */
int hmpi_bsend_pending(void);
/* Waits until every buffered local message is delivered (before a detach). */
void hmpi_bsend_drain(void);

int hmpi_p2p_init(void);
void hmpi_p2p_finalize(void);

#endif
