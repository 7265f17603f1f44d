/* opi.h: ownership passing (the OPI paper, §3), internal to src/opi.
 * An OPI buffer is [hmpi_opi_hdr_t, 64 B][data]: the header says whose the buffer is and
 * in which state. Between ranks of one node only the data pointer travels; to other
 * nodes (and under HMPI_DISABLE=1) the contents do. Every OPI message travels on a
 * shadow communicator (a dup of the user's), so it never meets an ordinary receive.
 * Files: pool.c (buffers, per-rank pools, the return queue), known.c (private buffers
 * under pass-through), context.c (init, shadows, errors, datatypes), give.c (OPI_Give,
 * sends in flight), take.c (OPI_Take). */
#ifndef HMPI_OPI_H
#define HMPI_OPI_H

#include "hmpi.h"
#include "../core/comm.h"
#include "../core/datatype.h"
#include "../p2p/p2p.h"
#include "../shm/queue.h"

#include <assert.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* ---- buffers ----------------------------------------------------------------------- */

#define OPI_HDR_MAGIC 0x4f50494255464652ULL /* "OPIBUFFR", xor'ed with the header's address */
#define OPI_MAX_LEN ((size_t)1 << 46)       /* largest OPI_Alloc */

/* State word of a buffer: (holder << 8) | state. The holder is the local rank that
 * holds it (0 under pass-through, where buffers never leave their process).
 *  FREE:  in a pool, or on its owner's return queue; only the pool's rank touches it.
 *  HELD:  the holder's program owns it (after OPI_Alloc or OPI_Take).
 *  GIVEN: handed to OPI_Give by the holder; in flight until a taker (local) or the
 *         send of its contents (remote) is done with it.
 * Protocol: every transition is made by the rank that holds the buffer at that moment.
 * Ownership moves only through messages (HMPI's queues push with release and take with
 * acquire; the MPI below orders its own) or through the return queue (same), so those
 * order the header's plain fields; the state word is atomic (relaxed) only so that a
 * misuse -- two ranks freeing one buffer -- is a detected race (one CAS wins) rather
 * than undefined behaviour. */
enum { OPI_FREE = 1, OPI_HELD = 2, OPI_GIVEN = 3 };
#define OPI_STATE(holder, s) (((uint32_t)(holder) << 8) | (uint32_t)(s))

typedef struct hmpi_opi_hdr_s {
    hmpi_qnode_t link;      /* pool list, or the owner's return queue (FREE only) */
    uint64_t magic;         /* OPI_HDR_MAGIC ^ address of this header, while alive */
    uint64_t size;          /* bytes the program asked for: what a give may hold */
    uint64_t len;           /* bytes of data given: written by the giver before it sends */
    void *data;             /* == this + 1: the 8 bytes a local give sends */
    _Atomic uint32_t state; /* OPI_STATE(holder, FREE/HELD/GIVEN) */
    uint32_t cls;           /* size class (pool.c): the capacity */
    char pad[16];
} hmpi_opi_hdr_t;

static_assert(sizeof(hmpi_opi_hdr_t) == 64, "the header keeps the data cache-line aligned");
static_assert(offsetof(hmpi_opi_hdr_t, link) == 0, "queue and pool nodes are headers");

static inline hmpi_opi_hdr_t *hmpi_opi_hdr(void *data) { return (hmpi_opi_hdr_t *)data - 1; }

/* ---- process-wide state (context.c) -------------------------------------------------- */

typedef struct {
    _Atomic int ready; /* set (release) once the rest is written: OPI calls may run */
    int me;            /* holder id of this rank: its local rank, 0 under pass-through */
    int active;        /* HMPI accelerates the job: local peers get pointers */
    int threaded;      /* MPI_THREAD_MULTIPLE: take hmpi_opi_lock */
    int tag_ub;
} hmpi_opi_state_t;

extern hmpi_opi_state_t hmpi_opi;

/* One communicator as OPI sees it. */
typedef struct {
    MPI_Comm shadow; /* private dup of the user's: OPI's own matching context */
    hmpi_comm_t *hs; /* HMPI's state of the shadow, or NULL (pass-through, intercomm) */
    int peers;       /* ranks addressable (remote group size of an intercomm) */
} hmpi_opi_comm_t;

/* An OPI message's buffer and peer on oc's shadow, for the point-to-point operations
 * (p2p.h): the MPI below's when HMPI does not accelerate the shadow. The datatype was
 * checked (hmpi_opi_layout). */
static inline hmpi_p2p_args_t hmpi_opi_args(const hmpi_opi_comm_t *oc, void *buf, int count,
                                            MPI_Datatype type, int peer, int tag)
{
    hmpi_p2p_args_t a = {.c = oc->hs,
                         .comm = oc->shadow,
                         .buf = buf,
                         .count = count,
                         .type = type,
                         .peer = peer,
                         .tag = tag,
                         .mode = HMPI_MODE_STANDARD};
    if (oc->hs)
        hmpi_layout_get(type, count, &a.t);
    return a;
}

/* Makes OPI usable (lazily, once) when MPI is up; returns 0 or an MPI error code. */
int hmpi_opi_ready_slow(void);
static inline int hmpi_opi_ready(void)
{
    return __builtin_expect(atomic_load_explicit(&hmpi_opi.ready, memory_order_acquire), 1)
               ? MPI_SUCCESS
               : hmpi_opi_ready_slow();
}

/* The OPI view of comm, or an error code (MPI_ERR_COMM, or OPI's "not enabled"). */
int hmpi_opi_comm_get(MPI_Comm comm, hmpi_opi_comm_t **oc_p);

/* Errors specific to OPI: codes of a standard class with their own message. */
typedef enum {
    OPI_E_ARG_NULL,  /* MPI_ERR_ARG: the void ** argument is NULL */
    OPI_E_BUF_NULL,  /* MPI_ERR_BUFFER: *ptr is NULL */
    OPI_E_FOREIGN,   /* MPI_ERR_BUFFER: not an OPI buffer */
    OPI_E_FREED,     /* MPI_ERR_BUFFER: already freed */
    OPI_E_NOT_HELD,  /* MPI_ERR_BUFFER: given away, or another rank's */
    OPI_E_TOO_SMALL, /* MPI_ERR_COUNT: count elements do not fit in the buffer */
    OPI_E_TOO_LARGE, /* MPI_ERR_ARG: OPI_Alloc length beyond OPI_MAX_LEN */
    OPI_E_COMM,      /* MPI_ERR_COMM: communicator not enabled for OPI */
    OPI_E_TYPE,      /* MPI_ERR_TYPE: negative lower bound or extent */
    OPI_E_NO_INIT,   /* MPI_ERR_OTHER: OPI was not set up at MPI_Init */
    OPI_E_COUNT
} hmpi_opi_err_t;

/* The MPI error code of an OPI error (its class when no code could be made). */
int hmpi_opi_code(hmpi_opi_err_t e);

/* Raises code through comm's error handler (MPI_COMM_WORLD's for MPI_COMM_NULL). */
int hmpi_opi_raise(MPI_Comm comm, int code);

/* A request that is complete already: what an OPI_Igive hands back (its buffer is the
 * library's at once), or with proc_null an OPI_Itake from MPI_PROC_NULL (its status).
 * On a shadow HMPI accelerates it is an HMPI request (hmpi_req_done); otherwise the MPI
 * below makes it. Returns 0 or an MPI error code. */
int hmpi_opi_req_done(const hmpi_opi_comm_t *oc, int proc_null, MPI_Request *req);

/* The lock of OPI's process-private state (pools, sends in flight, take operations):
 * taken only under MPI_THREAD_MULTIPLE. Lock order: HMPI's engine lock, then this. */
void hmpi_opi_lock_slow(void);
void hmpi_opi_unlock_slow(void);
static inline void hmpi_opi_lock(void)
{
    if (hmpi_opi.threaded)
        hmpi_opi_lock_slow();
}
static inline void hmpi_opi_unlock(void)
{
    if (hmpi_opi.threaded)
        hmpi_opi_unlock_slow();
}

/* The layout of count elements (count >= 0) of a committed type, which OPI lays out from
 * a buffer's pointer: a negative true lower bound or extent is OPI_E_TYPE. Returns
 * MPI_ERR_TYPE or OPI's code on error. */
int hmpi_opi_layout(MPI_Datatype type, int count, hmpi_layout_t *l);

/* The checks OPI_Give and OPI_Take (and their nonblocking forms) share, in this order:
 * OPI is up, comm is enabled (*oc_p), ptr is not NULL, count is not negative, type is
 * committed, and its layout of count elements (*l, hmpi_opi_layout). fn names the call
 * in the messages. Returns 0 or the MPI error code of the first check that failed. */
int hmpi_opi_check_msg(void **ptr, int count, MPI_Datatype type, MPI_Comm comm,
                       hmpi_opi_comm_t **oc_p, hmpi_layout_t *l, const char *fn);

/* Bytes from the pointer that the elements reach (0 when they hold no data). */
static inline size_t hmpi_opi_span(const hmpi_layout_t *l)
{
    return l->size ? (size_t)l->lo + l->span : 0;
}

/* The data is one run from the pointer: memcpy moves it. */
static inline int hmpi_opi_contig(const hmpi_layout_t *l) { return l->contig && l->lo == 0; }

/* ---- pools (pool.c) ------------------------------------------------------------------- */

/* A HELD buffer with at least len usable bytes; returns 0 or MPI_ERR_NO_MEM. */
int hmpi_opi_pool_get(size_t len, hmpi_opi_hdr_t **h_p);
/* Takes this rank's buffers back from its return queue (gives and takes call it). */
void hmpi_opi_pool_reclaim(void);
/* Takes back a buffer this rank holds (its state is set FREE here). */
void hmpi_opi_pool_put(hmpi_opi_hdr_t *h);
void hmpi_opi_pool_put_locked(hmpi_opi_hdr_t *h);

/* Checks that data is an OPI buffer this rank holds and moves it from HELD to state
 * `to` (one CAS). Returns 0 or an OPI error code; the header on success. */
int hmpi_opi_buf_claim(void *data, uint32_t to, hmpi_opi_hdr_t **h_p);

/* Private buffers (pass-through) known to OPI (known.c); hmpi_opi_lock held. */
int hmpi_opi_known_add_locked(const hmpi_opi_hdr_t *h); /* 0, or -1 without memory */
void hmpi_opi_known_remove_locked(const hmpi_opi_hdr_t *h);
int hmpi_opi_known_has_locked(const hmpi_opi_hdr_t *h);

/* ---- give and take ---------------------------------------------------------------------- */

/* Completes sends of contents in flight, returning their buffers to the pool; returns
 * how many came back. */
int hmpi_opi_give_progress(void);
/* At finalize: completes what has completed, lets the MPI below finish the rest. */
void hmpi_opi_give_shutdown(void);

#endif
