/* pt2pt.c: the point-to-point entry points. Each validates its arguments as the MPI
 * standard says, then sends a message to a peer on this node through the p2p engine
 * and one to another node through the MPI below. Holds no algorithm. */
#include "comm.h"
#include "datatype.h"
#include "errors.h"
#include "pt2pt.h"
#include "../common/stats.h"
#include "../p2p/p2p.h"

#include <string.h>

int hmpi_tag_ub = 32767;

static int check_common(hmpi_comm_t *c, int count, MPI_Datatype type, hmpi_type_t *t)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    return hmpi_type_get(type, count, t);
}

int hmpi_check_send(hmpi_comm_t *c, int count, MPI_Datatype type, int dest, int tag,
                    hmpi_type_t *t)
{
    int err = check_common(c, count, type, t);
    if (err)
        return err;
    if (tag < 0 || tag > hmpi_tag_ub)
        return MPI_ERR_TAG;
    if (dest != MPI_PROC_NULL && (dest < 0 || dest >= c->size))
        return MPI_ERR_RANK;
    return MPI_SUCCESS;
}

int hmpi_check_recv(hmpi_comm_t *c, int count, MPI_Datatype type, int source, int tag,
                    hmpi_type_t *t)
{
    int err = check_common(c, count, type, t);
    if (err)
        return err;
    if (tag != MPI_ANY_TAG && (tag < 0 || tag > hmpi_tag_ub))
        return MPI_ERR_TAG;
    if (source != MPI_PROC_NULL && source != MPI_ANY_SOURCE && (source < 0 || source >= c->size))
        return MPI_ERR_RANK;
    return MPI_SUCCESS;
}

void hmpi_status_proc_null(MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
}

void hmpi_req_fill(hmpi_req_t *r, hmpi_comm_t *c, const void *buf, int count,
                   MPI_Datatype type, const hmpi_type_t *t, int peer, int tag, int mode)
{
    r->comm = c;
    r->buf = (void *)buf;
    r->count = count;
    r->type = type;
    r->t = *t;
    r->peer = peer;
    r->tag = tag;
    r->mode = (uint8_t)mode;
}

/* The MPI below's send of each mode, blocking and not. */
static int below_send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                      MPI_Comm comm, int mode)
{
    switch (mode) {
    case HMPI_MODE_SYNC: return PMPI_Ssend(buf, count, type, dest, tag, comm);
    case HMPI_MODE_READY: return PMPI_Rsend(buf, count, type, dest, tag, comm);
    case HMPI_MODE_BUFFERED: return PMPI_Bsend(buf, count, type, dest, tag, comm);
    default: return PMPI_Send(buf, count, type, dest, tag, comm);
    }
}

int hmpi_below_isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                     MPI_Comm comm, int mode, MPI_Request *req)
{
    switch (mode) {
    case HMPI_MODE_SYNC: return PMPI_Issend(buf, count, type, dest, tag, comm, req);
    case HMPI_MODE_READY: return PMPI_Irsend(buf, count, type, dest, tag, comm, req);
    case HMPI_MODE_BUFFERED: return PMPI_Ibsend(buf, count, type, dest, tag, comm, req);
    default: return PMPI_Isend(buf, count, type, dest, tag, comm, req);
    }
}

static void count_remote(const hmpi_type_t *t, int count)
{
    hmpi_stat_add(HMPI_STAT_msgs_remote, 1);
    hmpi_stat_add(HMPI_STAT_bytes_remote, t->size * (size_t)count);
}

int hmpi_below_wait(MPI_Request *req, MPI_Status *status)
{
    if (!hmpi_p2p_busy())
        return PMPI_Wait(req, status);
    hmpi_backoff_t b = {0};
    uint64_t since = 0;
    int flag = 0, err;
    while ((err = PMPI_Test(req, &flag, status)) == MPI_SUCCESS && !flag) {
        hmpi_p2p_lock();
        hmpi_p2p_waiting(&b, &since);
        hmpi_p2p_unlock();
    }
    return err;
}

/* A blocking send to another node: blocking in the MPI below unless local peers may
 * need this rank's progress meanwhile. */
static int below_send_blocking(const void *buf, int count, MPI_Datatype type, int dest,
                               int tag, MPI_Comm comm, int mode)
{
    if (!hmpi_p2p_busy())
        return below_send(buf, count, type, dest, tag, comm, mode);
    MPI_Request req;
    int err = hmpi_below_isend(buf, count, type, dest, tag, comm, mode, &req);
    return err ? err : hmpi_below_wait(&req, MPI_STATUS_IGNORE);
}

/* Blocking send of any mode. */
static int send_blocking(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm, int mode)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c)
        return below_send(buf, count, type, dest, tag, comm, mode);
    hmpi_type_t t;
    int err = hmpi_check_send(c, count, type, dest, tag, &t);
    if (err)
        return hmpi_raise(comm, err);
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int l = c->local_of[dest];
    if (l < 0) {
        count_remote(&t, count);
        return below_send_blocking(buf, count, type, dest, tag, comm, mode);
    }
    if (mode == HMPI_MODE_BUFFERED && (err = hmpi_bsend_reserve(&t, count)) != MPI_SUCCESS)
        return hmpi_raise(comm, err);
    hmpi_req_t r;
    memset(&r, 0, sizeof r);
    r.below = MPI_REQUEST_NULL;
    hmpi_req_fill(&r, c, buf, count, type, &t, dest, tag, mode);
    hmpi_p2p_lock();
    err = hmpi_p2p_send_start(&r, l);
    if (err == MPI_SUCCESS && !r.complete)
        hmpi_p2p_wait(&r);
    hmpi_p2p_unlock();
    return hmpi_raise(comm, err);
}

/* Nonblocking send of any mode. */
static int send_nonblocking(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm, int mode, MPI_Request *request)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c)
        return hmpi_below_isend(buf, count, type, dest, tag, comm, mode, request);
    hmpi_type_t t;
    int err = hmpi_check_send(c, count, type, dest, tag, &t);
    if (err)
        return hmpi_raise(comm, err);
    if (dest == MPI_PROC_NULL) {
        *request = hmpi_req_done(0);
        return *request == MPI_REQUEST_NULL ? hmpi_raise(comm, MPI_ERR_NO_MEM) : MPI_SUCCESS;
    }
    int l = c->local_of[dest];
    if (l < 0) {
        count_remote(&t, count);
        return hmpi_below_isend(buf, count, type, dest, tag, comm, mode, request);
    }
    if (mode == HMPI_MODE_BUFFERED && (err = hmpi_bsend_reserve(&t, count)) != MPI_SUCCESS)
        return hmpi_raise(comm, err);
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_new(HMPI_REQ_SEND);
    if (!r) {
        hmpi_p2p_unlock();
        return hmpi_raise(comm, MPI_ERR_NO_MEM);
    }
    hmpi_req_fill(r, c, buf, count, type, &t, dest, tag, mode);
    hmpi_req_bind(r, c);
    err = hmpi_p2p_send_start(r, l);
    if (err != MPI_SUCCESS)
        hmpi_req_release(r);
    else
        *request = hmpi_req_handle(r);
    hmpi_p2p_unlock();
    return hmpi_raise(comm, err);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, type, dest, tag, comm, HMPI_MODE_STANDARD);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, type, dest, tag, comm, HMPI_MODE_SYNC);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, type, dest, tag, comm, HMPI_MODE_READY);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, type, dest, tag, comm, HMPI_MODE_BUFFERED);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    return send_nonblocking(buf, count, type, dest, tag, comm, HMPI_MODE_STANDARD, request);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(buf, count, type, dest, tag, comm, HMPI_MODE_SYNC, request);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(buf, count, type, dest, tag, comm, HMPI_MODE_READY, request);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(buf, count, type, dest, tag, comm, HMPI_MODE_BUFFERED, request);
}

/* Starts a receive described by r: locally, or through the bridge. */
int hmpi_recv_start(hmpi_req_t *r)
{
    if (r->peer == MPI_ANY_SOURCE || r->comm->local_of[r->peer] >= 0)
        return hmpi_p2p_recv_start(r);
    return hmpi_bridge_recv_remote(r);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c)
        return PMPI_Recv(buf, count, type, source, tag, comm, status);
    hmpi_type_t t;
    int err = hmpi_check_recv(c, count, type, source, tag, &t);
    if (err)
        return hmpi_raise(comm, err);
    if (source == MPI_PROC_NULL) {
        hmpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    if (source != MPI_ANY_SOURCE && c->local_of[source] < 0 && c->nwild == 0) {
        if (!hmpi_p2p_busy())
            return PMPI_Recv(buf, count, type, source, tag, comm, status);
        MPI_Request req;
        err = PMPI_Irecv(buf, count, type, source, tag, comm, &req);
        return err ? err : hmpi_below_wait(&req, status);
    }
    hmpi_req_t r;
    memset(&r, 0, sizeof r);
    r.below = MPI_REQUEST_NULL;
    hmpi_req_fill(&r, c, buf, count, type, &t, source, tag, HMPI_MODE_STANDARD);
    hmpi_p2p_lock();
    err = hmpi_recv_start(&r);
    if (err == MPI_SUCCESS)
        hmpi_p2p_wait(&r);
    hmpi_p2p_unlock();
    if (err == MPI_SUCCESS)
        err = r.status.MPI_ERROR;
    if (status != MPI_STATUS_IGNORE)
        *status = r.status;
    return hmpi_raise(comm, err);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c)
        return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    hmpi_type_t t;
    int err = hmpi_check_recv(c, count, type, source, tag, &t);
    if (err)
        return hmpi_raise(comm, err);
    if (source == MPI_PROC_NULL) {
        *request = hmpi_req_done(1);
        return *request == MPI_REQUEST_NULL ? hmpi_raise(comm, MPI_ERR_NO_MEM) : MPI_SUCCESS;
    }
    if (source != MPI_ANY_SOURCE && c->local_of[source] < 0 && c->nwild == 0)
        return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_new(HMPI_REQ_RECV);
    if (!r) {
        hmpi_p2p_unlock();
        return hmpi_raise(comm, MPI_ERR_NO_MEM);
    }
    hmpi_req_fill(r, c, buf, count, type, &t, source, tag, HMPI_MODE_STANDARD);
    hmpi_req_bind(r, c);
    err = hmpi_recv_start(r);
    if (err != MPI_SUCCESS)
        hmpi_req_release(r);
    else
        *request = hmpi_req_handle(r);
    hmpi_p2p_unlock();
    return hmpi_raise(comm, err);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c)
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    hmpi_type_t ts, tr;
    int err = hmpi_check_send(c, sendcount, sendtype, dest, sendtag, &ts);
    if (!err)
        err = hmpi_check_recv(c, recvcount, recvtype, source, recvtag, &tr);
    if (err)
        return hmpi_raise(comm, err);
    MPI_Request rreq;
    err = MPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &rreq);
    if (err)
        return err;
    err = MPI_Send(sendbuf, sendcount, sendtype, dest, sendtag, comm);
    int rerr = MPI_Wait(&rreq, status);
    return err ? err : rerr;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c)
        return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm,
                                     status);
    hmpi_type_t t;
    int err = hmpi_check_send(c, count, type, dest, sendtag, &t);
    if (!err)
        err = hmpi_check_recv(c, count, type, source, recvtag, &t);
    if (err)
        return hmpi_raise(comm, err);
    /* The send reads a packed copy, so the receive may overwrite buf. */
    size_t bytes = t.size * (size_t)count;
    void *copy = hmpi_heap_malloc(bytes ? bytes : 1);
    if (!copy)
        return hmpi_raise(comm, MPI_ERR_NO_MEM);
    int pos = 0;
    if (bytes)
        PMPI_Pack(buf, count, type, copy, (int)bytes, &pos, MPI_COMM_SELF);
    MPI_Request sreq;
    err = MPI_Isend(copy, (int)bytes, MPI_PACKED, dest, sendtag, comm, &sreq);
    if (!err)
        err = MPI_Recv(buf, count, type, source, recvtag, comm, status);
    int serr = err ? MPI_SUCCESS : MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    hmpi_heap_free(copy);
    return err ? err : serr;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c || (source >= 0 && source < c->size && c->local_of[source] < 0))
        return PMPI_Probe(source, tag, comm, status);
    hmpi_type_t t;
    int err = hmpi_check_recv(c, 0, MPI_BYTE, source, tag, &t);
    if (err)
        return hmpi_raise(comm, err);
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
    return hmpi_raise(comm, err);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c || (source >= 0 && source < c->size && c->local_of[source] < 0))
        return PMPI_Iprobe(source, tag, comm, flag, status);
    hmpi_type_t t;
    int err = hmpi_check_recv(c, 0, MPI_BYTE, source, tag, &t);
    if (err)
        return hmpi_raise(comm, err);
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        hmpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    hmpi_p2p_lock();
    err = hmpi_p2p_iprobe(c, source, tag, flag, status);
    hmpi_p2p_unlock();
    return hmpi_raise(comm, err);
}
