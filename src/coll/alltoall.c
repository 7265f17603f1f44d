/* alltoall.c: MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw. On a node every member
 * publishes where its n send blocks are (its sendbuf, when in the shared heap and
 * contiguous and, with more ranks than cores, not small; else packed copies in its
 * slot or scratch) and then reads the block meant
 * for it from every other member, straight into its recvbuf: one copy per byte, all
 * members in parallel, each starting with a different peer. In place, the send data
 * is in the recvbuf about to be overwritten, so it is always staged. Communicators
 * that span nodes pass to the MPI below. */
#include "coll.h"
#include "nbc.h"
#include "../core/check.h"
#include "../core/errors.h"
#include "../node/node.h"

/* n blocks of one side: block i is counts[i] (or count) elements of types[i] (or type)
 * at bytes[i] (w), or displs[i] extents (v), or i * count extents from buf. */
typedef struct {
    void *buf;
    const int *counts, *displs;
    const MPI_Datatype *types;
    int count, bytes_displs;
    MPI_Datatype type;
    MPI_Aint extent; /* of type, when types is NULL */
} side_t;

static int side_count(const side_t *s, int i) { return s->counts ? s->counts[i] : s->count; }
static MPI_Datatype side_type(const side_t *s, int i) { return s->types ? s->types[i] : s->type; }

static void *side_buf(const side_t *s, int i)
{
    if (s->bytes_displs)
        return hmpi_coll_at(s->buf, s->displs[i]);
    MPI_Aint d = s->displs ? (MPI_Aint)s->displs[i] : (MPI_Aint)i * s->count;
    return hmpi_coll_at(s->buf, d * s->extent);
}

static int side_layout(const side_t *s, int i, hmpi_layout_t *l)
{
    return hmpi_layout_get(side_type(s, i), side_count(s, i), l);
}

static int side_check(side_t *s, int n)
{
    hmpi_layout_t l;
    if (!s->types) {
        int err = hmpi_layout_get(s->type, 1, &l);
        if (err != MPI_SUCCESS)
            return err;
        s->extent = l.extent;
    }
    for (int i = 0; i < n; i++) {
        int err = side_layout(s, i, &l);
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* Publishes the send blocks (table or stride in h). Returns 1 when peers read the
 * user's buffer (the caller waits for them before returning). try: a nonblocking
 * collective's step, which cannot wait for a scratch: -1 while an older epoch's readers
 * still hold it (nothing is published). */
static int expose_blocks(hmpi_coll_team_t *t, uint64_t e, hmpi_coll_half_t *h, const side_t *sd,
                         int inplace, int try, int *err_p)
{
    int n = t->ep.n, me = t->ep.me, any_direct = 0;
    size_t total = 0, staged = 0, tb = sizeof(hmpi_coll_blk_t) * (size_t)n;
    int uniform = !sd->counts && !sd->types && !inplace;
    for (int i = 0; i < n; i++) {
        hmpi_layout_t l;
        side_layout(sd, i, &l);
        if (i == me)
            continue;
        total += l.size;
        if (inplace || !hmpi_coll_direct(side_buf(sd, i), &l)) {
            staged += l.size;
            uniform = 0;
        }
    }
    h->table = 0;
    /* With more ranks than cores, small blocks are copied (into the slot when they fit
     * there with their table, else into the pair of small scratch buffers), so that we
     * need not wait for the readers at the end: that wait costs time slices, and the
     * claims wait for the collective before last instead. Else, and for larger ones,
     * peers read them where they lie, when they all can be: with a core each, the copy
     * costs more than the wait (docs/performance.md, "Scale"). */
    int all_inline = tb + 16 + total <= t->cap;
    int copy = hmpi_node.crowded && (all_inline || total <= 4 * t->cap);
    if (copy) {
        staged = total;
        uniform = 0;
    }
    if (uniform && n > 1) {
        /* alltoall from a heap buffer: block i at addr + i * aux, no table */
        hmpi_layout_t l;
        side_layout(sd, 0, &l);
        h->addr = (uintptr_t)hmpi_coll_at(sd->buf, l.lo);
        h->bytes = l.size;
        h->aux = (uint64_t)sd->count * (uint64_t)sd->extent;
        return 1;
    }
    hmpi_coll_area_t a = {h->data, t->cap, 0};
    hmpi_coll_blk_t *tab = hmpi_coll_take(&a, tb, 0, 16);
    hmpi_coll_area_t sc = a;
    if (!all_inline && (staged > 0 || !tab)) {
        size_t need = staged + (tab ? 0 : tb) + 16;
        void *p =
            try ? (copy ? hmpi_coll_try_scratch_small(t, e, need)
                        : hmpi_coll_try_scratch(t, e, need))
                : (copy ? hmpi_coll_scratch_small(t, e, need) : hmpi_coll_scratch(t, e, need));
        if (!p)
            return -1;
        sc = (hmpi_coll_area_t){p, need, 0};
        if (!tab)
            tab = hmpi_coll_take(&sc, tb, 0, 16);
        hmpi_stat_add(HMPI_STAT_coll_staged_bytes, staged);
    }
    for (int i = 0; i < n; i++) {
        hmpi_layout_t l;
        side_layout(sd, i, &l);
        void *b = side_buf(sd, i);
        if (i == me) {
            tab[i] = (hmpi_coll_blk_t){0, 0};
        } else if (!copy && !inplace && hmpi_coll_direct(b, &l)) {
            tab[i] = (hmpi_coll_blk_t){(uintptr_t)hmpi_coll_at(b, l.lo), l.size};
            any_direct = 1;
        } else {
            void *to = hmpi_coll_take(&sc, l.size, 0, 1);
            HMPI_ASSERT_INTERNAL(tab && to); /* sized above for the table and every block */
            int err = hmpi_coll_pack(to, b, side_count(sd, i), side_type(sd, i), &l);
            *err_p = *err_p != MPI_SUCCESS ? *err_p : err;
            tab[i] = (hmpi_coll_blk_t){(uintptr_t)to, l.size};
        }
    }
    h->table = (uintptr_t)tab;
    h->aux = (uint64_t)n;
    return any_direct;
}

static int alltoall_team(hmpi_coll_team_t *t, side_t *sd, side_t *rv, int inplace)
{
    int n = t->ep.n, me = t->ep.me, err;
    if ((err = side_check(rv, n)) != MPI_SUCCESS ||
        (!inplace && (err = side_check(sd, n)) != MPI_SUCCESS))
        return err;
    if (inplace)
        *sd = *rv;
    uint64_t e = hmpi_coll_begin(t);
    hmpi_coll_half_t *h = hmpi_coll_claim(t, e);
    int direct = expose_blocks(t, e, h, sd, inplace, 0, &err);
    hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    for (int k = 1; k < n; k++) {
        int i = (me + k) % n;
        hmpi_coll_wait(t, i, e, HMPI_COLL_ARRIVED);
        hmpi_coll_blk_t b = hmpi_coll_blk(hmpi_coll_half(t, i, e), me);
        hmpi_layout_t rl;
        side_layout(rv, i, &rl);
        int err2 = hmpi_coll_unpack(side_buf(rv, i), side_count(rv, i), side_type(rv, i), &rl,
                                    (const void *)(uintptr_t)b.addr, b.bytes);
        err = err != MPI_SUCCESS ? err : err2;
    }
    hmpi_coll_seen(t, e);
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    /* our own block last, after DONE: it touches no peer's memory, and the peers whose
     * buffers we read may go on meanwhile */
    if (!inplace) {
        hmpi_layout_t sl, rl;
        side_layout(sd, me, &sl);
        side_layout(rv, me, &rl);
        int err2 = hmpi_coll_move(side_buf(rv, me), side_count(rv, me), side_type(rv, me), &rl,
                                  side_buf(sd, me), side_count(sd, me), side_type(sd, me), &sl);
        err = err != MPI_SUCCESS ? err : err2;
    }
    if (direct)
        hmpi_coll_wait_all(t, e, HMPI_COLL_DONE);
    return err;
}

/* Common entry: pass-through when not accelerated, else the team algorithm. */
static hmpi_coll_comm_t *get_flat(MPI_Comm comm)
{
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    return s && s->mode == HMPI_COLL_FLAT ? s : NULL;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    HMPI_ENTER("MPI_Alltoall");
    hmpi_coll_comm_t *s = get_flat(comm);
    HMPI_COLL_COUNT(alltoall, s != NULL);
    if (!s && hmpi_check_comm_null(comm, "MPI_Alltoall"))
        return MPI_ERR_COMM;
    if (!s)
        HMPI_COLL_RETURN_BELOW(PMPI_Alltoall, PMPI_Ialltoall, comm, sendbuf, sendcount, sendtype,
                               recvbuf, recvcount, recvtype, comm);
    int err = sendbuf == MPI_IN_PLACE
                  ? MPI_SUCCESS
                  : hmpi_check_buf(sendbuf, sendcount, sendtype, HMPI_SIDE_SEND);
    if (!err)
        err = hmpi_check_buf(recvbuf, recvcount, recvtype, HMPI_SIDE_RECV);
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Alltoall");
    side_t sd = {(void *)sendbuf, NULL, NULL, NULL, sendcount, 0, sendtype, 0};
    side_t rv = {recvbuf, NULL, NULL, NULL, recvcount, 0, recvtype, 0};
    return hmpi_raise_in(comm, alltoall_team(&s->team, &sd, &rv, sendbuf == MPI_IN_PLACE),
                         "MPI_Alltoall");
}
HMPI_PMPI(Alltoall)

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    HMPI_ENTER("MPI_Alltoallv");
    hmpi_coll_comm_t *s = get_flat(comm);
    HMPI_COLL_COUNT(alltoallv, s != NULL);
    if (!s && hmpi_check_comm_null(comm, "MPI_Alltoallv"))
        return MPI_ERR_COMM;
    if (!s)
        HMPI_COLL_RETURN_BELOW(PMPI_Alltoallv, PMPI_Ialltoallv, comm, sendbuf, sendcounts, sdispls,
                               sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    int err = sendbuf == MPI_IN_PLACE ? MPI_SUCCESS : hmpi_check_type(sendtype, "sendtype");
    if (!err)
        err = hmpi_check_type(recvtype, "recvtype");
    if (err)
        return hmpi_raise_in(comm, err, "MPI_Alltoallv");
    side_t sd = {(void *)sendbuf, sendcounts, sdispls, NULL, 0, 0, sendtype, 0};
    side_t rv = {recvbuf, recvcounts, rdispls, NULL, 0, 0, recvtype, 0};
    return hmpi_raise_in(comm, alltoall_team(&s->team, &sd, &rv, sendbuf == MPI_IN_PLACE),
                         "MPI_Alltoallv");
}
HMPI_PMPI(Alltoallv)

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    HMPI_ENTER("MPI_Alltoallw");
    hmpi_coll_comm_t *s = get_flat(comm);
    HMPI_COLL_COUNT(alltoallw, s != NULL);
    if (!s && hmpi_check_comm_null(comm, "MPI_Alltoallw"))
        return MPI_ERR_COMM;
    if (!s)
        HMPI_COLL_RETURN_BELOW(PMPI_Alltoallw, PMPI_Ialltoallw, comm, sendbuf, sendcounts, sdispls,
                               sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
    side_t sd = {(void *)sendbuf, sendcounts, sdispls, sendtypes, 0, 1, MPI_DATATYPE_NULL, 0};
    side_t rv = {recvbuf, recvcounts, rdispls, recvtypes, 0, 1, MPI_DATATYPE_NULL, 0};
    return hmpi_raise_in(comm, alltoall_team(&s->team, &sd, &rv, sendbuf == MPI_IN_PLACE),
                         "MPI_Alltoallw");
}
HMPI_PMPI(Alltoallw)

/* ---- nonblocking and persistent (nbc.h) --------------------------------------------------
 * MPI_Ialltoall(v,w) and their _init forms: alltoall_team's algorithm with each wait a
 * test that keeps its step; every member reads its blocks from the others as they
 * arrive, and the last to arrive reads all of its own at once. Communicators that span
 * nodes go to the MPI below's call, as the blocking forms do. */

typedef enum { A2A, A2AV, A2AW } a2a_kind_t;

static side_t op_side(const hmpi_coll_op_t *op, int send)
{
    if (send)
        return (side_t){(void *)op->sendbuf, op->scounts,        op->sdispls, op->stypes,
                        op->scount,          op->stypes != NULL, op->stype,   op->sext};
    return (side_t){op->recvbuf, op->rcounts,        op->rdispls, op->rtypes,
                    op->count,   op->rtypes != NULL, op->type,    op->rext};
}

static int phase_alltoall(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    uint64_t e = hmpi_coll_op_epoch(op);
    int n = t->ep.n, me = t->ep.me, inplace = op->sendbuf == MPI_IN_PLACE;
    side_t rv = op_side(op, 0), sd = inplace ? rv : op_side(op, 1);
    switch (op->step) {
    case 0: {
        hmpi_coll_half_t *h = hmpi_coll_try_claim(t, e);
        if (!h)
            return 0;
        int direct = expose_blocks(t, e, h, &sd, inplace, 1, &op->err);
        if (direct < 0)
            return 0;
        op->direct = direct;
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        op->step = 1;
        op->k = 1;
    } /* fall through */
    case 1:
        for (; op->k < n; op->k++) {
            int i = (me + op->k) % n;
            if (!hmpi_epoch_reached(&t->ep, i, e, HMPI_COLL_ARRIVED))
                return 0;
            hmpi_coll_blk_t b = hmpi_coll_blk(hmpi_coll_half(t, i, e), me);
            hmpi_layout_t rl;
            side_layout(&rv, i, &rl);
            int err = hmpi_coll_unpack(side_buf(&rv, i), side_count(&rv, i), side_type(&rv, i), &rl,
                                       (const void *)(uintptr_t)b.addr, b.bytes);
            hmpi_coll_op_note(op, err);
        }
        hmpi_coll_seen(t, e);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        if (!inplace) { /* our own block last: it touches no peer's memory */
            hmpi_layout_t sl, rl;
            side_layout(&sd, me, &sl);
            side_layout(&rv, me, &rl);
            int err =
                hmpi_coll_move(side_buf(&rv, me), side_count(&rv, me), side_type(&rv, me), &rl,
                               side_buf(&sd, me), side_count(&sd, me), side_type(&sd, me), &sl);
            hmpi_coll_op_note(op, err);
        }
        if (!op->direct)
            return 1;
        op->step = 2; /* the others read our sendbuf in place */
        /* fall through */
    default: return hmpi_coll_op_all(op, HMPI_COLL_DONE);
    }
}

static int below_ialltoall(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Ialltoall(op->sendbuf, op->scount, op->stype, op->recvbuf, op->count, op->type,
                          op->c->handle, req);
}
static int below_ialltoallv(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Ialltoallv(op->sendbuf, op->scounts, op->sdispls, op->stype, op->recvbuf,
                           op->rcounts, op->rdispls, op->type, op->c->handle, req);
}
static int below_ialltoallw(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Ialltoallw(op->sendbuf, op->scounts, op->sdispls, op->stypes, op->recvbuf,
                           op->rcounts, op->rdispls, op->rtypes, op->c->handle, req);
}

static int a2a_below(a2a_kind_t kind, const void *sendbuf, const int *scounts, const int *sdispls,
                     const MPI_Datatype *stypes, int scount, MPI_Datatype stype, void *recvbuf,
                     const int *rcounts, const int *rdispls, const MPI_Datatype *rtypes, int rcount,
                     MPI_Datatype rtype, MPI_Comm comm, int persistent, MPI_Request *request)
{
#if HMPI_MPI4_CALLS
    if (persistent)
        return kind == A2A ? PMPI_Alltoall_init(sendbuf, scount, stype, recvbuf, rcount, rtype,
                                                comm, MPI_INFO_NULL, request)
               : kind == A2AV
                   ? PMPI_Alltoallv_init(sendbuf, scounts, sdispls, stype, recvbuf, rcounts,
                                         rdispls, rtype, comm, MPI_INFO_NULL, request)
                   : PMPI_Alltoallw_init(sendbuf, scounts, sdispls, stypes, recvbuf, rcounts,
                                         rdispls, rtypes, comm, MPI_INFO_NULL, request);
#else
    (void)persistent;
#endif
    return kind == A2A
               ? PMPI_Ialltoall(sendbuf, scount, stype, recvbuf, rcount, rtype, comm, request)
           : kind == A2AV ? PMPI_Ialltoallv(sendbuf, scounts, sdispls, stype, recvbuf, rcounts,
                                            rdispls, rtype, comm, request)
                          : PMPI_Ialltoallw(sendbuf, scounts, sdispls, stypes, recvbuf, rcounts,
                                            rdispls, rtypes, comm, request);
}

/* Every nonblocking and persistent alltoall: the checks of the blocking call, then the
 * team's program (one node), or the MPI below's call. */
static int a2a_start(a2a_kind_t kind, const void *sendbuf, const int *scounts, const int *sdispls,
                     const MPI_Datatype *stypes, int scount, MPI_Datatype stype, void *recvbuf,
                     const int *rcounts, const int *rdispls, const MPI_Datatype *rtypes, int rcount,
                     MPI_Datatype rtype, MPI_Comm comm, int persistent, MPI_Request *request,
                     const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = NULL;
    hmpi_coll_comm_t *s = hmpi_coll_get_nb(comm, &c);
    /* Across nodes the MPI below's call, as the blocking forms; a persistent one runs it at
     * each start under a request of HMPI's (hmpi_coll_phase_below_call). */
    int below = s && s->mode == HMPI_COLL_HIER;
    s = hmpi_coll_nb_route(s, below, persistent);
    if (!s) {
        if (hmpi_check_comm_null(comm, fn))
            return MPI_ERR_COMM;
        return a2a_below(kind, sendbuf, scounts, sdispls, stypes, scount, stype, recvbuf, rcounts,
                         rdispls, rtypes, rcount, rtype, comm, persistent, request);
    }
    int inplace = sendbuf == MPI_IN_PLACE, err = MPI_SUCCESS;
    if (kind == A2A) {
        err = inplace ? MPI_SUCCESS : hmpi_check_buf(sendbuf, scount, stype, HMPI_SIDE_SEND);
        if (!err)
            err = hmpi_check_buf(recvbuf, rcount, rtype, HMPI_SIDE_RECV);
    } else if (kind == A2AV) {
        err = inplace ? MPI_SUCCESS : hmpi_check_type(stype, "sendtype");
        if (!err)
            err = hmpi_check_type(rtype, "recvtype");
    }
    if (!err && !request)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    if (!err && kind != A2A &&
        (!rcounts || !rdispls || (!inplace && (!scounts || !sdispls)) ||
         (kind == A2AW && (!rtypes || (!inplace && !stypes)))))
        err = hmpi_err_what(MPI_ERR_ARG, "an array of counts, displacements or types is NULL");
    if (err)
        return hmpi_raise_in(comm, err, fn);
    static int (*const below_of[3])(hmpi_coll_op_t *, MPI_Request *) = {
        below_ialltoall, below_ialltoallv, below_ialltoallw};
    hmpi_coll_phase_fn phase = below ? hmpi_coll_phase_below_call : phase_alltoall;
    hmpi_coll_op_t *op = hmpi_coll_op_new(s, c, 1, &phase);
    if (!op)
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    op->sendbuf = sendbuf;
    op->scounts = scounts;
    op->sdispls = sdispls;
    op->stypes = kind == A2AW ? stypes : NULL;
    op->scount = scount;
    op->stype = kind == A2AW ? MPI_DATATYPE_NULL : stype;
    op->recvbuf = recvbuf;
    op->rcounts = rcounts;
    op->rdispls = rdispls;
    op->rtypes = kind == A2AW ? rtypes : NULL;
    op->count = rcount;
    op->type = kind == A2AW ? MPI_DATATYPE_NULL : rtype;
    op->persistent = (uint8_t)persistent;
    op->below_start = below_of[kind];
    side_t rv = op_side(op, 0), sd = op_side(op, 1);
    if ((err = side_check(&rv, c->size)) == MPI_SUCCESS && !inplace)
        err = side_check(&sd, c->size);
    op->rext = rv.extent;
    op->sext = sd.extent;
    for (int i = 0; i < c->size && !err && kind == A2AW; i++) {
        err = hmpi_coll_op_hold(op, rtypes[i]);
        if (!err && !inplace)
            err = hmpi_coll_op_hold(op, stypes[i]);
    }
    if (!err && kind != A2AW)
        err = hmpi_coll_op_hold(op, rtype);
    if (!err && kind != A2AW && !inplace)
        err = hmpi_coll_op_hold(op, stype);
    return hmpi_coll_op_go(op, err, request, comm, fn);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return a2a_start(A2A, sendbuf, NULL, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL, NULL,
                     recvcount, recvtype, comm, 0, request, "MPI_Ialltoall");
}
HMPI_PMPI(Ialltoall)

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return a2a_start(A2AV, sendbuf, sendcounts, sdispls, NULL, 0, sendtype, recvbuf, recvcounts,
                     rdispls, NULL, 0, recvtype, comm, 0, request, "MPI_Ialltoallv");
}
HMPI_PMPI(Ialltoallv)

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    return a2a_start(A2AW, sendbuf, sendcounts, sdispls, sendtypes, 0, MPI_DATATYPE_NULL, recvbuf,
                     recvcounts, rdispls, recvtypes, 0, MPI_DATATYPE_NULL, comm, 0, request,
                     "MPI_Ialltoallw");
}
HMPI_PMPI(Ialltoallw)

#if HMPI_MPI4_CALLS
int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    (void)info;
    return a2a_start(A2A, sendbuf, NULL, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL, NULL,
                     recvcount, recvtype, comm, 1, request, "MPI_Alltoall_init");
}
HMPI_PMPI(Alltoall_init)

int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    (void)info;
    return a2a_start(A2AV, sendbuf, sendcounts, sdispls, NULL, 0, sendtype, recvbuf, recvcounts,
                     rdispls, NULL, 0, recvtype, comm, 1, request, "MPI_Alltoallv_init");
}
HMPI_PMPI(Alltoallv_init)

int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       MPI_Info info, MPI_Request *request)
{
    (void)info;
    return a2a_start(A2AW, sendbuf, sendcounts, sdispls, sendtypes, 0, MPI_DATATYPE_NULL, recvbuf,
                     recvcounts, rdispls, recvtypes, 0, MPI_DATATYPE_NULL, comm, 1, request,
                     "MPI_Alltoallw_init");
}
HMPI_PMPI(Alltoallw_init)
#endif
