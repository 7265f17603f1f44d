/* nbc.c: the engine of nonblocking and persistent collectives (nbc.h): operations and
 * their requests (kind HMPI_REQ_COLL, registered in p2p's table at the start of coll/),
 * each communicator's queue of them, the drain before a blocking collective, and the
 * waitless forms of the slot protocol's claims and waits. Everything here runs with the
 * engine lock held (p2p/req.h), as the request's rows do. */
#include "nbc.h"
#include "../common/log.h"
#include "../core/errors.h"
#include "../heap/heap.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- waitless forms of the slot protocol --------------------------------------------- */

hmpi_coll_half_t *hmpi_coll_try_claim(hmpi_coll_team_t *t, uint64_t e)
{
    if (e >= 2 && t->ep.seen_done < e - 2) {
        hmpi_coll_seen_scan(t);
        if (t->ep.seen_done < e - 2)
            return NULL;
    }
    return hmpi_coll_half(t, t->ep.me, e);
}

void *hmpi_coll_try_scratch(hmpi_coll_team_t *t, uint64_t e, size_t len)
{
    if (t->scratch.used > t->ep.seen_done) {
        hmpi_coll_seen_scan(t);
        if (t->scratch.used > t->ep.seen_done)
            return NULL;
    }
    return hmpi_coll_scratch(t, e, len); /* its last readers are gone: no wait */
}

void *hmpi_coll_try_scratch_small(hmpi_coll_team_t *t, uint64_t e, size_t len)
{
    if (t->small[e & 1].used > t->ep.seen_done) {
        hmpi_coll_seen_scan(t);
        if (t->small[e & 1].used > t->ep.seen_done)
            return NULL;
    }
    return hmpi_coll_scratch_small(t, e, len); /* its last readers are gone: no wait */
}

int hmpi_coll_op_range(hmpi_coll_op_t *op, int lo, int hi, int phase)
{
    hmpi_coll_team_t *t = &op->s->team;
    if (lo == 0 && hi == t->ep.n)
        return hmpi_coll_op_all(op, phase);
    if (op->at < lo)
        op->at = lo;
    for (; op->at < hi; op->at++)
        if (op->at != t->ep.me && !hmpi_epoch_reached(&t->ep, op->at, op->e, phase))
            return 0;
    op->at = 0;
    return 1;
}

int hmpi_coll_op_expose(hmpi_coll_op_t *op, hmpi_coll_half_t *h, uint64_t e, int res_room)
{
    hmpi_coll_team_t *t = &op->s->team;
    const hmpi_layout_t *l = &op->l;
    op->direct = l->span > 0 && hmpi_heap_is_shared_range(hmpi_coll_at(op->in, l->lo), l->span);
    size_t extra = res_room ? hmpi_coll_room(l->span, 64) : 0;
    size_t need = extra + (op->direct ? 0 : hmpi_coll_room(l->span, 64));
    hmpi_coll_area_t a = {NULL, 0, 0};
    if (need) {
        if (!(a.base = hmpi_coll_try_scratch(t, e, need)))
            return 0;
        a.len = need;
    }
    if (extra)
        op->res = hmpi_coll_at(hmpi_coll_take(&a, extra, 0, 64), -l->lo);
    if (op->direct) {
        h->addr = (uintptr_t)op->in;
    } else {
        h->addr = (uintptr_t)hmpi_coll_stage_span(&a, op->in, l, 64);
        hmpi_stat_add(HMPI_STAT_coll_staged_bytes, l->span);
    }
    return 1;
}

int hmpi_coll_op_all(hmpi_coll_op_t *op, int phase)
{
    hmpi_coll_team_t *t = &op->s->team;
    for (; op->at < t->ep.n; op->at++)
        if (op->at != t->ep.me && !hmpi_epoch_reached(&t->ep, op->at, op->e, phase))
            return 0;
    op->at = 0;
    uint64_t done = phase == HMPI_COLL_DONE ? op->e : op->e - 1;
    if (t->ep.seen_done < done)
        t->ep.seen_done = done;
    return 1;
}

int hmpi_coll_op_meet(hmpi_coll_op_t *op, const void *data, size_t bytes)
{
    hmpi_coll_team_t *t = &op->s->team;
    if (op->step == 0) {
        op->meet = hmpi_meet_enter(&t->line, data, bytes);
        op->step = 1;
    }
    if (!hmpi_meet_test(&t->line, op->meet, &op->at))
        return 0;
    t->ep.seen_done = t->ep.epoch; /* every member returned from every earlier collective */
    return 1;
}

/* ---- running the queue ------------------------------------------------------------------ */

/* Runs op's program as far as it goes; 1 once it ran to its end (an error kept for the
 * end, herr, is its error then). */
static int run(hmpi_coll_op_t *op)
{
    while (op->phase < op->nphases && !op->err) {
        if (!op->phase_fn[op->phase](op))
            return 0;
        op->phase++;
        op->step = 0;
        op->e = op->meet = 0;
        op->at = 0;
    }
    hmpi_coll_op_note(op, op->herr);
    return 1;
}

/* Runs s's queue from its head: each operation that ends leaves the queue (its request
 * completes at its next test, or in progress's pass over the listed requests). */
static void advance(hmpi_coll_comm_t *s)
{
    hmpi_coll_op_t *op;
    while ((op = s->nbc_head) && run(op)) {
        s->nbc_head = op->next;
        if (!s->nbc_head)
            s->nbc_tail = NULL;
        op->next = NULL;
        op->queued = 0;
        op->done = 1;
        HMPI_ASSERT_INTERNAL(op->phase == op->nphases || op->err);
    }
}

static void enqueue(hmpi_coll_op_t *op)
{
    hmpi_coll_comm_t *s = op->s;
    HMPI_ASSERT_INTERNAL(!op->queued);
    op->next = NULL;
    op->queued = 1;
    op->done = 0;
    op->phase = op->step = op->at = 0;
    op->e = op->meet = 0;
    op->err = op->herr = MPI_SUCCESS;
    if (s->nbc_tail)
        s->nbc_tail->next = op;
    else
        s->nbc_head = op;
    s->nbc_tail = op;
}

/* Puts op, which ran as far as it goes though not queued, at the head of its empty queue
 * with its place kept. */
static void enqueue_running(hmpi_coll_op_t *op)
{
    hmpi_coll_comm_t *s = op->s;
    HMPI_ASSERT_INTERNAL(!op->queued && !s->nbc_head && !s->nbc_tail);
    op->next = NULL;
    op->queued = 1;
    s->nbc_head = s->nbc_tail = op;
}

/* Starts op, at its first phase (a new one is all zero; a persistent one is rewound
 * first, op_start): behind the earlier operations of its communicator,
 * queued; alone, run at once as the queue's head would be, and queued only when it
 * waits. op->done says whether it ran to its end. Alone, a new operation may come with
 * its first phase's epoch begun (op->e: its entry point went as far as it could without
 * an operation) or with its error and no phase left to run; one that was tried so (tried)
 * is queued without a run: what it waits for was not there a moment ago. */
static inline void launch(hmpi_coll_op_t *op)
{
    hmpi_coll_comm_t *s = op->s;
    if (s->nbc_head) {
        enqueue(op);
        advance(s);
        return;
    }
    op->done = !op->tried && run(op);
    if (!op->done)
        enqueue_running(op);
}

void hmpi_coll_drain(hmpi_coll_comm_t *s)
{
    hmpi_backoff_t b = {0};
    hmpi_p2p_lock();
    advance(s);
    while (s->nbc_head) {
        hmpi_p2p_unlock();
        hmpi_wait_step(&b, s->mode == HMPI_COLL_HIER); /* progress runs the listed ops */
        hmpi_p2p_lock();
        advance(s);
    }
    hmpi_p2p_unlock();
    hmpi_wait_end(&b, HMPI_WAIT_COLL);
}

/* ---- the request's row ------------------------------------------------------------------- */

static int op_progress(hmpi_req_t *r)
{
    hmpi_coll_op_t *op = r->arg;
    if (!op->done)
        advance(op->s);
    if (!op->done)
        return 0;
    hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, op->err, 0);
    return 1;
}

static int op_start(hmpi_req_t *r)
{
    hmpi_coll_op_t *op = r->arg;
    hmpi_coll_comm_t *s = op->s;
    if (op->phase_fn[0] == hmpi_coll_phase_setup && s->mode != HMPI_COLL_SETUP &&
        s->mode != HMPI_COLL_PASS) {
        /* Made while its communicator's setup was in flight, which has ended: the program
         * needs that phase no more (PASS rewrites the program at each start: kept). */
        op->nphases--;
        memmove(op->phase_fn, op->phase_fn + 1, sizeof op->phase_fn[0] * (size_t)op->nphases);
    }
    op->phase = op->step = op->at = 0; /* (a round before left them at its end) */
    op->e = op->meet = 0;
    op->err = op->herr = MPI_SUCCESS;
    launch(op);
    if (op->done) { /* else progress moves it, a background kind */
        hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, op->err, 0);
        hmpi_req_finish(r);
    }
    return MPI_SUCCESS;
}

/* One released operation without extra bytes kept for the next start: a program that
 * starts a nonblocking collective and waits for it, over and over, allocates none. Any
 * thread may take or leave it. */
static _Atomic(hmpi_coll_op_t *) spare;

/* What an operation holds goes with it (also one that never started: an error at its
 * start). */
static void op_free(hmpi_coll_op_t *op)
{
    if (op->release)
        op->release(op);
    if (op->held) { /* each free of NULL costs a call: an 8-byte operation holds nothing */
        for (int i = 0; i < op->nheld; i++)
            hmpi_type_release(op->held[i]);
        free(op->held);
    }
    if (op->tmp)
        hmpi_heap_free(op->tmp);
    if (op->own[0] || op->own[1]) {
        hmpi_heap_free(op->own[0]);
        hmpi_heap_free(op->own[1]);
    }
    if (op->cd)
        hmpi_heap_free(op->cd);
    hmpi_coll_op_t *none = NULL;
    if (op->extra || !atomic_compare_exchange_strong_explicit(
                         &spare, &none, op, memory_order_release, memory_order_relaxed))
        free(op);
}

static void op_release(hmpi_req_t *r)
{
    hmpi_coll_op_t *op = r->arg;
    if (!op)
        return;
    HMPI_ASSERT(!op->queued); /* released only once complete, or inactive */
    op_free(op);
    r->arg = NULL;
}

static const hmpi_req_ops_t coll_ops = {
    .name = "collective",
    .start = op_start,
    .progress = op_progress,
    .release = op_release,
    .status_error = 1,
    .background = 1,
};

void hmpi_coll_nbc_init(void) { hmpi_req_kind_register(HMPI_REQ_COLL, &coll_ops); }

/* ---- operations ---------------------------------------------------------------------------- */

/* An operation all zero. memset compiles to `rep stos` for its 512 bytes, which costs
 * more than the rest of an 8-byte MPI_Ibcast's start: plain 16-byte stores instead, as
 * hmpi_req_zero's (malloc's memory is aligned to 16). */
typedef uint64_t op_words_t __attribute__((vector_size(16), aligned(16), may_alias));
static void op_zero(hmpi_coll_op_t *op)
{
    op_words_t *w = (op_words_t *)(void *)op;
#pragma GCC unroll 32
    for (size_t k = 0; k < HMPI_COLL_OP_BYTES / sizeof *w; k++)
        w[k] = (op_words_t){0, 0};
}

hmpi_coll_op_t *hmpi_coll_op_new(hmpi_coll_comm_t *s, hmpi_comm_t *c, int n,
                                 const hmpi_coll_phase_fn *phases)
{
    return hmpi_coll_op_new_ext(s, c, n, phases, 0);
}

hmpi_coll_op_t *hmpi_coll_op_new_ext(hmpi_coll_comm_t *s, hmpi_comm_t *c, int n,
                                     const hmpi_coll_phase_fn *phases, size_t extra)
{
    HMPI_ASSERT_INTERNAL(n >= 0 && n < HMPI_COLL_PHASES);
    hmpi_coll_op_t *op =
        extra ? NULL : atomic_exchange_explicit(&spare, NULL, memory_order_acquire);
    if (op)
        op_zero(op);
    else if (!(op = calloc(1, HMPI_COLL_OP_BYTES + extra)))
        return NULL;
    op->extra = extra;
    op->s = s;
    op->c = c;
    op->below = MPI_REQUEST_NULL;
    if (s->mode == HMPI_COLL_SETUP) /* a setup in flight: its end comes first */
        op->phase_fn[op->nphases++] = hmpi_coll_phase_setup;
    for (int i = 0; i < n; i++)
        op->phase_fn[op->nphases++] = phases[i];
    return op;
}

int hmpi_coll_op_hold(hmpi_coll_op_t *op, MPI_Datatype type)
{
    hmpi_layout_t l;
    if (hmpi_layout_get(type, 0, &l) != MPI_SUCCESS || !l.derived)
        return MPI_SUCCESS;                   /* predefined (a bad type is the caller's check) */
    if ((op->nheld & (op->nheld - 1)) == 0) { /* 0, 1, 2, 4, ...: grow by doubling */
        MPI_Datatype *more =
            realloc(op->held, sizeof *more * (size_t)(op->nheld ? 2 * op->nheld : 1));
        if (!more)
            return MPI_ERR_NO_MEM;
        op->held = more;
    }
    hmpi_type_hold(type);
    op->held[op->nheld++] = type;
    return MPI_SUCCESS;
}

void hmpi_coll_op_discard(hmpi_coll_op_t *op) { op_free(op); }

int hmpi_coll_op_reduction(hmpi_coll_op_t *op, const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype type, MPI_Op mop, int total, int persistent)
{
    op->sendbuf = sendbuf;
    op->recvbuf = recvbuf;
    op->count = count;
    op->type = type;
    op->mop = mop;
    op->persistent = (uint8_t)persistent;
    op->commute = hmpi_coll_commutative(mop);
    int err = hmpi_layout_get(type, 1, &op->one);
    if (err == MPI_SUCCESS)
        err = hmpi_layout_get(type, total, &op->l);
    if (err == MPI_SUCCESS && op->l.derived)
        err = hmpi_coll_op_hold(op, type);
    return err;
}

int hmpi_coll_op_go(hmpi_coll_op_t *op, int err, MPI_Request *request, MPI_Comm comm,
                    const char *fn)
{
    if (err != MPI_SUCCESS) {
        hmpi_coll_op_discard(op);
        return hmpi_raise_in(comm, err, fn);
    }
    return hmpi_raise_in(comm, hmpi_coll_op_start(op, request), fn);
}

int hmpi_coll_op_start(hmpi_coll_op_t *op, MPI_Request *request)
{
    hmpi_p2p_lock();
    if (!hmpi_req_room()) { /* asked first: once it runs, an operation cannot go back */
        hmpi_p2p_unlock();
        op_free(op);
        hmpi_log_error("more than %d HMPI requests outstanding", HMPI_REQ_MAX);
        return MPI_ERR_NO_MEM;
    }
    if (!op->persistent) {
        launch(op);
        if (op->done && op->err == MPI_SUCCESS) {
            /* It ran to its end here: the shared complete request stands for it, and
             * nothing is left to release (an error needs a request of its own, which
             * carries it to the wait). */
            op_free(op);
            *request = hmpi_req_handle(hmpi_req_coll_done());
            hmpi_p2p_unlock();
            return MPI_SUCCESS;
        }
    }
    hmpi_req_t *r = hmpi_req_new(HMPI_REQ_COLL);
    HMPI_ASSERT_INTERNAL(r);
    op->req = r;
    r->arg = op;
    hmpi_req_bind(r, op->c);
    if (op->persistent) {
        r->persistent = 1;
        r->complete = 1;   /* inactive */
    } else if (op->done) { /* ended in error here */
        hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, op->err, 0);
        r->complete = 1;
    } else {
        hmpi_req_list(r);
    }
    *request = hmpi_req_handle(r);
    hmpi_p2p_unlock();
    return MPI_SUCCESS;
}

/* ---- phases every family uses ---------------------------------------------------------- */

int hmpi_coll_phase_setup(hmpi_coll_op_t *op)
{
    hmpi_coll_comm_t *s = op->s;
    if (s->mode == HMPI_COLL_SETUP && !hmpi_coll_setup_test(op->c, s))
        return 0;
    if (s->mode == HMPI_COLL_PASS) {
        /* Not accelerated after all (every member learns it from the same table): the
         * MPI below's own call takes over, in the program's place. */
        int err = op->below_start(op, &op->below);
        op->nphases = op->phase + 2; /* this phase, then the wait for the below's call */
        op->phase_fn[op->phase + 1] = hmpi_coll_phase_below_wait;
        op->err = err;
    }
    return 1;
}

/* Waits for op->below, the MPI below's request (nothing in it: done). */
int hmpi_coll_phase_below_wait(hmpi_coll_op_t *op)
{
    if (op->below == MPI_REQUEST_NULL)
        return 1;
    int flag = 0, err = PMPI_Test(&op->below, &flag, MPI_STATUS_IGNORE);
    if (err != MPI_SUCCESS)
        op->err = err;
    return flag || err != MPI_SUCCESS;
}

int hmpi_coll_phase_below_call(hmpi_coll_op_t *op)
{
    if (op->step == 0) {
        op->step = 1;
        int err = op->below_start(op, &op->below);
        if (err != MPI_SUCCESS) {
            op->err = err;
            op->below = MPI_REQUEST_NULL;
            return 1;
        }
    }
    return hmpi_coll_phase_below_wait(op);
}

int hmpi_coll_phase_below(hmpi_coll_op_t *op, int (*start)(hmpi_coll_op_t *op))
{
    if (op->s->team.ep.me != 0)
        return 1; /* the leaders' call is member 0's */
    int err = MPI_SUCCESS, flag = 1;
    if (op->step == 0) {
        op->step = 1;
        if ((err = start(op)) != MPI_SUCCESS)
            op->below = MPI_REQUEST_NULL;
    }
    if (err == MPI_SUCCESS && op->below != MPI_REQUEST_NULL)
        err = PMPI_Test(&op->below, &flag, MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS && !flag)
        return 0;
    hmpi_coll_op_later(op, err);
    return 1;
}

int hmpi_coll_phase_from_leader(hmpi_coll_op_t *op, void *buf, int want,
                                int (*take)(hmpi_coll_op_t *op, const void *buf))
{
    hmpi_coll_team_t *t = &op->s->team;
    uint64_t e = hmpi_coll_op_epoch(op);
    int me = t->ep.me, mine = want < 0 || want == me;
    if (me == 0) {
        if (op->step == 0) {
            hmpi_coll_half_t *h = hmpi_coll_try_claim(t, e);
            if (!h)
                return 0;
            h->addr = (uintptr_t)buf;
            hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
            if (mine)
                hmpi_coll_op_later(op, take(op, buf));
            op->step = 1;
        }
        if (want > 0 && !hmpi_epoch_reached(&t->ep, want, e, HMPI_COLL_DONE))
            return 0;
        if (want < 0 && !hmpi_coll_op_all(op, HMPI_COLL_DONE))
            return 0;
    } else if (mine) {
        if (!hmpi_epoch_reached(&t->ep, 0, e, HMPI_COLL_ARRIVED))
            return 0;
        hmpi_coll_op_later(op, take(op, (const void *)(uintptr_t)hmpi_coll_half(t, 0, e)->addr));
    }
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return 1;
}
