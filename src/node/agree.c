/* agree.c: what the node's ranks tell each other at MPI_Init. Every blocking call of the
 * MPI below spins in its waits: with more ranks than cores each step of a collective
 * costs a time slice (a tenth of a second and more at 32 ranks on 2 cores, MPI_Comm_split
 * three times that), so the node makes no communicator of the MPI below, and what HMPI
 * asks of the MPI below at MPI_Init is nonblocking, waited for by hmpi_node_below_wait,
 * which yields the core between tests. Until the region is mapped the node's ranks talk
 * through local rank 0, by messages of the MPI below over HMPI's world (node.h: nobody
 * else's message can be there yet, as MPI_Init has not returned, or under sessions the
 * communicator is HMPI's own). Once it is mapped they agree
 * through its control area, where a wait parks (shm/wait.h). An exchange is a
 * dissemination barrier (shm/barrier.h, its flags after the ranks' blocks) around the
 * words each rank wrote into its block's say line: cost ceil(log2 P) line transfers on
 * the critical path, and each rank then reads the lines it needs (P for a minimum).
 *
 * Consecutive exchanges use the two say lines in turn: a rank rewrites a line two
 * exchanges later, after the barrier of the exchange in between, which every rank
 * reaches only once it has read the line. */
#include "node.h"
#include "../common/assert.h"
#include "../shm/barrier.h"
#include "../shm/ctrl.h"
#include "../shm/wait.h"

#include <string.h>

/* ---- before the region: through local rank 0 --------------------------------------- */

enum { TAG = 32001 }; /* below MPI_TAG_UB's least value, 32767 */

static int world_of(int local) { return hmpi_node.world_of_local[local]; }

int hmpi_node_below_wait(int n, MPI_Request *reqs)
{
    /* Alone in the world there is nobody to yield to; and MPICH 4.0.2 crashes in
     * MPI_Test of a pending request when it runs one process under sessions. */
    int size = 0;
    PMPI_Comm_size(hmpi_node.world, &size);
    int err = MPI_SUCCESS;
    for (int i = 0; size == 1 && i < n && !err; i++)
        err = PMPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    if (size == 1)
        return err;
    hmpi_backoff_t b = {.no_park = 1}; /* the MPI below wakes no futex (shm/wait.h) */
    for (int i = 0; i < n && !err;) {  /* each test moves them all */
        int flag = 0;
        if ((err = PMPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE)) == MPI_SUCCESS && flag)
            i++;
        else if (!err)
            hmpi_backoff(&b);
    }
    hmpi_backoff_end(&b);
    return err;
}

/* Local rank 0 posts its messages CHUNK at a time, so that the ranks run as they are
 * scheduled, not in the order of a loop of blocking calls. */
enum { CHUNK = 64 };

/* The local ranks of the chunk that starts at local rank r. */
static int chunk_at(int r) { return hmpi_node.size - r < CHUNK ? hmpi_node.size - r : CHUNK; }

/* Local rank 0 sends count of type at buf to every other local rank. */
static void send_all(const void *buf, int count, MPI_Datatype type)
{
    MPI_Request q[CHUNK];
    for (int r = 1; r < hmpi_node.size; r += CHUNK) {
        int k = chunk_at(r);
        for (int i = 0; i < k; i++)
            PMPI_Isend(buf, count, type, world_of(r + i), TAG, hmpi_node.world, &q[i]);
        hmpi_node_below_wait(k, q);
    }
}

void hmpi_node_bcast_early(void *buf, int bytes)
{
    if (hmpi_node.rank == 0) {
        send_all(buf, bytes, MPI_BYTE);
        return;
    }
    MPI_Request q;
    PMPI_Irecv(buf, bytes, MPI_BYTE, world_of(0), TAG, hmpi_node.world, &q);
    hmpi_node_below_wait(1, &q);
}

void hmpi_node_min_early(int *v, int n)
{
    HMPI_ASSERT(n > 0 && n <= HMPI_NODE_SAY_WORDS);
    if (hmpi_node.rank != 0) {
        int mine[HMPI_NODE_SAY_WORDS];
        MPI_Request q[2];
        memcpy(mine, v, sizeof *v * (size_t)n);
        PMPI_Isend(mine, n, MPI_INT, world_of(0), TAG, hmpi_node.world, &q[0]);
        PMPI_Irecv(v, n, MPI_INT, world_of(0), TAG, hmpi_node.world, &q[1]);
        hmpi_node_below_wait(2, q);
        return;
    }
    for (int r = 1; r < hmpi_node.size; r += CHUNK) {
        int got[CHUNK][HMPI_NODE_SAY_WORDS];
        int k = chunk_at(r);
        MPI_Request q[CHUNK];
        for (int i = 0; i < k; i++)
            PMPI_Irecv(got[i], n, MPI_INT, world_of(r + i), TAG, hmpi_node.world, &q[i]);
        hmpi_node_below_wait(k, q);
        for (int i = 0; i < k; i++)
            for (int w = 0; w < n; w++)
                v[w] = got[i][w] < v[w] ? got[i][w] : v[w];
    }
    send_all(v, n, MPI_INT);
}

/* ---- once the region is mapped: through its control area ---------------------------- */

static hmpi_ctrl_t *ctrl;
static hmpi_barrier_t bar;
static unsigned turn; /* exchanges done */

void hmpi_node_agree_setup(void *base)
{
    ctrl = base;
    size_t ranks = offsetof(hmpi_ctrl_t, rank) + (size_t)hmpi_node.size * sizeof(hmpi_rank_ctrl_t);
    hmpi_barrier_init(&bar, (char *)base + ranks, (uint32_t)hmpi_node.size,
                      (uint32_t)hmpi_node.rank);
    turn = 0;
}

void hmpi_node_exchange(const int64_t *mine, int n)
{
    HMPI_ASSERT(ctrl && n >= 0 && n <= HMPI_NODE_SAY_WORDS);
    int64_t *line = ctrl->rank[hmpi_node.rank].say[turn & 1];
    if (n)
        memcpy(line, mine, sizeof *mine * (size_t)n);
    hmpi_barrier_arrive(&bar);
    hmpi_backoff_t b = {0};
    while (!hmpi_barrier_poll(&bar))
        hmpi_wait_step(&b, 0);
    hmpi_backoff_end(&b);
    turn++;
}

const int64_t *hmpi_node_said(int local)
{
    HMPI_ASSERT(ctrl && turn && local >= 0 && local < hmpi_node.size);
    return ctrl->rank[local].say[(turn - 1) & 1];
}

int64_t hmpi_node_agree_min(int64_t v)
{
    hmpi_node_exchange(&v, 1);
    for (int r = 0; r < hmpi_node.size; r++)
        if (hmpi_node_said(r)[0] < v)
            v = hmpi_node_said(r)[0];
    return v;
}
