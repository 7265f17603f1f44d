/* comm.h: the communicator table (comm.c): HMPI's state beside each communicator of the
 * MPI below: the matching context, where each member lives, and per-part state. A
 * communicator HMPI does not know (made by a call it does not intercept) is simply not
 * accelerated: every call on it passes to the MPI below. An intercommunicator's state
 * serves point-to-point only (inter): its collectives, windows, partitioned and OPI
 * calls pass to the MPI below, whose own contexts carry them. */
#ifndef HMPI_CORE_COMM_H
#define HMPI_CORE_COMM_H

#include "../common/hash.h"
#include "../common/hidden.h"

#include <mpi.h>
#include <stdint.h>

/* Of an intercommunicator (inter) the members are those of the remote group, the only
 * ones a message can go to or come from: size is the remote group's size and a peer's
 * rank is its rank there, while rank is this rank's in its own group (what a sender
 * stamps as the source, a rank of the receiver's remote group). Both groups take one
 * context (core/context.c); no member sends to its own group on it, so a receiver's
 * (context, source) names one sender. */
typedef struct hmpi_comm_s {
    MPI_Comm handle; /* the MPI below's communicator */
    uint32_t ctx;    /* same in every member; distinct among a rank's comms */
    int rank, size;
    int *local_of;            /* [size]: node-local rank of each member, -1 when remote */
    int *rank_of_local;       /* [node size]: member rank of each local rank, or -1 */
    int nlocal;               /* members on this node (this rank included unless inter) */
    int has_remote;           /* some member lives on another node */
    int inter;                /* an intercommunicator: point-to-point only */
    int nwild;                /* ANY_SOURCE receives waiting in the bridge (p2p/) */
    void *coll;               /* collectives' state (coll/), made on first use */
    int refs;                 /* the handle, plus every HMPI request bound to it */
    uint8_t wait_as;          /* 0, or 1 + the wait family (shm/wait.h) of every wait on it */
    uint8_t idup_posted;      /* an MPI_Comm_idup of it was posted (hmpi_comm_below_nb) */
    struct hmpi_comm_s *next; /* hash chain */
} hmpi_comm_t;

/* The state of c, or NULL when c is not accelerated (or HMPI is off); MPI_COMM_WORLD's
 * is read inline, any other is looked up in the hash table (comm.c), inline too: every
 * point-to-point call's short way does it (about 15 instructions). */
extern HMPI_HIDDEN hmpi_comm_t *hmpi_comm_world;
enum { HMPI_COMM_BUCKET_BITS = 8, HMPI_COMM_BUCKETS = 1 << HMPI_COMM_BUCKET_BITS };
extern HMPI_HIDDEN hmpi_comm_t *hmpi_comm_buckets[HMPI_COMM_BUCKETS];
static inline unsigned hmpi_comm_bucket_of(MPI_Comm c)
{
    return hmpi_hash_handle((uintptr_t)c, HMPI_COMM_BUCKET_BITS);
}
/* Takes no lock: a chain's head is published whole (comm.c). */
static inline hmpi_comm_t *hmpi_comm_find(MPI_Comm c)
{
    hmpi_comm_t *s = __atomic_load_n(&hmpi_comm_buckets[hmpi_comm_bucket_of(c)], __ATOMIC_ACQUIRE);
    while (s && s->handle != c)
        s = s->next;
    return s;
}
static inline hmpi_comm_t *hmpi_comm_get(MPI_Comm c)
{
    return c == MPI_COMM_WORLD ? hmpi_comm_world : hmpi_comm_find(c);
}

/* Set during MPI_Init's start of the parts (mpi/init.c): the constructors HMPI calls for
 * itself then (OPI's shadow of MPI_COMM_WORLD) are made by every rank alike and before
 * any message, so they need neither the arrival nor the agreement on a context that a
 * program's constructor takes (mpi/comm.c): two collectives of the MPI below less. */
extern HMPI_HIDDEN int hmpi_comm_starting;

/* Makes and enters state for the communicator c under context ctx, which its
 * members agreed on (mpi/comm.c: the constructors). Not collective. Returns 0, or -1
 * when out of memory: c is then not accelerated (still correct: every call on it passes
 * to the MPI below, in every member alike). */
int hmpi_comm_add(MPI_Comm c, uint32_t ctx);

/* Forgets c (before the MPI below frees it); its state lives on while requests
 * still refer to it. */
void hmpi_comm_forget(MPI_Comm c);
static inline void hmpi_comm_ref(hmpi_comm_t *s) { s->refs++; }
void hmpi_comm_unref(hmpi_comm_t *s);
/* What the parts above keep beside a communicator goes when its state does (the last
 * reference dropped, or MPI_Finalize): coll/ registers it at its start. */
extern HMPI_HIDDEN void (*hmpi_comm_part_free)(hmpi_comm_t *s);

/* Whether HMPI may add nonblocking collectives of its own (the arrival, the setups'
 * allgathers) to c's sequence in the MPI below; where not, it keeps the blocking call.
 * Not over Open MPI 4.1 once an MPI_Comm_idup was posted on c: its idup issues later
 * rounds on c from its progress, at a point in c's sequence that differs between
 * members, so a nonblocking collective of HMPI's there could match the wrong one (a
 * hang, seen in comm_idup). Every member posts its idups in the same order among its
 * collectives on c, so every member answers alike. */
static inline int hmpi_comm_below_nb(const hmpi_comm_t *c)
{
#ifdef OPEN_MPI
    return !c->idup_posted;
#else
    (void)c;
    return 1;
#endif
}

/* ---- constructors (context.c) ---------------------------------------------------------- */

/* The first context of the range the new communicators' rank 0 hand out. */
#define HMPI_CTX_RANGE_BASE 0x80000000u

/* Before a constructor of the MPI below that blocks until the members of comm arrive:
 * a member may have posted a receive that a peer, not here yet, waits in a synchronous
 * send to see matched, and the below's blocking call would not move HMPI's engine. A
 * nonblocking barrier, waited for with that progress, lets every member in first (of
 * both groups, over an intercommunicator). Only over a communicator HMPI knows, so every
 * member does it alike (a bad handle goes straight to the below). Collective over comm. */
int hmpi_comm_arrive(MPI_Comm comm);
/* The same for a constructor with no parent communicator (MPI_Comm_create_from_group,
 * MPI_Intercomm_create_from_groups, and MPI_Comm_create_group, which only the group's
 * members call): a barrier among the members of group a and group b (MPI_GROUP_NULL: a
 * alone), whatever their order. key tells concurrent constructions apart: the string
 * tag of the call (name) or its integer tag. Collective over exactly those members; one
 * that is not among them returns at once; nothing while HMPI does not accelerate (as
 * every member knows alike). Returns the below's error code. */
int hmpi_comm_arrive_group(MPI_Group a, MPI_Group b, const char *name, int key);
/* The private copy of HMPI's world those arrivals meet on: made when HMPI sets itself
 * up (collective over its world; none alone in it), freed at its end and when its world
 * changes (mpi/init.c). Returns 0, or -1. */
int hmpi_comm_meet_start(void);
void hmpi_comm_meet_end(void);
/* Agrees on a context for the new communicator c (collective over it: a broadcast from
 * its rank 0; over an intercommunicator two, context.c) and enters its state; nothing
 * for MPI_COMM_NULL or when HMPI is off. Returns 0, or -1 when c stays with the MPI
 * below (not accelerated), in every member alike. */
int hmpi_comm_register(MPI_Comm c);
/* A context of this rank's range, handed out as a new communicator's rank 0 (of the
 * parent, for MPI_Comm_idup): its world rank above, its count below (2^31 divided by
 * the world size of them). 0 (never such a context) when its count is used up: the new
 * communicator is then not accelerated. Thread-safe. */
uint32_t hmpi_comm_ctx_new(void);
/* HMPI's end (mpi/init.c): every state is gone with the communicator table, and no
 * message of it is in flight past the last barrier, so a later set-up counts anew, from
 * the same value in every rank (its own constructors at set-up take it unagreed). */
void hmpi_comm_contexts_reset(void);
/* MPI_Comm_dup (arrival, the below's dup, registration) and MPI_Comm_free (the state
 * forgotten, then the below's free), for HMPI's own communicators as for the program's. */
int hmpi_comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int hmpi_comm_free(MPI_Comm *comm);

/* The states of MPI_COMM_WORLD (context 0) and MPI_COMM_SELF (context 1), which no
 * other communicator ever takes (mpi/comm.c): made when the world model starts
 * (MPI_Init, whether or not a session set HMPI up before), forgotten at MPI_Finalize
 * when sessions keep HMPI up past it. Returns 0, or -1 when out of memory. */
int hmpi_comm_world_start(void);
void hmpi_comm_world_end(void);
/* Forgets every state (the end of HMPI: the last finalize). */
void hmpi_comm_finalize(void);

#endif
