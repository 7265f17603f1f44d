/* rma.h: HMPI's one-sided communication, shared by the files of src/rma. A window stays
 * the MPI below's (attributes, names, error handlers, and every target that HMPI cannot
 * reach directly go through it); beside it HMPI keeps, in a table keyed by the handle,
 * what an origin needs to reach each local target by itself: base, size, displacement
 * unit, and the window's control block in the shared heap (ctrl.h).
 *
 * Two regimes, fixed at creation and the same in every member:
 *  - local: every member is on this node and reachable directly (its memory is in the
 *    shared heap, or process_vm_readv/writev works on it). Data moves by memcpy (or CMA)
 *    and every synchronization runs in shared memory: the below's window is never
 *    synchronized.
 *  - mixed: some member is on another node, or cannot be reached directly. Put and get
 *    to reachable local targets are still direct; everything else, and every
 *    accumulate (whose atomicity must hold against origins the MPI below serves), goes
 *    through the below's window, so every synchronization also runs below. */
#ifndef HMPI_RMA_H
#define HMPI_RMA_H

#include "ctrl.h"
#include "../common/assert.h"
#include "../common/hash.h"
#include "../common/hidden.h"
#include "../core/datatype.h"
#include "../shm/wait.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How an origin reaches one target. */
typedef enum {
    HMPI_RMA_DIRECT, /* loads and stores: the memory is in the shared heap */
    HMPI_RMA_CMA,    /* process_vm_readv/writev into the target's private memory */
    HMPI_RMA_BELOW,  /* the MPI below's window (another node, or no other way) */
} hmpi_rma_path_t;

typedef struct {
    char *base;    /* the target's window (DIRECT: the same address in this rank) */
    uint64_t size; /* bytes */
    int disp_unit;
    int wl;       /* index among the window's local members, -1 when remote */
    uint8_t path; /* hmpi_rma_path_t */
    pid_t pid;    /* the target's process (CMA) */
} hmpi_rma_member_t;

/* How a wait loop of src/rma waits (hmpi_rma_wait_step). */
typedef struct {
    hmpi_backoff_t b;
} hmpi_rma_wait_t;

/* Access marks per target (hmpi_win_t.acc). */
enum {
    HMPI_ACC_START = 1,   /* in the group of MPI_Win_start */
    HMPI_ACC_SHARED = 2,  /* MPI_Win_lock(MPI_LOCK_SHARED) */
    HMPI_ACC_EXCL = 4,    /* MPI_Win_lock(MPI_LOCK_EXCLUSIVE) */
    HMPI_ACC_NOCHECK = 8, /* locked with MPI_MODE_NOCHECK: no lock word taken */
    HMPI_ACC_LOCKED = HMPI_ACC_SHARED | HMPI_ACC_EXCL,
};

/* One window, private to this process. The epoch fields are changed only by the
 * synchronization calls (the standard forbids racing them with operations). */
typedef struct hmpi_win_s {
    MPI_Win handle;         /* the MPI below's window */
    int flavor;             /* MPI_WIN_FLAVOR_* the program asked for */
    int model;              /* MPI_WIN_UNIFIED: loads and stores see RMA at once */
    void *attr_base;        /* MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT as the */
    MPI_Aint attr_size;     /* program was given them (some MPIs adjust the base of */
    int attr_disp_unit;     /* a window over memory they did not allocate) */
    int rank, size;         /* in the window's group */
    int nlocal, wl;         /* local members; this rank's index among them */
    int mixed;              /* see the top of this file */
    int dynamic;            /* MPI_Win_create_dynamic: displacements are addresses */
    hmpi_rma_member_t *mem; /* [size] */
    int *rank_of_wl;        /* [nlocal] */
    hmpi_rma_ctrl_t *ctrl;  /* the node's control block (shared heap) */
    hmpi_barrier_t bar;     /* this member's side of ctrl's barrier */
    int leader;             /* this rank allocated ctrl and frees it */
    void *own_mem;          /* heap memory of Win_allocate(_shared) to free, or NULL */
    int noncontig;          /* shared window made with alloc_shared_noncontig=true */
    MPI_Group group;        /* the window's group, for PSCW groups */
    /* epochs */
    int fence;                /* a fence without NOSUCCEED opened an epoch */
    int lock_all;             /* in MPI_Win_lock_all */
    int lock_all_nocheck;     /* ... with MPI_MODE_NOCHECK: no lock words taken */
    int nlocks;               /* targets locked with MPI_Win_lock */
    int started, posted;      /* in an access (start) / exposure (post) epoch */
    uint8_t *acc;             /* [size]: HMPI_ACC_* marks */
    int *start_ranks, nstart; /* [size]: the targets of the access epoch */
    int *post_ranks, npost;   /* [size]: the origins of the exposure epoch */
    uint32_t *seen_post;      /* [nlocal]: posts consumed from each local target */
    uint32_t *seen_done;      /* [nlocal]: completions consumed from each local origin */
    int *scratch;             /* [size]: group translation */
    hmpi_rma_wait_t polls;    /* MPI_Win_test calls that found the epoch still open */
    unsigned char sink;       /* mixed: where the gets that force lock grants land */
    struct hmpi_win_s *next;  /* hash chain */
} hmpi_win_t;

/* The walker of the assertions (common/assert.h), window.c: 1 when w is consistent, the
 * epochs' state machine included. O(size): the expensive level, after every change of a
 * window's synchronization state. It reads w alone (private memory), never the
 * control block, which the other members write. */
int hmpi_rma_win_is_valid(const hmpi_win_t *w);

/* The window table (window.c): hash chains keyed by the below's handle. */
enum { HMPI_WIN_BUCKET_BITS = 6, HMPI_WIN_BUCKETS = 1 << HMPI_WIN_BUCKET_BITS };
extern HMPI_HIDDEN hmpi_win_t *hmpi_win_table[HMPI_WIN_BUCKETS];

static inline unsigned hmpi_win_bucket(MPI_Win win)
{
    return hmpi_hash_handle((uintptr_t)win, HMPI_WIN_BUCKET_BITS);
}

/* The state of win, or NULL when HMPI does not accelerate it (every call passes).
 * Inline: MPI_Put and MPI_Get of 8 bytes cost a few dozen instructions in all. */
static inline hmpi_win_t *hmpi_win_get(MPI_Win win)
{
    for (hmpi_win_t *w = hmpi_win_table[hmpi_win_bucket(win)]; w; w = w->next)
        if (w->handle == win)
            return w;
    return NULL;
}

/* ---- creation steps shared by the window constructors (window.c) ---------------------- */

struct hmpi_comm_s;

/* The communicator's state when windows on it may be accelerated, else NULL. */
struct hmpi_comm_s *hmpi_rma_comm(MPI_Comm comm);

/* Collective over comm: publishes this rank's part of a window (base, size, disp_unit;
 * ok = 0 when its memory could not be had) and builds the window's state. Returns NULL,
 * in every member alike, when the window is not to be accelerated. */
hmpi_win_t *hmpi_rma_setup(struct hmpi_comm_s *c, MPI_Comm comm, void *base, MPI_Aint size,
                           int disp_unit, int ok, int flavor);
/* Enters a state made by hmpi_rma_setup into the table under the below's new window. */
int hmpi_rma_install(hmpi_win_t *w, MPI_Win win);
/* Drops a state that was set up but not installed (the below's creation failed). */
void hmpi_rma_discard(hmpi_win_t *w);
/* The below's MPI_Win_create over a window's memory, quietly and collectively: an
 * error is returned in every member alike, not raised, so that the caller can let the
 * below do it all instead (Open MPI 4.1 has no MPI_Win_create on MPI_COMM_SELF). */
int hmpi_rma_below_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                          MPI_Win *win);
/* The end of MPI_Win_allocate(_shared) for a state w made by hmpi_rma_setup (or NULL, when
 * some member's heap could not serve the window): the below's window over mine, this
 * rank's part of own (a heap block, or NULL). Returns 1 with the below's window in *win
 * and own kept as w's to free; else 0 with w discarded and own freed, for the caller to
 * let the below allocate it all. */
int hmpi_rma_below_own(hmpi_win_t *w, void *mine, void *own, MPI_Aint size, int disp_unit,
                       MPI_Info info, MPI_Comm comm, MPI_Win *win);

/* The one place an RMA error is raised: through the window's error handler. */
static inline int hmpi_win_raise(MPI_Win win, int code)
{
    if (code != MPI_SUCCESS)
        PMPI_Win_call_errhandler(win, code);
    return code;
}

/* May an operation address target rank t now? MPI_SUCCESS, MPI_ERR_RANK or
 * MPI_ERR_RMA_SYNC. passive: the request-based calls need a lock or lock_all. */
static inline int hmpi_rma_check_access(const hmpi_win_t *w, int t, int passive)
{
    if (t < 0 || t >= w->size)
        return MPI_ERR_RANK;
    if (w->lock_all || (w->acc[t] & HMPI_ACC_LOCKED))
        return MPI_SUCCESS;
    if (!passive && (w->fence || w->acc[t]))
        return MPI_SUCCESS;
    return MPI_ERR_RMA_SYNC;
}

/* ---- waiting (every wait loop of src/rma) ------------------------------------------ */

/* One step of a wait: HMPI's one wait (shm/wait.h), which for a mixed window also moves
 * the MPI below as it yields (a peer may be inside the below waiting for us). */
static inline void hmpi_rma_wait_step(const hmpi_win_t *w, hmpi_rma_wait_t *wt)
{
    hmpi_wait_step(&wt->b, w && w->mixed);
}

/* The local barrier of the window's members on this node (fence, Win_free). */
void hmpi_rma_barrier(hmpi_win_t *w);

/* ---- moving data (move.c) ------------------------------------------------------------ */

/* Where count elements of type land in a target: the region an operation touches. */
typedef struct {
    char *addr; /* the target buffer: base + disp * disp_unit (dynamic: disp) */
    int count;
    MPI_Datatype type;
    hmpi_layout_t l; /* the bytes touched are [addr + l.lo, + l.span); none when
                           l.size is 0 (then l.lo and l.span are 0) */
    uint8_t path;    /* DIRECT or CMA */
    pid_t pid;
} hmpi_rma_region_t;

/* An origin-side buffer (result buffers too). */
typedef struct {
    void *addr;
    int count;
    MPI_Datatype type;
    hmpi_layout_t l; /* where the data lies from addr (core/datatype.h) */
} hmpi_rma_buf_t;

/* Describes target region and checks it lies inside the target's window. Returns
 * MPI_SUCCESS, MPI_ERR_COUNT, MPI_ERR_TYPE or MPI_ERR_RMA_RANGE. */
int hmpi_rma_region(const hmpi_win_t *w, const hmpi_rma_member_t *m, MPI_Aint disp, int count,
                    MPI_Datatype type, hmpi_rma_region_t *r_p);
int hmpi_rma_buf(const void *addr, int count, MPI_Datatype type, hmpi_rma_buf_t *b_p);
/* The same checks for a target the MPI below serves (which may not check the range). */
int hmpi_rma_check_below(const hmpi_win_t *w, int t, MPI_Aint disp, int count, MPI_Datatype type);

/* Moves packed bytes (r->bytes) into / out of a target region. */
int hmpi_rma_write(const hmpi_rma_region_t *r, const void *packed);
int hmpi_rma_read(const hmpi_rma_region_t *r, void *packed);
/* Put and get between an origin buffer and a region (sizes already matched). */
int hmpi_rma_put(const hmpi_rma_buf_t *o, const hmpi_rma_region_t *r);
int hmpi_rma_get(const hmpi_rma_buf_t *o, const hmpi_rma_region_t *r);
/* Packs / unpacks an origin-side buffer (contiguous ones are plain copies). */
int hmpi_rma_pack(const hmpi_rma_buf_t *b, void *packed);
int hmpi_rma_unpack(const void *packed, const hmpi_rma_buf_t *b);

/* ---- accumulate (acc.c, op.c) --------------------------------------------------------- */

/* 1 when type is a basic predefined type (its own element); *size_p its size. */
int hmpi_rma_op_named(MPI_Datatype type, size_t *size_p);
/* inout = in op inout over n elements of elem; 0 when HMPI does not know the pair (the
 * caller then uses MPI_Reduce_local). */
int hmpi_rma_op_apply(MPI_Op op, MPI_Datatype elem, const void *in, void *inout, size_t n);

/* The accumulate lock of local target wl, taken and given back with waiting. */
void hmpi_rma_acc_lock(hmpi_win_t *w, int wl);
void hmpi_rma_acc_unlock(hmpi_win_t *w, int wl);

/* ---- statistics ------------------------------------------------------------------------- */

enum { HMPI_RMA_PUT, HMPI_RMA_GET, HMPI_RMA_ACC };
/* An operation done by this rank on a local target (cma: through process_vm_*). */
static inline void hmpi_rma_count_local(int kind, size_t bytes, int cma)
{
    if (!hmpi_stats_counting()) /* one test when off (the direct put's hot path) */
        return;
    static const hmpi_stat_t ops[] = {HMPI_STAT_rma_puts_local, HMPI_STAT_rma_gets_local,
                                      HMPI_STAT_rma_accs_local};
    hmpi_stat_add(ops[kind], 1);
    hmpi_stat_add(HMPI_STAT_rma_bytes_local, bytes);
    if (cma)
        hmpi_stat_add(HMPI_STAT_rma_cma, 1);
}
/* An operation handed to the MPI below: count elements of type. */
void hmpi_rma_count_below(int kind, int count, MPI_Datatype type);

/* MPI_Win_sync of the MPI below needs a passive epoch there. */
static inline int hmpi_rma_in_passive(const hmpi_win_t *w) { return w->lock_all || w->nlocks > 0; }

#endif
