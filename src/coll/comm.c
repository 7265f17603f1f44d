/* comm.c: the collective state of a communicator: made at its first collective call
 * (one allgather of slot addresses over it, plus the leaders' communicator when it
 * spans nodes), torn down when it is freed; the scratch buffer. The waits and claims
 * of the slot protocol are shm/epoch.h's (coll.h). */
#include "coll.h"
#include "nbc.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../heap/heap.h"
#include "../node/node.h"
#include "../p2p/p2p.h"

#include <stdlib.h>
#include <string.h>

int hmpi_coll_finalizing;

/* ---- the scratch ---------------------------------------------------------------------- */

void hmpi_coll_seen_scan(hmpi_coll_team_t *t)
{
    hmpi_epoch_t *ep = &t->ep;
    uint64_t low = ep->epoch - 1; /* this rank is in its epoch */
    for (int i = 0; i < ep->n && low > ep->seen_done; i++) {
        if (i == ep->me)
            continue;
        uint64_t fin = 0; /* the member's later half tells the most */
        for (uint64_t h = 0; h < 2; h++) {
            uint64_t s = atomic_load_explicit(hmpi_epoch_word(ep, i, h), memory_order_acquire);
            uint64_t f = s >> 2;
            if ((s & 3) != HMPI_COLL_DONE && f > 0)
                f--; /* in epoch f: finished f - 1 */
            fin = f > fin ? f : fin;
        }
        low = fin < low ? fin : low;
    }
    if (ep->seen_done < low)
        ep->seen_done = low;
}

static void *scratch_claim(hmpi_coll_team_t *t, hmpi_coll_scratch_t *sc, uint64_t e, size_t len)
{
    /* Once an epoch, the current one: a second claim in one epoch would wait for every
     * member to finish it, and they may be waiting for this rank (a hang). */
    HMPI_ASSERT(e == t->ep.epoch && sc->used < e);
    /* Whoever read it last (the epoch it was last published in, which always ends with
     * DONE on every member) must be gone. Not simply "every member finished e-1": an
     * epoch without DONE (the small allreduce) is finished only once its members
     * publish in e, and they may be right here waiting for us. */
    if (sc->used > t->ep.seen_done)
        hmpi_coll_wait_done(t, sc->used);
    sc->used = e;
    if (len <= sc->len)
        return sc->p;
    size_t want = sc->len * 2 > len ? sc->len * 2 : len;
    want = (want + 65535) & ~(size_t)65535;
    void *p = hmpi_heap_shared_alloc(want);
    if (!p) {
        hmpi_log_error("collectives: cannot get %zu bytes of shared scratch; stopping", want);
        PMPI_Abort(hmpi_node.world, 1);
    }
    hmpi_heap_free(sc->p);
    sc->p = p;
    sc->len = want;
    return p;
}

void *hmpi_coll_scratch(hmpi_coll_team_t *t, uint64_t e, size_t len)
{
    return scratch_claim(t, &t->scratch, e, len);
}

void *hmpi_coll_scratch_small(hmpi_coll_team_t *t, uint64_t e, size_t len)
{
    return scratch_claim(t, &t->small[e & 1], e, len);
}

/* p, n bytes of the heap (what: private or shared), or the job stops. */
static void *got_or_stop(void *p, size_t n, const char *what)
{
    if (!p) {
        hmpi_log_error("collectives: no %s memory for %zu bytes; stopping", what, n);
        PMPI_Abort(hmpi_node.world, 1);
    }
    return p;
}

void *hmpi_coll_alloc(size_t n) { return got_or_stop(hmpi_heap_malloc(n ? n : 1), n, "private"); }

void *hmpi_coll_shared_alloc(size_t n)
{
    return got_or_stop(hmpi_heap_shared_alloc(n ? n : 1), n, "shared");
}

/* ---- setup ----------------------------------------------------------------------------- */

/* What each rank tells the others at setup. */
typedef struct {
    uint64_t slot;     /* its slot, 0 when it has none */
    int32_t node;      /* its node's id */
    uint32_t cap;      /* inline bytes of its halves */
    uint32_t line_max; /* its HMPI_COLL_LINE_MAX */
    uint32_t flat_max; /* its HMPI_COLL_FLAT_MAX */
    uint32_t radix;    /* its HMPI_COLL_RADIX */
    uint32_t topology; /* 1: its HMPI_COLL_TOPOLOGY is auto */
} setup_rec_t;

static size_t half_stride_of(size_t cap)
{
    size_t need = offsetof(hmpi_coll_half_t, data) + (cap > 16 ? cap : 16);
    return (need + HMPI_CACHE_LINE - 1) & ~(size_t)(HMPI_CACHE_LINE - 1);
}

/* Two halves, the meeting line (used in member 0's slot only), the broadcast ring. */
static void *new_slot(size_t cap)
{
    size_t bytes =
        2 * half_stride_of(cap) + HMPI_CACHE_LINE + HMPI_COLL_RING * sizeof(hmpi_coll_ring_t);
    void *slot = hmpi_heap_shared_alloc(bytes);
    if (slot)
        memset(slot, 0, bytes);
    return slot;
}

/* The node-major view of a spanning communicator, from the node ids: leader_of[r] (the
 * leaders-comm rank of r's node), node_count and node_first per leader, and pos_of[r]
 * (r's place when the members are listed node after node, by rank inside a node).
 * Returns the most members any node has, or -1 when out of memory. */
static int map_leaders(const setup_rec_t *rec, hmpi_coll_comm_t *s, int size)
{
    int *first = malloc(sizeof(int) * (size_t)hmpi_node.world_size);
    int *seen = calloc((size_t)size, sizeof(int));
    if (!first || !seen) {
        free(first);
        free(seen);
        return -1;
    }
    for (int w = 0; w < hmpi_node.world_size; w++)
        first[w] = -1;
    int nleaders = 0, most = 0;
    for (int r = 0; r < size; r++) {
        int node = rec[r].node;
        if (first[node] < 0) {
            first[node] = nleaders;
            s->node_count[nleaders++] = 0;
        }
        s->leader_of[r] = first[node];
        int k = ++s->node_count[first[node]];
        most = k > most ? k : most;
    }
    for (int l = 0, at = 0; l < nleaders; at += s->node_count[l++])
        s->node_first[l] = at;
    for (int r = 0; r < size; r++) {
        int l = s->leader_of[r];
        s->pos_of[r] = s->node_first[l] + seen[l]++;
    }
    s->nleaders = nleaders;
    free(first);
    free(seen);
    return most;
}

/* The first half of the setup: the state, this rank's slot, and the exchange of what
 * each rank tells the others, posted (nonblocking where hmpi_comm_below_nb allows: a
 * member may post a receive and then enter this first collective while a peer, not here
 * yet, waits in a synchronous send for that receive's match; the blocking setup waits
 * for it with point-to-point progress, hmpi_p2p_below_wait). */
hmpi_coll_comm_t *hmpi_coll_setup_begin(hmpi_comm_t *c)
{
    int spans = c->has_remote;
    int n = spans ? c->nlocal : c->size;
    size_t bytes = sizeof(hmpi_coll_comm_t) + sizeof(unsigned char *) * (size_t)n +
                   sizeof(int) * (size_t)n + (spans ? 4 * sizeof(int) * (size_t)c->size : 0);
    hmpi_coll_comm_t *s = hmpi_heap_calloc(1, bytes);
    setup_rec_t *rec = malloc(sizeof(setup_rec_t) * ((size_t)c->size + 1));
    if (!s || !rec) {
        hmpi_log_error("collectives: out of memory setting up a communicator");
        PMPI_Abort(hmpi_node.world, 1);
    }
    hmpi_coll_team_t *t = &s->team;
    t->ep.slot = (unsigned char **)(s + 1);
    t->rank_of = (int *)(t->ep.slot + n);
    if (spans) {
        s->leader_of = t->rank_of + n;
        s->pos_of = s->leader_of + c->size;
        s->node_count = s->pos_of + c->size;
        s->node_first = s->node_count + c->size;
    }
    s->leaders = MPI_COMM_NULL;
    s->others = MPI_COMM_NULL;
    s->setup_req = MPI_REQUEST_NULL;
    s->setup_rec = rec;
    s->mode = HMPI_COLL_SETUP;

    size_t cap = (size_t)hmpi_knobs.COLL_INLINE_MAX;
    s->my_slot = new_slot(cap);
    setup_rec_t *mine = &rec[c->size]; /* the send buffer, after the table */
    *mine = (setup_rec_t){(uint64_t)(uintptr_t)s->my_slot,
                          hmpi_node.id,
                          (uint32_t)cap,
                          (uint32_t)hmpi_knobs.COLL_LINE_MAX,
                          (uint32_t)hmpi_knobs.COLL_FLAT_MAX,
                          (uint32_t)hmpi_knobs.COLL_RADIX,
                          strcmp(hmpi_knobs.COLL_TOPOLOGY, "off") != 0};
    int err = hmpi_comm_below_nb(c)
                  ? PMPI_Iallgather(mine, (int)sizeof *mine, MPI_BYTE, rec, (int)sizeof *mine,
                                    MPI_BYTE, c->handle, &s->setup_req)
                  : PMPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, rec, (int)sizeof *mine,
                                   MPI_BYTE, c->handle);
    if (err != MPI_SUCCESS) {
        hmpi_log_error("collectives: the setup's allgather failed");
        PMPI_Abort(hmpi_node.world, 1);
    }
    return s;
}

/* The second half, once every rank's record is in: the team, the tree, the meeting
 * line, the leaders' communicator (a blocking split: a communicator that spans nodes is
 * set up by a blocking collective only, nbc.h). Every rank computes the same answer from
 * the same table: all agree on the mode. */
static void setup_end(hmpi_comm_t *c, hmpi_coll_comm_t *s)
{
    setup_rec_t *rec = s->setup_rec;
    int spans = c->has_remote;
    hmpi_coll_team_t *t = &s->team;
    size_t cap = (size_t)hmpi_knobs.COLL_INLINE_MAX;
    s->mode = HMPI_COLL_PASS;
    s->setup_rec = NULL;
    int ok = 1;
    for (int r = 0; r < c->size; r++)
        ok &= rec[r].slot != 0;
    int most = spans ? map_leaders(rec, s, c->size) : c->size;
    if (!ok || most < 0 || (spans && most < 2)) {
        if (most < 0)
            hmpi_log_error("collectives: out of memory mapping the leaders");
        hmpi_heap_free(s->my_slot);
        s->my_slot = NULL;
        free(rec);
        return;
    }
    /* Every member finds a peer's odd half at its own stride: the knob must agree
     * (the same table on every rank, so the same answer everywhere). */
    for (int r = 0; r < c->size; r++)
        ok &= rec[r].cap == (uint32_t)cap;
    if (!ok) {
        hmpi_log_error("collectives: HMPI_COLL_INLINE_MAX differs between ranks; passing through");
        hmpi_heap_free(s->my_slot);
        s->my_slot = NULL;
        free(rec);
        return;
    }
    t->ep.n = 0;
    t->cap = cap;
    t->ep.stride = half_stride_of(cap);
    uint32_t line_max = rec[0].line_max, flat_max = rec[0].flat_max, radix = rec[0].radix;
    uint32_t topology = 1;
    for (int r = 0; r < c->size; r++) {
        topology &= rec[r].topology;
        line_max = rec[r].line_max < line_max ? rec[r].line_max : line_max;
        flat_max = rec[r].flat_max < flat_max ? rec[r].flat_max : flat_max;
        radix = rec[r].radix < radix ? rec[r].radix : radix;
        if (spans && rec[r].node != hmpi_node.id)
            continue;
        if (r == c->rank)
            t->ep.me = t->ep.n;
        t->ep.slot[t->ep.n] = (unsigned char *)(uintptr_t)rec[r].slot;
        t->rank_of[t->ep.n++] = r;
    }
    /* The smallest knob of all: every member takes the same decision. */
    t->flat_max = (int)flat_max;
    t->tree_radix = (int)radix;
    if (t->ep.n > t->flat_max) {
        uint8_t *cut = topology ? malloc((size_t)t->ep.n) : NULL;
        if (topology && !cut) { /* every member must cut alike */
            hmpi_log_error("collectives: out of memory setting up a communicator");
            PMPI_Abort(hmpi_node.world, 1);
        }
        for (int i = 1; cut && i < t->ep.n; i++)
            cut[i] =
                (uint8_t)hmpi_node_cut(c->local_of[t->rank_of[i - 1]], c->local_of[t->rank_of[i]]);
        t->tree_nkids =
            hmpi_coll_tree_place(t->ep.n, t->ep.me, (int)radix, cut, &t->tree_parent, t->tree_kid);
        free(cut);
        if (t->tree_parent >= 0)
            t->tree_parent_local = c->local_of[t->rank_of[t->tree_parent]];
        for (int j = 0; j < t->tree_nkids; j++)
            t->tree_kid_local[j] = c->local_of[t->rank_of[t->tree_kid[j]]];
    }
    t->root_local = c->local_of[t->rank_of[0]];
    if (!spans && t->ep.n >= 2 && (uint32_t)t->ep.n <= line_max)
        hmpi_meet_init(&t->line, t->ep.slot[0] + 2 * t->ep.stride, t->ep.n, t->ep.me);
    if (spans) {
        int leader = t->ep.me == 0;
        PMPI_Comm_split(c->handle, leader ? 0 : 1, c->rank, leader ? &s->leaders : &s->others);
        s->mode = HMPI_COLL_HIER;
    } else {
        s->mode = HMPI_COLL_FLAT;
    }
    free(rec);
}

int hmpi_coll_setup_test(hmpi_comm_t *c, hmpi_coll_comm_t *s)
{
    if (s->mode != HMPI_COLL_SETUP)
        return 1;
    if (s->setup_req != MPI_REQUEST_NULL) {
        int flag = 0;
        if (PMPI_Test(&s->setup_req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            hmpi_log_error("collectives: the setup's allgather failed");
            PMPI_Abort(hmpi_node.world, 1);
        }
        if (!flag)
            return 0;
    }
    setup_end(c, s);
    return 1;
}

/* Waits for a setup in flight (a blocking collective comes to it). */
static void setup_wait(hmpi_comm_t *c, hmpi_coll_comm_t *s)
{
    if (s->mode != HMPI_COLL_SETUP)
        return;
    if (s->setup_req != MPI_REQUEST_NULL &&
        hmpi_p2p_below_wait(&s->setup_req, MPI_STATUS_IGNORE, HMPI_WAIT_COLL) != MPI_SUCCESS) {
        hmpi_log_error("collectives: the setup's allgather failed");
        PMPI_Abort(hmpi_node.world, 1);
    }
    if (c->has_remote) {
        /* No nonblocking collective sets up a communicator that spans nodes
         * (hmpi_coll_get_nb), so none ends this setup meanwhile; and its leaders' split
         * blocks in the MPI below, which must not happen under the engine lock: another
         * thread's collective on another communicator would wait for the lock while its
         * peers wait for it in their own split (sessions_mixed_threads hung so at 4 ranks
         * on two nodes). */
        hmpi_coll_setup_test(c, s);
        return;
    }
    hmpi_p2p_lock(); /* (a nonblocking collective's progress may end it meanwhile) */
    hmpi_coll_setup_test(c, s);
    hmpi_p2p_unlock();
}

/* States of communicators gone whose slots a member may still read: a member behind in
 * the last epochs, or in the last meeting in member 0's line. Each member, as its state
 * goes, publishes one more epoch of its own, DONE at once ("gone": it will read nothing
 * of the team's again); a member's slot and scratch go once every member is gone, which
 * needs no wait and no barrier (members may free their communicators in any order).
 * Reaped at every later setup of a communicator's state and at MPI_Finalize. Engine
 * lock, or the program's one thread. */
static hmpi_coll_comm_t *zombies;

static void release(hmpi_coll_comm_t *s)
{
    hmpi_heap_free(s->team.scratch.p);
    hmpi_heap_free(s->team.small[0].p);
    hmpi_heap_free(s->team.small[1].p);
    hmpi_heap_free(s->my_slot);
    hmpi_heap_free(s->nbr);
    hmpi_heap_free(s);
}

static void reap(void);

hmpi_coll_comm_t *hmpi_coll_get(MPI_Comm comm, hmpi_comm_t **c_p)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c || c->inter || !hmpi_knobs.COLL) /* (an intercommunicator's: the below's) */
        return NULL;
    if (c->has_remote && !hmpi_knobs.COLL_HIER)
        return NULL; /* every member sees has_remote alike */
    hmpi_coll_comm_t *s = c->coll;
    if (!s) {
        if (zombies)
            reap();
        c->coll = s = hmpi_coll_setup_begin(c);
    }
    setup_wait(c, s);
    if (s->nbc_head)
        hmpi_coll_drain(s);
    *c_p = c;
    if (s->mode == HMPI_COLL_PASS)
        return NULL;
    HMPI_ASSERT_EXPENSIVE(hmpi_coll_comm_is_valid(s, c)); /* at every collective's start */
    return s;
}

int hmpi_coll_below_nb(MPI_Comm comm)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    return c && c->inter && hmpi_comm_below_nb(c);
}

int hmpi_coll_below_done(int err, MPI_Request *q)
{
    return err != MPI_SUCCESS ? err : hmpi_p2p_below_wait(q, MPI_STATUS_IGNORE, HMPI_WAIT_COLL);
}

hmpi_coll_comm_t *hmpi_coll_get_nb(MPI_Comm comm, hmpi_comm_t **c_p)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c || c->inter || !hmpi_knobs.COLL || !hmpi_knobs.COLL_NB)
        return NULL;
    if (c->has_remote && !hmpi_knobs.COLL_HIER)
        return NULL;
    hmpi_coll_comm_t *s = c->coll;
    if (!s) {
        /* A communicator spanning nodes is set up by blocking collectives only (its
         * leaders' split blocks); one whose setup could not wait with progress neither.
         * Every member decides alike. */
        if (c->has_remote || !hmpi_comm_below_nb(c))
            return NULL;
        if (zombies)
            reap();
        c->coll = s = hmpi_coll_setup_begin(c);
    }
    *c_p = c;
    if (s->mode == HMPI_COLL_PASS)
        return NULL;
    HMPI_ASSERT_EXPENSIVE(s->mode == HMPI_COLL_SETUP || hmpi_coll_comm_is_valid(s, c));
    return s;
}

/* ---- validity ----------------------------------------------------------------------------- */

/* A scratch buffer: memory exactly when it has a length, handed out last (used) in an
 * epoch this rank has begun, or never (0). */
static int scratch_is_valid(const hmpi_coll_scratch_t *sc, uint64_t epoch)
{
    return !sc->p == !sc->len && sc->used <= epoch;
}

/* What it checks:
 *  - the epoch view (shm/epoch.h: this rank's counters and its own two state words);
 *  - the halves: a stride of whole lines holding the header and cap inline bytes;
 *  - the members in comm rank order, each with its slot;
 *  - the scratch buffers (scratch_is_valid), the small pair by parity: small[i] is
 *    handed out in epochs e with e & 1 == i only;
 *  - the meeting line, when there is one: 2 .. HMPI_MEET_MAX members, the team's, at
 *    the end of member 0's halves;
 *  - the tree, used above flat_max members only (a flat team has none): a radix of 2 ..
 *    HMPI_COLL_RADIX_MAX; parent -1 exactly at member 0, else a member before this one
 *    (a subtree is the run of members [i, end) under i); at most radix children,
 *    strictly increasing below n, the first one the next member (tree.c's split). */
int hmpi_coll_team_is_valid(const hmpi_coll_team_t *t)
{
    const hmpi_epoch_t *ep = &t->ep;
    int n = ep->n, me = ep->me;
    if (!hmpi_epoch_is_valid(ep) || ep->stride % HMPI_CACHE_LINE ||
        offsetof(hmpi_coll_half_t, data) + t->cap > ep->stride)
        return 0;
    for (int i = 0; i < n; i++)
        if (!ep->slot[i] || t->rank_of[i] < 0 || (i > 0 && t->rank_of[i] <= t->rank_of[i - 1]))
            return 0;
    if (!scratch_is_valid(&t->scratch, ep->epoch) || !scratch_is_valid(&t->small[0], ep->epoch) ||
        !scratch_is_valid(&t->small[1], ep->epoch) || (t->small[0].used & 1) ||
        (t->small[1].used && !(t->small[1].used & 1)))
        return 0;
    if (t->line.line && (n < 2 || n > HMPI_MEET_MAX || t->line.n != n || t->line.me != me ||
                         t->line.line != ep->slot[0] + 2 * ep->stride))
        return 0;
    if (n <= t->flat_max)
        return t->tree_nkids == 0;
    if (t->tree_radix < 2 || t->tree_radix > HMPI_COLL_RADIX_MAX || t->tree_parent < -1 ||
        (me == 0) != (t->tree_parent == -1) || t->tree_parent >= me || t->tree_nkids < 0 ||
        t->tree_nkids > t->tree_radix || (t->tree_nkids > 0 && t->tree_kid[0] != me + 1))
        return 0;
    for (int j = 0; j < t->tree_nkids; j++)
        if (t->tree_kid[j] >= n || (j > 0 && t->tree_kid[j] <= t->tree_kid[j - 1]))
            return 0;
    return 1;
}

/* What it checks, beyond the team's:
 *  - the team is this rank's view (its slot, its comm rank) of the communicator's
 *    members on this node: all of them when the communicator has no remote member
 *    (FLAT), and then member i is comm rank i, which lets the families take a root as a
 *    member index;
 *  - the node-local ranks a publish wakes (member 0's, and in a tree the parent's and
 *    the children's) are those of the members they name;
 *  - across nodes (HIER), the node-major view: member 0 alone holds the leaders'
 *    communicator; every node has members, each node's run starts where the one before
 *    ends and the runs cover the communicator; each rank sits in its leader's run, and
 *    shares this rank's leader exactly when it is local; this node's run is the team,
 *    in member order. */
int hmpi_coll_comm_is_valid(const hmpi_coll_comm_t *s, const hmpi_comm_t *c)
{
    const hmpi_coll_team_t *t = &s->team;
    int n = t->ep.n, flat = s->mode == HMPI_COLL_FLAT;
    if ((!flat && s->mode != HMPI_COLL_HIER) || !hmpi_coll_team_is_valid(t) ||
        s->my_slot != t->ep.slot[t->ep.me] || t->rank_of[t->ep.me] != c->rank ||
        flat == c->has_remote || n != (flat ? c->size : c->nlocal))
        return 0;
    for (int i = 0; i < n; i++)
        if (t->rank_of[i] >= c->size || c->local_of[t->rank_of[i]] < 0 ||
            (flat && t->rank_of[i] != i))
            return 0;
    if (t->root_local != c->local_of[t->rank_of[0]] ||
        (n > t->flat_max && t->tree_parent >= 0 &&
         t->tree_parent_local != c->local_of[t->rank_of[t->tree_parent]]))
        return 0;
    for (int j = 0; j < t->tree_nkids; j++)
        if (t->tree_kid_local[j] != c->local_of[t->rank_of[t->tree_kid[j]]])
            return 0;
    if (flat)
        return s->leaders == MPI_COMM_NULL && s->others == MPI_COMM_NULL;
    if ((t->ep.me == 0) != (s->leaders != MPI_COMM_NULL) || s->nleaders < 2)
        return 0;
    int at = 0;
    for (int l = 0; l < s->nleaders; l++) {
        if (s->node_count[l] < 1 || s->node_first[l] != at)
            return 0;
        at += s->node_count[l];
    }
    int mine = s->leader_of[c->rank];
    if (at != c->size || mine < 0 || mine >= s->nleaders || s->node_count[mine] != n)
        return 0;
    for (int r = 0; r < c->size; r++) {
        int l = s->leader_of[r];
        if (l < 0 || l >= s->nleaders || s->pos_of[r] < s->node_first[l] ||
            s->pos_of[r] >= s->node_first[l] + s->node_count[l] ||
            (c->local_of[r] >= 0) != (l == mine))
            return 0;
    }
    for (int i = 0; i < n; i++)
        if (s->pos_of[t->rank_of[i]] != s->node_first[mine] + i)
            return 0;
    return 1;
}

/* ---- teardown ------------------------------------------------------------------------------ */

/* 1 once every member published its gone epoch (or the job is finalizing: every member
 * passed MPI_Finalize's barrier). */
static int all_gone(const hmpi_coll_comm_t *s)
{
    const hmpi_epoch_t *ep = &s->team.ep;
    for (int i = 0; i < ep->n && !hmpi_coll_finalizing; i++)
        if (i != ep->me && !hmpi_epoch_finished(ep, i, ep->epoch))
            return 0;
    return 1;
}

static void reap(void)
{
    for (hmpi_coll_comm_t **pp = &zombies; *pp;) {
        hmpi_coll_comm_t *s = *pp;
        if (!all_gone(s)) {
            pp = &s->zombie_next;
            continue;
        }
        *pp = s->zombie_next;
        release(s);
    }
}

/* The communicator's state goes (hmpi_comm_part_free: its last reference dropped, so no
 * operation of it is queued and no setup in flight). */
static void comm_free(hmpi_comm_t *c)
{
    hmpi_coll_comm_t *s = c->coll;
    HMPI_ASSERT(!s->nbc_head && s->mode != HMPI_COLL_SETUP);
    HMPI_ASSERT_EXPENSIVE(s->mode == HMPI_COLL_PASS || hmpi_coll_comm_is_valid(s, c));
    c->coll = NULL;
    if (s->leaders != MPI_COMM_NULL)
        PMPI_Comm_free(&s->leaders);
    if (s->others != MPI_COMM_NULL)
        PMPI_Comm_free(&s->others);
    if (!s->my_slot || s->team.ep.n == 0) {
        release(s);
        return;
    }
    if (!hmpi_coll_finalizing) { /* gone: one epoch more, DONE at once */
        uint64_t e = hmpi_coll_begin(&s->team);
        hmpi_coll_publish(&s->team, e, HMPI_COLL_DONE);
    }
    s->zombie_next = zombies;
    zombies = s;
    reap();
}

int hmpi_coll_init(void)
{
    hmpi_coll_finalizing = 0;
    hmpi_coll_nbc_init();
    hmpi_comm_part_free = comm_free;
    return 0;
}

void hmpi_coll_finalize(void)
{
    hmpi_coll_finalizing = 1; /* the communicators' states go next (core's finalize) */
}
