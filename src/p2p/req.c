/* req.c: the request's one home: its table and handles, the table of kinds, and its
 * whole life behind the engine lock: finish, start, test and wait, the Wait/Test
 * family's one pass over an array, cancel, free, status. A request is HMPI's (a local
 * operation, a wildcard, a persistent or polled operation, a collective, ...) or the
 * MPI below's (a remote operation, or one of a call HMPI does not intercept); arrays
 * may mix both. Statuses: the calls that complete one request never write MPI_ERROR;
 * those that complete several write it in each status only when they return
 * MPI_ERR_IN_STATUS (MPI-4.1 §3.2.5). The object is private to the process. */
#include "engine.h"
#include "../common/log.h"
#include "../common/stats.h"
#include "../core/errors.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

hmpi_req_t *hmpi_req_table;
static uint32_t top;       /* slots ever handed out */
static uint32_t free_head; /* 1 + index of the first free slot, 0: none */

/* The engine's list of requests progress moves (listed): the kinds run in the
 * background while active, and any request freed while a poll of its own completes it. */
static hmpi_req_t *listed_head;
static int listed_count;
static int listed_walking; /* inside hmpi_req_progress_listed: no nested walk */

/* ---- the kinds ---------------------------------------------------------------------- */

/* The MPI below carries r (a remote receive, a remote persistent send): its test
 * completes r. */
static int below_progress(hmpi_req_t *r)
{
    if (r->below == MPI_REQUEST_NULL)
        return 0;
    int flag = 0;
    PMPI_Test(&r->below, &flag, &r->status);
    return flag;
}

static int below_cancel(hmpi_req_t *r)
{
    /* A send to a local peer is not cancelled: it completes normally. */
    return r->below != MPI_REQUEST_NULL && PMPI_Cancel(&r->below) == MPI_SUCCESS;
}

/* A request the MPI below still carries goes on there (MPI_Request_free of an active
 * remote operation), or its persistent request goes with it. */
static void below_release(hmpi_req_t *r)
{
    if (r->below != MPI_REQUEST_NULL)
        PMPI_Request_free(&r->below);
}

/* A persistent operation with MPI_PROC_NULL completes as it starts. */
static int started_proc_null(hmpi_req_t *r)
{
    if (r->peer != MPI_PROC_NULL)
        return 0;
    hmpi_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
    hmpi_req_finish(r);
    return 1;
}

static int send_start(hmpi_req_t *r)
{
    if (started_proc_null(r))
        return MPI_SUCCESS;
    if (r->below_persistent) {
        hmpi_stat_add(HMPI_STAT_msgs_remote, 1);
        hmpi_stat_add(HMPI_STAT_bytes_remote, r->t.size);
        return PMPI_Start(&r->below);
    }
    if (r->mode == HMPI_MODE_BUFFERED) {
        hmpi_p2p_unlock();
        int err = hmpi_bsend_reserve(&r->t);
        hmpi_p2p_lock();
        if (err)
            return err;
    }
    return hmpi_p2p_send_start(r, r->comm->local_of[r->peer]);
}

static int recv_start(hmpi_req_t *r)
{
    return started_proc_null(r) ? MPI_SUCCESS : hmpi_p2p_recv_post(r);
}

static int poll_progress(hmpi_req_t *r) { return r->poll(r->arg, &r->status); }

static const hmpi_req_ops_t send_ops = {
    .name = "send",
    .start = send_start,
    .progress = below_progress,
    .cancel = below_cancel,
    .release = below_release,
};
static const hmpi_req_ops_t recv_ops = {
    .name = "receive",
    .start = recv_start,
    .progress = below_progress,
    .cancel = hmpi_p2p_cancel_req,
    .release = below_release,
    .status_error = 1,
};
static const hmpi_req_ops_t done_ops = {.name = "done"};
static const hmpi_req_ops_t message_ops = {.name = "message"};
static const hmpi_req_ops_t poll_ops = {
    .name = "polled",
    .progress = poll_progress,
    .status_error = 1,
};

static const hmpi_req_ops_t *kinds[HMPI_REQ_KINDS] = {
    [HMPI_REQ_SEND] = &send_ops, [HMPI_REQ_RECV] = &recv_ops,
    [HMPI_REQ_DONE] = &done_ops, [HMPI_REQ_MESSAGE] = &message_ops,
    [HMPI_REQ_POLL] = &poll_ops, [HMPI_REQ_SENDRECV] = &hmpi_p2p_sendrecv_ops,
};

void hmpi_req_kind_register(hmpi_req_kind_t kind, const hmpi_req_ops_t *ops)
{
    HMPI_ASSERT(kind < HMPI_REQ_KINDS && (!kinds[kind] || kinds[kind] == ops));
    kinds[kind] = ops;
}

static const hmpi_req_ops_t *ops_of(const hmpi_req_t *r)
{
    HMPI_ASSERT_INTERNAL(r->kind < HMPI_REQ_KINDS && kinds[r->kind]);
    return kinds[r->kind];
}

/* ---- the table ---------------------------------------------------------------------- */

/* (A blocking call's request lives on its stack: not the table's, the same invariants.) */
int hmpi_req_valid(const hmpi_req_t *r)
{
    return r->kind < HMPI_REQ_KINDS && kinds[r->kind] && (!r->active || r->persistent) &&
           (!r->m.posted || !r->complete) && (!r->below_persistent || r->persistent) &&
           (!r->holds_comm || (r->comm && r->comm->refs > 0)) && (!r->listed || !r->complete);
}

/* The free list and the engine's list, walked (HMPI_ASSERT_EXPENSIVE). */
static int table_valid(void)
{
    uint32_t n = 0;
    for (uint32_t f = free_head; f; f = hmpi_req_table[f - 1].free_next)
        if (f - 1 >= top || hmpi_req_table[f - 1].kind != HMPI_REQ_DONE || ++n > top)
            return 0;
    int k = 0;
    for (hmpi_req_t *r = listed_head; r; r = r->lnext)
        if (!r->listed || (r->lnext && r->lnext->lprev != r) || !hmpi_req_valid(r) ||
            r < hmpi_req_table || (uint32_t)(r - hmpi_req_table) >= top || ++k > listed_count)
            return 0;
    return k == listed_count;
}

hmpi_req_t *hmpi_req_new(hmpi_req_kind_t kind)
{
    uint32_t i;
    if (free_head) {
        i = free_head - 1;
        HMPI_ASSERT(i < top); /* the free list holds only slots handed out before */
        HMPI_ASSERT_INTERNAL(hmpi_req_table[i].kind == HMPI_REQ_DONE);
        free_head = hmpi_req_table[i].free_next;
    } else if (top < HMPI_REQ_MAX) {
        i = top++;
    } else {
        hmpi_log_error("more than %d HMPI requests outstanding", HMPI_REQ_MAX);
        return NULL;
    }
    hmpi_req_t *r = &hmpi_req_table[i];
    hmpi_req_zero(r);
    r->kind = (uint8_t)kind;
    return r;
}

int hmpi_req_room(void) { return free_head || top < HMPI_REQ_MAX; }

void hmpi_req_release(hmpi_req_t *r)
{
    if (hmpi_req_is_shared(r))
        return; /* shared by every operation it stands for, never freed */
    uint32_t i = (uint32_t)(r - hmpi_req_table);
    HMPI_ASSERT(r >= hmpi_req_table && i < top); /* else the free list takes a stranger */
    HMPI_ASSERT_INTERNAL(!r->m.posted);
    if (r->listed)
        hmpi_req_unlist(r);
    const hmpi_req_ops_t *ops = ops_of(r);
    if (ops->release)
        ops->release(r);
    if (r->holds_comm)
        hmpi_comm_unref(r->comm);
    r->holds_comm = 0;
    if (r->holds_type)
        hmpi_type_release(r->type);
    r->holds_type = 0;
    r->kind = HMPI_REQ_DONE;
    r->free_next = free_head;
    free_head = i + 1;
    HMPI_ASSERT_EXPENSIVE(table_valid());
}

MPI_Request hmpi_req_new_done(void)
{
    hmpi_req_t *r = hmpi_req_new(HMPI_REQ_DONE);
    if (!r)
        return MPI_REQUEST_NULL;
    r->complete = 1;
    hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    return hmpi_req_handle(r);
}

MPI_Request hmpi_req_done(int proc_null)
{
    hmpi_p2p_lock();
    MPI_Request h = hmpi_req_new_done();
    if (h != MPI_REQUEST_NULL && proc_null)
        hmpi_status_set(&hmpi_req_obj(h)->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
    hmpi_p2p_unlock();
    return h;
}

int hmpi_req_table_init(void)
{
    if (hmpi_req_table)
        return 0;
    void *p = mmap(NULL, (size_t)HMPI_REQ_MAX * sizeof(hmpi_req_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        hmpi_log_error("cannot reserve the request table");
        return -1;
    }
    hmpi_req_table = p;
    top = 3; /* slot 0 is hmpi_req_sent(), 1 hmpi_req_proc_null(), 2 hmpi_req_coll_done() */
    hmpi_req_t *sent = hmpi_req_sent();
    hmpi_req_zero(sent);
    sent->kind = HMPI_REQ_SEND;
    sent->complete = 1;
    hmpi_status_set(&sent->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    hmpi_req_t *null = hmpi_req_proc_null();
    hmpi_req_zero(null);
    null->kind = HMPI_REQ_RECV;
    null->complete = 1;
    hmpi_status_set(&null->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
    hmpi_req_t *coll = hmpi_req_coll_done();
    hmpi_req_zero(coll);
    coll->kind = HMPI_REQ_COLL; /* its row comes later (coll/); it is never moved */
    coll->complete = 1;
    hmpi_status_set(&coll->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    return 0;
}

/* ---- completion and the engine's list ------------------------------------------------ */

void hmpi_req_list(hmpi_req_t *r)
{
    HMPI_ASSERT_INTERNAL(!r->listed && !r->complete);
    r->lprev = NULL;
    r->lnext = listed_head;
    if (listed_head)
        listed_head->lprev = r;
    listed_head = r;
    r->listed = 1;
    listed_count++;
}

void hmpi_req_unlist(hmpi_req_t *r)
{
    HMPI_ASSERT_INTERNAL(r->listed && listed_count > 0);
    if (r->lprev)
        r->lprev->lnext = r->lnext;
    else
        listed_head = r->lnext;
    if (r->lnext)
        r->lnext->lprev = r->lprev;
    r->lnext = r->lprev = NULL;
    r->listed = 0;
    listed_count--;
}

void hmpi_req_finish(hmpi_req_t *r)
{
    HMPI_ASSERT_INTERNAL(!r->complete && !r->m.posted);
    r->complete = 1; /* a persistent request stays active until Wait/Test returns it */
    if (r->wild) {
        r->wild = 0;
        r->comm->nwild--;
        hmpi_bridge_pending--;
        hmpi_bridge_wild_done(r->comm);
    }
    if (r->listed)
        hmpi_req_unlist(r);
    if (r->freed && !r->persistent)
        hmpi_req_release(r);
}

/* Progress's pass over the listed requests: each one's kind moves it; a complete one
 * leaves the list (and goes, when the program freed it). */
int hmpi_req_progress_listed(void)
{
    if (listed_walking)
        return 0;
    listed_walking = 1;
    int n = 0;
    for (hmpi_req_t *r = listed_head, *next; r; r = next) {
        next = r->lnext;
        HMPI_ASSERT_INTERNAL(hmpi_req_valid(r));
        if (ops_of(r)->progress(r)) {
            hmpi_req_finish(r); /* r leaves the list, and may be released */
            n++;
            next = listed_head; /* what r's completion did to the list: from the start */
        }
    }
    listed_walking = 0;
    return n;
}

int hmpi_req_listed(void) { return listed_head != NULL; }

int hmpi_p2p_check(hmpi_req_t *r)
{
    if (!r->complete) {
        const hmpi_req_ops_t *ops = ops_of(r);
        if (ops->progress && ops->progress(r))
            hmpi_req_finish(r);
    }
    return r->complete;
}

int hmpi_req_test_handle(MPI_Request *h, MPI_Status *st)
{
    if (*h == MPI_REQUEST_NULL)
        return 1;
    if (!hmpi_req_is_ours(*h)) {
        int flag = 0;
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = MPI_SUCCESS; /* PMPI_Test of one request leaves it alone */
        int err = PMPI_Test(h, &flag, st);
        if (err != MPI_SUCCESS && st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
        return flag || err != MPI_SUCCESS;
    }
    hmpi_req_t *r = hmpi_req_obj(*h);
    if (!hmpi_p2p_check(r))
        return 0;
    if (st != MPI_STATUS_IGNORE) {
        *st = r->status;
        if (!ops_of(r)->status_error)
            st->MPI_ERROR = MPI_SUCCESS;
    }
    if (!r->persistent)
        hmpi_req_release(r);
    *h = MPI_REQUEST_NULL;
    return 1;
}

int hmpi_p2p_test(hmpi_req_t *r)
{
    if (!hmpi_p2p_check(r))
        hmpi_p2p_progress();
    return r->complete;
}

/* What a wait for r waits as (statistics): a collective's as a collective's, a send's
 * and a receive's as their communicator says (p2p_wait_family). */
static hmpi_wait_family_t family_of(const hmpi_req_t *r)
{
    if (r->kind == HMPI_REQ_COLL)
        return HMPI_WAIT_COLL;
    return hmpi_p2p_wait_family(r->comm, r->kind == HMPI_REQ_SEND);
}

void hmpi_p2p_wait(hmpi_req_t *r)
{
    hmpi_backoff_t b = {0};
    uint64_t since = 0;
    while (!hmpi_p2p_test(r))
        hmpi_p2p_wait_step(&b, &since);
    hmpi_wait_end(&b, family_of(r));
}

/* ---- finishing a request for the program --------------------------------------------- */

/* Null or inactive: a wait on it returns at once with an empty status. */
static int is_idle(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return 1;
    if (hmpi_req_is_ours(h)) {
        hmpi_req_t *r = hmpi_req_obj(h);
        return r->persistent && !r->active;
    }
    return 0;
}

/* An empty status (MPI-4.1 §3.7.3), MPI_ERROR left as it was (§3.2.5; MPICH and Open
 * MPI leave it too). */
static void empty_status(MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_fill(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
}

static MPI_Comm comm_of(MPI_Request h)
{
    if (!hmpi_req_is_ours(h))
        return MPI_COMM_WORLD;
    hmpi_req_t *r = hmpi_req_obj(h);
    return r->comm ? r->comm->handle : MPI_COMM_WORLD;
}

/* Completes HMPI request *h, which is complete: status out, handle released or made
 * inactive. Returns the operation's error. */
static int finish_ours(MPI_Request *h, MPI_Status *status)
{
    hmpi_req_t *r = hmpi_req_obj(*h);
    HMPI_ASSERT_INTERNAL(r->complete && hmpi_req_valid(r));
    int err = ops_of(r)->status_error ? r->status.MPI_ERROR : MPI_SUCCESS;
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_out(status, &r->status);
    if (r->persistent) {
        r->active = 0;
    } else {
        hmpi_req_release(r);
        *h = MPI_REQUEST_NULL;
    }
    return err;
}

/* Checks request h once: 1 when it is complete, without finishing it. The engine is
 * not progressed here: each pass over an array progresses it once, first. */
static int poll(MPI_Request h)
{
    if (hmpi_req_is_ours(h))
        return hmpi_p2p_check(hmpi_req_obj(h));
    int flag = 0;
    PMPI_Request_get_status(h, &flag, MPI_STATUS_IGNORE);
    return flag;
}

/* Finishes a complete request (ours or below) into status; returns its error. */
static int finish(MPI_Request *h, MPI_Status *status)
{
    if (hmpi_req_is_ours(*h))
        return finish_ours(h, status);
    int flag = 0;
    return PMPI_Test(h, &flag, status);
}

static MPI_Status *status_at(MPI_Status *statuses, int i)
{
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

/* Records the error err of the request finished into statuses[i], the previous ones
 * having given sofar. The field is written only once the call is to return
 * MPI_ERR_IN_STATUS, and then in every status it fills (MPI-4.1 §3.2.5, §3.7.5): at the
 * first error the earlier statuses, all successes, get MPI_SUCCESS. Without statuses
 * the error itself is returned. */
static int note_error(int err, int sofar, MPI_Status *statuses, int i)
{
    if (statuses == MPI_STATUSES_IGNORE)
        return err == MPI_SUCCESS ? sofar : err;
    if (sofar == MPI_SUCCESS && err == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (sofar == MPI_SUCCESS)
        for (int k = 0; k < i; k++)
            statuses[k].MPI_ERROR = MPI_SUCCESS;
    statuses[i].MPI_ERROR = err;
    return MPI_ERR_IN_STATUS;
}

/* What a wait stuck on request h waits as (statistics): the MPI below's requests count
 * as receives. */
static hmpi_wait_family_t wait_family(MPI_Request h)
{
    if (!hmpi_req_is_ours(h))
        return HMPI_WAIT_RECV;
    hmpi_req_t *r = hmpi_req_obj(h);
    return family_of(r);
}

static int any_ours(int n, const MPI_Request *reqs)
{
    for (int i = 0; i < n; i++)
        if (hmpi_req_is_ours(reqs[i]))
            return 1;
    return 0;
}

/* ---- the one pass over an array -------------------------------------------------------- */

/* What a pass does with the complete requests it finds: note them (ALL finishes them
 * all at the end), finish the first and stop (ANY), finish each (SOME). */
enum { TAKE_NONE, TAKE_FIRST, TAKE_EACH };

typedef struct {
    int active;  /* active requests seen */
    int pending; /* the first one not complete, or count */
    int taken;   /* ANY: the index finished; SOME: how many */
    int err;     /* SOME: the errors so far (note_error) */
} pass_t;

/* One pass over reqs[from, count) (engine lock held): the engine moves once, then each
 * active request is polled once, the MPI below's by its status query (which moves the
 * MPI below), and what take says is done with the complete ones. */
static pass_t pass(int count, MPI_Request reqs[], int from, int take, int indices[],
                   MPI_Status statuses[])
{
    pass_t p = {0, count, take == TAKE_FIRST ? MPI_UNDEFINED : 0, MPI_SUCCESS};
    hmpi_p2p_progress();
    for (int i = from; i < count; i++) {
        if (is_idle(reqs[i]))
            continue;
        p.active++;
        if (!poll(reqs[i])) {
            if (p.pending == count)
                p.pending = i;
            continue;
        }
        if (take == TAKE_FIRST) {
            p.taken = i;
            return p;
        }
        if (take == TAKE_EACH) {
            indices[p.taken] = i;
            p.err = note_error(finish(&reqs[i], status_at(statuses, p.taken)), p.err, statuses,
                               p.taken);
            p.taken++;
        }
    }
    return p;
}

/* MPI_Waitall and MPI_Testall. */
static int all(int wait, int count, MPI_Request reqs[], int *flag, MPI_Status statuses[],
               const char *fn)
{
    if (!any_ours(count, reqs) && (!wait || (!hmpi_p2p_busy() && !hmpi_stats_counting()))) {
        if (!wait) {
            int err = PMPI_Testall(count, reqs, flag, statuses);
            hmpi_p2p_progress_locked();
            return err;
        }
        return PMPI_Waitall(count, reqs, statuses);
    }
    hmpi_backoff_t b = {0};
    uint64_t since = 0;
    /* A complete request stays complete until finished below: each pass goes on from
     * the first one not yet seen complete, so a pass costs one poll, not count. */
    int i = 0;
    MPI_Request stuck = MPI_REQUEST_NULL; /* the first one pending, when last waited */
    hmpi_p2p_lock();
    for (;;) {
        i = pass(count, reqs, i, TAKE_NONE, NULL, statuses).pending;
        if (i == count || !wait)
            break;
        stuck = reqs[i];
        hmpi_p2p_wait_step(&b, &since);
    }
    if (flag)
        *flag = i == count;
    int err = MPI_SUCCESS;
    for (int k = 0; i == count && k < count; k++) {
        MPI_Status *st = status_at(statuses, k);
        if (is_idle(reqs[k])) {
            empty_status(st);
            err = note_error(MPI_SUCCESS, err, statuses, k);
        } else {
            err = note_error(finish(&reqs[k], st), err, statuses, k);
        }
    }
    hmpi_p2p_unlock();
    if (wait)
        hmpi_wait_end(&b, wait_family(stuck));
    return hmpi_raise_in(MPI_COMM_WORLD, err, fn);
}

/* MPI_Waitany and MPI_Testany. */
static int any(int wait, int count, MPI_Request reqs[], int *flag, int *index, MPI_Status *status,
               const char *fn)
{
    if (!any_ours(count, reqs) && (!wait || (!hmpi_p2p_busy() && !hmpi_stats_counting()))) {
        if (!wait) {
            int err = PMPI_Testany(count, reqs, index, flag, status);
            hmpi_p2p_progress_locked();
            return err;
        }
        return PMPI_Waitany(count, reqs, index, status);
    }
    hmpi_backoff_t b = {0};
    uint64_t since = 0;
    pass_t p;
    hmpi_p2p_lock();
    for (;;) {
        p = pass(count, reqs, 0, TAKE_FIRST, NULL, NULL);
        if (p.taken != MPI_UNDEFINED || p.active == 0 || !wait)
            break;
        hmpi_p2p_wait_step(&b, &since);
    }
    int err = MPI_SUCCESS, ours = 0;
    MPI_Comm comm = MPI_COMM_WORLD;
    *index = p.taken;
    if (flag)
        *flag = p.taken != MPI_UNDEFINED || p.active == 0;
    if (p.taken != MPI_UNDEFINED) {
        ours = hmpi_req_is_ours(reqs[p.taken]);
        comm = comm_of(reqs[p.taken]);
        err = finish(&reqs[p.taken], status); /* the MPI below raised its own */
    } else if (p.active == 0) {
        empty_status(status);
    }
    hmpi_p2p_unlock();
    if (wait)
        hmpi_wait_end(&b, HMPI_WAIT_RECV);
    return ours ? hmpi_raise_in(comm, err, fn) : err;
}

/* MPI_Waitsome and MPI_Testsome. */
static int some(int wait, int count, MPI_Request reqs[], int *outcount, int indices[],
                MPI_Status statuses[], const char *fn)
{
    if (!any_ours(count, reqs) && (!wait || (!hmpi_p2p_busy() && !hmpi_stats_counting()))) {
        if (!wait) {
            int err = PMPI_Testsome(count, reqs, outcount, indices, statuses);
            hmpi_p2p_progress_locked();
            return err;
        }
        return PMPI_Waitsome(count, reqs, outcount, indices, statuses);
    }
    hmpi_backoff_t b = {0};
    uint64_t since = 0;
    pass_t p;
    hmpi_p2p_lock();
    for (;;) {
        p = pass(count, reqs, 0, TAKE_EACH, indices, statuses);
        if (p.taken > 0 || p.active == 0 || !wait)
            break;
        hmpi_p2p_wait_step(&b, &since);
    }
    hmpi_p2p_unlock();
    if (wait)
        hmpi_wait_end(&b, HMPI_WAIT_RECV);
    *outcount = p.active ? p.taken : MPI_UNDEFINED;
    return hmpi_raise_in(MPI_COMM_WORLD, p.err, fn);
}

/* MPI_Wait and MPI_Test. */
static int one(int wait, MPI_Request *h, int *flag, MPI_Status *status, const char *fn)
{
    if (!hmpi_req_is_ours(*h)) {
        if (wait)
            return *h == MPI_REQUEST_NULL ? PMPI_Wait(h, status)
                                          : hmpi_p2p_below_wait(h, status, HMPI_WAIT_RECV);
        int err = PMPI_Test(h, flag, status);
        if (!*flag)
            hmpi_p2p_progress_locked();
        return err;
    }
    if (is_idle(*h)) {
        if (flag)
            *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_obj(*h);
    MPI_Comm comm = r->comm ? r->comm->handle : MPI_COMM_WORLD;
    int done = 1, err = MPI_SUCCESS;
    if (r->complete) { /* nothing to wait for (a collective that ran to its end in its start) */
        if (flag)
            *flag = 1;
    } else if (wait) {
        hmpi_p2p_wait(r);
    } else {
        done = *flag = hmpi_p2p_test(r);
    }
    if (done)
        err = finish_ours(h, status);
    hmpi_p2p_unlock();
    return hmpi_raise_in(comm, err, fn);
}

/* MPI_Request_get_status: progress as MPI_Test does (MPI-4.1 §3.7.3); nothing freed. */
static int get_status(MPI_Request h, int *flag, MPI_Status *status)
{
    if (!hmpi_req_is_ours(h)) {
        int err = PMPI_Request_get_status(h, flag, status);
        if (err == MPI_SUCCESS && !*flag)
            hmpi_p2p_progress_locked();
        return err;
    }
    if (is_idle(h)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_obj(h);
    *flag = hmpi_p2p_test(r);
    if (*flag && status != MPI_STATUS_IGNORE)
        hmpi_status_out(status, &r->status);
    hmpi_p2p_unlock();
    return MPI_SUCCESS;
}

/* ---- MPI 4.1's MPI_Request_get_status_any, _all and _some ------------------------------
 * Testany's, Testall's and Testsome's answers without freeing or inactivating a request
 * (MPI-4.1 §3.7.5); their arrays may hold HMPI's requests, which the MPI below refuses as
 * invalid handles, so HMPI answers for every one, progress included. */

/* Whether active request h is complete: then its status into status (MPI_ERROR left as
 * the program set it) and its operation's error into *err_p. The MPI below answers for
 * its own requests. Engine lock held. */
static int peek(MPI_Request h, MPI_Status *status, int *err_p)
{
    *err_p = MPI_SUCCESS;
    if (!hmpi_req_is_ours(h)) {
        int flag = 0;
        *err_p = PMPI_Request_get_status(h, &flag, status);
        return flag || *err_p != MPI_SUCCESS;
    }
    hmpi_req_t *r = hmpi_req_obj(h);
    if (!hmpi_p2p_check(r))
        return 0;
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_out(status, &r->status);
    *err_p = ops_of(r)->status_error ? r->status.MPI_ERROR : MPI_SUCCESS;
    return 1;
}

static int peek_any(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status,
                    const char *fn)
{
    int err = MPI_SUCCESS, idle = 1;
    *flag = 0;
    *index = MPI_UNDEFINED;
    hmpi_p2p_lock();
    hmpi_p2p_progress();
    for (int i = 0; i < count && !*flag; i++) {
        if (is_idle(reqs[i]))
            continue;
        idle = 0;
        if (peek(reqs[i], status, &err))
            *flag = 1, *index = i;
    }
    hmpi_p2p_unlock();
    if (idle) { /* none active: flag set, index MPI_UNDEFINED, an empty status */
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    MPI_Comm comm =
        *flag && hmpi_req_is_ours(reqs[*index]) ? comm_of(reqs[*index]) : MPI_COMM_WORLD;
    return hmpi_raise_in(comm, err, fn);
}

static int peek_all(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[], const char *fn)
{
    int all = 1, err = MPI_SUCCESS;
    hmpi_p2p_lock();
    hmpi_p2p_progress();
    for (int i = 0; i < count && all; i++)
        all = is_idle(reqs[i]) || poll(reqs[i]);
    for (int i = 0; i < count && all; i++) { /* every one complete: statuses, nothing freed */
        MPI_Status *st = status_at(statuses, i);
        int e = MPI_SUCCESS;
        if (is_idle(reqs[i]))
            empty_status(st);
        else
            peek(reqs[i], st, &e);
        err = note_error(e, err, statuses, i);
    }
    hmpi_p2p_unlock();
    *flag = all;
    return hmpi_raise_in(MPI_COMM_WORLD, err, fn);
}

static int peek_some(int count, MPI_Request reqs[], int *outcount, int indices[],
                     MPI_Status statuses[], const char *fn)
{
    int n = 0, active = 0, err = MPI_SUCCESS;
    hmpi_p2p_lock();
    hmpi_p2p_progress();
    for (int i = 0; i < count; i++) {
        if (is_idle(reqs[i]))
            continue;
        active++;
        int e;
        if (!peek(reqs[i], status_at(statuses, n), &e))
            continue;
        indices[n] = i;
        err = note_error(e, err, statuses, n);
        n++;
    }
    hmpi_p2p_unlock();
    *outcount = active ? n : MPI_UNDEFINED;
    return hmpi_raise_in(MPI_COMM_WORLD, err, fn);
}

int hmpi_p2p_complete(int what, int wait, int count, MPI_Request reqs[], int *flag, int *index,
                      int indices[], MPI_Status statuses[], const char *fn)
{
    switch (what) {
    case HMPI_P2P_STATUS_ANY: return peek_any(count, reqs, index, flag, statuses, fn);
    case HMPI_P2P_STATUS_ALL: return peek_all(count, reqs, flag, statuses, fn);
    case HMPI_P2P_STATUS_SOME: return peek_some(count, reqs, index, indices, statuses, fn);
    case HMPI_P2P_ONE: return one(wait, reqs, flag, statuses, fn);
    case HMPI_P2P_STATUS: return get_status(reqs[0], flag, statuses);
    case HMPI_P2P_ALL: return all(wait, count, reqs, flag, statuses, fn);
    case HMPI_P2P_ANY: return any(wait, count, reqs, flag, index, statuses, fn);
    default: return some(wait, count, reqs, index, indices, statuses, fn);
    }
}

/* ---- start, cancel, free --------------------------------------------------------------- */

int hmpi_p2p_start(MPI_Request *req, const char *fn)
{
    if (!req || !hmpi_req_is_ours(*req))
        return PMPI_Start(req);
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_obj(*req);
    const hmpi_req_ops_t *ops = ops_of(r);
    MPI_Comm comm = r->comm ? r->comm->handle : MPI_COMM_WORLD;
    int err;
    if (!r->persistent || !ops->start) {
        err = hmpi_err_what(MPI_ERR_REQUEST, "request is not persistent");
    } else if (r->active) {
        err = hmpi_err_what(MPI_ERR_REQUEST, "request is active already");
    } else {
        r->complete = 0;
        r->active = 1;
        r->cancelled = 0;
        err = ops->start(r);
        if (err == MPI_SUCCESS && ops->background && !r->complete && !r->listed)
            hmpi_req_list(r);
        if (err != MPI_SUCCESS) { /* stays inactive */
            r->active = 0;
            r->complete = 1;
        }
    }
    HMPI_ASSERT_INTERNAL(hmpi_req_valid(r));
    hmpi_p2p_unlock();
    return hmpi_raise_in(comm, err, fn);
}

int hmpi_p2p_cancel(MPI_Request *req)
{
    if (!req || !hmpi_req_is_ours(*req))
        return PMPI_Cancel(req);
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_obj(*req);
    const hmpi_req_ops_t *ops = ops_of(r);
    if (!r->complete && ops->cancel)
        ops->cancel(r);
    hmpi_p2p_unlock();
    return MPI_SUCCESS;
}

int hmpi_p2p_free(MPI_Request *req)
{
    if (!req || !hmpi_req_is_ours(*req))
        return PMPI_Request_free(req);
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_obj(*req);
    if (r->below != MPI_REQUEST_NULL || r->complete) {
        /* the MPI below carries the operation on; or done, or an inactive persistent
         * request */
        hmpi_req_release(r);
    } else {
        r->persistent = 0;
        r->freed = 1; /* released at completion */
        /* A kind whose own poll completes it is moved by progress from now on, since
         * nobody tests it any more. */
        if (ops_of(r)->progress && !r->listed)
            hmpi_req_list(r);
    }
    hmpi_p2p_unlock();
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int hmpi_p2p_poll_new(int (*poll_fn)(void *arg, MPI_Status *status), void *arg, hmpi_comm_t *c,
                      MPI_Request *req)
{
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_new(HMPI_REQ_POLL);
    if (r) {
        r->poll = poll_fn;
        r->arg = arg;
        hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
        if (c)
            hmpi_req_bind(r, c);
        *req = hmpi_req_handle(r);
    }
    hmpi_p2p_unlock();
    return r ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}
