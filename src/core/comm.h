/* comm.h: the communicator table (comm.c): HMPI's state beside each communicator of the
 * MPI below: the matching context, where each member lives, and per-part state. A communicator HMPI does not
 * know (made by a call it does not intercept, or an intercommunicator) is simply not
 * accelerated: every call on it passes to the MPI below. */
#ifndef HMPI_CORE_COMM_H
#define HMPI_CORE_COMM_H

#include "../common/hidden.h"

#include <mpi.h>
#include <stdint.h>

typedef struct hmpi_comm_s {
    MPI_Comm handle;        /* the MPI below's communicator */
    uint32_t ctx;           /* same in every member; distinct among a rank's comms */
    int rank, size;
    int *local_of;          /* [size]: node-local rank of each member, -1 when remote */
    int *rank_of_local;     /* [node size]: member rank of each local rank, or -1 */
    int nlocal;             /* members on this node, this rank included */
    int has_remote;         /* some member lives on another node */
    int nwild;              /* ANY_SOURCE receives waiting in the bridge (p2p/) */
    void *coll;             /* collectives' state (coll/), made on first use */
    int refs;               /* the handle, plus every HMPI request bound to it */
    uint8_t wait_as;        /* 0, or 1 + the wait family (shm/wait.h) of every wait on it */
    uint8_t idup_posted;    /* an MPI_Comm_idup of it was posted (p2p.h, hmpi_p2p_below_nb) */
    struct hmpi_comm_s *next; /* hash chain */
} hmpi_comm_t;

/* The state of c, or NULL when c is not accelerated (or HMPI is off); MPI_COMM_WORLD's
 * is read inline, any other is looked up. */
extern HMPI_HIDDEN hmpi_comm_t *hmpi_comm_world;
hmpi_comm_t *hmpi_comm_find(MPI_Comm c);
static inline hmpi_comm_t *hmpi_comm_get(MPI_Comm c)
{
    return c == MPI_COMM_WORLD ? hmpi_comm_world : hmpi_comm_find(c);
}

/* Set during MPI_Init's start of the parts (mpi/init.c): the constructors HMPI calls for
 * itself then (OPI's shadow of MPI_COMM_WORLD) are made by every rank alike and before
 * any message, so they need neither the arrival nor the agreement on a context that a
 * program's constructor takes (mpi/comm.c): two collectives of the MPI below less. */
extern HMPI_HIDDEN int hmpi_comm_starting;

/* Makes and enters state for the intracommunicator c under context ctx, which its
 * members agreed on (mpi/comm.c: the constructors). Not collective. Returns 0, or -1
 * when out of memory: c is then not accelerated (still correct: every call on it passes
 * to the MPI below, in every member alike). */
int hmpi_comm_add(MPI_Comm c, uint32_t ctx);

/* Forgets c (before the MPI below frees it); its state lives on while requests
 * still refer to it. */
void hmpi_comm_forget(MPI_Comm c);
static inline void hmpi_comm_ref(hmpi_comm_t *s) { s->refs++; }
void hmpi_comm_unref(hmpi_comm_t *s);

/* The states of MPI_COMM_WORLD (context 0) and MPI_COMM_SELF (context 1), which no
 * other communicator ever takes (mpi/comm.c): made when the world model starts
 * (MPI_Init, whether or not a session set HMPI up before), forgotten at MPI_Finalize
 * when sessions keep HMPI up past it. Returns 0, or -1 when out of memory. */
int hmpi_comm_world_start(void);
void hmpi_comm_world_end(void);
/* Forgets every state (the end of HMPI: the last finalize). */
void hmpi_comm_finalize(void);

#endif
