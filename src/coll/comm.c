/* comm.c: the collective state of a communicator: made at its first collective call
 * (one allgather of slot addresses over it, plus the leaders' communicator when it
 * spans nodes), torn down when it is freed; the waits and claims of the slot protocol
 * (coll.h) and the scratch buffer. Every wait here makes point-to-point progress and
 * backs off: tests run 8 ranks on 2 cores. */
#include "coll.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../heap/heap.h"
#include "../node/node.h"
#include "../p2p/p2p.h"

#include <stdlib.h>
#include <string.h>

int hmpi_coll_finalizing;

/* ---- waits ---------------------------------------------------------------------------- */

void hmpi_coll_wait_slow(const _Atomic uint64_t *word, uint64_t want)
{
    hmpi_backoff_t b = {0};
    unsigned polls = 0;
    while (atomic_load_explicit(word, memory_order_acquire) < want) {
        /* Local peers' messages must still move while we wait (a peer may be blocked
         * in a synchronous send to us before it enters this collective). */
        if ((++polls & 15) == 0 || b.spins >= HMPI_SPIN_LIMIT) {
            hmpi_p2p_lock();
            hmpi_p2p_progress();
            hmpi_p2p_unlock();
        }
        hmpi_backoff(&b);
    }
}

void hmpi_coll_wait_range(hmpi_coll_team_t *t, int lo, int hi, uint64_t e, int phase)
{
    for (int i = lo; i < hi; i++)
        if (i != t->me)
            hmpi_coll_wait(t, i, e, phase);
}

void hmpi_coll_wait_all(hmpi_coll_team_t *t, uint64_t e, int phase)
{
    hmpi_coll_wait_range(t, 0, t->n, e, phase);
    /* Everybody reached e: everybody finished e-1 (and e itself when DONE). */
    uint64_t done = phase == HMPI_COLL_DONE ? e : e - 1;
    if (t->seen_done < done)
        t->seen_done = done;
}

void hmpi_coll_wait_done(hmpi_coll_team_t *t, uint64_t e)
{
    hmpi_coll_wait_range(t, 0, t->n, e, HMPI_COLL_DONE);
    if (t->seen_done < e)
        t->seen_done = e;
}

void *hmpi_coll_scratch(hmpi_coll_team_t *t, uint64_t e, size_t len)
{
    /* The scratch is not doubled: the readers of epoch e-1 must be gone. */
    if (e >= 1 && t->seen_done < e - 1)
        hmpi_coll_wait_done(t, e - 1);
    if (len <= t->scratch_len)
        return t->scratch;
    size_t want = t->scratch_len * 2 > len ? t->scratch_len * 2 : len;
    want = (want + 65535) & ~(size_t)65535;
    void *p = hmpi_heap_shared_alloc(want);
    if (!p) {
        hmpi_log_error("collectives: cannot get %zu bytes of shared scratch; stopping", want);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    hmpi_heap_free(t->scratch);
    t->scratch = p;
    t->scratch_len = want;
    return p;
}

void *hmpi_coll_alloc(size_t n)
{
    void *p = hmpi_heap_malloc(n ? n : 1);
    if (!p) {
        hmpi_log_error("collectives: out of memory (%zu bytes); stopping", n);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* ---- setup ----------------------------------------------------------------------------- */

/* What each rank tells the others at setup. */
typedef struct {
    uint64_t slot;  /* its slot, 0 when it has none */
    int32_t node;   /* its node's id */
    uint32_t cap;   /* inline bytes of its halves */
} setup_rec_t;

static size_t half_stride_of(size_t cap)
{
    size_t need = offsetof(hmpi_coll_half_t, data) + (cap > 16 ? cap : 16);
    return (need + HMPI_CACHE_LINE - 1) & ~(size_t)(HMPI_CACHE_LINE - 1);
}

static void *new_slot(size_t cap)
{
    size_t stride = half_stride_of(cap);
    void *slot = hmpi_heap_shared_alloc(2 * stride);
    if (slot)
        memset(slot, 0, 2 * stride);
    return slot;
}

/* Leaders and their ranks: leader_of[r] for every member r, from the node ids. Returns
 * the most members any node has, or -1 when out of memory. */
static int map_leaders(const setup_rec_t *rec, int size, int *leader_of)
{
    int *first = malloc(sizeof(int) * (size_t)hmpi_node.world_size);
    int *count = calloc((size_t)size, sizeof(int));
    if (!first || !count) {
        free(first);
        free(count);
        return -1;
    }
    for (int w = 0; w < hmpi_node.world_size; w++)
        first[w] = -1;
    int nleaders = 0, most = 0;
    for (int r = 0; r < size; r++) {
        int node = rec[r].node;
        if (first[node] < 0)
            first[node] = nleaders++;
        leader_of[r] = first[node];
        int k = ++count[first[node]];
        most = k > most ? k : most;
    }
    free(first);
    free(count);
    return most;
}

static hmpi_coll_comm_t *setup(hmpi_comm_t *c)
{
    int spans = c->has_remote;
    int n = spans ? c->nlocal : c->size;
    size_t bytes = sizeof(hmpi_coll_comm_t) + sizeof(unsigned char *) * (size_t)n +
                   sizeof(int) * (size_t)n + (spans ? sizeof(int) * (size_t)c->size : 0);
    hmpi_coll_comm_t *s = hmpi_heap_calloc(1, bytes);
    setup_rec_t *rec = malloc(sizeof(setup_rec_t) * (size_t)c->size);
    if (!s || !rec) {
        hmpi_log_error("collectives: out of memory setting up a communicator");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    hmpi_coll_team_t *t = &s->team;
    t->slot = (unsigned char **)(s + 1);
    t->rank_of = (int *)(t->slot + n);
    s->leader_of = spans ? t->rank_of + n : NULL;
    s->leaders = MPI_COMM_NULL;
    s->mode = HMPI_COLL_PASS;

    size_t cap = (size_t)hmpi_knobs.COLL_INLINE_MAX;
    s->my_slot = new_slot(cap);
    setup_rec_t mine = {(uint64_t)(uintptr_t)s->my_slot, hmpi_node.id, (uint32_t)cap};
    PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, rec, sizeof mine, MPI_BYTE, c->handle);

    int ok = 1;
    for (int r = 0; r < c->size; r++)
        ok &= rec[r].slot != 0;
    int most = spans ? map_leaders(rec, c->size, s->leader_of) : c->size;
    /* Every rank computes the same answer from the same table: all agree. */
    if (!ok || most < 0 || (spans && most < 2)) {
        if (most < 0)
            hmpi_log_error("collectives: out of memory mapping the leaders");
        hmpi_heap_free(s->my_slot);
        s->my_slot = NULL;
        free(rec);
        return s;
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
        return s;
    }
    t->n = 0;
    t->cap = cap;
    t->half_stride = half_stride_of(cap);
    for (int r = 0; r < c->size; r++) {
        if (spans && rec[r].node != hmpi_node.id)
            continue;
        if (r == c->rank)
            t->me = t->n;
        t->slot[t->n] = (unsigned char *)(uintptr_t)rec[r].slot;
        t->rank_of[t->n++] = r;
    }
    if (spans) {
        int leader = t->me == 0;
        PMPI_Comm_split(c->handle, leader ? 0 : MPI_UNDEFINED, c->rank, &s->leaders);
        s->mode = HMPI_COLL_HIER;
    } else {
        s->mode = HMPI_COLL_FLAT;
    }
    free(rec);
    return s;
}

hmpi_coll_comm_t *hmpi_coll_get(MPI_Comm comm, hmpi_comm_t **c_p)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c || !hmpi_knobs.COLL)
        return NULL;
    if (c->has_remote && !hmpi_knobs.COLL_HIER)
        return NULL; /* every member sees has_remote alike */
    hmpi_coll_comm_t *s = c->coll;
    if (!s)
        c->coll = s = setup(c);
    *c_p = c;
    return s->mode == HMPI_COLL_PASS ? NULL : s;
}

/* ---- teardown ------------------------------------------------------------------------------ */

/* Called by mpi/comm.c when the communicator is freed (and at MPI_Finalize). */
void hmpi_coll_comm_free(hmpi_comm_t *c)
{
    hmpi_coll_comm_t *s = c->coll;
    if (!s)
        return;
    if (s->my_slot && !hmpi_coll_finalizing) {
        /* After this barrier no member is inside a collective on c: nobody reads our
         * slot or scratch any more. MPI_Comm_free is collective, so this may block.
         * (At MPI_Finalize every rank already passed a barrier on MPI_COMM_WORLD.) */
        PMPI_Barrier(c->handle);
    }
    hmpi_heap_free(s->team.scratch);
    hmpi_heap_free(s->my_slot);
    if (s->leaders != MPI_COMM_NULL)
        PMPI_Comm_free(&s->leaders);
    hmpi_heap_free(s);
    c->coll = NULL;
}

int hmpi_coll_init(void)
{
    hmpi_coll_finalizing = 0;
    hmpi_coll_ops_init();
    return 0;
}

void hmpi_coll_finalize(void)
{
    hmpi_coll_finalizing = 1;
}
