/* coll.h: collectives by direct access inside a node, hierarchical across nodes.
 * Internal to coll/: the team (the members of a communicator on this node) and its
 * slots in the shared heap, the epoch protocol every collective follows, and the
 * helpers that move typed data. The MPI_* entry points live in the family files
 * (barrier.c, bcast.c, reduce.c, ...); shm/ and heap/ know nothing of this. */
#ifndef HMPI_COLL_H
#define HMPI_COLL_H

#include "../common/assert.h"
#include "../core/comm.h"
#include "../core/datatype.h"
#include "../core/op.h"
#include "../node/node.h"
#include "../common/stats.h"
#include "../shm/ctrl.h"
#include "../shm/epoch.h"
#include "../shm/meet.h"
#include "../shm/wait.h"

#include <mpi.h>
#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- the slot protocol ---------------------------------------------------------------
 *
 * Every member of a team owns one slot in its own slice of the shared heap (so the
 * address is the same in every local rank: the pointers below are valid everywhere).
 * Only the owner writes its slot; any member reads it. The slots are epoch halves
 * (src/shm/epoch.h: the states, the phases and the claims): an epoch is one collective
 * call on the team, and MPI requires collectives to be called in the same order on a
 * communicator, so every member counts them alike. In a collective:
 *   ARRIVED  the owner published its fields (addr, bytes, table, aux, progress and the
 *            inline data) for this epoch.
 *   MID      the owner finished the first step of a two-step algorithm (sliced
 *            allreduce: its result slice is complete; a bcast reader: it published
 *            its destination and a chunk counter the root may help with, bcast.c).
 *   DONE     the owner will not touch other members' memory for this epoch again. An
 *            epoch nobody waits DONE of (the small allreduce) ends at ARRIVED, which
 *            saves the store.
 *
 * Reuse beyond the halves' claim (hmpi_coll_claim):
 *  - claim_full: a scratch buffer is not one per epoch, so writing it needs every
 *    member to have finished the epoch it was last used in (hmpi_coll_scratch, and
 *    hmpi_coll_scratch_small's pair).
 *  - a member whose user buffer is read or written by others (published by address)
 *    waits for those readers to reach DONE(e) before it returns; data copied into its
 *    slot or scratch needs no such wait (the claims protect it).
 *
 * Memory held outside the slot (scratch, staged copies) belongs to its owner and is
 * freed only by it. A communicator's team goes when its state does: each member
 * publishes one last epoch ("gone"), and frees its slot and scratch once every member
 * is gone (comm.c), with no wait and no barrier.
 */
enum {
    HMPI_COLL_ARRIVED = HMPI_EPOCH_ARRIVED,
    HMPI_COLL_MID = HMPI_EPOCH_MID,
    HMPI_COLL_DONE = HMPI_EPOCH_DONE
};

/* One half of a slot: a header line, then `cap` bytes of inline data (of which the
 * first 16 share the header's line, so a tiny payload costs one miss). */
typedef struct {
    alignas(HMPI_CACHE_LINE) _Atomic uint64_t state; /* the epoch word (shm/epoch.h) */
    _Atomic uint64_t progress; /* bytes of addr readable so far (pipelined staging) */
    uint64_t addr;             /* the published data (a user buffer in the heap, or staged) */
    uint64_t bytes;            /* its length */
    uint64_t table;            /* hmpi_coll_blk_t[aux] per peer, or 0: block i at addr+i*aux */
    uint64_t aux;
    unsigned char data[16]; /* inline data starts here, runs on past the struct */
} hmpi_coll_half_t;

static_assert(sizeof(hmpi_coll_half_t) == HMPI_CACHE_LINE, "one header line");
static_assert(offsetof(hmpi_coll_half_t, state) == 0, "the epoch word first");
static_assert(offsetof(hmpi_coll_half_t, data) == 48, "inline data in the header line");

/* A published block: bytes at addr (one address in every local rank). */
typedef struct {
    uint64_t addr, bytes;
} hmpi_coll_blk_t;

/* The most children a member of a tree has (HMPI_COLL_RADIX's upper bound). */
enum { HMPI_COLL_RADIX_MAX = 32 };

/* A shared buffer of this rank's that others read (grows, kept): claim_full. */
typedef struct {
    void *p;
    size_t len;
    uint64_t used; /* the last epoch it was handed out in (0: never) */
} hmpi_coll_scratch_t;

/* This rank's view of its team. Private memory. */
typedef struct {
    hmpi_epoch_t ep;              /* members (ep.n; this rank ep.me, ordered by comm rank), their
                                 slots, the collectives begun (ep.epoch) */
    size_t cap;                   /* inline bytes in every member's half (the team minimum) */
    int *rank_of;                 /* [n] comm rank of each member */
    hmpi_coll_scratch_t scratch;  /* this rank's shared scratch */
    hmpi_coll_scratch_t small[2]; /* two small ones, by epoch parity (hmpi_coll_scratch_small) */
    hmpi_meet_t line;             /* the team's meeting line (in member 0's slot); line.line is
                                 NULL when it has none */
    int flat_max;                 /* HMPI_COLL_FLAT_MAX, the smallest of all members' */
    int tree_radix;               /* HMPI_COLL_RADIX, the smallest of all members' */
    int tree_parent;              /* the tree of that radix (tree.c), for teams of more than
                                 flat_max members: -1 at member 0 */
    int tree_nkids;
    int tree_kid[HMPI_COLL_RADIX_MAX];
    /* Node-local ranks of the parent, the children and member 0: whom a publish
     * wakes where only they wait for it (shm/wait.h) */
    int tree_parent_local;
    int tree_kid_local[HMPI_COLL_RADIX_MAX];
    int root_local;
} hmpi_coll_team_t;

/* Per communicator (hmpi_comm_t.coll): made at the first collective call. */
/* SETUP: the setup's allgather is in flight (a nonblocking collective came first: nbc.h);
 * the mode it ends in is one of the others. */
typedef enum { HMPI_COLL_PASS, HMPI_COLL_FLAT, HMPI_COLL_HIER, HMPI_COLL_SETUP } hmpi_coll_mode_t;

struct hmpi_coll_op_s;

typedef struct hmpi_coll_comm_s {
    hmpi_coll_mode_t mode;
    hmpi_coll_team_t team;
    MPI_Comm leaders; /* HIER: one rank per node (MPI_COMM_NULL elsewhere) */
    MPI_Comm others;  /* HIER: the other ranks, from the same split; unused: every
                                 member holds a communicator of that context, so Open MPI
                                 4.1's contexts stay alike in all (its nonblocking context
                                 allocation deadlocks beside blocking ones when ranks'
                                 sets of contexts differ) */
    int *leader_of;   /* HIER: [comm size] leaders-comm rank of each member's leader */
    int nleaders;     /* HIER: nodes; members listed node after node ("node-major"): */
    int *node_count;  /* [nleaders] members of each node */
    int *node_first;  /* [nleaders] where each node's members start */
    int *pos_of;      /* [comm size] each member's place */
    void *my_slot;    /* this rank's slot (freed at teardown) */
    /* Nonblocking and persistent collectives started and not yet run to their end, in
     * start order (nbc.h); the head runs. Engine lock (p2p/req.h). */
    struct hmpi_coll_op_s *nbc_head, *nbc_tail;
    /* The neighbours of a Cartesian or graph communicator (neighbor.c), listed at the
     * first neighbourhood collective: one block of the shared heap, freed with the
     * slot (peers read its list of destinations). */
    struct hmpi_coll_nbr_s *nbr;
    /* SETUP: the setup's exchange in flight (comm.c). */
    MPI_Request setup_req;
    void *setup_rec;
    struct hmpi_coll_comm_s *zombie_next; /* gone, its slot still read (comm.c) */
} hmpi_coll_comm_t;

/* The collective state of c for a blocking collective, making it on first use
 * (collective over c) and letting every nonblocking collective started before on c run
 * to its end (nbc.h), or NULL when collectives on comm pass to the MPI below. */
hmpi_coll_comm_t *hmpi_coll_get(MPI_Comm comm, hmpi_comm_t **c_p);
/* Whether a collective on comm that goes to the MPI below must be waited for with HMPI's
 * progress: on an intercommunicator whose point-to-point is HMPI's (core/comm.h) and
 * whose collectives are the MPI below's, a rank inside the below's blocking call would
 * not match a local peer's synchronous send to a receive it posted before (MPI-4.1 §3.5;
 * tests/mpi/p2p/intercomm.c). Such a call then goes to its nonblocking form, waited for
 * by hmpi_coll_below_done. Every member answers alike. */
int hmpi_coll_below_nb(MPI_Comm comm);
/* The end of such a call: err, the nonblocking form's, or its wait's. */
int hmpi_coll_below_done(int err, MPI_Request *q);
/* Returns the MPI below's collective BLOCKING(args...), or where hmpi_coll_below_nb
 * says so NONBLOCKING(args..., &q) waited for with progress; args end with comm. */
#define HMPI_COLL_RETURN_BELOW(BLOCKING, NONBLOCKING, comm, ...)                                   \
    do {                                                                                           \
        MPI_Request q_;                                                                            \
        return hmpi_coll_below_nb(comm) ? hmpi_coll_below_done(NONBLOCKING(__VA_ARGS__, &q_), &q_) \
                                        : BLOCKING(__VA_ARGS__);                                   \
    } while (0)
/* The setup of a communicator's state in two halves (comm.c): the exchange of the slots
 * posted (a new state in mode SETUP, the exchange in flight), and its end once the
 * exchange is complete: 1 when the state is set up (its mode final), 0 while the
 * exchange is in flight (begin's blocking form waits for it). */
hmpi_coll_comm_t *hmpi_coll_setup_begin(hmpi_comm_t *c);
int hmpi_coll_setup_test(hmpi_comm_t *c, hmpi_coll_comm_t *s);

/* The walkers of the assertions (common/assert.h), comm.c: 1 when this rank's view of
 * its team (of the communicator c) is consistent. O(members), O(comm size) for the
 * communicator's: the expensive level. They read private memory and this rank's own
 * state words only, never a peer's (untrusted input). */
int hmpi_coll_team_is_valid(const hmpi_coll_team_t *t);
int hmpi_coll_comm_is_valid(const hmpi_coll_comm_t *s, const hmpi_comm_t *c);

/* The member index of comm rank r (which must be on this node). */
static inline int hmpi_coll_member(const hmpi_coll_team_t *t, int r)
{
    int i = 0;
    while (i < t->ep.n && t->rank_of[i] != r)
        i++;
    HMPI_ASSERT_INTERNAL(i < t->ep.n); /* every local rank of the communicator is one */
    return i < t->ep.n ? i : -1;
}

/* ---- epochs, claims and waits (shm/epoch.h, counted as the collectives' waits) ----------- */

static inline hmpi_coll_half_t *hmpi_coll_half(const hmpi_coll_team_t *t, int i, uint64_t e)
{
    return (hmpi_coll_half_t *)hmpi_epoch_half(&t->ep, i, e);
}

static inline uint64_t hmpi_coll_begin(hmpi_coll_team_t *t) { return hmpi_epoch_begin(&t->ep); }

/* Waits until the monotone word reaches want (a chunk counter, a progress mark). */
static inline void hmpi_coll_wait_slow(const _Atomic uint64_t *word, uint64_t want)
{
    hmpi_epoch_wait_word(word, want, HMPI_WAIT_COLL);
}

/* Waits until member i has reached phase of epoch e; acquire. */
static inline void hmpi_coll_wait(const hmpi_coll_team_t *t, int i, uint64_t e, int phase)
{
    hmpi_epoch_wait(&t->ep, i, e, phase, HMPI_WAIT_COLL);
}

/* Waits for members [lo, hi) other than this rank. */
static inline void hmpi_coll_wait_range(hmpi_coll_team_t *t, int lo, int hi, uint64_t e, int phase)
{
    hmpi_epoch_wait_range(&t->ep, lo, hi, e, phase, HMPI_WAIT_COLL);
}

/* Waits for every other member (raises ep.seen_done). */
static inline void hmpi_coll_wait_all(hmpi_coll_team_t *t, uint64_t e, int phase)
{
    hmpi_epoch_wait_all(&t->ep, e, phase, HMPI_WAIT_COLL);
}

static inline void hmpi_coll_publish(hmpi_coll_team_t *t, uint64_t e, int phase)
{
    hmpi_epoch_publish(&t->ep, e, phase);
}

/* The same, waking only the n node-local ranks of locals if they sleep: where only
 * they wait for it (shm/epoch.h). */
static inline void hmpi_coll_publish_to(hmpi_coll_team_t *t, uint64_t e, int phase,
                                        const int *locals, int n)
{
    hmpi_epoch_publish_to(&t->ep, e, phase, locals, n);
}

/* The meeting line (shm/meet.h): a team of 2 to HMPI_COLL_LINE_MAX members (the smallest
 * value any member has) also meets in one cache line at the end of member 0's slot, for
 * a barrier and for an allreduce of at most line.cap bytes. Entering a meeting means
 * having returned from every earlier collective on the team, so a finished meeting also
 * tells that every member finished epoch ep.epoch. Returns the meeting's number for
 * hmpi_coll_line_data. */
static inline uint64_t hmpi_coll_line_meet(hmpi_coll_team_t *t, const void *data, size_t bytes)
{
    uint64_t l = hmpi_meet(&t->line, data, bytes, HMPI_WAIT_COLL);
    t->ep.seen_done = t->ep.epoch;
    return l;
}

/* Member i's data of meeting l. */
static inline unsigned char *hmpi_coll_line_data(const hmpi_coll_team_t *t, int i, uint64_t l)
{
    return hmpi_meet_data(&t->line, i, l);
}

/* Waits until every member finished epoch e; then ep.seen_done >= e. */
static inline void hmpi_coll_wait_done(hmpi_coll_team_t *t, uint64_t e)
{
    hmpi_epoch_wait_done(&t->ep, e, HMPI_WAIT_COLL);
}

/* Raises ep.seen_done as far as every member's halves show now, without waiting: O(n)
 * loads, for a caller that can run ahead further than two epochs (the ring below). */
void hmpi_coll_seen_scan(hmpi_coll_team_t *t);

/* This rank saw every member reach epoch e (ARRIVED): they all finished e-1. */
static inline void hmpi_coll_seen(hmpi_coll_team_t *t, uint64_t e) { hmpi_epoch_seen(&t->ep, e); }

/* Before writing this rank's half of epoch e. Returns the half. */
static inline hmpi_coll_half_t *hmpi_coll_claim(hmpi_coll_team_t *t, uint64_t e)
{
    return (hmpi_coll_half_t *)hmpi_epoch_claim(&t->ep, e, HMPI_WAIT_COLL);
}

/* The start of a blocking reduction: begins its epoch (*e_p); an empty one is done at once
 * (DONE published, NULL); else this rank's half of the epoch (hmpi_coll_claim). */
static inline hmpi_coll_half_t *hmpi_coll_open(hmpi_coll_team_t *t, int empty, uint64_t *e_p)
{
    uint64_t e = *e_p = hmpi_coll_begin(t);
    if (empty) {
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return NULL;
    }
    return hmpi_coll_claim(t, e);
}

/* ---- the ring ------------------------------------------------------------------------
 *
 * Every slot ends in HMPI_COLL_RING entries, one per epoch modulo the ring, for data
 * that one member publishes and needs nobody to wait for: a broadcast of at most
 * HMPI_COLL_RING_BYTES from its root (bcast.c), a non-root's input to a small reduce
 * (reduce.c). The owner writes entry e % RING (its data and where they lie, then seq =
 * e with release) and publishes DONE(e), so it runs up to RING epochs ahead of its slowest
 * reader instead of two: on shared cores a reader then takes in many collectives each
 * time it runs, as the MPI below's eager sends let it. Reuse: before writing entry
 * e % RING the owner knows every member finished e - RING (ep.seen_done, raised by a
 * look at every member's state when it is too old, hmpi_coll_seen_scan, so the look is
 * paid about once per RING epochs). A reader tells the ring from the slot by seq: seq ==
 * e exactly when the owner used the ring for e (stored before its DONE(e)); seq only
 * grows (e, then e + RING once every member finished e), so a reader may also wait for
 * seq >= e. An entry is HMPI_COLL_RING_LINES lines, so that 256-byte payloads fit (a
 * reader of fewer bytes touches only the lines they lie in). */
enum { HMPI_COLL_RING = 32, HMPI_COLL_RING_LINES = 5 };
enum { HMPI_COLL_RING_BYTES = HMPI_COLL_RING_LINES * HMPI_CACHE_LINE - 16 };
static_assert(HMPI_COLL_RING_BYTES >= 256, "a 256-byte payload fits an entry");

typedef struct {
    alignas(HMPI_CACHE_LINE) _Atomic uint64_t seq;
    uint32_t bytes; /* a broadcast's length (a reduce's is the root's own span) */
    uint32_t off;   /* where the data start (a reduce's input keeps its alignment
                       modulo 16); 0 for a broadcast */
    unsigned char data[HMPI_COLL_RING_BYTES];
} hmpi_coll_ring_t;

static_assert(sizeof(hmpi_coll_ring_t) == HMPI_COLL_RING_LINES * HMPI_CACHE_LINE,
              "whole lines per entry");
static_assert(offsetof(hmpi_coll_ring_t, data) == 16, "16-byte aligned data");

/* Member i's ring entry for epoch e: after the two halves and the meeting line. */
static inline hmpi_coll_ring_t *hmpi_coll_ring(const hmpi_coll_team_t *t, int i, uint64_t e)
{
    HMPI_ASSERT_INTERNAL(i >= 0 && i < t->ep.n);
    return (hmpi_coll_ring_t *)(t->ep.slot[i] + 2 * t->ep.stride + HMPI_CACHE_LINE) +
           e % HMPI_COLL_RING;
}

/* Before this rank writes its ring entry of epoch e: returns it once every member
 * finished e - RING, its last user (looking at the members' states about once per RING
 * epochs, waiting only when one really is that far behind). */
static inline hmpi_coll_ring_t *hmpi_coll_ring_claim(hmpi_coll_team_t *t, uint64_t e)
{
    if (t->ep.seen_done + HMPI_COLL_RING < e) {
        hmpi_coll_seen_scan(t);
        if (t->ep.seen_done + HMPI_COLL_RING < e)
            hmpi_coll_wait_done(t, e - HMPI_COLL_RING);
    }
    HMPI_ASSERT_INTERNAL(e == t->ep.epoch && t->ep.seen_done + HMPI_COLL_RING >= e);
    return hmpi_coll_ring(t, t->ep.me, e);
}

/* This rank's scratch with room for len bytes, for epoch e (claim_full). The job stops
 * (logged) when the shared heap cannot give it: peers are already waiting on us. */
void *hmpi_coll_scratch(hmpi_coll_team_t *t, uint64_t e, size_t len);

/* The same from a pair of buffers used by even and odd epochs, so that a member may run
 * an epoch further ahead of the last reader than with the one scratch (as with the
 * halves): for small data that would not fit a half (alltoall.c). */
void *hmpi_coll_scratch_small(hmpi_coll_team_t *t, uint64_t e, size_t len);

/* Private working memory (heap) that the collectives cannot do without: the job stops
 * (logged) when there is none, since peers already wait on this rank. */
void *hmpi_coll_alloc(size_t n);
/* The same in the shared part of the heap (peers read or write it at its address). */
void *hmpi_coll_shared_alloc(size_t n);

/* ---- typed data ------------------------------------------------------------------------ */

/* Layouts are core/datatype.h's hmpi_layout_t (hmpi_layout_get, hmpi_layout_n). */

static inline void *hmpi_coll_at(const void *buf, MPI_Aint off)
{
    return (void *)((uintptr_t)buf + (uintptr_t)off);
}

/* True when the data of (buf, l) lies in the shared heap and is one contiguous run:
 * peers may then read or write it at its address. */
static inline int hmpi_coll_direct(const void *buf, const hmpi_layout_t *l)
{
    return l->contig && l->size > 0 && hmpi_heap_is_shared_range(hmpi_coll_at(buf, l->lo), l->size);
}

/* Packs count elements at buf into contiguous bytes at dst (memcpy when contiguous). */
int hmpi_coll_pack(void *dst, const void *buf, int count, MPI_Datatype type,
                   const hmpi_layout_t *l);
/* Unpacks bytes at src into count elements at buf (at most the elements' size). */
int hmpi_coll_unpack(void *buf, int count, MPI_Datatype type, const hmpi_layout_t *l,
                     const void *src, size_t bytes);
/* Moves (src, scount, stype) to (dst, rcount, rtype): one rank, two layouts. */
int hmpi_coll_move(void *dst, int rcount, MPI_Datatype rtype, const hmpi_layout_t *rl,
                   const void *src, int scount, MPI_Datatype stype, const hmpi_layout_t *sl);
/* Copies count elements of one type from src to dst, both in that type's layout. */
int hmpi_coll_copy_typed(void *dst, const void *src, int count, MPI_Datatype type,
                         const hmpi_layout_t *l);

/* A bump allocator over an area (inline data of a half, or the scratch). */
typedef struct {
    unsigned char *base;
    size_t len, used;
} hmpi_coll_area_t;

/* Room for n bytes whose address is congruent to like modulo align (a power of two),
 * so that staged typed data keeps its alignment; NULL when the area is full. */
void *hmpi_coll_take(hmpi_coll_area_t *a, size_t n, uintptr_t like, size_t align);
/* Bytes hmpi_coll_take needs at most for n bytes with that alignment. */
static inline size_t hmpi_coll_room(size_t n, size_t align) { return n + align - 1; }

/* Reads block idx of member i's half h (see hmpi_coll_half_t.table). */
static inline hmpi_coll_blk_t hmpi_coll_blk(const hmpi_coll_half_t *h, int idx)
{
    if (h->table)
        return ((const hmpi_coll_blk_t *)(uintptr_t)h->table)[idx];
    return (hmpi_coll_blk_t){h->addr + (uint64_t)idx * h->aux, h->bytes};
}

/* ---- team operations used by several families (bcast.c, reduce.c) ---------------------- */

/* Broadcast inside the team from member root: every member (or only member `only` when
 * only >= 0) gets (buf, count, type). One epoch. */
int hmpi_coll_team_bcast(hmpi_coll_team_t *t, void *buf, int count, MPI_Datatype type, int root,
                         int only);
/* Reduction inside the team to member root (its recvbuf); sendbuf may be MPI_IN_PLACE at
 * the root. One epoch. */
int hmpi_coll_team_reduce(hmpi_coll_team_t *t, const void *sendbuf, void *recvbuf, int count,
                          MPI_Datatype type, MPI_Op op, int root);
/* Gathers every member's (sendbuf, scount, stype) as packed bytes into root's buf, block
 * i at i * bytes (bytes each). One epoch. */
int hmpi_coll_team_gather_bytes(hmpi_coll_team_t *t, const void *sendbuf, int scount,
                                MPI_Datatype stype, void *buf, int bytes, int root);
/* Hierarchical gather, scatter and allgather (gather_hier.c): 0 when done, 1 when the
 * call must go to the MPI below instead (the same answer on every member). */
int hmpi_coll_gather_hier(hmpi_coll_comm_t *s, hmpi_comm_t *c, const void *sendbuf, int scount,
                          MPI_Datatype stype, void *recvbuf, int rcount, MPI_Datatype rtype,
                          int root, int *err_p);
int hmpi_coll_scatter_hier(hmpi_coll_comm_t *s, hmpi_comm_t *c, const void *sendbuf, int scount,
                           MPI_Datatype stype, void *recvbuf, int rcount, MPI_Datatype rtype,
                           int root, int *err_p);
int hmpi_coll_allgather_hier(hmpi_coll_comm_t *s, hmpi_comm_t *c, const void *sendbuf, int scount,
                             MPI_Datatype stype, void *recvbuf, int rcount, MPI_Datatype rtype,
                             int *err_p);
/* Fan-in to member 0, run between() there (may be NULL), fan-out. One epoch. Through the
 * tree when the team has more than flat_max members. */
int hmpi_coll_team_fence(hmpi_coll_team_t *t, int (*between)(void *), void *arg);

/* ---- the tree (tree.c), for teams of more than flat_max members ------------------------ */

/* The tree of radix k (2 to HMPI_COLL_RADIX_MAX) over n members (tree.c): member me's
 * parent (-1 at member 0) into *parent and children into kid[]; returns their number.
 * cut: NULL, or cut[i] for 0 < i < n the coarsest level (0 the package, up to
 * HMPI_NODE_LEVELS - 1) at which members i - 1 and i lie in different domains,
 * HMPI_NODE_LEVELS where in the same. Pure: tests/unit/coll_tree.c. */
int hmpi_coll_tree_place(int n, int me, int k, const uint8_t *cut, int *parent, int kid[]);
/* hmpi_coll_team_fence through the tree. */
int hmpi_coll_tree_fence(hmpi_coll_team_t *t, int (*between)(void *), void *arg);
/* A small allreduce through the tree: bytes (at most t->cap) of count elements that the
 * kernel k folds, from in (the member's input) into recvbuf. One epoch. */
void hmpi_coll_tree_allreduce(hmpi_coll_team_t *t, const void *in, void *recvbuf, int count,
                              size_t bytes, hmpi_op_kernel_t k);

/* ---- helpers ----------------------------------------------------------------------------- */

/* 1 when op is commutative (predefined ops are). */
int hmpi_coll_commutative(MPI_Op op);

/* Applies op over slices in canonical order: dst[k] = x[0][k] op x[1][k] op ... op x[n-1][k]
 * for the elements [first, first + count), with bases x[i] in the type's layout; x[self]
 * may alias dst (then dst is read before it is written). */
int hmpi_coll_reduce_slice(void *dst, const void *const *x, int n, int self, MPI_Aint first,
                           int count, MPI_Datatype type, MPI_Op op, const hmpi_layout_t *one,
                           int commute);

/* Reduction support (reduce.c). Inputs are published by their base (the type's layout
 * from there), in half.addr. */
enum { HMPI_COLL_STACK_INPUTS = 64 };
/* Copies the span of (in, l) into area a keeping its alignment modulo align; returns the
 * base to publish (staged - lo). The caller sized a for it (hmpi_coll_room). */
void *hmpi_coll_stage_span(hmpi_coll_area_t *a, const void *in, const hmpi_layout_t *l,
                           size_t align);
/* The small path of the reductions, whose input fits a slot (l->span + 16 <= t->cap):
 * copies (in, l) into h's slot and publishes its base in h->addr. Inline: it stands on
 * the 8-byte paths. */
static inline void hmpi_coll_stage_slot(const hmpi_coll_team_t *t, hmpi_coll_half_t *h,
                                        const void *in, const hmpi_layout_t *l)
{
    hmpi_coll_area_t a = {h->data, t->cap, 0};
    h->addr = (uintptr_t)hmpi_coll_stage_span(&a, in, l, 16);
}
/* The layouts a reduction needs: one element of type (*one) and count of them (*l).
 * Returns MPI_SUCCESS or the error of the first that failed. */
static inline int hmpi_coll_layouts(MPI_Datatype type, int count, hmpi_layout_t *one,
                                    hmpi_layout_t *l)
{
    int err = hmpi_layout_get(type, 1, one);
    return err == MPI_SUCCESS ? hmpi_layout_get(type, count, l) : err;
}
/* Publishes in as this member's input (half.addr): itself when its span lies in the
 * shared heap (returns 1: peers read the user's buffer), else a staged copy in the
 * scratch, after `extra` bytes kept for the caller (*extra_p gets them, 64-aligned). */
int hmpi_coll_expose_input(hmpi_coll_team_t *t, uint64_t e, hmpi_coll_half_t *h, const void *in,
                           const hmpi_layout_t *l, size_t extra, void **extra_p);
/* The inputs of every member for epoch e (stack holds HMPI_COLL_STACK_INPUTS). */
const void **hmpi_coll_inputs(hmpi_coll_team_t *t, uint64_t e, const void **stack);
/* The small path's exchange of every member's input (a blocking reduction whose input
 * fits a slot): stages in (hmpi_coll_stage_slot), publishes ARRIVED, waits for every
 * member's and returns the inputs (free them with hmpi_coll_inputs_free). */
static inline const void **hmpi_coll_small_inputs(hmpi_coll_team_t *t, uint64_t e,
                                                  hmpi_coll_half_t *h, const void *in,
                                                  const hmpi_layout_t *l, const void **stack)
{
    hmpi_coll_stage_slot(t, h, in, l);
    hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    hmpi_coll_wait_all(t, e, HMPI_COLL_ARRIVED);
    return hmpi_coll_inputs(t, e, stack);
}
void hmpi_coll_inputs_free(const void **x, const void **stack);
/* Slice of member i of n: elements [*first_p, *first_p + *m_p) of count. */
void hmpi_coll_slice(int count, int n, int i, MPI_Aint extent, MPI_Aint *first_p, int *m_p);

/* Statistics: one pair of counters per collective. */
#define HMPI_COLL_COUNT(name, fast) \
    hmpi_stat_add((fast) ? HMPI_STAT_coll_##name : HMPI_STAT_coll_##name##_below, 1)

extern int hmpi_coll_finalizing;

#endif
