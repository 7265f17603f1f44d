/* request.c: every MPI function that takes a request. A request is HMPI's (a local
 * operation, a wildcard, a persistent operation) or the MPI below's (a remote
 * operation, or one of a call HMPI does not intercept); arrays may mix both.
 * Statuses: the calls that complete one request never write MPI_ERROR; those that
 * complete several write it in each status only when they return MPI_ERR_IN_STATUS
 * (MPI-4.1 §3.2.5). */
#include "../common/stats.h"
#include "../core/check.h"
#include "pt2pt.h"

#include <stdint.h>

/* Receives and polled operations report an error through their status. */
static int reports_status(const hmpi_req_t *r)
{
    return r->kind == HMPI_REQ_RECV || r->kind == HMPI_REQ_POLL;
}

/* Completes HMPI request *h, which is complete: status out, handle released or made
 * inactive. Returns the operation's error. */
static int finish_ours(MPI_Request *h, MPI_Status *status)
{
    hmpi_req_t *r = hmpi_req_obj(*h);
    int err = reports_status(r) ? r->status.MPI_ERROR : MPI_SUCCESS;
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

/* An empty status (MPI-4.1 §3.7.3), MPI_ERROR left as it was (§3.2.5; MPICH and Open
 * MPI leave it too). */
static void empty_status(MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_fill(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
}

static MPI_Comm comm_of(MPI_Request h)
{
    hmpi_req_t *r = hmpi_req_obj(h);
    return r->comm ? r->comm->handle : MPI_COMM_WORLD;
}

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
    if (hmpi_req_is_ours(*h)) {
        int err;
        hmpi_p2p_lock();
        err = finish_ours(h, status);
        hmpi_p2p_unlock();
        return err;
    }
    int flag = 0;
    return PMPI_Test(h, &flag, status);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    HMPI_ENTER("MPI_Wait");
    if (!request)
        return hmpi_raise_in(MPI_COMM_WORLD, hmpi_err_what(MPI_ERR_REQUEST, "request is NULL"),
                             "MPI_Wait");
    if (!hmpi_req_is_ours(*request))
        return *request == MPI_REQUEST_NULL ? PMPI_Wait(request, status)
                                            : hmpi_p2p_below_wait(request, status, HMPI_WAIT_RECV);
    if (is_idle(*request)) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    MPI_Comm comm = comm_of(*request);
    hmpi_p2p_lock();
    hmpi_p2p_wait(hmpi_req_obj(*request));
    int err = finish_ours(request, status);
    hmpi_p2p_unlock();
    return hmpi_raise_in(comm, err, "MPI_Wait");
}
HMPI_PMPI(Wait)

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    HMPI_ENTER("MPI_Test");
    if (!request)
        return hmpi_raise_in(MPI_COMM_WORLD, hmpi_err_what(MPI_ERR_REQUEST, "request is NULL"),
                             "MPI_Test");
    if (!hmpi_req_is_ours(*request)) {
        int err = PMPI_Test(request, flag, status);
        if (!*flag)
            hmpi_p2p_progress_locked();
        return err;
    }
    if (is_idle(*request)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    MPI_Comm comm = comm_of(*request);
    hmpi_p2p_lock();
    *flag = hmpi_p2p_test(hmpi_req_obj(*request));
    int err = *flag ? finish_ours(request, status) : MPI_SUCCESS;
    hmpi_p2p_unlock();
    return hmpi_raise_in(comm, err, "MPI_Test");
}
HMPI_PMPI(Test)

/* An array argument of Wait/Test*: count not negative, the array there when count > 0. */
static int bad_array(int count, const MPI_Request *requests)
{
    return count < 0 || (count > 0 && !requests);
}

static int bad_array_raise(int count, const char *fn)
{
    int err = count < 0
                  ? hmpi_err_what(MPI_ERR_COUNT, "count %d is negative", count)
                  : hmpi_err_what(MPI_ERR_ARG, "array_of_requests is NULL with count %d", count);
    return hmpi_err_comm(MPI_COMM_WORLD, err, fn);
}

/* What a wait stuck on request h waits as (statistics): the MPI below's requests count
 * as receives. */
static hmpi_wait_family_t wait_family(MPI_Request h)
{
    if (!hmpi_req_is_ours(h))
        return HMPI_WAIT_RECV;
    hmpi_req_t *r = hmpi_req_obj(h);
    return hmpi_p2p_wait_family(r->comm, r->kind == HMPI_REQ_SEND);
}

static int any_ours(int n, const MPI_Request *reqs)
{
    for (int i = 0; i < n; i++)
        if (hmpi_req_is_ours(reqs[i]))
            return 1;
    return 0;
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

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Waitall");
    if (bad_array(count, requests))
        return bad_array_raise(count, "MPI_Waitall");
    if (!any_ours(count, requests) && !hmpi_p2p_busy() && !hmpi_stats_counting())
        return PMPI_Waitall(count, requests, statuses);
    hmpi_backoff_t b = {0};
    uint64_t since = 0;
    MPI_Request stuck = MPI_REQUEST_NULL; /* the first one pending, when last waited */
    /* A complete request stays complete until finished below: each pass goes on from
     * the first one not yet seen complete, so a pass costs one poll, not count. With
     * requests of the MPI below in the array, every pass polls each of those (polling
     * is what moves the MPI below). */
    int below = 0;
    for (int i = 0; i < count && !below; i++)
        below = requests[i] != MPI_REQUEST_NULL && !hmpi_req_is_ours(requests[i]);
    for (int i = 0;;) {
        hmpi_p2p_lock();
        hmpi_p2p_progress();
        while (i < count && (is_idle(requests[i]) || poll(requests[i])))
            i++;
        for (int k = i + 1; below && k < count; k++)
            if (!hmpi_req_is_ours(requests[k]) && requests[k] != MPI_REQUEST_NULL)
                poll(requests[k]);
        if (i < count)
            stuck = requests[i], hmpi_p2p_waiting(&b, &since);
        hmpi_p2p_unlock();
        if (i == count)
            break;
    }
    hmpi_wait_end(&b, wait_family(stuck));
    int err = MPI_SUCCESS;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = status_at(statuses, i);
        if (is_idle(requests[i])) {
            empty_status(st);
            err = note_error(MPI_SUCCESS, err, statuses, i);
            continue;
        }
        err = note_error(finish(&requests[i], st), err, statuses, i);
    }
    return hmpi_raise_in(MPI_COMM_WORLD, err, "MPI_Waitall");
}
HMPI_PMPI(Waitall)

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Testall");
    if (bad_array(count, requests))
        return bad_array_raise(count, "MPI_Testall");
    if (!any_ours(count, requests)) {
        int err = PMPI_Testall(count, requests, flag, statuses);
        hmpi_p2p_progress_locked();
        return err;
    }
    int all = 1;
    hmpi_p2p_lock();
    hmpi_p2p_progress(); /* local peers may wait for our match, whatever comes first */
    for (int i = 0; i < count; i++)
        all &= is_idle(requests[i]) || poll(requests[i]);
    hmpi_p2p_unlock();
    *flag = all;
    if (!all)
        return MPI_SUCCESS;
    int err = MPI_SUCCESS;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = status_at(statuses, i);
        if (is_idle(requests[i])) {
            empty_status(st);
            err = note_error(MPI_SUCCESS, err, statuses, i);
            continue;
        }
        err = note_error(finish(&requests[i], st), err, statuses, i);
    }
    return hmpi_raise_in(MPI_COMM_WORLD, err, "MPI_Testall");
}
HMPI_PMPI(Testall)

/* One pass of Testany: index of a completed request, MPI_UNDEFINED with *all_idle
 * when nothing can complete, or -1 when something is still pending. */
static int find_any(int count, MPI_Request requests[], int *all_idle)
{
    *all_idle = 1;
    for (int i = 0; i < count; i++) {
        if (is_idle(requests[i]))
            continue;
        *all_idle = 0;
        if (poll(requests[i]))
            return i;
    }
    return *all_idle ? MPI_UNDEFINED : -1;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    HMPI_ENTER("MPI_Waitany");
    if (bad_array(count, requests))
        return bad_array_raise(count, "MPI_Waitany");
    if (!any_ours(count, requests) && !hmpi_p2p_busy() && !hmpi_stats_counting())
        return PMPI_Waitany(count, requests, index, status);
    hmpi_backoff_t b = {0};
    uint64_t since = 0;
    int i, idle;
    for (;;) {
        hmpi_p2p_lock();
        hmpi_p2p_progress();
        i = find_any(count, requests, &idle);
        if (i == -1)
            hmpi_p2p_waiting(&b, &since);
        hmpi_p2p_unlock();
        if (i != -1)
            break;
    }
    hmpi_wait_end(&b, HMPI_WAIT_RECV);
    *index = i;
    if (i == MPI_UNDEFINED) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    MPI_Comm comm = hmpi_req_is_ours(requests[i]) ? comm_of(requests[i]) : MPI_COMM_WORLD;
    return hmpi_raise_in(comm, finish(&requests[i], status), "MPI_Waitany");
}
HMPI_PMPI(Waitany)

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    HMPI_ENTER("MPI_Testany");
    if (bad_array(count, requests))
        return bad_array_raise(count, "MPI_Testany");
    if (!any_ours(count, requests)) {
        int err = PMPI_Testany(count, requests, index, flag, status);
        hmpi_p2p_progress_locked();
        return err;
    }
    int idle;
    hmpi_p2p_lock();
    hmpi_p2p_progress();
    int i = find_any(count, requests, &idle);
    hmpi_p2p_unlock();
    if (i == -1) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *flag = 1;
    *index = i;
    if (i == MPI_UNDEFINED) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    MPI_Comm comm = hmpi_req_is_ours(requests[i]) ? comm_of(requests[i]) : MPI_COMM_WORLD;
    return hmpi_raise_in(comm, finish(&requests[i], status), "MPI_Testany");
}
HMPI_PMPI(Testany)

/* One pass of Testsome: finishes every complete request. */
static int some(int incount, MPI_Request requests[], int *outcount, int indices[],
                MPI_Status statuses[], int *err_p)
{
    int n = 0, active = 0, err = MPI_SUCCESS;
    hmpi_p2p_lock();
    hmpi_p2p_progress();
    hmpi_p2p_unlock();
    for (int i = 0; i < incount; i++) {
        if (is_idle(requests[i]))
            continue;
        active++;
        hmpi_p2p_lock();
        int done = poll(requests[i]);
        hmpi_p2p_unlock();
        if (!done)
            continue;
        indices[n] = i;
        err = note_error(finish(&requests[i], status_at(statuses, n)), err, statuses, n);
        n++;
    }
    *outcount = active ? n : MPI_UNDEFINED;
    *err_p = err;
    return active;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Waitsome");
    if (bad_array(incount, requests))
        return bad_array_raise(incount, "MPI_Waitsome");
    if (!any_ours(incount, requests) && !hmpi_p2p_busy() && !hmpi_stats_counting())
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    hmpi_backoff_t b = {0};
    uint64_t since = 0;
    int err;
    while (some(incount, requests, outcount, indices, statuses, &err) && *outcount == 0) {
        hmpi_p2p_lock();
        hmpi_p2p_waiting(&b, &since);
        hmpi_p2p_unlock();
    }
    hmpi_wait_end(&b, HMPI_WAIT_RECV);
    return hmpi_raise_in(MPI_COMM_WORLD, err, "MPI_Waitsome");
}
HMPI_PMPI(Waitsome)

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Testsome");
    if (bad_array(incount, requests))
        return bad_array_raise(incount, "MPI_Testsome");
    if (!any_ours(incount, requests)) {
        int err = PMPI_Testsome(incount, requests, outcount, indices, statuses);
        hmpi_p2p_progress_locked();
        return err;
    }
    int err;
    some(incount, requests, outcount, indices, statuses, &err);
    return hmpi_raise_in(MPI_COMM_WORLD, err, "MPI_Testsome");
}
HMPI_PMPI(Testsome)

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    HMPI_ENTER("MPI_Request_get_status");
    if (!hmpi_req_is_ours(request)) { /* progress as MPI_Test does (MPI-4.1 §3.7.3) */
        int err = PMPI_Request_get_status(request, flag, status);
        if (err == MPI_SUCCESS && !*flag)
            hmpi_p2p_progress_locked();
        return err;
    }
    if (is_idle(request)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_obj(request);
    *flag = hmpi_p2p_test(r);
    if (*flag && status != MPI_STATUS_IGNORE)
        hmpi_status_out(status, &r->status);
    hmpi_p2p_unlock();
    return MPI_SUCCESS;
}
HMPI_PMPI(Request_get_status)

#if HMPI_MPI41_CALLS
/* ---- MPI 4.1's MPI_Request_get_status_any, _all and _some ----------------------------
 * MPI_Testany, MPI_Testall and MPI_Testsome's answers without freeing or inactivating a
 * request (MPI-4.1 §3.7.5). Their arrays may hold HMPI's requests, which the MPI below
 * refuses as invalid handles, so HMPI answers for every request, progress included. */

/* Whether active request h is complete: then its status into status (MPI_ERROR left as
 * the program set it, as everywhere here) and its operation's error into *err_p. The
 * MPI below answers for its own requests. Engine lock held. */
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
    *err_p = reports_status(r) ? r->status.MPI_ERROR : MPI_SUCCESS;
    return 1;
}

int MPI_Request_get_status_any(int count, MPI_Request requests[], int *index, int *flag,
                               MPI_Status *status)
{
    HMPI_ENTER("MPI_Request_get_status_any");
    if (bad_array(count, requests))
        return bad_array_raise(count, "MPI_Request_get_status_any");
    int err = MPI_SUCCESS, idle = 1;
    *flag = 0;
    *index = MPI_UNDEFINED;
    hmpi_p2p_lock();
    hmpi_p2p_progress();
    for (int i = 0; i < count && !*flag; i++) {
        if (is_idle(requests[i]))
            continue;
        idle = 0;
        if (peek(requests[i], status, &err))
            *flag = 1, *index = i;
    }
    hmpi_p2p_unlock();
    if (idle) { /* none active: flag set, index MPI_UNDEFINED, an empty status */
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    MPI_Comm comm =
        *flag && hmpi_req_is_ours(requests[*index]) ? comm_of(requests[*index]) : MPI_COMM_WORLD;
    return hmpi_raise_in(comm, err, "MPI_Request_get_status_any");
}
HMPI_PMPI(Request_get_status_any)

int MPI_Request_get_status_all(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Request_get_status_all");
    if (bad_array(count, requests))
        return bad_array_raise(count, "MPI_Request_get_status_all");
    int all = 1;
    hmpi_p2p_lock();
    hmpi_p2p_progress();
    for (int i = 0; i < count && all; i++)
        all = is_idle(requests[i]) || poll(requests[i]);
    /* Every one complete: the statuses, nothing freed. */
    int err = MPI_SUCCESS;
    for (int i = 0; i < count && all; i++) {
        MPI_Status *st = status_at(statuses, i);
        int e = MPI_SUCCESS;
        if (is_idle(requests[i]))
            empty_status(st);
        else
            peek(requests[i], st, &e);
        err = note_error(e, err, statuses, i);
    }
    hmpi_p2p_unlock();
    *flag = all;
    return hmpi_raise_in(MPI_COMM_WORLD, err, "MPI_Request_get_status_all");
}
HMPI_PMPI(Request_get_status_all)

int MPI_Request_get_status_some(int incount, MPI_Request requests[], int *outcount, int indices[],
                                MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Request_get_status_some");
    if (bad_array(incount, requests))
        return bad_array_raise(incount, "MPI_Request_get_status_some");
    int n = 0, active = 0, err = MPI_SUCCESS;
    hmpi_p2p_lock();
    hmpi_p2p_progress();
    for (int i = 0; i < incount; i++) {
        if (is_idle(requests[i]))
            continue;
        active++;
        int e;
        if (!peek(requests[i], status_at(statuses, n), &e))
            continue;
        indices[n] = i;
        err = note_error(e, err, statuses, n);
        n++;
    }
    hmpi_p2p_unlock();
    *outcount = active ? n : MPI_UNDEFINED;
    return hmpi_raise_in(MPI_COMM_WORLD, err, "MPI_Request_get_status_some");
}
HMPI_PMPI(Request_get_status_some)
#endif

int MPI_Request_free(MPI_Request *request)
{
    HMPI_ENTER("MPI_Request_free");
    if (!request || !hmpi_req_is_ours(*request))
        return PMPI_Request_free(request);
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_obj(*request);
    if (r->below != MPI_REQUEST_NULL) {
        PMPI_Request_free(&r->below); /* the MPI below carries the operation on */
        hmpi_req_release(r);
    } else if (r->complete) {
        hmpi_req_release(r);          /* done, or an inactive persistent request */
    } else {
        r->persistent = 0;
        r->freed = 1;                 /* the engine releases it at completion */
    }
    hmpi_p2p_unlock();
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}
HMPI_PMPI(Request_free)

int MPI_Cancel(MPI_Request *request)
{
    HMPI_ENTER("MPI_Cancel");
    if (!request || !hmpi_req_is_ours(*request))
        return PMPI_Cancel(request);
    hmpi_p2p_lock();
    hmpi_p2p_cancel(hmpi_req_obj(*request));
    hmpi_p2p_unlock();
    return MPI_SUCCESS;
}
HMPI_PMPI(Cancel)

/* ---- persistent requests ---------------------------------------------------------- */

static int make_persistent(const void *buf, int count, MPI_Datatype type, int peer, int tag,
                           MPI_Comm comm, int mode, int is_recv, MPI_Request *request,
                           const char *fn)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    hmpi_layout_t t;
    int err = is_recv ? hmpi_check_recv(c, buf, count, type, peer, tag, &t)
                      : hmpi_check_send(c, buf, count, type, peer, tag, &t);
    if (!err && !request)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    if (err)
        return hmpi_raise_in(comm, err, fn);
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_new(is_recv ? HMPI_REQ_RECV : HMPI_REQ_SEND);
    if (r) {
        hmpi_req_fill(r, c, buf, count, type, &t, peer, tag, mode);
        hmpi_req_bind(r, c);
        r->persistent = 1;
        r->complete = 1; /* inactive */
        *request = hmpi_req_handle(r);
    }
    hmpi_p2p_unlock();
    return hmpi_raise_in(comm, r ? MPI_SUCCESS : MPI_ERR_NO_MEM, fn);
}

/* A persistent send to another node carries the MPI below's own persistent request
 * (kept in below for the request's whole life): HMPI only tracks whether it is active,
 * which the MPI below cannot be asked. */
typedef int (*below_init_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

static int persistent_send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, int mode, below_init_fn below_init, MPI_Request *request,
                           const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c && hmpi_check_comm_null(comm, fn))
        return MPI_ERR_COMM;
    if (!c)
        return below_init(buf, count, type, dest, tag, comm, request);
    int err = make_persistent(buf, count, type, dest, tag, comm, mode, 0, request, fn);
    if (err || dest == MPI_PROC_NULL || c->local_of[dest] >= 0)
        return err;
    hmpi_req_t *r = hmpi_req_obj(*request);
    err = below_init(buf, count, type, dest, tag, comm, &r->below);
    if (err) {
        hmpi_p2p_lock();
        hmpi_req_release(r);
        hmpi_p2p_unlock();
        *request = MPI_REQUEST_NULL;
        return err;
    }
    r->below_persistent = 1;
    return MPI_SUCCESS;
}

#define PERSISTENT_SEND(NAME, PNAME, MODE)                                                     \
    int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,  \
             MPI_Request *request)                                                             \
    {                                                                                          \
        return persistent_send(buf, count, type, dest, tag, comm, MODE, PNAME, request, #NAME); \
    }
PERSISTENT_SEND(MPI_Send_init, PMPI_Send_init, HMPI_MODE_STANDARD)
HMPI_PMPI(Send_init)
PERSISTENT_SEND(MPI_Ssend_init, PMPI_Ssend_init, HMPI_MODE_SYNC)
HMPI_PMPI(Ssend_init)
PERSISTENT_SEND(MPI_Rsend_init, PMPI_Rsend_init, HMPI_MODE_READY)
HMPI_PMPI(Rsend_init)
PERSISTENT_SEND(MPI_Bsend_init, PMPI_Bsend_init, HMPI_MODE_BUFFERED)
HMPI_PMPI(Bsend_init)

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *request)
{
    HMPI_ENTER("MPI_Recv_init");
    if (!hmpi_comm_get(comm) && hmpi_check_comm_null(comm, "MPI_Recv_init"))
        return MPI_ERR_COMM;
    if (!hmpi_comm_get(comm))
        return PMPI_Recv_init(buf, count, type, source, tag, comm, request);
    return make_persistent(buf, count, type, source, tag, comm, HMPI_MODE_STANDARD, 1, request,
                           "MPI_Recv_init");
}
HMPI_PMPI(Recv_init)

static int start_one(hmpi_req_t *r)
{
    if (r->active)
        return hmpi_err_what(MPI_ERR_REQUEST, "request is active already");
    r->complete = 0;
    r->active = 1;
    r->cancelled = 0;
    if (r->peer == MPI_PROC_NULL) {
        hmpi_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        hmpi_p2p_finish(r);
        return MPI_SUCCESS;
    }
    if (r->kind == HMPI_REQ_RECV)
        return hmpi_recv_start(r);
    if (r->below_persistent) {
        hmpi_stat_add(HMPI_STAT_msgs_remote, 1);
        hmpi_stat_add(HMPI_STAT_bytes_remote, r->t.size);
        return PMPI_Start(&r->below);
    }
    int l = r->comm->local_of[r->peer];
    if (r->mode == HMPI_MODE_BUFFERED) {
        hmpi_p2p_unlock();
        int err = hmpi_bsend_reserve(&r->t);
        hmpi_p2p_lock();
        if (err)
            return err;
    }
    return hmpi_p2p_send_start(r, l);
}

int MPI_Start(MPI_Request *request)
{
    HMPI_ENTER("MPI_Start");
    if (!request || !hmpi_req_is_ours(*request))
        return PMPI_Start(request);
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_obj(*request);
    int err = r->persistent ? start_one(r)
                            : hmpi_err_what(MPI_ERR_REQUEST, "request is not persistent");
    hmpi_p2p_unlock();
    return hmpi_raise_in(r->comm ? r->comm->handle : MPI_COMM_WORLD, err, "MPI_Start");
}
HMPI_PMPI(Start)

int MPI_Startall(int count, MPI_Request requests[])
{
    HMPI_ENTER("MPI_Startall");
    if (bad_array(count, requests))
        return bad_array_raise(count, "MPI_Startall");
    for (int i = 0; i < count; i++) {
        int err = hmpi_self_Start(&requests[i]);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}
HMPI_PMPI(Startall)
