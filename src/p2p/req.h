/* req.h: the MPI request: HMPI's one object for every operation a program can wait
 * for (a send, a receive, a matched message, a polled operation, a send-receive, a
 * collective, a partitioned operation), its kinds and the table of what each kind
 * does, its MPI_Request handle, and the status helpers. The object's life (new, start,
 * test, wait, cancel, free) is req.c's; the parts above p2p (coll/, rma/, opi/) make
 * requests of their own kinds here and hand their handles to the program, which passes
 * them to MPI_Wait and its family (p2p.h, hmpi_p2p_complete). Everything here is
 * private to the process and guarded by the engine lock (hmpi_p2p_lock). */
#ifndef HMPI_P2P_REQ_H
#define HMPI_P2P_REQ_H

#include "../common/assert.h"
#include "../common/hidden.h"

#include "../core/comm.h"
#include "../core/datatype.h"
#include "match.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A message announced to a local receiver: its layout is private to p2p (engine.h). */
typedef struct hmpi_env_s hmpi_env_t;

/* ---- kinds ------------------------------------------------------------------------ */

typedef enum {
    HMPI_REQ_SEND,     /* a send to a local peer, or one the MPI below carries (below) */
    HMPI_REQ_RECV,     /* a receive: matched here, or carried by the MPI below (below) */
    HMPI_REQ_DONE,     /* completed at creation (PROC_NULL, local RMA, ...); a free slot */
    HMPI_REQ_MESSAGE,  /* an MPI_Message of MPI_Mprobe: env holds the message */
    HMPI_REQ_POLL,     /* completed by its maker's poll function (OPI takes, MPI_Comm_idup) */
    HMPI_REQ_SENDRECV, /* MPI_Isendrecv: a receive and a send under one request (op.c) */
    HMPI_REQ_COLL,     /* a nonblocking or persistent collective (coll/, registered) */
    HMPI_REQ_PART,     /* a partitioned send or receive (registered) */
    HMPI_REQ_KINDS
} hmpi_req_kind_t;

struct hmpi_req_s;

/* What a kind does, one entry per kind: the row of the table req.c dispatches through.
 * Every function runs with the engine lock held; a NULL entry means the kind has
 * nothing to do there. */
typedef struct {
    const char *name;
    /* MPI_Start of an inactive persistent request of the kind: begins one round. Returns
     * an MPI error code (the request stays inactive on an error). */
    int (*start)(struct hmpi_req_s *r);
    /* Moves r on (its own part of the work; the engine's progress runs apart): 1 once r
     * is complete, its status filled. NULL: the engine alone completes the kind. */
    int (*progress)(struct hmpi_req_s *r);
    /* MPI_Cancel of an active request: 1 when it was cancelled (the kind then completed
     * it with a cancelled status), 0 when it completes normally. */
    int (*cancel)(struct hmpi_req_s *r);
    /* What the kind holds beside the request goes, as the request is released (also
     * an inactive persistent one freed by the program). */
    void (*release)(struct hmpi_req_s *r);
    /* The operation's error is reported through its status (receives and polled
     * operations); a send's never is (MPI-4.1 §3.2.5). */
    uint8_t status_error;
    /* Progress moves every active request of the kind, whether the program tests it
     * or not (a collective's state machine: other ranks wait for this rank's part). */
    uint8_t background;
} hmpi_req_ops_t;

/* The kinds of the parts above p2p register their row at their start (before any
 * request of theirs exists); p2p's own rows are static (req.c). */
void hmpi_req_kind_register(hmpi_req_kind_t kind, const hmpi_req_ops_t *ops);

/* ---- the request ------------------------------------------------------------------ */

enum { HMPI_MODE_STANDARD, HMPI_MODE_SYNC, HMPI_MODE_READY, HMPI_MODE_BUFFERED };

/* Invariants (checked by hmpi_req_valid):
 *  - complete is set once per round, by hmpi_req_finish (or by a send's start, when
 *    the send completes as it starts); a persistent request is inactive exactly when
 *    complete and not active;
 *  - m.posted: the request is in the posted list (a receive waiting for its match);
 *  - below != MPI_REQUEST_NULL: the MPI below carries the operation (a remote receive,
 *    a remote persistent send: below_persistent) and its test completes it;
 *  - listed: the request is in the engine's list of requests progress moves (a kind
 *    run in the background, or a request freed while active);
 *  - holds_comm / holds_type: it holds a reference on comm / its derived type. */
typedef struct hmpi_req_s {
    uint8_t kind;       /* hmpi_req_kind_t */
    uint8_t mode;       /* send mode */
    uint8_t persistent; /* made by *_init: survives completion */
    uint8_t active;     /* persistent: started, not yet completed */
    uint8_t freed;      /* MPI_Request_free'd while active: release at completion */
    uint8_t wild;       /* ANY_SOURCE receive that a remote sender may satisfy */
    uint8_t cancelled;
    uint8_t holds_comm;       /* holds a reference on comm (requests of the table) */
    uint8_t below_persistent; /* below is the MPI below's persistent request (remote) */
    uint8_t holds_type;       /* holds type (a derived one) until its release */
    uint8_t listed;           /* in the engine's list of requests progress moves */
    int complete;             /* set once a round; read by wait loops of the same process */
    MPI_Status status;
    hmpi_comm_t *comm;
    void *buf;
    int count;
    MPI_Datatype type;
    hmpi_layout_t t; /* layout of count elements of type */
    int peer;        /* rank in comm: destination, or source (MPI_ANY_SOURCE) */
    int tag;
    hmpi_env_t *env;   /* send: its envelope while in flight */
    MPI_Request below; /* the MPI below's request carrying this one, if any */
    /* HMPI_REQ_POLL: called (engine lock held) with arg by every test of the request
     * until it returns 1, with its status (empty and successful until then, MPI_ERROR
     * its to set). Other kinds keep their own state in arg. */
    int (*poll)(void *arg, MPI_Status *status);
    void *arg;
    /* Its pattern in the posted list (match.h): m.posted while there; m.held for a
     * remote receive the bridge holds back behind a wildcard. */
    hmpi_match_recv_t m;
    struct hmpi_req_s *lnext, *lprev; /* the engine's list (listed) */
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

/* ---- handles ---------------------------------------------------------------------- */

/* HMPI requests live in one reserved table, so an MPI_Request value tells whose it is.
 * With integer handles (MPICH) ours carry a tag MPICH never makes (handle kind
 * "invalid", object 0); with pointer handles (Open MPI) ours point into the table. */
enum { HMPI_REQ_MAX = 1 << 22 };
extern HMPI_HIDDEN hmpi_req_t *hmpi_req_table; /* reserved at init (req.c) */
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
/* The same for every nonblocking collective that ran to its end, successfully, in its
 * start call (coll/nbc.c): complete, kind HMPI_REQ_COLL, an empty status, as MPICH 4
 * returns its builtin complete request for a collective done at once. A program that
 * starts an 8-byte MPI_Ibcast or MPI_Iallreduce and waits for it makes no request. Slot 2. */
static inline hmpi_req_t *hmpi_req_coll_done(void) { return &hmpi_req_table[2]; }
/* One of the three shared complete requests above: never released, never reused. */
static inline int hmpi_req_is_shared(const hmpi_req_t *r)
{
    return (uintptr_t)r - (uintptr_t)hmpi_req_table < 3 * sizeof(hmpi_req_t);
}
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

/* The index of one of our requests in the table and back (the Fortran bindings of Open
 * MPI's pointer handles, mpi/fortran.c); -1 for a handle that is not ours. */
static inline long hmpi_req_index(MPI_Request h)
{
    return hmpi_req_is_ours(h) ? (long)(hmpi_req_obj(h) - hmpi_req_table) : -1;
}
static inline MPI_Request hmpi_req_at(long i) { return hmpi_req_handle(&hmpi_req_table[i]); }

/* ---- life (req.c; engine lock held) ----------------------------------------------- */

hmpi_req_t *hmpi_req_new(hmpi_req_kind_t kind); /* NULL when the table is full */
/* 1 when hmpi_req_new can make one more request now (engine lock held): a caller that
 * must not fail once it began its operation asks first. */
int hmpi_req_room(void);
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
/* Completes r (and releases it when it was freed): every completion goes through here. */
void hmpi_req_finish(hmpi_req_t *r);
/* Puts r in the engine's list (progress moves it until it completes), or takes it out. */
void hmpi_req_list(hmpi_req_t *r);
void hmpi_req_unlist(hmpi_req_t *r);
/* Tests *h, a request of HMPI's or of the MPI below's (engine lock held, the engine not
 * moved: a kind's own poll calls this for the requests it is made of). Once complete it
 * is finished: its status, MPI_ERROR included, into *st (MPI_STATUS_IGNORE allowed),
 * the request freed, *h set to MPI_REQUEST_NULL, and 1 returned. MPI_REQUEST_NULL is
 * complete. */
int hmpi_req_test_handle(MPI_Request *h, MPI_Status *st);
/* A request that is already complete with an empty status; engine lock held. */
MPI_Request hmpi_req_new_done(void);
/* The same for a caller outside the engine lock; with proc_null, a receive from
 * MPI_PROC_NULL's status. MPI_REQUEST_NULL when the table is full. */
MPI_Request hmpi_req_done(int proc_null);
/* The invariants above, of r alone (HMPI_ASSERT_INTERNAL at each change of state). */
int hmpi_req_valid(const hmpi_req_t *r);

/* ---- statuses --------------------------------------------------------------------- */

/* A request's own status (r->status) carries its error in MPI_ERROR. A program's status
 * gets everything but MPI_ERROR: MPI-4.1 §3.2.5 lets only the calls that return several
 * statuses write that field, and only when they return MPI_ERR_IN_STATUS (req.c). None
 * of these take MPI_STATUS_IGNORE. */
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

/* The first check of MPI_Wait and MPI_Test: when *h is hmpi_req_coll_done(), the wait
 * returns at once, *h MPI_REQUEST_NULL and status empty (MPI-4.1 §3.7.3), and this says
 * 1; else 0. */
static inline int hmpi_req_take_coll_done(MPI_Request *h, MPI_Status *status)
{
    if (*h != hmpi_req_handle(hmpi_req_coll_done()))
        return 0;
    *h = MPI_REQUEST_NULL;
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_fill(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    return 1;
}

/* ---- the engine lock ---------------------------------------------------------------- */

/* Taken only when the program asked for MPI_THREAD_MULTIPLE. */
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

#endif
