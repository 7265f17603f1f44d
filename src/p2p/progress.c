/* progress.c: the engine as a whole: its lock, one pass of progress (arrivals, sends in
 * flight, the bridge, the listed requests, a poke of the MPI below now and then), the
 * one wait's step, the hook every wait of HMPI calls (shm/wait.h), and init/finalize.
 * Private to the process. */
#include "engine.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../heap/heap.h"
#include "../shm/wait.h"

#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

hmpi_p2p_engine_t hmpi_p2p_engine = {
    .inflight_tailp = &hmpi_p2p_engine.inflight_head,
    .engine_lock = PTHREAD_MUTEX_INITIALIZER,
    .poke_comm = MPI_COMM_NULL,
    .poke_req = MPI_REQUEST_NULL,
};
hmpi_match_t hmpi_p2p_match; /* posted receives, unexpected messages */
size_t hmpi_env_own_offset;
int hmpi_p2p_threaded;
size_t hmpi_p2p_immediate_room;

void hmpi_p2p_lock_slow(void) { pthread_mutex_lock(&hmpi_p2p_engine.engine_lock); }
void hmpi_p2p_unlock_slow(void) { pthread_mutex_unlock(&hmpi_p2p_engine.engine_lock); }

/* The MPI below progresses only inside its own calls. A rank spinning in HMPI may be
 * what a remote peer waits for (a rendezvous, a nonblocking collective, a passive-target
 * lock), so every so often progress asks the MPI below to move too. MPI_Iprobe is not
 * enough for that in MPICH (its one-sided operations stay put); testing a pending
 * receive runs the whole progress engine in both MPIs. So one receive that never
 * matches stays posted on a private copy of HMPI's self (node.h) while HMPI runs. */

static void poke_below_now(void)
{
    if (hmpi_p2p_engine.poke_req != MPI_REQUEST_NULL) {
        int flag;
        PMPI_Test(&hmpi_p2p_engine.poke_req, &flag, MPI_STATUS_IGNORE);
    }
}

static void poke_below(void)
{
    /* and at once after a wait napped (shm/wait.h): a sleeping rank serves remote peers */
    if ((++hmpi_p2p_engine.poke_calls & 63) == 0 ||
        atomic_load_explicit(&hmpi_wait_napped, memory_order_relaxed)) {
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
    return hmpi_p2p_match.posted_head != NULL || hmpi_p2p_part_receiving > 0;
}

void hmpi_p2p_progress(void)
{
    if (!hmpi_p2p_engine.me)
        return; /* HMPI is off: nothing of ours can be pending */
    poke_below();
    hmpi_p2p_take_arrivals();
    /* Only envelopes someone waits on are polled: reading the state of an immediate
     * message the receiver is about to mark DONE would steal its cache line. Those are
     * recycled from the head of the list as the sender needs envelopes. */
    if (hmpi_p2p_engine.inflight_watched)
        hmpi_p2p_inflight_walk();
    if (hmpi_bridge_pending)
        hmpi_bridge_progress();
    if (hmpi_req_listed())
        hmpi_req_progress_listed();
}

void hmpi_p2p_progress_locked(void)
{
    hmpi_p2p_lock();
    hmpi_p2p_progress();
    hmpi_p2p_unlock();
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The one wait's step (engine.h): lock held on entry and exit. */
void hmpi_p2p_wait_step(hmpi_backoff_t *b, uint64_t *since)
{
    if (hmpi_backoff_yielding(b) && hmpi_p2p_engine.inflight_head) {
        uint64_t t = now_us();
        if (!*since)
            *since = t;
        else if (t - *since >= (uint64_t)hmpi_knobs.EAGER_DELAY_US)
            hmpi_p2p_unblock_sends(), *since = t;
    }
    hmpi_p2p_unlock();
    hmpi_backoff(b);
    hmpi_p2p_lock();
}

/* ---- init ------------------------------------------------------------------------- */

static volatile uint64_t cma_probe_word = 0x484d5049434d4131ULL;

/* Can this rank read a local peer's private memory? Each rank says the address of a
 * private word and reads every peer's (collective over the node). */
static int cma_check(void)
{
    if (!hmpi_knobs.CMA)
        return 0;
    int64_t mine = (int64_t)(uintptr_t)&cma_probe_word;
    hmpi_node_exchange(&mine, 1);
    int ok = hmpi_node.cma_allowed; /* Yama may forbid it (node.c); still collective */
    for (int l = 0; l < hmpi_node.size && ok; l++) {
        uint64_t v = 0;
        struct iovec local = {&v, sizeof v},
                     remote = {(void *)(uintptr_t)hmpi_node_said(l)[0], sizeof v};
        ok = process_vm_readv(hmpi_ctrl()->rank[l].pid, &local, 1, &remote, 1, 0) ==
                 (ssize_t)sizeof v &&
             v == cma_probe_word;
    }
    return (int)hmpi_node_agree_min(ok);
}

/* The engine's communicator of the MPI below: a private copy of HMPI's self (node.h)
 * for the poke. None alone in the world: no remote peer can wait for this rank (and
 * MPICH 4.0.2 crashes in MPI_Test of the poke's receive when it runs one process under
 * sessions). */
static void below_comms_make(void)
{
    if (hmpi_node.world_size > 1 &&
        PMPI_Comm_dup(hmpi_node.self, &hmpi_p2p_engine.poke_comm) == MPI_SUCCESS)
        PMPI_Irecv(NULL, 0, MPI_BYTE, 0, 0, hmpi_p2p_engine.poke_comm, &hmpi_p2p_engine.poke_req);
}

static void below_comms_free(void)
{
    if (hmpi_p2p_engine.poke_req != MPI_REQUEST_NULL) {
        PMPI_Cancel(&hmpi_p2p_engine.poke_req);
        PMPI_Wait(&hmpi_p2p_engine.poke_req, MPI_STATUS_IGNORE);
    }
    if (hmpi_p2p_engine.poke_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&hmpi_p2p_engine.poke_comm);
}

int hmpi_p2p_world_moved(void)
{
    below_comms_free();
    below_comms_make();
    return 0;
}

int hmpi_p2p_init(int provided)
{
    if (hmpi_req_table_init() != 0)
        return -1;
    hmpi_p2p_threaded = provided == MPI_THREAD_MULTIPLE;
    hmpi_ctrl_t *ctrl = hmpi_ctrl();
    hmpi_p2p_engine.me = &ctrl->rank[hmpi_node.rank];
    hmpi_p2p_engine.me->pid = getpid();
    if (hmpi_node.rank == 0) {
        ctrl->nranks = hmpi_node.size;
        ctrl->magic = HMPI_CTRL_MAGIC;
    }
    size_t line = HMPI_CACHE_LINE;
    size_t payload = hmpi_p2p_immediate_room = (size_t)hmpi_knobs.IMMEDIATE_MAX;
    size_t body = sizeof(((hmpi_env_t *)0)->u) > payload ? sizeof(((hmpi_env_t *)0)->u) : payload;
    hmpi_env_own_offset = (offsetof(hmpi_env_t, u) + body + line - 1) / line * line;
    hmpi_p2p_engine.env_bytes =
        hmpi_env_own_offset + (sizeof(hmpi_env_own_t) + line - 1) / line * line;
    if (hmpi_p2p_lanes_alloc() != 0)
        return -1;
    hmpi_node_exchange(NULL, 0); /* every pid and lane is published */
    if (ctrl->magic != HMPI_CTRL_MAGIC || ctrl->nranks != hmpi_node.size) {
        hmpi_log_error("the shared region holds no control block of this node's %d ranks "
                       "(magic %#llx, %d ranks): not the region local rank 0 set up",
                       hmpi_node.size, (unsigned long long)ctrl->magic, ctrl->nranks);
        return -1;
    }
    hmpi_p2p_lanes_connect();
    below_comms_make();
#if HMPI_MPI4_CALLS
    hmpi_req_kind_register(HMPI_REQ_PART, &hmpi_p2p_part_ops); /* (part.c) */
#endif
    hmpi_p2p_engine.cma_ok = cma_check();
    hmpi_p2p_engine.me->cma_ok = hmpi_p2p_engine.cma_ok;
    hmpi_wait_progress = wait_progress;
    return 0;
}

void hmpi_p2p_finalize(void)
{
    hmpi_wait_progress = NULL;
    hmpi_p2p_engine.me = NULL;
    hmpi_p2p_engine.lane_k = 0;
    free(hmpi_p2p_engine.to), free(hmpi_p2p_engine.from);
    hmpi_p2p_engine.to = NULL, hmpi_p2p_engine.from = NULL;
    free(hmpi_p2p_engine.ring);
    hmpi_p2p_engine.ring = NULL, hmpi_p2p_engine.bell = NULL;
    below_comms_free();
    /* Nothing to wait for: envelopes and bounce copies live in the shared file, which
     * stays mapped (and readable by peers) until the last local rank exits. */
}
