/* mprobe.c: matched probes. A message matched locally is taken off HMPI's unexpected
 * list and held by an MPI_Message of HMPI's own (a slot of the request table, so its
 * handle never collides with the MPI below's); a remote one is the MPI below's. */
#include "../core/check.h"
#include "pt2pt.h"

#include <string.h>

/* MPI_Message and MPI_Request are both integers (MPICH) or both pointers (Open MPI). */
static MPI_Message to_message(hmpi_req_t *m) { return (MPI_Message)hmpi_req_handle(m); }
static int message_is_ours(MPI_Message h) { return hmpi_req_is_ours((MPI_Request)h); }
static hmpi_req_t *message_obj(MPI_Message h) { return hmpi_req_obj((MPI_Request)h); }

static int is_remote(hmpi_comm_t *c, int source)
{
    return source >= 0 && source < c->size && c->local_of[source] < 0;
}

/* One try: *flag says whether a message was matched into *message. */
static int improbe(hmpi_comm_t *c, int source, int tag, int *flag, MPI_Message *message,
                   MPI_Status *status)
{
    hmpi_p2p_lock();
    hmpi_env_t *e = hmpi_p2p_take_message(c, source, tag);
    hmpi_req_t *m = e ? hmpi_req_new(HMPI_REQ_MESSAGE) : NULL;
    if (m) {
        m->env = e;
        hmpi_req_bind(m, c);
        if (status != MPI_STATUS_IGNORE) {
            int src, tag;
            size_t bytes;
            hmpi_p2p_message_info(e, &src, &tag, &bytes);
            hmpi_status_fill(status, src, tag, bytes);
        }
        *message = to_message(m);
    }
    hmpi_p2p_unlock();
    if (e && !m)
        return MPI_ERR_NO_MEM;
    *flag = m != NULL;
    if (!m && source == MPI_ANY_SOURCE && c->has_remote)
        return PMPI_Improbe(source, tag, c->handle, flag, message, status);
    return MPI_SUCCESS;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    HMPI_ENTER("MPI_Improbe");
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c && hmpi_check_comm_null(comm, "MPI_Improbe"))
        return MPI_ERR_COMM;
    if (!c || is_remote(c, source)) {
        int err = PMPI_Improbe(source, tag, comm, flag, message, status);
        if (err == MPI_SUCCESS && !*flag)
            hmpi_p2p_progress_locked(); /* as MPI_Test: the message may need it */
        return err;
    }
    hmpi_layout_t t;
    int err = hmpi_check_recv(c, NULL, 0, MPI_BYTE, source, tag, &t);
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Improbe");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        hmpi_status_proc_null(status);
        return MPI_SUCCESS;
    }
    return hmpi_raise_in(comm, improbe(c, source, tag, flag, message, status), "MPI_Improbe");
}
HMPI_PMPI(Improbe)

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    HMPI_ENTER("MPI_Mprobe");
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c && hmpi_check_comm_null(comm, "MPI_Mprobe"))
        return MPI_ERR_COMM;
    int flag = 0, err;
    hmpi_backoff_t b = {0};
    if (!c || is_remote(c, source)) {
        if (!hmpi_p2p_busy()) /* else local peers may need this rank meanwhile */
            return PMPI_Mprobe(source, tag, comm, message, status);
        b.no_park = 1; /* the MPI below wakes no futex (shm/wait.h) */
        uint64_t since = 0;
        while ((err = PMPI_Improbe(source, tag, comm, &flag, message, status)) == MPI_SUCCESS &&
               !flag) {
            hmpi_p2p_lock();
            hmpi_p2p_waiting(&b, &since);
            hmpi_p2p_unlock();
        }
        hmpi_backoff_end(&b);
        return err;
    }
    while ((err = hmpi_self_Improbe(source, tag, comm, &flag, message, status)) == MPI_SUCCESS &&
           !flag)
        hmpi_backoff(&b);
    hmpi_wait_end(&b, hmpi_p2p_wait_family(c, 0));
    return err;
}
HMPI_PMPI(Mprobe)

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
              MPI_Status *status)
{
    HMPI_ENTER("MPI_Mrecv");
    if (!message || !message_is_ours(*message))
        return PMPI_Mrecv(buf, count, type, message, status);
    hmpi_req_t *m = message_obj(*message);
    hmpi_comm_t *c = m->comm;
    hmpi_layout_t t;
    int err = hmpi_check_count(count, "count");
    if (!err)
        err = hmpi_layout_get(type, count, &t);
    if (!err)
        err = hmpi_check_buf_only(buf, count, type, "buf");
    if (err)
        return hmpi_raise_in(c->handle, err, "MPI_Mrecv");
    int src, tag;
    size_t bytes;
    hmpi_p2p_message_info(m->env, &src, &tag, &bytes);
    hmpi_req_t r;
    hmpi_req_zero(&r);
    hmpi_req_fill(&r, c, buf, count, type, &t, src, tag, HMPI_MODE_STANDARD);
    hmpi_p2p_lock();
    hmpi_p2p_recv_message(&r, m->env);
    hmpi_req_release(m);
    hmpi_p2p_unlock();
    *message = MPI_MESSAGE_NULL;
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_out(status, &r.status);
    return hmpi_raise_in(c->handle, r.status.MPI_ERROR, "MPI_Mrecv");
}
HMPI_PMPI(Mrecv)

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
               MPI_Request *request)
{
    HMPI_ENTER("MPI_Imrecv");
    if (!message || !message_is_ours(*message))
        return PMPI_Imrecv(buf, count, type, message, request);
    hmpi_req_t *m = message_obj(*message);
    hmpi_comm_t *c = m->comm;
    hmpi_layout_t t;
    int err = hmpi_check_count(count, "count");
    if (!err)
        err = hmpi_layout_get(type, count, &t);
    if (!err)
        err = hmpi_check_buf_only(buf, count, type, "buf");
    if (err)
        return hmpi_raise_in(c->handle, err, "MPI_Imrecv");
    /* The message is here already: the receive completes at once, and the message's
     * slot becomes the request. */
    hmpi_p2p_lock();
    hmpi_env_t *e = m->env;
    int src, tag;
    size_t bytes;
    hmpi_p2p_message_info(e, &src, &tag, &bytes);
    m->kind = HMPI_REQ_RECV;
    m->env = NULL;
    hmpi_req_fill(m, c, buf, count, type, &t, src, tag, HMPI_MODE_STANDARD);
    hmpi_p2p_recv_message(m, e);
    hmpi_p2p_unlock();
    *message = MPI_MESSAGE_NULL;
    *request = hmpi_req_handle(m);
    return MPI_SUCCESS;
}
HMPI_PMPI(Imrecv)
