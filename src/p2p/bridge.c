/* bridge.c: where HMPI's matching meets the MPI below's, on communicators with members
 * on other nodes. A send to another node goes to the MPI below (blocking in it only
 * while no local peer may need this rank's progress), and so does a receive. A receive from a specific remote rank goes straight to the MPI below;
 * an ANY_SOURCE receive waits in HMPI's posted list, where a local message can match
 * it, while the bridge asks the MPI below (MPI_Improbe, then MPI_Imrecv of exactly that
 * message) for a remote one. A remote receive posted after a pending wildcard that
 * could take the same message is held back until that wildcard is satisfied, so no
 * message is matched out of posting order and nothing relies on MPI_Cancel.
 * Invariant this rests on: every message between two ranks of one node on an
 * accelerated communicator travels through HMPI, never through the MPI below. */
#include "engine.h"
#include "../common/stats.h"

int hmpi_bridge_pending;

static int tags_overlap(int a, int b) { return a == MPI_ANY_TAG || b == MPI_ANY_TAG || a == b; }

/* A pending wildcard on c, posted before upto (NULL: anywhere), that could take a
 * message with this tag. */
static hmpi_req_t *wild_before(hmpi_comm_t *c, int tag, const hmpi_req_t *upto)
{
    for (hmpi_match_recv_t *m = hmpi_p2p_match.posted_head; m; m = m->next) {
        hmpi_req_t *w = hmpi_req_of(m);
        if (w == upto)
            break;
        if (w->wild && w->comm == c && tags_overlap(w->tag, tag))
            return w;
    }
    return NULL;
}

static int post_below(hmpi_req_t *r)
{
    return PMPI_Irecv(r->buf, r->count, r->type, r->peer, r->tag, r->comm->handle, &r->below);
}

int hmpi_bridge_recv_remote(hmpi_req_t *r)
{
    if (r->comm->nwild > 0 && wild_before(r->comm, r->tag, NULL)) {
        r->m.held = 1;
        hmpi_p2p_post(r);
        hmpi_bridge_pending++;
        return MPI_SUCCESS;
    }
    return post_below(r);
}

void hmpi_bridge_wild_done(hmpi_comm_t *c)
{
    hmpi_match_recv_t *next;
    for (hmpi_match_recv_t *m = hmpi_p2p_match.posted_head; m; m = next) {
        next = m->next;
        hmpi_req_t *d = hmpi_req_of(m);
        if (!m->held || d->comm != c || wild_before(c, d->tag, d))
            continue;
        hmpi_p2p_unpost(d);
        m->held = 0;
        hmpi_bridge_pending--;
        int err = post_below(d);
        if (err != MPI_SUCCESS) {
            hmpi_status_set(&d->status, MPI_ANY_SOURCE, MPI_ANY_TAG, err, 0);
            hmpi_req_finish(d);
        }
    }
}

void hmpi_bridge_progress(void)
{
    for (hmpi_match_recv_t *m = hmpi_p2p_match.posted_head; m; m = m->next) {
        hmpi_req_t *r = hmpi_req_of(m);
        if (!r->wild)
            continue;
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        PMPI_Improbe(MPI_ANY_SOURCE, r->tag, r->comm->handle, &flag, &msg, &st);
        if (!flag)
            continue;
        /* The oldest wildcard that takes this message: r, or one posted before it. */
        hmpi_req_t *w = wild_before(r->comm, st.MPI_TAG, NULL);
        hmpi_p2p_unpost(w);
        w->wild = 0;
        w->comm->nwild--;
        hmpi_bridge_pending--;
        int err = PMPI_Imrecv(w->buf, w->count, w->type, &msg, &w->below);
        if (err != MPI_SUCCESS) {
            hmpi_status_set(&w->status, MPI_ANY_SOURCE, MPI_ANY_TAG, err, 0);
            hmpi_req_finish(w);
        }
        hmpi_stat_add(HMPI_STAT_wild_remote, 1);
        hmpi_bridge_wild_done(w->comm);
        return; /* the list changed: the next pass goes on */
    }
}

/* ---- remote sends ---------------------------------------------------------------- */

/* The MPI below's send of each mode, blocking and not. */
int hmpi_bridge_send_below(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, int mode)
{
    switch (mode) {
    case HMPI_MODE_SYNC: return PMPI_Ssend(buf, count, type, dest, tag, comm);
    case HMPI_MODE_READY: return PMPI_Rsend(buf, count, type, dest, tag, comm);
    case HMPI_MODE_BUFFERED: return PMPI_Bsend(buf, count, type, dest, tag, comm);
    default: return PMPI_Send(buf, count, type, dest, tag, comm);
    }
}

int hmpi_bridge_send_init_below(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                                MPI_Comm comm, int mode, MPI_Request *req)
{
    switch (mode) {
    case HMPI_MODE_SYNC: return PMPI_Ssend_init(buf, count, type, dest, tag, comm, req);
    case HMPI_MODE_READY: return PMPI_Rsend_init(buf, count, type, dest, tag, comm, req);
    case HMPI_MODE_BUFFERED: return PMPI_Bsend_init(buf, count, type, dest, tag, comm, req);
    default: return PMPI_Send_init(buf, count, type, dest, tag, comm, req);
    }
}

int hmpi_bridge_isend_below(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm, int mode, MPI_Request *req)
{
    switch (mode) {
    case HMPI_MODE_SYNC: return PMPI_Issend(buf, count, type, dest, tag, comm, req);
    case HMPI_MODE_READY: return PMPI_Irsend(buf, count, type, dest, tag, comm, req);
    case HMPI_MODE_BUFFERED: return PMPI_Ibsend(buf, count, type, dest, tag, comm, req);
    default: return PMPI_Isend(buf, count, type, dest, tag, comm, req);
    }
}

static void count_remote(const hmpi_layout_t *t)
{
    hmpi_stat_add(HMPI_STAT_msgs_remote, 1);
    hmpi_stat_add(HMPI_STAT_bytes_remote, t->size);
}

/* Blocking in the MPI below unless local peers may need this rank's progress meanwhile. */
int hmpi_bridge_send(const hmpi_layout_t *t, const void *buf, int count, MPI_Datatype type,
                     int dest, int tag, MPI_Comm comm, int mode)
{
    count_remote(t);
    if (!hmpi_p2p_busy() && !hmpi_stats_counting())
        return hmpi_bridge_send_below(buf, count, type, dest, tag, comm, mode);
    MPI_Request req;
    int err = hmpi_bridge_isend_below(buf, count, type, dest, tag, comm, mode, &req);
    return err ? err : hmpi_p2p_below_wait(&req, MPI_STATUS_IGNORE, HMPI_WAIT_SEND);
}

int hmpi_bridge_isend(const hmpi_layout_t *t, const void *buf, int count, MPI_Datatype type,
                      int dest, int tag, MPI_Comm comm, int mode, MPI_Request *req)
{
    count_remote(t);
    return hmpi_bridge_isend_below(buf, count, type, dest, tag, comm, mode, req);
}

/* ---- waits in the MPI below ------------------------------------------------------ */

int hmpi_p2p_below_wait(MPI_Request *req, MPI_Status *status, hmpi_wait_family_t f)
{
    /* world_size 0: HMPI found no node (pass-through from the start), so no local peer
     * waits for this rank; then the below's own wait, uncounted (MPICH 4.0.2 crashes in
     * MPI_Test of a pending request of one process under sessions, mpi/init.c). */
    if ((!hmpi_p2p_busy() && !hmpi_stats_counting()) || hmpi_node.world_size == 0)
        return PMPI_Wait(req, status);
    hmpi_backoff_t b = {.no_park = 1}; /* the MPI below wakes no futex (shm/wait.h) */
    uint64_t since = 0;
    int flag = 0, err;
    while ((err = PMPI_Test(req, &flag, status)) == MPI_SUCCESS && !flag) {
        hmpi_p2p_lock();
        hmpi_p2p_progress();
        hmpi_p2p_wait_step(&b, &since);
        hmpi_p2p_unlock();
    }
    hmpi_wait_end(&b, f);
    return err;
}

int hmpi_p2p_below_allgather(const hmpi_comm_t *c, const void *mine, int bytes, void *all,
                             MPI_Comm comm, hmpi_wait_family_t f)
{
    if (!hmpi_comm_below_nb(c))
        return PMPI_Allgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, comm);
    MPI_Request q;
    int err = PMPI_Iallgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, comm, &q);
    return err ? err : hmpi_p2p_below_wait(&q, MPI_STATUS_IGNORE, f);
}
