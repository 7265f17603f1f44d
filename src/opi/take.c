/* take.c: OPI_Take and OPI_Itake. Three routes, by where the giver may be:
 *  LOCAL  a rank of this node (or ANY_SOURCE on a communicator without remote members):
 *         the giver's 8-byte data pointer is received straight into *ptr; the
 *         completion step checks the buffer's header and makes this rank its holder.
 *  REMOTE a rank of another node, or any rank under pass-through: the contents are
 *         received into a buffer of this rank's pool, written to *ptr at once (the
 *         program may use it once the take completes, as with any receive buffer).
 *  MIXED  ANY_SOURCE with members on both sides: received as MPI_PACKED into a pool
 *         buffer that fits either message; the status's source then tells whether
 *         it holds a pointer (local giver) or the contents (remote giver).
 * Every take is one ordinary posted receive on the shadow communicator, so MPI's
 * ordering rules hold for takes as for receives, wildcards included. Nonblocking LOCAL
 * and MIXED takes complete through an HMPI polled request that runs the completion
 * step (under the engine lock; it takes hmpi_opi_lock inside, never the other way round).
 * OPI take requests cannot be cancelled and must not be freed while active. */
#include "opi.h"
#include "../core/errors.h"
#include "../heap/heap.h"
#include "../node/node.h"

#include <limits.h>
#include <stdlib.h>

typedef enum { ROUTE_LOCAL, ROUTE_REMOTE, ROUTE_MIXED } route_t;

static route_t route_of(const hmpi_opi_comm_t *oc, int rank)
{
    if (!oc->hs)
        return ROUTE_REMOTE;
    if (rank == MPI_ANY_SOURCE)
        return oc->hs->has_remote ? ROUTE_MIXED : ROUTE_LOCAL;
    return oc->hs->local_of[rank] >= 0 ? ROUTE_LOCAL : ROUTE_REMOTE;
}

/* ---- completion steps ------------------------------------------------------------------------ */

/* LOCAL: *ptr holds the pointer a local giver sent. Makes this rank the buffer's holder
 * and sets st's count to the bytes given. Returns the take's error. */
static int finish_local(void **ptr, size_t want, MPI_Status *st)
{
    void *p = *ptr;
    hmpi_opi_hdr_t *h = hmpi_opi_hdr(p);
    if ((uintptr_t)p % 64 != 0 || !hmpi_heap_is_shared_range(h, sizeof *h) ||
        h->magic != (OPI_HDR_MAGIC ^ (uintptr_t)h)) {
        hmpi_status_set(st, st->MPI_SOURCE, st->MPI_TAG, MPI_ERR_INTERN, 0);
        return MPI_ERR_INTERN; /* only OPI sends on the shadow: memory was corrupted */
    }
    /* The message that brought p ordered the giver's header writes before this. */
    atomic_store_explicit(&h->state, OPI_STATE(hmpi_opi.me, OPI_HELD), memory_order_relaxed);
    size_t got = h->len;
    int err = got > want ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    hmpi_status_set(st, st->MPI_SOURCE, st->MPI_TAG, err, got > want ? want : got);
    return err;
}

/* MIXED: pkt received one message, err its receive's error. */
static int finish_mixed(void **ptr, hmpi_opi_hdr_t *pkt, const hmpi_comm_t *hs, int count,
                        MPI_Datatype type, const hmpi_layout_t *l, MPI_Status *st, int err)
{
    size_t want = l->size;
    if (err == MPI_SUCCESS && hs->local_of[st->MPI_SOURCE] >= 0) {
        *ptr = *(void **)pkt->data;
        hmpi_opi_pool_put(pkt);
        return finish_local(ptr, want, st);
    }
    int got = 0;
    PMPI_Get_count(st, MPI_BYTE, &got);
    if (err == MPI_SUCCESS && (size_t)got > want)
        err = MPI_ERR_TRUNCATE; /* the packet had room for at least a pointer */
    size_t have = (size_t)got < want ? (size_t)got : want;
    *ptr = pkt->data;
    if (have && !hmpi_opi_contig(l)) { /* lay the packed elements out as type says */
        hmpi_opi_hdr_t *q;
        if (hmpi_opi_pool_get(hmpi_opi_span(l), &q) == MPI_SUCCESS) {
            int pos = 0;
            PMPI_Unpack(pkt->data, (int)have, &pos, q->data,
                        (int)(have / (l->size / (size_t)count)), type, hmpi_node.self);
            hmpi_opi_pool_put(pkt);
            *ptr = q->data;
        } else if (err == MPI_SUCCESS) {
            err = MPI_ERR_NO_MEM;
        }
    }
    hmpi_status_set(st, st->MPI_SOURCE, st->MPI_TAG, err, have);
    return err;
}

/* ---- nonblocking takes through polled requests ---------------------------------------------- */

typedef struct take_op_s {
    void **ptr;
    hmpi_opi_hdr_t *pkt;   /* MIXED: the receive buffer; NULL for LOCAL */
    MPI_Request inner;     /* the receive on the shadow */
    const hmpi_comm_t *hs; /* the shadow's state (the inner receive holds it alive) */
    int count;
    MPI_Datatype type;
    int holds_type; /* a derived type, held until the take completes */
    hmpi_layout_t l;
    struct take_op_s *next; /* free list */
} take_op_t;

static take_op_t *free_ops; /* guarded by hmpi_opi_lock */

static take_op_t *op_new(void)
{
    hmpi_opi_lock();
    take_op_t *op = free_ops;
    if (op)
        free_ops = op->next;
    hmpi_opi_unlock();
    return op ? op : malloc(sizeof *op);
}

static void op_free(take_op_t *op)
{
    hmpi_opi_lock();
    op->next = free_ops;
    free_ops = op;
    hmpi_opi_unlock();
}

/* Poll function of a take's request (engine lock held): 1 once complete. */
static int take_poll(void *arg, MPI_Status *status)
{
    take_op_t *op = arg;
    MPI_Status st;
    if (!hmpi_req_test_handle(&op->inner, &st))
        return 0;
    int err = st.MPI_ERROR;
    size_t want = op->l.size;
    if (op->pkt)
        err = finish_mixed(op->ptr, op->pkt, op->hs, op->count, op->type, &op->l, &st, err);
    else if (err == MPI_SUCCESS)
        err = finish_local(op->ptr, want, &st);
    st.MPI_ERROR = err;
    *status = st;
    if (op->holds_type)
        hmpi_type_release(op->type);
    op_free(op);
    return 1;
}

static int itake_polled(void **ptr, int count, MPI_Datatype type, const hmpi_layout_t *l, int rank,
                        int tag, route_t route, const hmpi_opi_comm_t *oc, MPI_Comm comm,
                        MPI_Request *req)
{
    take_op_t *op = op_new();
    if (!op)
        return MPI_ERR_NO_MEM;
    *op = (take_op_t){.ptr = ptr, .hs = oc->hs, .count = count, .type = type, .l = *l};
    size_t cap = l->size;
    cap = cap < sizeof(void *) ? sizeof(void *) : cap;
    int err = MPI_SUCCESS;
    if (route == ROUTE_MIXED)
        err = cap > INT_MAX ? MPI_ERR_COUNT : hmpi_opi_pool_get(cap, &op->pkt);
    if (!err) {
        hmpi_p2p_args_t a = route == ROUTE_MIXED
                                ? hmpi_opi_args(oc, op->pkt->data, (int)cap, MPI_PACKED, rank, tag)
                                : hmpi_opi_args(oc, ptr, sizeof(void *), MPI_BYTE, rank, tag);
        err = hmpi_p2p_recv(&a, 0, &op->inner, MPI_STATUS_IGNORE, "MPI_Irecv");
    }
    /* the program may free a derived type before the take completes */
    op->holds_type = !err && l->derived;
    if (op->holds_type)
        hmpi_type_hold(type);
    if (!err) {
        hmpi_comm_t *uc = hmpi_comm_get(comm); /* errors go to the user's handler */
        err = hmpi_p2p_poll_new(take_poll, op, uc ? uc : oc->hs, req);
        if (err) { /* no request to stand for the take: its receive is undone */
            hmpi_p2p_cancel(&op->inner);
            hmpi_p2p_free(&op->inner);
            if (op->holds_type)
                hmpi_type_release(type);
        }
    }
    if (err) {
        if (op->pkt)
            hmpi_opi_pool_put(op->pkt);
        op_free(op);
    }
    return err;
}

/* A blocking receive on oc's shadow. */
static int recv(const hmpi_opi_comm_t *oc, void *buf, int count, MPI_Datatype type, int rank,
                int tag, MPI_Status *st)
{
    hmpi_p2p_args_t a = hmpi_opi_args(oc, buf, count, type, rank, tag);
    return hmpi_p2p_recv(&a, 0, NULL, st, "MPI_Recv");
}

/* ---- the API ------------------------------------------------------------------------------------ */

static int check_take(void **ptr, int count, MPI_Datatype type, int rank, int tag, MPI_Comm comm,
                      hmpi_opi_comm_t **oc_p, hmpi_layout_t *l, const char *fn)
{
    int err = hmpi_opi_check_msg(ptr, count, type, comm, oc_p, l, fn);
    if (!err && tag != MPI_ANY_TAG && (tag < 0 || tag > hmpi_opi.tag_ub))
        err = hmpi_err_what(MPI_ERR_TAG, "%s: tag %d is outside 0..%d and not MPI_ANY_TAG", fn, tag,
                            hmpi_opi.tag_ub);
    if (!err && rank != MPI_ANY_SOURCE && rank != MPI_PROC_NULL &&
        (rank < 0 || rank >= (*oc_p)->peers))
        err = hmpi_err_what(MPI_ERR_RANK, "%s: rank %d is not a rank of a communicator of size %d",
                            fn, rank, (*oc_p)->peers);
    if (!err)
        hmpi_opi_pool_reclaim();
    return err;
}

int OPI_Take(void **ptr, int count, MPI_Datatype datatype, int rank, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    hmpi_opi_comm_t *oc = NULL;
    hmpi_layout_t l;
    int err = check_take(ptr, count, datatype, rank, tag, comm, &oc, &l, "OPI_Take");
    if (err)
        return hmpi_opi_raise(comm, err);
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    size_t want = l.size, cap = want < sizeof(void *) ? sizeof(void *) : want;
    hmpi_opi_hdr_t *h = NULL;
    if (rank == MPI_PROC_NULL) {
        *ptr = NULL;
        hmpi_status_set(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
    } else {
        switch (route_of(oc, rank)) {
        case ROUTE_LOCAL:
            err = recv(oc, ptr, sizeof(void *), MPI_BYTE, rank, tag, &st);
            if (!err)
                err = finish_local(ptr, want, &st);
            break;
        case ROUTE_REMOTE:
            if ((err = hmpi_opi_pool_get(hmpi_opi_span(&l), &h)) != MPI_SUCCESS)
                break;
            err = recv(oc, h->data, count, datatype, rank, tag, &st);
            *ptr = h->data; /* even truncated: the buffer is the caller's to free */
            break;
        case ROUTE_MIXED:
            if (cap > INT_MAX)
                err = MPI_ERR_COUNT;
            else if ((err = hmpi_opi_pool_get(cap, &h)) == MPI_SUCCESS) {
                err = recv(oc, h->data, (int)cap, MPI_PACKED, rank, tag, &st);
                err = finish_mixed(ptr, h, oc->hs, count, datatype, &l, &st, err);
            }
            break;
        }
    }
    if (status != MPI_STATUS_IGNORE)
        hmpi_status_out(status, &st); /* as MPI_Recv: MPI_ERROR stays the caller's */
    return hmpi_opi_raise(comm, err);
}

int OPI_Itake(void **ptr, int count, MPI_Datatype datatype, int rank, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    hmpi_opi_comm_t *oc = NULL;
    hmpi_layout_t l;
    int err = check_take(ptr, count, datatype, rank, tag, comm, &oc, &l, "OPI_Itake");
    if (!err && !request)
        err = hmpi_err_what(MPI_ERR_REQUEST, "OPI_Itake: request is NULL");
    if (err)
        return hmpi_opi_raise(comm, err);
    route_t route = rank == MPI_PROC_NULL ? ROUTE_REMOTE : route_of(oc, rank);
    if (rank == MPI_PROC_NULL) {
        *ptr = NULL;
        err = hmpi_opi_req_done(oc, 1, request);
    } else if (route == ROUTE_REMOTE) {
        hmpi_opi_hdr_t *h;
        if ((err = hmpi_opi_pool_get(hmpi_opi_span(&l), &h)) == MPI_SUCCESS) {
            hmpi_p2p_args_t a = hmpi_opi_args(oc, h->data, count, datatype, rank, tag);
            err = hmpi_p2p_recv(&a, 0, request, MPI_STATUS_IGNORE, "MPI_Irecv");
            if (err)
                hmpi_opi_pool_put(h);
            else
                *ptr = h->data;
        }
    } else {
        err = itake_polled(ptr, count, datatype, &l, rank, tag, route, oc, comm, request);
    }
    return hmpi_opi_raise(comm, err);
}
