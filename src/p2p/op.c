/* op.c: the point-to-point operations of the MPI calls (p2p.h), from arguments their
 * entry points checked: sends of every mode, receives, send-receives, each blocking,
 * nonblocking or persistent, down the one path of its case: a communicator HMPI does
 * not accelerate goes to the MPI below whole; a peer on this node to the engine (a small
 * message by its lane first); a peer on another node through the bridge. Each takes the
 * engine lock itself. */
#include "engine.h"
#include "../common/knobs.h"
#include "../core/errors.h"
#include "../heap/heap.h"

#include <stdlib.h>

/* r, of its kind and zero otherwise, describes a's operation. */
static void fill(hmpi_req_t *r, const hmpi_p2p_args_t *a)
{
    r->comm = a->c;
    r->buf = a->buf;
    r->count = a->count;
    r->type = a->type;
    r->t = a->t;
    r->peer = a->peer;
    r->tag = a->tag;
    r->mode = (uint8_t)a->mode;
}

/* The request of a's operation (the table's), bound to a's communicator; lock held.
 * NULL when the table is full. A blocking call's request lives on its stack instead
 * (describe): the call waits for it before returning. */
static hmpi_req_t *req_for(const hmpi_p2p_args_t *a, hmpi_req_kind_t kind)
{
    hmpi_req_t *r = hmpi_req_new(kind);
    if (!r)
        return NULL;
    fill(r, a);
    hmpi_req_bind(r, a->c);
    return r;
}

/* The same on a blocking call's stack. */
static void describe(hmpi_req_t *r, const hmpi_p2p_args_t *a, hmpi_req_kind_t kind)
{
    hmpi_req_zero(r);
    r->kind = (uint8_t)kind;
    fill(r, a);
}

/* A persistent request for a's operation, inactive. A send to another node carries the
 * MPI below's own persistent request (kept in below for the request's whole life): HMPI
 * only tracks whether it is active, which the MPI below cannot be asked. */
static int make_persistent(const hmpi_p2p_args_t *a, hmpi_req_kind_t kind, MPI_Request *req)
{
    hmpi_p2p_lock();
    hmpi_req_t *r = req_for(a, kind);
    if (r) {
        r->persistent = 1;
        r->complete = 1; /* inactive */
    }
    hmpi_p2p_unlock();
    if (!r)
        return MPI_ERR_NO_MEM;
    if (kind == HMPI_REQ_SEND && a->peer != MPI_PROC_NULL && a->c->local_of[a->peer] < 0) {
        int err = hmpi_bridge_send_init_below(a->buf, a->count, a->type, a->peer, a->tag, a->comm,
                                              a->mode, &r->below);
        if (err) {
            hmpi_p2p_lock();
            hmpi_req_release(r);
            hmpi_p2p_unlock();
            return err;
        }
        r->below_persistent = 1;
    }
    *req = hmpi_req_handle(r);
    return MPI_SUCCESS;
}

/* ---- sends ------------------------------------------------------------------------------- */

/* A small contiguous message of a standard or ready send by the lane to local rank l,
 * when a slot is free (lane.c looks); 0 when it did not go. */
static int send_by_lane(const hmpi_p2p_args_t *a, int l)
{
    return (a->mode == HMPI_MODE_STANDARD || a->mode == HMPI_MODE_READY) && a->t.contig &&
           a->t.size <= (size_t)hmpi_knobs.IMMEDIATE_MAX && !hmpi_p2p_threaded &&
           hmpi_p2p_send_lane(a->c, (const char *)a->buf + a->t.lo, a->t.size, l, a->tag);
}

int hmpi_p2p_send(const hmpi_p2p_args_t *a, int persistent, MPI_Request *req, const char *fn)
{
    const hmpi_comm_t *c = a->c;
    if (!c) {
        if (persistent)
            return hmpi_bridge_send_init_below(a->buf, a->count, a->type, a->peer, a->tag, a->comm,
                                               a->mode, req);
        return req ? hmpi_bridge_isend_below(a->buf, a->count, a->type, a->peer, a->tag, a->comm,
                                             a->mode, req)
                   : hmpi_bridge_send_below(a->buf, a->count, a->type, a->peer, a->tag, a->comm,
                                            a->mode);
    }
    if (persistent)
        return hmpi_raise_in(a->comm, make_persistent(a, HMPI_REQ_SEND, req), fn);
    if (a->peer == MPI_PROC_NULL) {
        if (req)
            *req = hmpi_req_handle(hmpi_req_sent()); /* complete at once, as a lane send */
        return MPI_SUCCESS;
    }
    int l = c->local_of[a->peer];
    if (l < 0)
        return req ? hmpi_bridge_isend(&a->t, a->buf, a->count, a->type, a->peer, a->tag, a->comm,
                                       a->mode, req)
                   : hmpi_bridge_send(&a->t, a->buf, a->count, a->type, a->peer, a->tag, a->comm,
                                      a->mode);
    if (send_by_lane(a, l)) {
        if (req)
            *req = hmpi_req_handle(hmpi_req_sent());
        return MPI_SUCCESS;
    }
    int err;
    if (a->mode == HMPI_MODE_BUFFERED && (err = hmpi_bsend_reserve(&a->t)) != MPI_SUCCESS)
        return hmpi_raise_in(a->comm, err, fn);
    if (!req) {
        hmpi_req_t r;
        describe(&r, a, HMPI_REQ_SEND);
        hmpi_p2p_lock();
        err = hmpi_p2p_send_start(&r, l);
        if (err == MPI_SUCCESS && !r.complete)
            hmpi_p2p_wait(&r);
        hmpi_p2p_unlock();
        return hmpi_raise_in(a->comm, err, fn);
    }
    hmpi_p2p_lock();
    hmpi_req_t *r = req_for(a, HMPI_REQ_SEND);
    err = r ? hmpi_p2p_send_start(r, l) : MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS)
        *req = hmpi_req_handle(r);
    else if (r)
        hmpi_req_release(r);
    hmpi_p2p_unlock();
    return hmpi_raise_in(a->comm, err, fn);
}

/* ---- receives ------------------------------------------------------------------------ */

int hmpi_p2p_recv_post(hmpi_req_t *r)
{
    if (r->peer == MPI_ANY_SOURCE || r->comm->local_of[r->peer] >= 0)
        return hmpi_p2p_recv_start(r);
    return hmpi_bridge_recv_remote(r);
}

/* A blocking receive from a specific remote source, no wildcard in the way: the MPI
 * below's, waited for with the engine moving when local peers may need it. */
static int recv_below(const hmpi_p2p_args_t *a, MPI_Status *status)
{
    if (!hmpi_p2p_busy() && !hmpi_stats_counting())
        return PMPI_Recv(a->buf, a->count, a->type, a->peer, a->tag, a->comm, status);
    MPI_Request q;
    int err = PMPI_Irecv(a->buf, a->count, a->type, a->peer, a->tag, a->comm, &q);
    return err ? err : hmpi_p2p_below_wait(&q, status, hmpi_p2p_wait_family(a->c, 0));
}

int hmpi_p2p_recv(const hmpi_p2p_args_t *a, int persistent, MPI_Request *req, MPI_Status *status,
                  const char *fn)
{
    const hmpi_comm_t *c = a->c;
    if (!c) {
        if (persistent)
            return PMPI_Recv_init(a->buf, a->count, a->type, a->peer, a->tag, a->comm, req);
        return req ? PMPI_Irecv(a->buf, a->count, a->type, a->peer, a->tag, a->comm, req)
                   : PMPI_Recv(a->buf, a->count, a->type, a->peer, a->tag, a->comm, status);
    }
    if (persistent)
        return hmpi_raise_in(a->comm, make_persistent(a, HMPI_REQ_RECV, req), fn);
    if (a->peer == MPI_PROC_NULL) {
        if (req)
            *req = hmpi_req_handle(hmpi_req_proc_null());
        else if (status != MPI_STATUS_IGNORE)
            hmpi_status_fill(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    int local = a->peer == MPI_ANY_SOURCE || c->local_of[a->peer] >= 0;
    if (!local && c->nwild == 0)
        return req ? PMPI_Irecv(a->buf, a->count, a->type, a->peer, a->tag, a->comm, req)
                   : recv_below(a, status);
    int err;
    if (req) {
        hmpi_p2p_lock();
        hmpi_req_t *r = req_for(a, HMPI_REQ_RECV);
        err = r ? hmpi_p2p_recv_post(r) : MPI_ERR_NO_MEM;
        if (err == MPI_SUCCESS)
            *req = hmpi_req_handle(r);
        else if (r)
            hmpi_req_release(r);
        hmpi_p2p_unlock();
        return hmpi_raise_in(a->comm, err, fn);
    }
    /* Blocking: a named local source's small message may be taken from its lane. */
    if (a->peer >= 0 && local && a->t.contig && !hmpi_p2p_threaded &&
        hmpi_p2p_recv_lane(c, (char *)a->buf + a->t.lo, a->t.size, a->peer, c->local_of[a->peer],
                           a->tag, status, &err))
        return hmpi_raise_in(a->comm, err, fn);
    hmpi_req_t r;
    describe(&r, a, HMPI_REQ_RECV); /* (hmpi_p2p_wait counts its wait as a receive's) */
    hmpi_p2p_lock();
    err = hmpi_p2p_recv_post(&r);
    if (err == MPI_SUCCESS)
        hmpi_p2p_wait(&r);
    hmpi_p2p_unlock();
    if (err == MPI_SUCCESS)
        err = r.status.MPI_ERROR;
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_out(status, &r.status);
    return hmpi_raise_in(a->comm, err, fn);
}

/* ---- send-receive ------------------------------------------------------------------------- */

/* MPI_Isendrecv's request (HMPI_REQ_SENDRECV): a receive and a send started at once, the
 * same paths as MPI_Irecv's and MPI_Isend's (so a local peer's message is matched by
 * HMPI, never by the MPI below, and a remote one by the MPI below), complete when both
 * are. Its status is the receive's; the replace form's copy goes with it. */
typedef struct sendrecv_s {
    MPI_Request recv, send;  /* HMPI's or the MPI below's; MPI_REQUEST_NULL once done */
    int err;                 /* the first error of either */
    void *copy;              /* the replace form's packed copy (the shared heap), or NULL */
    struct sendrecv_s *next; /* the free list */
} sendrecv_t;

/* Records of the requests gone, kept for the next ones (engine lock): an exchange a step
 * allocates none. */
static sendrecv_t *sendrecv_pool;

static sendrecv_t *sendrecv_get(void)
{
    sendrecv_t *d = sendrecv_pool;
    if (d)
        sendrecv_pool = d->next;
    return d ? d : malloc(sizeof *d);
}

static void sendrecv_put(sendrecv_t *d)
{
    d->next = sendrecv_pool;
    sendrecv_pool = d;
}

/* Finishes sub-request *h if it is complete, its error kept as the first (lock held). */
static int sendrecv_part(MPI_Request *h, MPI_Status *st, int *err)
{
    MPI_Status mine;
    if (*h == MPI_REQUEST_NULL || !hmpi_req_test_handle(h, &mine))
        return *h == MPI_REQUEST_NULL;
    if (mine.MPI_ERROR != MPI_SUCCESS && *err == MPI_SUCCESS)
        *err = mine.MPI_ERROR;
    if (st != MPI_STATUS_IGNORE)
        *st = mine;
    return 1;
}

static int sendrecv_progress(hmpi_req_t *r)
{
    sendrecv_t *d = r->arg;
    int recvd = sendrecv_part(&d->recv, &r->status, &d->err);
    int sent = sendrecv_part(&d->send, MPI_STATUS_IGNORE, &d->err);
    if (!recvd || !sent)
        return 0;
    r->status.MPI_ERROR = d->err;
    return 1;
}

static void sendrecv_release(hmpi_req_t *r)
{
    sendrecv_t *d = r->arg;
    if (!d)
        return;
    HMPI_ASSERT_INTERNAL(d->recv == MPI_REQUEST_NULL && d->send == MPI_REQUEST_NULL);
    hmpi_heap_free(d->copy);
    sendrecv_put(d);
    r->arg = NULL;
}

const hmpi_req_ops_t hmpi_p2p_sendrecv_ops = {
    .name = "send-receive",
    .progress = sendrecv_progress,
    .release = sendrecv_release,
    .status_error = 1,
};

/* The request of an MPI_Isendrecv: the receive, then the send; copy goes with it. */
static int isendrecv(const hmpi_p2p_args_t *s, const hmpi_p2p_args_t *r, void *copy,
                     MPI_Request *req, const char *fn)
{
    hmpi_p2p_lock();
    sendrecv_t *d = sendrecv_get();
    hmpi_req_t *q = d ? hmpi_req_new(HMPI_REQ_SENDRECV) : NULL; /* before anything can match */
    if (d)
        *d = (sendrecv_t){MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_SUCCESS, copy, NULL};
    if (d && !q)
        sendrecv_put(d);
    hmpi_p2p_unlock();
    if (!q) {
        hmpi_heap_free(copy);
        return hmpi_raise_in(r->comm, MPI_ERR_NO_MEM, fn);
    }
    int err = hmpi_p2p_recv(r, 0, &d->recv, MPI_STATUS_IGNORE, fn);
    if (!err)
        err = hmpi_p2p_send(s, 0, &d->send, fn);
    if (err && d->recv != MPI_REQUEST_NULL) { /* the receive started: cancelled, let go */
        hmpi_p2p_cancel(&d->recv);
        hmpi_p2p_free(&d->recv);
    }
    hmpi_p2p_lock();
    if (err) {
        hmpi_req_release(q); /* (d is not in it yet) */
        sendrecv_put(d);
    } else {
        q->arg = d;
        hmpi_status_set(&q->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
        hmpi_req_bind(q, r->c);
        *req = hmpi_req_handle(q);
    }
    hmpi_p2p_unlock();
    if (err)
        hmpi_heap_free(copy);
    return err;
}

int hmpi_p2p_sendrecv(const hmpi_p2p_args_t *s, const hmpi_p2p_args_t *r, int replace,
                      MPI_Request *req, MPI_Status *status, const char *fn)
{
    if (!r->c) {
#if HMPI_MPI4_CALLS
        if (req && replace)
            return PMPI_Isendrecv_replace(r->buf, r->count, r->type, s->peer, s->tag, r->peer,
                                          r->tag, r->comm, req);
        if (req)
            return PMPI_Isendrecv(s->buf, s->count, s->type, s->peer, s->tag, r->buf, r->count,
                                  r->type, r->peer, r->tag, r->comm, req);
#endif
        if (replace)
            return PMPI_Sendrecv_replace(r->buf, r->count, r->type, s->peer, s->tag, r->peer,
                                         r->tag, r->comm, status);
        return PMPI_Sendrecv(s->buf, s->count, s->type, s->peer, s->tag, r->buf, r->count, r->type,
                             r->peer, r->tag, r->comm, status);
    }
    /* The replace form sends a packed copy, so the receive may overwrite the buffer. */
    hmpi_p2p_args_t packed = *s;
    void *copy = NULL;
    if (replace) {
        size_t bytes = s->t.size;
        copy = hmpi_heap_malloc(bytes ? bytes : 1);
        if (!copy)
            return hmpi_raise_in(r->comm, MPI_ERR_NO_MEM, fn);
        int pos = 0;
        if (bytes)
            hmpi_type_pack(s->buf, s->count, s->type, copy, (int)bytes, &pos);
        packed.buf = copy;
        packed.count = (int)bytes;
        packed.type = MPI_PACKED;
        hmpi_layout_get(MPI_PACKED, (int)bytes, &packed.t);
    }
    if (req)
        return isendrecv(&packed, r, copy, req, fn);
    MPI_Request rq;
    int err = hmpi_p2p_recv(r, 0, &rq, MPI_STATUS_IGNORE, fn);
    if (err == MPI_SUCCESS) {
        int serr = hmpi_p2p_send(&packed, 0, NULL, fn);
        err = hmpi_p2p_complete(HMPI_P2P_ONE, 1, 1, &rq, NULL, NULL, NULL, status, fn);
        err = serr ? serr : err;
    }
    hmpi_heap_free(copy);
    return err;
}
