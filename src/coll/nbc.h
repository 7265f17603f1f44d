/* nbc.h: nonblocking and persistent collectives on a node's team (nbc.c), internal to
 * coll/. A collective started without blocking is an operation (hmpi_coll_op_t) behind
 * an HMPI request of kind HMPI_REQ_COLL: a short program of phases, each a step function
 * that goes as far as it can without waiting for a peer and returns 0 where it would
 * wait, its place kept in the operation; any pass of the engine's progress (every test
 * and wait, and every wait of HMPI's, through the request's background row) runs it on.
 *
 * Order. The operations a communicator starts wait in its queue, in start order, and
 * only the head runs: it begins its epoch (shm/epoch.h) when it becomes the head, so
 * every member numbers the team's epochs alike, and it has finished every earlier one
 * when it does, which keeps the epochs' rules of the blocking collectives intact (a
 * member publishes in epoch e+1 only once it finished e). A blocking collective on the
 * communicator first lets the queue run empty (hmpi_coll_drain): the MPI standard orders
 * collectives on a communicator whatever their kind, and HMPI's blocking ones rely on
 * every earlier collective having returned (the meeting line, coll.h).
 *
 * Steps never wait: they test a member's state where the blocking code waits for it, and
 * try a claim (the half, the scratch, a ring entry) where the blocking code waits for its
 * last reader. */
#ifndef HMPI_COLL_NBC_H
#define HMPI_COLL_NBC_H

#include "coll.h"
#include "../p2p/p2p.h"

typedef struct hmpi_coll_op_s hmpi_coll_op_t;

/* A phase: 1 when it is complete, 0 when it waits for a peer (op->step, op->e, op->at
 * say where it goes on). An error ends the op's program: set op->err and return 1. */
typedef int (*hmpi_coll_phase_fn)(hmpi_coll_op_t *op);

enum { HMPI_COLL_PHASES = 4 };

struct hmpi_coll_op_s {
    hmpi_coll_op_t *next; /* the communicator's queue */
    hmpi_coll_comm_t *s;  /* the communicator's collective state */
    hmpi_comm_t *c;
    hmpi_req_t *req; /* its request */
    hmpi_coll_phase_fn phase_fn[HMPI_COLL_PHASES];
    int nphases, phase; /* the program, and the phase that runs */
    int step;           /* the phase's place */
    uint64_t e;         /* the phase's epoch (0: not begun) */
    int at;             /* the next member a test over all members looks at */
    uint64_t meet;      /* the phase's meeting in the team's line (coll.h), if it meets */
    uint8_t queued;     /* in the queue */
    uint8_t done;       /* the program ran to its end */
    uint8_t persistent; /* made by an _init call: runs again at each MPI_Start */
    uint8_t tried;      /* its start call just went as far as it could: queued, not run */
    int err;
    int herr; /* an error kept for the program's end (hmpi_coll_op_later) */
    /* The call's arguments, as its entry point checked them. */
    const void *sendbuf;
    void *recvbuf;
    int count;
    MPI_Datatype type;
    MPI_Op mop;
    int root;                /* a team phase's root: a member index */
    int croot;               /* the call's root: a rank of the communicator */
    hmpi_layout_t one, l;    /* one element, count elements */
    hmpi_op_kernel_t kernel; /* a predefined op's loop on a basic type, or NULL */
    size_t bytes;            /* kernel: the vector's bytes */
    int commute;
    /* What a phase keeps between its steps. */
    const void *in; /* this member's input */
    void *res;      /* where its slice of a result goes */
    int res_shared, direct;
    MPI_Request below; /* the MPI below's call of the leaders, in flight */
    /* The data movers' other side and their v and w forms (gather.c, alltoall.c,
     * reduce_scatter.c): the send side's count and type (count and type above are the
     * receive side's), and the program's arrays of counts, displacements and types,
     * used where they lie (MPI-4.1 §6.12: unchanged until the operation completes, or
     * for a persistent one until it is freed). */
    int scount;
    MPI_Datatype stype;
    const int *scounts, *sdispls, *rcounts, *rdispls;
    const MPI_Datatype *stypes, *rtypes;
    hmpi_layout_t sl;    /* scount elements of stype */
    MPI_Aint sext, rext; /* one element's extent on each side */
    MPI_Aint first;      /* a reduce-scatter's block: its first element, */
    int m;               /* and its elements */
    int k;               /* a loop of a phase over the members, kept between steps */
    void *tmp;           /* private memory of a phase (freed by it, or at the release) */
    void *own[2];        /* memory the operation keeps until its release (hmpi_heap_free) */
    int *cd;             /* a hierarchical program's leaders' counts and displacements
                          * (hmpi_coll_alloc) */
    int block;           /* a hierarchical gather's, scatter's, allgather's bytes a member */
    void *hout;          /* a hierarchical reduce's result at the leader of the root's node */
    MPI_Datatype *held;  /* the derived datatypes it holds until its release */
    int nheld;
    /* The MPI below's nonblocking call of the same collective: what runs when the
     * communicator turns out not accelerated at the end of its setup (every member
     * alike). */
    int (*below_start)(hmpi_coll_op_t *op, MPI_Request *req);
    /* What the family holds beside the operation goes (holds on derived datatypes), as
     * its request is released; NULL for nothing. */
    void (*release)(hmpi_coll_op_t *op);
    size_t extra; /* the family's bytes after the operation (hmpi_coll_op_new_ext) */
};

/* ---- entry points' side ---------------------------------------------------------------- */

/* The collective state of comm for a nonblocking or persistent collective, without
 * waiting: NULL when it goes to the MPI below (comm not accelerated, or it spans nodes
 * and its state is not made yet: the setup of such a communicator blocks, and every
 * member decides alike), else the state, possibly still being set up (its first
 * phase finishes that). */
hmpi_coll_comm_t *hmpi_coll_get_nb(MPI_Comm comm, hmpi_comm_t **c_p);

/* A new operation on s with the program phases[0..n) (more may be added before the
 * start), or NULL (no memory). */
hmpi_coll_op_t *hmpi_coll_op_new(hmpi_coll_comm_t *s, hmpi_comm_t *c, int n,
                                 const hmpi_coll_phase_fn *phases);
/* Where a nonblocking or persistent call goes once its entry point decided `below` (the
 * MPI below's call, for its family's reasons) on s, the collective state from
 * hmpi_coll_get_nb: NULL for the MPI below's call now (s NULL: comm not accelerated; or
 * below, unless keep: a persistent call that runs the MPI below's call at each start
 * under a request of HMPI's, hmpi_coll_phase_below_call), else s. Counts the call in the
 * nonblocking statistic: the team's program, or the MPI below's. */
static inline hmpi_coll_comm_t *hmpi_coll_nb_route(hmpi_coll_comm_t *s, int below, int keep)
{
    if (below && !keep)
        s = NULL;
    HMPI_COLL_COUNT(nonblocking, s != NULL && !below);
    return s;
}

/* The same with extra zeroed bytes after the operation for its family's own state (what
 * does not fit the fields above: neighbor.c's lists and layouts), at hmpi_coll_op_ext;
 * they go with the operation. */
hmpi_coll_op_t *hmpi_coll_op_new_ext(hmpi_coll_comm_t *s, hmpi_comm_t *c, int n,
                                     const hmpi_coll_phase_fn *phases, size_t extra);
enum { HMPI_COLL_OP_BYTES = (sizeof(hmpi_coll_op_t) + 63) & ~(size_t)63 };
static inline void *hmpi_coll_op_ext(hmpi_coll_op_t *op)
{
    return (unsigned char *)op + HMPI_COLL_OP_BYTES;
}
/* Whether a nonblocking call on s may go as far as it can in its start call before it
 * makes an operation (none when it finishes there): nothing before it in the queue, and
 * room for a request should it need one (asked first: it begins its epoch or meeting). */
static inline int hmpi_coll_alone(const hmpi_coll_comm_t *s)
{
    return !s->nbc_head && hmpi_req_room();
}
/* Such a call's meeting in the team's line, with bytes of data: 1 when every member is in
 * (the caller finishes now, as hmpi_coll_op_meet would), else 0 with *meet and *at for
 * its operation (hmpi_coll_op_tried, step 1). */
static inline int hmpi_coll_meet_now(hmpi_coll_team_t *t, const void *data, size_t bytes,
                                     uint64_t *meet, int *at)
{
    *meet = hmpi_meet_enter(&t->line, data, bytes);
    *at = 0;
    if (!hmpi_meet_test(&t->line, *meet, at))
        return 0;
    t->ep.seen_done = t->ep.epoch; /* every member returned from every earlier collective */
    return 1;
}
/* The operation of a call whose start call went as far as it could: with epoch e begun
 * or meeting meet entered (0 and 0: nothing was tried), its first phase goes on from
 * step, looking at members from at (hmpi_coll_op_meet's test is step 1). */
static inline void hmpi_coll_op_tried(hmpi_coll_op_t *op, uint64_t e, uint64_t meet, int step,
                                      int at)
{
    if (e || meet) {
        op->e = e;
        op->meet = meet;
        op->step = step;
        op->at = at;
        op->tried = 1;
    }
}
/* Frees an operation that is not started (an error at its entry point), with what it
 * holds. */
void hmpi_coll_op_discard(hmpi_coll_op_t *op);
/* The arguments of a reduction (reduce.c, scan.c, reduce_scatter.c) into op, with its
 * layouts of one element and of total elements and its hold on type; returns an MPI
 * error code (op is the caller's to discard). */
int hmpi_coll_op_reduction(hmpi_coll_op_t *op, const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype type, MPI_Op mop, int total, int persistent);
/* The end of every entry point: discards op on err, else starts it
 * (hmpi_coll_op_start); either way the result goes through comm's handler as fn's. */
int hmpi_coll_op_go(hmpi_coll_op_t *op, int err, MPI_Request *request, MPI_Comm comm,
                    const char *fn);
/* Starts op under a new request (persistent: an inactive one, started by MPI_Start),
 * running it as far as it goes; returns an MPI error code (op freed on an error). */
int hmpi_coll_op_start(hmpi_coll_op_t *op, MPI_Request *request);

/* The member index of comm rank r (a rank on this node) for an operation on s: on a team
 * of one node the members are the ranks in order (comm.c), which holds while the setup
 * is still in flight and the team not made yet too; -1 for a rank on another node. */
static inline int hmpi_coll_op_member(const hmpi_coll_comm_t *s, const hmpi_comm_t *c, int r)
{
    if (s->mode != HMPI_COLL_HIER)
        return r;
    return c->local_of[r] >= 0 ? hmpi_coll_member(&s->team, r) : -1;
}

/* Holds type (when derived) from now to op's release: the program may free it while
 * the operation, or a persistent one, still uses it (MPI-4.1 §5.1.9), and large-count
 * calls free the type they made for the int call as soon as it returns (mpi/large.c).
 * Returns an MPI error code (no memory). */
int hmpi_coll_op_hold(hmpi_coll_op_t *op, MPI_Datatype type);

/* Lets the queue of s run empty (a blocking collective on it is about to begin). */
void hmpi_coll_drain(hmpi_coll_comm_t *s);
/* Registers the row of HMPI_REQ_COLL (at coll/'s start). */
void hmpi_coll_nbc_init(void);

/* ---- steps' side --------------------------------------------------------------------------- */

/* Keeps op's first error: err counts only while op->err is MPI_SUCCESS. */
static inline void hmpi_coll_op_note(hmpi_coll_op_t *op, int err)
{
    if (op->err == MPI_SUCCESS)
        op->err = err;
}

/* Keeps err for the end of op's program (its first error then): for a phase of a program
 * across nodes, whose members must all go on to its end (op->err would end it at once,
 * and a member that left would leave its node's epochs, or the leaders' calls, behind). */
static inline void hmpi_coll_op_later(hmpi_coll_op_t *op, int err)
{
    if (op->herr == MPI_SUCCESS)
        op->herr = err;
}

/* Begins op's phase epoch once (step 0 of a team phase). */
static inline uint64_t hmpi_coll_op_epoch(hmpi_coll_op_t *op)
{
    if (!op->e)
        op->e = hmpi_coll_begin(&op->s->team);
    return op->e;
}

/* The half of this member for epoch e once nobody reads it for e-2 any more; NULL while
 * someone still does (hmpi_coll_claim without its wait). */
hmpi_coll_half_t *hmpi_coll_try_claim(hmpi_coll_team_t *t, uint64_t e);
/* Step 0 of a reduction's phase: an empty one is done at once (DONE published, NULL
 * with *ret_p = 1); else this member's half for epoch e, or NULL while it is still read
 * (*ret_p = 0: the step tries again). The caller returns *ret_p on NULL. */
static inline hmpi_coll_half_t *hmpi_coll_op_open(hmpi_coll_team_t *t, uint64_t e, int empty,
                                                  int *ret_p)
{
    *ret_p = empty;
    if (empty) {
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return NULL;
    }
    return hmpi_coll_try_claim(t, e);
}
/* This member's ring entry for epoch e once every member finished e - RING, or NULL while
 * one has not (hmpi_coll_ring_claim without its wait). */
static inline hmpi_coll_ring_t *hmpi_coll_try_ring(hmpi_coll_team_t *t, uint64_t e)
{
    if (t->ep.seen_done + HMPI_COLL_RING < e) {
        hmpi_coll_seen_scan(t);
        if (t->ep.seen_done + HMPI_COLL_RING < e)
            return NULL;
    }
    return hmpi_coll_ring(t, t->ep.me, e);
}
/* The scratch with room for len bytes for epoch e, or NULL while its last epoch's
 * readers are not all gone (hmpi_coll_scratch without its wait). */
void *hmpi_coll_try_scratch(hmpi_coll_team_t *t, uint64_t e, size_t len);
/* The pair of small scratch buffers (hmpi_coll_scratch_small) without its wait. */
void *hmpi_coll_try_scratch_small(hmpi_coll_team_t *t, uint64_t e, size_t len);
/* 1 once every other member of [lo, hi) reached phase of op's epoch (from op->at on, as
 * hmpi_coll_op_all); seen_done is left alone unless the range is the whole team. */
int hmpi_coll_op_range(hmpi_coll_op_t *op, int lo, int hi, int phase);
/* Publishes op->in (l: op->l) in half h for epoch e: the program's buffer where its span
 * lies in the shared heap (op->direct: peers read it, so the member waits for their DONE
 * before it completes), else a copy in the scratch; with res_room, room for a result of
 * op->l after it (op->res). 0 while the scratch is still read by an older epoch (nothing
 * published: the step tries again). */
int hmpi_coll_op_expose(hmpi_coll_op_t *op, hmpi_coll_half_t *h, uint64_t e, int res_room);
/* 1 once every other member reached phase of op's epoch (looked at from op->at on, so a
 * member seen there is not loaded again); raises seen_done as hmpi_coll_wait_all does. */
int hmpi_coll_op_all(hmpi_coll_op_t *op, int phase);
/* The team's meeting line without its wait (hmpi_coll_line_meet): enters with bytes of
 * data at step 0, then 1 once every member is in (op->meet: the meeting). */
int hmpi_coll_op_meet(hmpi_coll_op_t *op, const void *data, size_t bytes);

/* ---- the team phases (one epoch each) --------------------------------------------------- */

int hmpi_coll_phase_setup(hmpi_coll_op_t *op);     /* finishes a setup in flight */
int hmpi_coll_phase_barrier(hmpi_coll_op_t *op);   /* barrier.c */
int hmpi_coll_phase_fence(hmpi_coll_op_t *op);     /* barrier.c: fan-in, the leaders' op->below */
int hmpi_coll_phase_bcast(hmpi_coll_op_t *op);     /* bcast.c: from member op->root */
int hmpi_coll_phase_allreduce(hmpi_coll_op_t *op); /* reduce.c */
int hmpi_coll_phase_reduce(hmpi_coll_op_t *op);    /* reduce.c: to member op->root */
int hmpi_coll_phase_gather(hmpi_coll_op_t *op);    /* gather.c: to member op->root */
int hmpi_coll_phase_scatter(hmpi_coll_op_t *op);   /* gather.c: from member op->root */
int hmpi_coll_phase_allgather(hmpi_coll_op_t *op); /* gather.c */

/* The programs of the nonblocking and persistent MPI_Igather, MPI_Iscatter and
 * MPI_Iallgather (and _init forms) on a communicator across nodes (gather_hier.c), put in
 * op (made with no phase, its arguments and layouts set as gather.c's nb_start sets them)
 * for blocks of block bytes a member; returns an MPI error code (a layout's: the
 * buffers come from hmpi_coll_shared_alloc, which stops the job when there are none). */
int hmpi_coll_igather_hier(hmpi_coll_op_t *op, int block);
int hmpi_coll_iscatter_hier(hmpi_coll_op_t *op, int block);
int hmpi_coll_iallgather_hier(hmpi_coll_op_t *op, int block);

/* Waits for op->below, a request of the MPI below (MPI_REQUEST_NULL: nothing to wait for). */
int hmpi_coll_phase_below_wait(hmpi_coll_op_t *op);
/* The whole collective as the MPI below's nonblocking call (op->below_start), then its
 * wait: the program of a persistent collective that goes to the MPI below on a
 * communicator HMPI knows. MPICH 4.0.2's own persistent gather, scatter and allgather
 * deliver wrong data (docs/collectives.md); its nonblocking ones are right. */
int hmpi_coll_phase_below_call(hmpi_coll_op_t *op);
/* A phase that starts the leaders' nonblocking call (start, on member 0 only) and waits
 * for it; made by the families for their hierarchical programs. Its error waits for the
 * program's end (hmpi_coll_op_later). */
int hmpi_coll_phase_below(hmpi_coll_op_t *op, int (*start)(hmpi_coll_op_t *op));
/* One epoch of the team in which member 0 publishes buf and each member in want (every
 * member when want < 0) runs take on it, member 0 going on once they are DONE (members
 * outside want publish DONE at once); take's error waits for the program's end. */
int hmpi_coll_phase_from_leader(hmpi_coll_op_t *op, void *buf, int want,
                                int (*take)(hmpi_coll_op_t *op, const void *buf));

#endif
