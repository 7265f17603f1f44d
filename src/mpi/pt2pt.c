/* pt2pt.c: the point-to-point entry points. Each validates its arguments as the MPI
 * standard says, then sends a message to a peer on this node through the p2p engine
 * and one to another node through the bridge (p2p/bridge.c). The protocols live in p2p/;
 * here are only the choice of path (the short way to a local peer tried first) and
 * MPI_Sendrecv and MPI_Sendrecv_replace built from the other calls. */
#include "../core/comm.h"
#include "../core/datatype.h"
#include "../core/check.h"
#include "pt2pt.h"
#include "../common/stats.h"
#include "../heap/heap.h"
#include "../p2p/p2p.h"
#include "../p2p/short.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int hmpi_tag_ub = 32767;

/* ---- argument checks (errors.h: each describes the argument it rejects) ------------ */

static int check_data(const void *buf, int count, MPI_Datatype type, hmpi_layout_t *t)
{
    int err = hmpi_check_count(count, "count");
    if (!err)
        err = hmpi_layout_get(type, count, t);
    if (!err)
        err = hmpi_check_buf_only(buf, count, type, "buf");
    /* Non-contiguous data moves through MPI_Pack/MPI_Unpack, whose sizes are ints. */
    if (!err && !t->contig && t->size > INT_MAX)
        err = hmpi_err_what(MPI_ERR_COUNT,
                            "%zu bytes of non-contiguous data: more than "
                            "MPI_Pack can pack (2 GiB)",
                            t->size);
    return err;
}

static int check_tag(int tag, int any_ok)
{
    if (__builtin_expect(tag >= 0 && tag <= hmpi_tag_ub, 1) || (any_ok && tag == MPI_ANY_TAG))
        return MPI_SUCCESS;
    return hmpi_err_what(MPI_ERR_TAG, "tag %d is outside 0..%d (MPI_TAG_UB)%s", tag,
                         hmpi_tag_ub, any_ok ? " and is not MPI_ANY_TAG" : "");
}

/* The common case's checks: a real rank (peer), a tag in range (or MPI_ANY_TAG when
 * any_tag), count >= 0 elements of a committed datatype that lie in one run of bytes,
 * buf not NULL unless count is 0. When they hold every argument is valid and *t is
 * filled; otherwise the full checks below run and report what is wrong. */
static inline int common_args(const hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type,
                              int peer, int tag, int any_tag, hmpi_layout_t *t)
{
    return (unsigned)peer < (unsigned)c->size && count >= 0 &&
           ((tag >= 0 && tag <= hmpi_tag_ub) || (any_tag && tag == MPI_ANY_TAG)) &&
           hmpi_layout_get(type, count, t) == MPI_SUCCESS && t->contig && (buf || !count);
}

int hmpi_check_send(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type, int dest,
                    int tag, hmpi_layout_t *t)
{
    int err = check_data(buf, count, type, t);
    if (!err)
        err = check_tag(tag, 0);
    if (!err)
        err = hmpi_check_rank(MPI_ERR_RANK, dest, c->size, MPI_PROC_NULL, MPI_PROC_NULL, "dest");
    return err;
}

int hmpi_check_recv(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type, int source,
                    int tag, hmpi_layout_t *t)
{
    int err = check_data(buf, count, type, t);
    if (!err)
        err = check_tag(tag, 1);
    if (!err)
        err = hmpi_check_rank(MPI_ERR_RANK, source, c->size, MPI_PROC_NULL, MPI_ANY_SOURCE,
                              "source");
    return err;
}

/* The short ways' checks: a communicator c (not NULL) and common_args' for a packed
 * type, which needs no layout (the run's bytes and where it starts from buf go to *bytes
 * and *lo), a local peer (its local rank to *l), no thread but this one in the engine. */
static inline int short_args(const hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type,
                             int peer, int tag, int any_tag, size_t *bytes, MPI_Aint *lo, int *l)
{
    return c && (unsigned)peer < (unsigned)c->size &&
           ((tag >= 0 && tag <= hmpi_tag_ub) || (any_tag && tag == MPI_ANY_TAG)) &&
           hmpi_layout_run(type, count, bytes, lo) && (buf || !count) &&
           (*l = c->local_of[peer]) >= 0 && !hmpi_p2p_threaded;
}

/* The communicator of the inline short ways: MPI_COMM_WORLD's, while MPI runs; else
 * NULL (the way out of line looks the handle up). */
static inline hmpi_comm_t *short_comm(MPI_Comm comm)
{
    return __builtin_expect(hmpi_mpi_state == HMPI_STATE_RUNNING, 1) && comm == MPI_COMM_WORLD
               ? hmpi_comm_world
               : NULL;
}

/* The checks of the entry points below: the common case inline, the full checks
 * (hmpi_check_send/recv) only when it does not hold. */
static inline int check_send(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type,
                             int dest, int tag, hmpi_layout_t *t)
{
    return common_args(c, buf, count, type, dest, tag, 0, t)
               ? MPI_SUCCESS
               : hmpi_check_send(c, buf, count, type, dest, tag, t);
}

static inline int check_recv(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type,
                             int source, int tag, hmpi_layout_t *t)
{
    return common_args(c, buf, count, type, source, tag, 1, t)
               ? MPI_SUCCESS
               : hmpi_check_recv(c, buf, count, type, source, tag, t);
}

void hmpi_status_proc_null(MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_fill(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
}

/* Blocking send of any mode. */
static int send_blocking(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm, int mode, const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c)
        return hmpi_check_comm_null(comm, fn)
                   ? MPI_ERR_COMM
                   : hmpi_bridge_send_below(buf, count, type, dest, tag, comm, mode);
    hmpi_layout_t t;
    int err = check_send(c, buf, count, type, dest, tag, &t);
    if (err)
        return hmpi_raise_in(comm, err, fn);
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int l = c->local_of[dest];
    if (l < 0) {
        return hmpi_bridge_send(&t, buf, count, type, dest, tag, comm, mode);
    }
    if (mode == HMPI_MODE_BUFFERED && (err = hmpi_bsend_reserve(&t)) != MPI_SUCCESS)
        return hmpi_raise_in(comm, err, fn);
    hmpi_req_t r;
    hmpi_req_zero(&r);
    hmpi_req_fill(&r, c, buf, count, type, &t, dest, tag, mode);
    hmpi_p2p_lock();
    err = hmpi_p2p_send_start(&r, l);
    if (err == MPI_SUCCESS && !r.complete)
        hmpi_p2p_wait(&r);
    hmpi_p2p_unlock();
    return hmpi_raise_in(comm, err, fn);
}

/* Nonblocking send of any mode. */
static int send_nonblocking(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm, int mode, MPI_Request *request, const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c)
        return hmpi_check_comm_null(comm, fn)
                   ? MPI_ERR_COMM
                   : hmpi_bridge_isend_below(buf, count, type, dest, tag, comm, mode, request);
    hmpi_layout_t t;
    int err = check_send(c, buf, count, type, dest, tag, &t);
    if (!err && !request)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    if (err)
        return hmpi_raise_in(comm, err, fn);
    if (dest == MPI_PROC_NULL) {
        *request = hmpi_req_handle(hmpi_req_sent()); /* complete at once, as a lane send */
        return MPI_SUCCESS;
    }
    int l = c->local_of[dest];
    if (l < 0) {
        return hmpi_bridge_isend(&t, buf, count, type, dest, tag, comm, mode, request);
    }
    if (mode == HMPI_MODE_BUFFERED && (err = hmpi_bsend_reserve(&t)) != MPI_SUCCESS)
        return hmpi_raise_in(comm, err, fn);
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_new(HMPI_REQ_SEND);
    if (!r) {
        hmpi_p2p_unlock();
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    }
    hmpi_req_fill(r, c, buf, count, type, &t, dest, tag, mode);
    hmpi_req_bind(r, c);
    err = hmpi_p2p_send_start(r, l);
    if (err != MPI_SUCCESS)
        hmpi_req_release(r);
    else
        *request = hmpi_req_handle(r);
    hmpi_p2p_unlock();
    return hmpi_raise_in(comm, err, fn);
}

/* MPI_Send's and MPI_Rsend's short way, tried first: valid arguments of the common
 * case, a small contiguous message to a local peer, a free slot in the lane to it.
 * Returns 1 when the message is sent; 0 when the general way must run (nothing done). */
static inline int send_short(MPI_Comm comm, const void *buf, int count, MPI_Datatype type,
                             int dest, int tag)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    size_t bytes;
    MPI_Aint lo;
    int l;
    return short_args(c, buf, count, type, dest, tag, 0, &bytes, &lo, &l) &&
           bytes <= (size_t)hmpi_knobs.IMMEDIATE_MAX &&
           hmpi_p2p_send_lane(c, (const char *)buf + lo, bytes, l, tag);
}

/* MPI_Send past its inline short way: everything, out of line (a sibling call). */
static __attribute__((noinline)) int send_general(const void *buf, int count, MPI_Datatype type,
                                                  int dest, int tag, MPI_Comm comm)
{
    HMPI_ENTER("MPI_Send");
    if (send_short(comm, buf, count, type, dest, tag))
        return MPI_SUCCESS;
    return send_blocking(buf, count, type, dest, tag, comm, HMPI_MODE_STANDARD, "MPI_Send");
}

/* The short way with no call (p2p/short.h): MPI_COMM_WORLD's common case, a small
 * contiguous message to a local peer whose lane has a slot known free. */
int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    size_t bytes;
    MPI_Aint lo;
    hmpi_comm_t *c = short_comm(comm);
    int l;
    if (short_args(c, buf, count, type, dest, tag, 0, &bytes, &lo, &l) &&
        bytes <= (size_t)hmpi_knobs.IMMEDIATE_MAX &&
        hmpi_p2p_send_short(c, (const char *)buf + lo, bytes, l, tag))
        return MPI_SUCCESS;
    return send_general(buf, count, type, dest, tag, comm);
}
HMPI_PMPI(Send)

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, type, dest, tag, comm, HMPI_MODE_SYNC, "MPI_Ssend");
}
HMPI_PMPI(Ssend)

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    HMPI_ENTER("MPI_Rsend");
    if (send_short(comm, buf, count, type, dest, tag))
        return MPI_SUCCESS;
    return send_blocking(buf, count, type, dest, tag, comm, HMPI_MODE_READY, "MPI_Rsend");
}
HMPI_PMPI(Rsend)

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, type, dest, tag, comm, HMPI_MODE_BUFFERED, "MPI_Bsend");
}
HMPI_PMPI(Bsend)

/* MPI_Isend's and MPI_Irsend's short way: send_short, and the request is hmpi_req_sent(). */
static inline int isend_short(MPI_Comm comm, const void *buf, int count, MPI_Datatype type,
                              int dest, int tag, MPI_Request *request)
{
    if (!request || !send_short(comm, buf, count, type, dest, tag))
        return 0;
    *request = hmpi_req_handle(hmpi_req_sent());
    return 1;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    HMPI_ENTER("MPI_Isend");
    if (isend_short(comm, buf, count, type, dest, tag, request))
        return MPI_SUCCESS;
    return send_nonblocking(buf, count, type, dest, tag, comm, HMPI_MODE_STANDARD, request,
                            "MPI_Isend");
}
HMPI_PMPI(Isend)

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(buf, count, type, dest, tag, comm, HMPI_MODE_SYNC, request,
                            "MPI_Issend");
}
HMPI_PMPI(Issend)

int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    HMPI_ENTER("MPI_Irsend");
    if (isend_short(comm, buf, count, type, dest, tag, request))
        return MPI_SUCCESS;
    return send_nonblocking(buf, count, type, dest, tag, comm, HMPI_MODE_READY, request,
                            "MPI_Irsend");
}
HMPI_PMPI(Irsend)

int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(buf, count, type, dest, tag, comm, HMPI_MODE_BUFFERED, request,
                            "MPI_Ibsend");
}
HMPI_PMPI(Ibsend)

/* Starts a receive described by r: locally, or through the bridge. */
int hmpi_recv_start(hmpi_req_t *r)
{
    if (r->peer == MPI_ANY_SOURCE || r->comm->local_of[r->peer] >= 0)
        return hmpi_p2p_recv_start(r);
    return hmpi_bridge_recv_remote(r);
}

/* MPI_Recv past its inline short way: everything, out of line (a sibling call). */
static __attribute__((noinline)) int recv_general(void *buf, int count, MPI_Datatype type,
                                                  int source, int tag, MPI_Comm comm,
                                                  MPI_Status *status)
{
    HMPI_ENTER("MPI_Recv");
    hmpi_comm_t *c = hmpi_comm_get(comm);
    int err, l;
    size_t bytes;
    MPI_Aint lo;
    /* The short way, tried first: valid arguments of the common case, a named local
     * source, and its message next in its lane (hmpi_p2p_recv_lane). */
    if (short_args(c, buf, count, type, source, tag, 1, &bytes, &lo, &l) &&
        hmpi_p2p_recv_lane(c, (char *)buf + lo, bytes, source, l, tag, status, &err))
        return hmpi_raise_in(comm, err, "MPI_Recv");
    if (!c)
        return hmpi_check_comm_null(comm, "MPI_Recv")
                   ? MPI_ERR_COMM
                   : PMPI_Recv(buf, count, type, source, tag, comm, status);
    hmpi_layout_t t;
    err = check_recv(c, buf, count, type, source, tag, &t);
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Recv");
    if (source == MPI_PROC_NULL) {
        hmpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    if (source != MPI_ANY_SOURCE && c->local_of[source] < 0 && c->nwild == 0) {
        if (!hmpi_p2p_busy() && !hmpi_stats_counting())
            return PMPI_Recv(buf, count, type, source, tag, comm, status);
        MPI_Request req;
        err = PMPI_Irecv(buf, count, type, source, tag, comm, &req);
        return err ? err : hmpi_p2p_below_wait(&req, status, hmpi_p2p_wait_family(c, 0));
    }
    hmpi_req_t r;
    hmpi_req_zero(&r);
    hmpi_req_fill(&r, c, buf, count, type, &t, source, tag, HMPI_MODE_STANDARD);
    r.kind = HMPI_REQ_RECV; /* (hmpi_p2p_wait counts its wait as a receive's) */
    hmpi_p2p_lock();
    err = hmpi_recv_start(&r);
    if (err == MPI_SUCCESS)
        hmpi_p2p_wait(&r);
    hmpi_p2p_unlock();
    if (err == MPI_SUCCESS)
        err = r.status.MPI_ERROR;
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_out(status, &r.status);
    return hmpi_raise_in(comm, err, "MPI_Recv");
}

/* The short way with no call (p2p/short.h): MPI_COMM_WORLD's common case, a named
 * local source whose next message is in its lane or comes within a few spins. */
int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    size_t bytes;
    MPI_Aint lo;
    hmpi_comm_t *c = short_comm(comm);
    int l, err;
    if (short_args(c, buf, count, type, source, tag, 1, &bytes, &lo, &l) &&
        hmpi_p2p_recv_short(c, (char *)buf + lo, bytes, source, l, tag, status, &err))
        return hmpi_raise_in(comm, err, "MPI_Recv");
    return recv_general(buf, count, type, source, tag, comm, status);
}
HMPI_PMPI(Recv)

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    HMPI_ENTER("MPI_Irecv");
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c)
        return hmpi_check_comm_null(comm, "MPI_Irecv")
                   ? MPI_ERR_COMM
                   : PMPI_Irecv(buf, count, type, source, tag, comm, request);
    hmpi_layout_t t;
    int err = check_recv(c, buf, count, type, source, tag, &t);
    if (!err && !request)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Irecv");
    if (source == MPI_PROC_NULL) {
        *request = hmpi_req_handle(hmpi_req_proc_null());
        return MPI_SUCCESS;
    }
    if (source != MPI_ANY_SOURCE && c->local_of[source] < 0 && c->nwild == 0)
        return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_new(HMPI_REQ_RECV);
    if (!r) {
        hmpi_p2p_unlock();
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, "MPI_Irecv");
    }
    hmpi_req_fill(r, c, buf, count, type, &t, source, tag, HMPI_MODE_STANDARD);
    hmpi_req_bind(r, c);
    err = hmpi_recv_start(r);
    if (err != MPI_SUCCESS)
        hmpi_req_release(r);
    else
        *request = hmpi_req_handle(r);
    hmpi_p2p_unlock();
    return hmpi_raise_in(comm, err, "MPI_Irecv");
}
HMPI_PMPI(Irecv)

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    HMPI_ENTER("MPI_Sendrecv");
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c && hmpi_check_comm_null(comm, "MPI_Sendrecv"))
        return MPI_ERR_COMM;
    if (!c)
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    hmpi_layout_t ts, tr;
    int err = check_send(c, sendbuf, sendcount, sendtype, dest, sendtag, &ts);
    if (!err)
        err = check_recv(c, recvbuf, recvcount, recvtype, source, recvtag, &tr);
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Sendrecv");
    MPI_Request rreq;
    err = hmpi_self_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &rreq);
    if (err)
        return err;
    err = hmpi_self_Send(sendbuf, sendcount, sendtype, dest, sendtag, comm);
    int rerr = hmpi_self_Wait(&rreq, status);
    return err ? err : rerr;
}
HMPI_PMPI(Sendrecv)

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    HMPI_ENTER("MPI_Sendrecv_replace");
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c && hmpi_check_comm_null(comm, "MPI_Sendrecv_replace"))
        return MPI_ERR_COMM;
    if (!c)
        return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm,
                                     status);
    hmpi_layout_t t;
    int err = check_send(c, buf, count, type, dest, sendtag, &t);
    if (!err)
        err = check_recv(c, buf, count, type, source, recvtag, &t);
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Sendrecv_replace");
    /* The send reads a packed copy, so the receive may overwrite buf. */
    size_t bytes = t.size;
    void *copy = hmpi_heap_malloc(bytes ? bytes : 1);
    if (!copy)
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace");
    int pos = 0;
    if (bytes)
        hmpi_type_pack(buf, count, type, copy, (int)bytes, &pos);
    MPI_Request sreq;
    err = hmpi_self_Isend(copy, (int)bytes, MPI_PACKED, dest, sendtag, comm, &sreq);
    if (!err)
        err = hmpi_self_Recv(buf, count, type, source, recvtag, comm, status);
    int serr = err ? MPI_SUCCESS : hmpi_self_Wait(&sreq, MPI_STATUS_IGNORE);
    hmpi_heap_free(copy);
    return err ? err : serr;
}
HMPI_PMPI(Sendrecv_replace)

#if HMPI_MPI4_CALLS
/* ---- MPI_Isendrecv and MPI_Isendrecv_replace ----------------------------------------
 * MPI 4's nonblocking send-receive: a receive and a send started at once, through the
 * same paths as MPI_Irecv and MPI_Isend (so a local peer's message is matched by HMPI,
 * never by the MPI below, and a remote one by the MPI below), under one request that
 * completes when both have. Its status is the receive's. The replace form sends a packed
 * copy, so the receive may overwrite the buffer at once. */
typedef struct {
    MPI_Request recv, send; /* HMPI's or the MPI below's; MPI_REQUEST_NULL once done */
    MPI_Status status;      /* the receive's, once it completed */
    int err;                /* the first error of either */
    void *copy;             /* the replace form's packed copy (the shared heap), or NULL */
} isendrecv_t;

/* Completes sub-request *h if it is complete (engine lock held): 1 when it is done. */
static int isendrecv_part(MPI_Request *h, MPI_Status *st, int *err)
{
    if (*h == MPI_REQUEST_NULL)
        return 1;
    if (!hmpi_req_is_ours(*h)) {
        int flag = 0, e = PMPI_Test(h, &flag, st);
        if (e != MPI_SUCCESS && *err == MPI_SUCCESS)
            *err = e;
        return flag || e != MPI_SUCCESS;
    }
    hmpi_req_t *s = hmpi_req_obj(*h);
    if (!hmpi_p2p_check(s))
        return 0;
    if (st != MPI_STATUS_IGNORE)
        *st = s->status;
    if (s->kind == HMPI_REQ_RECV && s->status.MPI_ERROR != MPI_SUCCESS && *err == MPI_SUCCESS)
        *err = s->status.MPI_ERROR;
    hmpi_req_release(s);
    *h = MPI_REQUEST_NULL;
    return 1;
}

/* Poll function of the request (engine lock held). */
static int isendrecv_poll(hmpi_req_t *r)
{
    isendrecv_t *d = r->arg;
    int recvd = isendrecv_part(&d->recv, &d->status, &d->err);
    int sent = isendrecv_part(&d->send, MPI_STATUS_IGNORE, &d->err);
    if (!recvd || !sent)
        return 0;
    r->status = d->status;
    r->status.MPI_ERROR = d->err;
    if (d->copy)
        hmpi_heap_free(d->copy);
    free(d);
    r->arg = NULL;
    return 1;
}

/* Starts the receive, then the send (each raises its own error), under one request. */
static int isendrecv_start(hmpi_comm_t *c, const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                           MPI_Comm comm, void *copy, MPI_Request *request, const char *fn)
{
    isendrecv_t *d = malloc(sizeof *d);
    hmpi_req_t *r = NULL;
    if (d) {
        hmpi_p2p_lock();
        r = hmpi_req_new(HMPI_REQ_POLL);
        hmpi_p2p_unlock();
    }
    if (!r) {
        free(d);
        hmpi_heap_free(copy);
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    }
    *d = (isendrecv_t){MPI_REQUEST_NULL, MPI_REQUEST_NULL, {0}, MPI_SUCCESS, copy};
    int err = hmpi_self_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &d->recv);
    if (!err)
        err = hmpi_self_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &d->send);
    hmpi_p2p_lock();
    if (err) {
        if (d->recv != MPI_REQUEST_NULL) { /* started: cancel it and let it finish */
            if (hmpi_req_is_ours(d->recv)) {
                hmpi_req_t *s = hmpi_req_obj(d->recv);
                hmpi_p2p_cancel(s);
                if (s->complete)
                    hmpi_req_release(s);
                else
                    s->freed = 1;
            } else {
                PMPI_Cancel(&d->recv);
                PMPI_Request_free(&d->recv);
            }
        }
        hmpi_req_release(r);
        hmpi_p2p_unlock();
        hmpi_heap_free(copy);
        free(d);
        return err;
    }
    r->poll = isendrecv_poll;
    r->arg = d;
    hmpi_req_bind(r, c);
    *request = hmpi_req_handle(r);
    hmpi_p2p_unlock();
    return MPI_SUCCESS;
}

int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Request *request)
{
    HMPI_ENTER("MPI_Isendrecv");
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c && hmpi_check_comm_null(comm, "MPI_Isendrecv"))
        return MPI_ERR_COMM;
    if (!c)
        return PMPI_Isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                              recvtype, source, recvtag, comm, request);
    hmpi_layout_t ts, tr;
    int err = check_send(c, sendbuf, sendcount, sendtype, dest, sendtag, &ts);
    if (!err)
        err = check_recv(c, recvbuf, recvcount, recvtype, source, recvtag, &tr);
    if (!err && !request)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Isendrecv");
    return isendrecv_start(c, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, NULL, request, "MPI_Isendrecv");
}
HMPI_PMPI(Isendrecv)

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    HMPI_ENTER("MPI_Isendrecv_replace");
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c && hmpi_check_comm_null(comm, "MPI_Isendrecv_replace"))
        return MPI_ERR_COMM;
    if (!c)
        return PMPI_Isendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm,
                                      request);
    hmpi_layout_t t;
    int err = check_send(c, buf, count, type, dest, sendtag, &t);
    if (!err)
        err = check_recv(c, buf, count, type, source, recvtag, &t);
    if (!err && !request)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Isendrecv_replace");
    size_t bytes = t.size;
    void *copy = hmpi_heap_malloc(bytes ? bytes : 1);
    if (!copy)
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, "MPI_Isendrecv_replace");
    int pos = 0;
    if (bytes)
        hmpi_type_pack(buf, count, type, copy, (int)bytes, &pos);
    return isendrecv_start(c, copy, (int)bytes, MPI_PACKED, dest, sendtag, buf, count, type, source,
                           recvtag, comm, copy, request, "MPI_Isendrecv_replace");
}
HMPI_PMPI(Isendrecv_replace)
#endif

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    HMPI_ENTER("MPI_Probe");
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c && hmpi_check_comm_null(comm, "MPI_Probe"))
        return MPI_ERR_COMM;
    if (!c || (source >= 0 && source < c->size && c->local_of[source] < 0)) {
        if (!hmpi_p2p_busy()) /* else local peers may need this rank meanwhile */
            return PMPI_Probe(source, tag, comm, status);
        int flag = 0, err;
        hmpi_backoff_t b = {.no_park = 1}; /* the MPI below wakes no futex (shm/wait.h) */
        uint64_t since = 0;
        while ((err = PMPI_Iprobe(source, tag, comm, &flag, status)) == MPI_SUCCESS && !flag) {
            hmpi_p2p_lock();
            hmpi_p2p_waiting(&b, &since);
            hmpi_p2p_unlock();
        }
        hmpi_backoff_end(&b);
        return err;
    }
    hmpi_layout_t t;
    int err = check_recv(c, NULL, 0, MPI_BYTE, source, tag, &t);
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Probe");
    if (source == MPI_PROC_NULL) {
        hmpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    int flag = 0;
    hmpi_backoff_t b = {0};
    hmpi_p2p_lock();
    while ((err = hmpi_p2p_iprobe(c, source, tag, &flag, status)) == MPI_SUCCESS && !flag) {
        hmpi_p2p_unlock();
        hmpi_backoff(&b);
        hmpi_p2p_lock();
    }
    hmpi_p2p_unlock();
    hmpi_wait_end(&b, hmpi_p2p_wait_family(c, 0));
    return hmpi_raise_in(comm, err, "MPI_Probe");
}
HMPI_PMPI(Probe)

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    HMPI_ENTER("MPI_Iprobe");
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c && hmpi_check_comm_null(comm, "MPI_Iprobe"))
        return MPI_ERR_COMM;
    if (!c || (source >= 0 && source < c->size && c->local_of[source] < 0)) {
        int err = PMPI_Iprobe(source, tag, comm, flag, status);
        if (err == MPI_SUCCESS && !*flag)
            hmpi_p2p_progress_locked(); /* as MPI_Test: the message may need it */
        return err;
    }
    hmpi_layout_t t;
    int err = check_recv(c, NULL, 0, MPI_BYTE, source, tag, &t);
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Iprobe");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        hmpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    hmpi_p2p_lock();
    err = hmpi_p2p_iprobe(c, source, tag, flag, status);
    hmpi_p2p_unlock();
    return hmpi_raise_in(comm, err, "MPI_Iprobe");
}
HMPI_PMPI(Iprobe)
