/* alltoall.c: MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw. On a node every member
 * publishes where its n send blocks are (its sendbuf, when in the shared heap and
 * contiguous and, with more ranks than cores, not small; else packed copies in its
 * slot or scratch) and then reads the block meant
 * for it from every other member, straight into its recvbuf: one copy per byte, all
 * members in parallel, each starting with a different peer. In place, the send data
 * is in the recvbuf about to be overwritten, so it is always staged. Communicators
 * that span nodes pass to the MPI below. */
#include "coll.h"
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
 * user's buffer (the caller waits for them before returning). */
static int expose_blocks(hmpi_coll_team_t *t, uint64_t e, hmpi_coll_half_t *h, const side_t *sd,
                         int inplace, int *err_p)
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
        void *p = copy ? hmpi_coll_scratch_small(t, e, need) : hmpi_coll_scratch(t, e, need);
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
    int direct = expose_blocks(t, e, h, sd, inplace, &err);
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
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
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
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    HMPI_ENTER("MPI_Alltoallv");
    hmpi_coll_comm_t *s = get_flat(comm);
    HMPI_COLL_COUNT(alltoallv, s != NULL);
    if (!s && hmpi_check_comm_null(comm, "MPI_Alltoallv"))
        return MPI_ERR_COMM;
    if (!s)
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
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
        return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                              rdispls, recvtypes, comm);
    side_t sd = {(void *)sendbuf, sendcounts, sdispls, sendtypes, 0, 1, MPI_DATATYPE_NULL, 0};
    side_t rv = {recvbuf, recvcounts, rdispls, recvtypes, 0, 1, MPI_DATATYPE_NULL, 0};
    return hmpi_raise_in(comm, alltoall_team(&s->team, &sd, &rv, sendbuf == MPI_IN_PLACE),
                         "MPI_Alltoallw");
}
HMPI_PMPI(Alltoallw)
