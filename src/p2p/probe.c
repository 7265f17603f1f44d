/* probe.c: probes and matched probes (MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe)
 * and the matched receives (MPI_Mrecv, MPI_Imrecv). A message matched locally is taken
 * off HMPI's unexpected list and held by an MPI_Message of HMPI's own (a slot of the
 * request table, so its handle never collides with the MPI below's); a remote one is the
 * MPI below's. Each takes the engine lock itself. */
#include "engine.h"
#include "../core/check.h"
#include "../core/errors.h"

/* MPI_Message and MPI_Request are both integers (MPICH) or both pointers (Open MPI). */
static MPI_Message to_message(hmpi_req_t *m) { return (MPI_Message)hmpi_req_handle(m); }
static int message_is_ours(MPI_Message h) { return hmpi_req_is_ours((MPI_Request)h); }
static hmpi_req_t *message_obj(MPI_Message h) { return hmpi_req_obj((MPI_Request)h); }

/* One matched probe of HMPI's messages: *flag says whether one was matched into
 * *message; then (a wildcard on a communicator with remote members) the MPI below's. */
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
            int src, tg;
            size_t bytes;
            hmpi_p2p_message_info(e, &src, &tg, &bytes);
            hmpi_status_fill(status, src, tg, bytes);
        }
        *message = to_message(m);
    }
    hmpi_p2p_unlock();
    if (e && !m)
        return hmpi_raise_in(c->handle, MPI_ERR_NO_MEM, "MPI_Improbe");
    *flag = m != NULL;
    if (!m && source == MPI_ANY_SOURCE && c->has_remote)
        return PMPI_Improbe(source, tag, c->handle, flag, message, status);
    return MPI_SUCCESS;
}

/* The probes of the MPI below (a communicator HMPI does not accelerate, or a remote
 * source). A blocking one polls, the engine moving, while local peers may need this
 * rank meanwhile. */
static int probe_below(MPI_Comm comm, int source, int tag, int block, int *flag,
                       MPI_Message *message, MPI_Status *status)
{
    int err;
    if (!block) {
        err = message ? PMPI_Improbe(source, tag, comm, flag, message, status)
                      : PMPI_Iprobe(source, tag, comm, flag, status);
        if (err == MPI_SUCCESS && !*flag)
            hmpi_p2p_progress_locked(); /* as MPI_Test: the message may need it */
        return err;
    }
    if (!hmpi_p2p_busy())
        return message ? PMPI_Mprobe(source, tag, comm, message, status)
                       : PMPI_Probe(source, tag, comm, status);
    hmpi_backoff_t b = {.no_park = 1}; /* the MPI below wakes no futex (shm/wait.h) */
    uint64_t since = 0;
    int got = 0;
    for (;;) {
        err = message ? PMPI_Improbe(source, tag, comm, &got, message, status)
                      : PMPI_Iprobe(source, tag, comm, &got, status);
        if (err != MPI_SUCCESS || got)
            break;
        hmpi_p2p_lock();
        hmpi_p2p_progress();
        hmpi_p2p_wait_step(&b, &since);
        hmpi_p2p_unlock();
    }
    hmpi_backoff_end(&b);
    return err;
}

int hmpi_p2p_probe(hmpi_comm_t *c, MPI_Comm comm, int source, int tag, int block, int *flag,
                   MPI_Message *message, MPI_Status *status, const char *fn)
{
    (void)fn; /* (what is HMPI's to raise here, an improbe's lack of memory, is raised there) */
    if (!c || (source >= 0 && source < c->size && c->local_of[source] < 0))
        return probe_below(comm, source, tag, block, flag, message, status);
    if (source == MPI_PROC_NULL) {
        if (!block)
            *flag = 1;
        if (message)
            *message = MPI_MESSAGE_NO_PROC;
        if (status != MPI_STATUS_IGNORE)
            hmpi_status_fill(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    hmpi_backoff_t b = {0};
    uint64_t since = 0;
    int got = 0, err;
    hmpi_p2p_lock();
    for (;;) {
        if (message) {
            hmpi_p2p_unlock();
            err = improbe(c, source, tag, &got, message, status);
            hmpi_p2p_lock();
        } else {
            err = hmpi_p2p_iprobe(c, source, tag, &got, status);
        }
        if (err != MPI_SUCCESS || got || !block)
            break;
        hmpi_p2p_wait_step(&b, &since);
    }
    hmpi_p2p_unlock();
    hmpi_wait_end(&b, hmpi_p2p_wait_family(c, 0));
    if (!block)
        *flag = got;
    return err;
}

int hmpi_p2p_mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *req,
                   MPI_Status *status, const char *fn)
{
    if (!message || !message_is_ours(*message))
        return req ? PMPI_Imrecv(buf, count, type, message, req)
                   : PMPI_Mrecv(buf, count, type, message, status);
    hmpi_req_t *m = message_obj(*message);
    hmpi_comm_t *c = m->comm;
    /* The buffer's checks, here where the communicator to raise them on is known. */
    hmpi_layout_t t;
    int err = hmpi_check_count(count, "count");
    if (!err)
        err = hmpi_layout_get(type, count, &t);
    if (!err)
        err = hmpi_check_buf_only(buf, count, type, "buf");
    if (err)
        return hmpi_raise_in(c->handle, err, fn);
    int src, tag;
    size_t bytes;
    hmpi_p2p_lock();
    hmpi_env_t *e = m->env;
    hmpi_p2p_message_info(e, &src, &tag, &bytes);
    hmpi_req_t stack, *r = req ? m : &stack;
    if (req) {
        /* The message is here already: the receive completes at once, and the
         * message's slot becomes the request. */
        m->kind = HMPI_REQ_RECV;
        m->env = NULL;
    } else {
        hmpi_req_zero(&stack);
        stack.kind = HMPI_REQ_RECV;
        stack.comm = c;
    }
    r->buf = buf;
    r->count = count;
    r->type = type;
    r->t = t;
    r->peer = src;
    r->tag = tag;
    hmpi_p2p_recv_message(r, e);
    if (req)
        *req = hmpi_req_handle(m);
    else
        hmpi_req_release(m);
    hmpi_p2p_unlock();
    *message = MPI_MESSAGE_NULL;
    if (req)
        return MPI_SUCCESS;
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_out(status, &stack.status);
    return hmpi_raise_in(c->handle, stack.status.MPI_ERROR, fn);
}
