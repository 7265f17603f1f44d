/* give.c: OPI_Give and OPI_Igive. To a rank of this node only the buffer's data
 * pointer is sent, 8 bytes on the shadow communicator (HMPI's immediate protocol: the
 * library never touches the data). To another node, or under pass-through, the MPI
 * below sends the contents; the buffer stays in flight on a private list until that
 * send completes, then goes back to this rank's pool. Such a give completes at once
 * (its request is complete): the program cannot touch the buffer any more, so there
 * is nothing for it to wait for, and two ranks giving to each other before taking
 * cannot deadlock. */
#include "opi.h"
#include "../core/errors.h"
#include "../common/log.h"
#include "../common/stats.h"
#include "../shm/wait.h"

#include <stdlib.h>
#include <time.h>

/* Sends of contents in flight: req[i] carries hdr[i]. Guarded by hmpi_opi_lock. */
static struct {
    MPI_Request *req;
    hmpi_opi_hdr_t **hdr;
    int *idx;
    int n, cap;
} sends;

static int sends_add_locked(MPI_Request r, hmpi_opi_hdr_t *h)
{
    if (sends.n == sends.cap) {
        int cap = sends.cap ? 2 * sends.cap : 64;
        MPI_Request *req = realloc(sends.req, sizeof *req * (size_t)cap);
        if (req)
            sends.req = req;
        hmpi_opi_hdr_t **hdr = realloc(sends.hdr, sizeof *hdr * (size_t)cap);
        if (hdr)
            sends.hdr = hdr;
        int *idx = realloc(sends.idx, sizeof *idx * (size_t)cap);
        if (idx)
            sends.idx = idx;
        if (!req || !hdr || !idx)
            return MPI_ERR_NO_MEM;
        sends.cap = cap;
    }
    sends.req[sends.n] = r;
    sends.hdr[sends.n] = h;
    sends.n++;
    return MPI_SUCCESS;
}

/* Drops completed entries (their requests are MPI_REQUEST_NULL), keeping the order. */
static void sends_compact_locked(void)
{
    int k = 0;
    for (int i = 0; i < sends.n; i++) {
        if (sends.req[i] == MPI_REQUEST_NULL)
            continue;
        sends.req[k] = sends.req[i];
        sends.hdr[k] = sends.hdr[i];
        k++;
    }
    sends.n = k;
}

int hmpi_opi_give_progress(void)
{
    int back = 0;
    hmpi_opi_lock();
    if (sends.n) {
        int outcount = 0;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push /* MPICH's access annotations misread MPI_STATUSES_IGNORE */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
        PMPI_Testsome(sends.n, sends.req, &outcount, sends.idx, MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
        for (int i = 0; outcount != MPI_UNDEFINED && i < outcount; i++, back++)
            hmpi_opi_pool_put_locked(sends.hdr[sends.idx[i]]);
        if (back)
            sends_compact_locked();
    }
    hmpi_opi_unlock();
    return back;
}

void hmpi_opi_give_shutdown(void)
{
    /* A correct program takes every buffer given to it before it finalizes, so these
     * sends complete; one that never takes must not hang the giver's MPI_Finalize. */
    enum { PATIENCE_S = 10 };
    time_t start = time(NULL);
    hmpi_backoff_t b = {0};
    for (;;) {
        hmpi_opi_give_progress();
        hmpi_opi_lock();
        int left = sends.n;
        hmpi_opi_unlock();
        if (!left || time(NULL) - start >= PATIENCE_S)
            break;
        hmpi_wait_step(&b, 0); /* the one wait: local peers' messages move meanwhile too */
    }
    hmpi_wait_end(&b, HMPI_WAIT_OPI);
    hmpi_opi_lock();
    if (sends.n)
        hmpi_log_error("OPI: %d given buffer(s) never taken; leaving them to the MPI below",
                       sends.n);
    for (int i = 0; i < sends.n; i++)
        PMPI_Request_free(&sends.req[i]);
    free(sends.req);
    free(sends.hdr);
    free(sends.idx);
    sends.req = NULL;
    sends.hdr = NULL;
    sends.idx = NULL;
    sends.n = sends.cap = 0;
    hmpi_opi_unlock();
}

/* ---- the two ways ------------------------------------------------------------------------ */

/* The pointer to a local rank. After the send starts, the buffer may be the taker's
 * already: nothing here reads its header afterwards. */
static int give_local(hmpi_opi_hdr_t *h, int rank, int tag, hmpi_opi_comm_t *oc, MPI_Request *req)
{
    uint64_t len = h->len;
    hmpi_p2p_args_t a = hmpi_opi_args(oc, &h->data, sizeof h->data, MPI_BYTE, rank, tag);
    int err = hmpi_p2p_send(&a, 0, req, req ? "MPI_Isend" : "MPI_Send");
    if (err == MPI_SUCCESS) {
        hmpi_stat_add(HMPI_STAT_opi_gives_local, 1);
        hmpi_stat_add(HMPI_STAT_opi_bytes_local, len);
    }
    return err;
}

/* The contents to a rank of another node (or anyone, under pass-through). */
static int give_remote(hmpi_opi_hdr_t *h, int count, MPI_Datatype type, int rank, int tag,
                       hmpi_opi_comm_t *oc, MPI_Request *req)
{
    MPI_Request s;
    uint64_t len = h->len;
    /* The request handed back is complete already: an HMPI done request, or the MPI
     * below's (a send to MPI_PROC_NULL). Made first, so a failure leaves nothing sent. */
    int err = req ? hmpi_opi_req_done(oc, 0, req) : 0;
    if (err)
        return err;
    if ((err = PMPI_Isend(h->data, count, type, rank, tag, oc->shadow, &s)) != MPI_SUCCESS) {
        if (req)
            hmpi_p2p_free(req);
        return err;
    }
    hmpi_opi_lock();
    int tracked = sends_add_locked(s, h) == MPI_SUCCESS;
    hmpi_opi_unlock();
    if (!tracked) { /* no room to remember it: finish it here instead */
        PMPI_Wait(&s, MPI_STATUS_IGNORE);
        hmpi_opi_pool_put(h);
    }
    hmpi_stat_add(HMPI_STAT_opi_gives_remote, 1);
    hmpi_stat_add(HMPI_STAT_opi_bytes_remote, len);
    hmpi_opi_give_progress();
    return MPI_SUCCESS;
}

/* OPI_Give (req NULL) and OPI_Igive. On error the buffer stays the caller's. */
static int give(void **ptr, int count, MPI_Datatype type, int rank, int tag, MPI_Comm comm,
                MPI_Request *req)
{
    hmpi_opi_comm_t *oc = NULL;
    hmpi_layout_t l;
    hmpi_opi_hdr_t *h = NULL;
    const char *fn = req ? "OPI_Igive" : "OPI_Give";
    int err = hmpi_opi_check_msg(ptr, count, type, comm, &oc, &l, fn);
    if (!err && (tag < 0 || tag > hmpi_opi.tag_ub))
        err = hmpi_err_what(MPI_ERR_TAG, "%s: tag %d is outside 0..%d", fn, tag, hmpi_opi.tag_ub);
    if (!err && rank != MPI_PROC_NULL && (rank < 0 || rank >= oc->peers))
        err = hmpi_err_what(MPI_ERR_RANK, "%s: rank %d is not a rank of a communicator of size %d",
                            fn, rank, oc->peers);
    if (!err)
        err = hmpi_opi_buf_claim(*ptr, OPI_GIVEN, &h);
    if (!err && hmpi_opi_span(&l) > h->size) {
        atomic_store_explicit(&h->state, OPI_STATE(hmpi_opi.me, OPI_HELD), memory_order_relaxed);
        err = hmpi_opi_code(OPI_E_TOO_SMALL);
    }
    if (err)
        return hmpi_opi_raise(comm, err);
    hmpi_opi_pool_reclaim();

    h->len = (uint64_t)l.size;
    if (rank == MPI_PROC_NULL) {
        err = req ? hmpi_opi_req_done(oc, 0, req) : 0;
        if (!err)
            hmpi_opi_pool_put(h); /* consumed, as by any give */
    } else if (oc->hs && oc->hs->local_of[rank] >= 0) {
        err = give_local(h, rank, tag, oc, req);
    } else {
        err = give_remote(h, count, type, rank, tag, oc, req);
    }
    if (err) {
        atomic_store_explicit(&h->state, OPI_STATE(hmpi_opi.me, OPI_HELD), memory_order_relaxed);
        return hmpi_opi_raise(comm, err);
    }
    *ptr = NULL;
    return MPI_SUCCESS;
}

int OPI_Give(void **ptr, int count, MPI_Datatype datatype, int rank, int tag, MPI_Comm comm)
{
    return give(ptr, count, datatype, rank, tag, comm, NULL);
}

int OPI_Igive(void **ptr, int count, MPI_Datatype datatype, int rank, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    HMPI_ENTER("OPI_Igive");
    if (!request)
        return hmpi_opi_raise(comm, hmpi_err_what(MPI_ERR_REQUEST, "OPI_Igive: request is NULL"));
    return give(ptr, count, datatype, rank, tag, comm, request);
}
