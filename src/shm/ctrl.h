/* ctrl.h: the control area at the start of the shared region: one block per local
 * rank, written by its owner at MPI_Init except for the incoming queue. The region
 * has one address in every local rank, so the pointers held here are valid everywhere.
 * No MPI in here. */
#ifndef HMPI_SHM_CTRL_H
#define HMPI_SHM_CTRL_H

#include "park.h"
#include "queue.h"
#include "../heap/heap.h"

#include <assert.h>
#include <stdalign.h>
#include <stdint.h>
#include <sys/types.h>

#define HMPI_CTRL_MAGIC 0x484d504943544c31ULL /* "HMPICTL1" */
#define HMPI_CACHE_LINE 64

typedef struct {
    alignas(HMPI_CACHE_LINE) hmpi_queue_t incoming; /* pushed by any local sender */
    alignas(HMPI_CACHE_LINE) pid_t pid;             /* written once by the owner */
    int cma_ok;                                     /* process_vm_readv works on it */
    void *bell; /* the summary bell of its lanes (p2p/lane.c), or NULL */
    /* OPI buffers of this rank's slice that other local ranks trimmed from their pools:
     * pushed by any local rank, taken (all at once) only by the owner, which alone may
     * free them to its heap (src/opi/pool.c). Its own line: written by other ranks. */
    alignas(HMPI_CACHE_LINE) hmpi_queue_t opi_return;
    /* Where the rank parks when it waits long (shm/park.h): written by its waits and by
     * the ranks that wake it. */
    hmpi_park_slot_t park;
    /* What the rank says to the node's others at MPI_Init (node/agree.c): two lines,
     * used in turn by consecutive exchanges; written by the owner only. */
    alignas(HMPI_CACHE_LINE) int64_t say[2][HMPI_CACHE_LINE / 8];
} hmpi_rank_ctrl_t;

/* Lines: incoming queue (written by senders), owner's fields (written once), OPI
 * return queue (written by trimming ranks), park slot (owner and wakers), and two of
 * what it says at MPI_Init (owner). */
static_assert(sizeof(hmpi_rank_ctrl_t) == 6 * HMPI_CACHE_LINE, "one line per writer");

typedef struct {
    uint64_t magic;        /* HMPI_CTRL_MAGIC and the node's rank count: written by local rank */
    int nranks;            /* 0, checked by every local rank at its start (p2p/progress.c) */
    hmpi_park_node_t park; /* the node's sleepers: read by every waker, written rarely */
    alignas(HMPI_CACHE_LINE) hmpi_rank_ctrl_t rank[]; /* [nranks] */
} hmpi_ctrl_t;

static inline hmpi_ctrl_t *hmpi_ctrl(void) { return (hmpi_ctrl_t *)hmpi_region.base; }

#endif
