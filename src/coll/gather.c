/* gather.c: MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v). On a node the data moves
 * once, straight between user buffers:
 *  - gather: small blocks through the senders' slots (senders do not wait); large ones
 *    written by the senders themselves into the root's recvbuf when it lies in the
 *    shared heap and is contiguous (in parallel), else read by the root from the
 *    senders' buffers (or their staged copies);
 *  - scatter: every member reads its block from the root's sendbuf (or from the
 *    root's slot or scratch, where the root staged it);
 *  - allgather: every member publishes its block and reads all the others.
 * On communicators that span nodes the non-v ones are hierarchical (gather_hier.c); the
 * v variants pass to the MPI below. */
#include "coll.h"
#include "../core/check.h"
#include "../core/errors.h"
#include "../node/node.h"

/* Block i of a v-collective's buffer: counts[i] (or count) elements at displs[i] (or
 * i * count) extents from buf. */
typedef struct {
    void *buf;
    const int *counts, *displs;
    int count;
    MPI_Datatype type;
    MPI_Aint extent;
} blocks_t;

static int block_count(const blocks_t *b, int i) { return b->counts ? b->counts[i] : b->count; }

static void *block_buf(const blocks_t *b, int i)
{
    MPI_Aint d = b->displs ? (MPI_Aint)b->displs[i] : (MPI_Aint)i * b->count;
    return hmpi_coll_at(b->buf, d * b->extent);
}

/* Checks every block's count and type; fills b->extent. */
static int blocks_check(blocks_t *b, int n)
{
    hmpi_layout_t one;
    int err = hmpi_layout_get(b->type, 1, &one);
    if (err != MPI_SUCCESS)
        return err;
    b->extent = one.extent;
    for (int i = 0; i < n; i++)
        if (block_count(b, i) < 0)
            return MPI_ERR_COUNT;
    return MPI_SUCCESS;
}

static int block_layout(const blocks_t *b, int i, hmpi_layout_t *l)
{
    return hmpi_layout_get(b->type, block_count(b, i), l);
}

/* Unpacks bytes into block i. */
static int block_put(const blocks_t *b, int i, const void *src, size_t bytes)
{
    hmpi_layout_t l;
    int err = block_layout(b, i, &l);
    return err ? err : hmpi_coll_unpack(block_buf(b, i), block_count(b, i), b->type, &l, src, bytes);
}

/* Publishes one block (buf, count, type) in h: in the slot when small, the buffer itself
 * when it is in the shared heap and contiguous (returns 1: the caller waits for its
 * readers), else a packed copy in the scratch. prefer_direct: the buffer itself even
 * when small (when the caller waits for everybody anyway). */
static int expose_one(hmpi_coll_team_t *t, uint64_t e, hmpi_coll_half_t *h, const void *buf,
                      int count, MPI_Datatype type, const hmpi_layout_t *l, int prefer_direct,
                      int *err_p)
{
    int direct = 0;
    void *at;
    if (prefer_direct && hmpi_coll_direct(buf, l)) {
        at = hmpi_coll_at(buf, l->lo);
        direct = 1;
    } else if (l->size <= t->cap) {
        at = h->data;
        *err_p = hmpi_coll_pack(at, buf, count, type, l);
    } else if (hmpi_coll_direct(buf, l)) {
        at = hmpi_coll_at(buf, l->lo);
        direct = 1;
    } else {
        at = hmpi_coll_scratch(t, e, l->size);
        *err_p = hmpi_coll_pack(at, buf, count, type, l);
        hmpi_stat_add(HMPI_STAT_coll_staged_bytes, l->size);
    }
    h->addr = (uintptr_t)at;
    h->bytes = l->size;
    h->table = 0;
    h->aux = 0;
    return direct;
}

/* ---- gather -------------------------------------------------------------------------- */

static int gather_send(hmpi_coll_team_t *t, uint64_t e, const void *sendbuf, int scount,
                       MPI_Datatype stype, const hmpi_layout_t *sl, int root)
{
    int err = MPI_SUCCESS;
    if (sl->size <= t->cap) { /* the root reads our slot; we go on */
        expose_one(t, e, hmpi_coll_claim(t, e), sendbuf, scount, stype, sl, 0, &err);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return err;
    }
    hmpi_coll_wait(t, root, e, HMPI_COLL_ARRIVED);
    const hmpi_coll_half_t *hr = hmpi_coll_half(t, root, e);
    if (hr->table) { /* push: write into the root's recvbuf */
        hmpi_coll_blk_t b = ((const hmpi_coll_blk_t *)(uintptr_t)hr->table)[t->ep.me];
        err = b.bytes < sl->size ? MPI_ERR_TRUNCATE
                                 : hmpi_coll_pack((void *)(uintptr_t)b.addr, sendbuf, scount, stype, sl);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return err;
    }
    int direct = expose_one(t, e, hmpi_coll_claim(t, e), sendbuf, scount, stype, sl, 0, &err);
    hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    if (direct)
        hmpi_coll_wait(t, root, e, HMPI_COLL_DONE);
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return err;
}

static int gather_root(hmpi_coll_team_t *t, uint64_t e, const void *sendbuf, int scount,
                       MPI_Datatype stype, const blocks_t *rb)
{
    int n = t->ep.n, me = t->ep.me, err = MPI_SUCCESS, large = 0, push = 1;
    for (int i = 0; i < n; i++) {
        hmpi_layout_t l;
        if (i == me || block_layout(rb, i, &l) != MPI_SUCCESS || l.size <= t->cap)
            continue;
        large = 1;
        push &= hmpi_coll_direct(block_buf(rb, i), &l);
    }
    push &= large;
    hmpi_coll_half_t *h = hmpi_coll_claim(t, e);
    if (large) {
        h->table = 0;
        if (push) {
            size_t tb = sizeof(hmpi_coll_blk_t) * (size_t)n;
            hmpi_coll_area_t a = {h->data, t->cap, 0};
            hmpi_coll_blk_t *tab = hmpi_coll_take(&a, tb, 0, 16);
            if (!tab)
                tab = hmpi_coll_scratch(t, e, tb);
            HMPI_ASSERT_INTERNAL(tab != NULL);
            for (int i = 0; i < n; i++) {
                hmpi_layout_t l;
                block_layout(rb, i, &l);
                tab[i] = (hmpi_coll_blk_t){(uintptr_t)hmpi_coll_at(block_buf(rb, i), l.lo), l.size};
            }
            h->table = (uintptr_t)tab;
        }
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    }
    if (sendbuf != MPI_IN_PLACE) {
        hmpi_layout_t sl, rl;
        if ((err = hmpi_layout_get(stype, scount, &sl)) == MPI_SUCCESS &&
            (err = block_layout(rb, me, &rl)) == MPI_SUCCESS)
            err = hmpi_coll_move(block_buf(rb, me), block_count(rb, me), rb->type, &rl, sendbuf,
                                 scount, stype, &sl);
    }
    for (int k = 1; k < n; k++) {
        int i = (me + k) % n;
        hmpi_layout_t l;
        block_layout(rb, i, &l);
        if (push && l.size > t->cap)
            continue;
        hmpi_coll_wait(t, i, e, HMPI_COLL_ARRIVED);
        const hmpi_coll_half_t *hi = hmpi_coll_half(t, i, e);
        int err2 = block_put(rb, i, (const void *)(uintptr_t)hi->addr, hi->bytes);
        err = err != MPI_SUCCESS ? err : err2;
    }
    if (push)
        hmpi_coll_wait_all(t, e, HMPI_COLL_DONE); /* the small ones are DONE already */
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return err;
}

static int gather_team(hmpi_coll_team_t *t, const void *sendbuf, int scount, MPI_Datatype stype,
                       blocks_t *rb, int root)
{
    HMPI_ASSERT_INTERNAL(root >= 0 && root < t->ep.n);
    int err;
    if (t->ep.me != root) {
        hmpi_layout_t sl;
        if ((err = hmpi_layout_get(stype, scount, &sl)) != MPI_SUCCESS)
            return err;
        return gather_send(t, hmpi_coll_begin(t), sendbuf, scount, stype, &sl, root);
    }
    if ((err = blocks_check(rb, t->ep.n)) != MPI_SUCCESS)
        return err;
    if (sendbuf != MPI_IN_PLACE && scount < 0)
        return MPI_ERR_COUNT;
    return gather_root(t, hmpi_coll_begin(t), sendbuf, scount, stype, rb);
}

/* One side of a gather or scatter at the entry: all of it, only its datatype in the
 * v forms (their counts are checked per block), nothing where it is not significant. */
static int check_side(int significant, int v, const void *buf, int count, MPI_Datatype type,
                      int side)
{
    if (!significant || buf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    if (v)
        return hmpi_check_type(type, side == HMPI_SIDE_SEND ? "sendtype" : "recvtype");
    return hmpi_check_buf(buf, count, type, side);
}

static int gather_entry(const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf,
                        const int *rcounts, const int *displs, int rcount, MPI_Datatype rtype,
                        int root, MPI_Comm comm, int v)
{
    const char *fn = v ? "MPI_Gatherv" : "MPI_Gather";
    HMPI_ENTER(fn);
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    int err;
    if (s) {
        err = hmpi_check_root(root, c->size);
        if (!err)
            err = check_side(1, 0, sendbuf, scount, stype, HMPI_SIDE_SEND);
        if (!err)
            err = check_side(c->rank == root, v, recvbuf, rcount, rtype, HMPI_SIDE_RECV);
        if (err)
            return hmpi_raise_in(comm, err, fn);
    } else if (hmpi_check_comm_null(comm, fn)) {
        return MPI_ERR_COMM;
    }
    if (s && s->mode == HMPI_COLL_HIER) {
        if (!v && hmpi_coll_gather_hier(s, c, sendbuf, scount, stype, recvbuf, rcount, rtype,
                                        root, &err) == 0) {
            HMPI_COLL_COUNT(gather, 1);
            return hmpi_raise_in(comm, err, fn);
        }
        s = NULL;
    }
    if (v)
        HMPI_COLL_COUNT(gatherv, s != NULL);
    else
        HMPI_COLL_COUNT(gather, s != NULL);
    if (!s)
        return v ? PMPI_Gatherv(sendbuf, scount, stype, recvbuf, rcounts, displs, rtype, root, comm)
                 : PMPI_Gather(sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm);
    blocks_t rb = {recvbuf, rcounts, displs, rcount, rtype, 0};
    return hmpi_raise_in(comm, gather_team(&s->team, sendbuf, scount, stype, &rb, root), fn);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather_entry(sendbuf, sendcount, sendtype, recvbuf, NULL, NULL, recvcount, recvtype,
                        root, comm, 0);
}
HMPI_PMPI(Gather)

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    return gather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype,
                        root, comm, 1);
}
HMPI_PMPI(Gatherv)

int hmpi_coll_team_gather_bytes(hmpi_coll_team_t *t, const void *sendbuf, int scount,
                                MPI_Datatype stype, void *buf, int bytes, int root)
{
    blocks_t rb = {buf, NULL, NULL, bytes, MPI_BYTE, 0};
    return gather_team(t, sendbuf, scount, stype, &rb, root);
}

/* ---- scatter ------------------------------------------------------------------------- */

static int scatter_root(hmpi_coll_team_t *t, uint64_t e, const blocks_t *sb, void *recvbuf,
                        int rcount, MPI_Datatype rtype)
{
    int n = t->ep.n, me = t->ep.me, err = MPI_SUCCESS, any_direct = 0;
    size_t total = 0, tb = sizeof(hmpi_coll_blk_t) * (size_t)n;
    for (int i = 0; i < n; i++) {
        hmpi_layout_t l;
        block_layout(sb, i, &l);
        if (i != me)
            total += l.size;
    }
    hmpi_coll_half_t *h = hmpi_coll_claim(t, e);
    hmpi_coll_area_t a = {h->data, t->cap, 0};
    int all_inline = tb + 16 + total <= t->cap;
    hmpi_coll_blk_t *tab = hmpi_coll_take(&a, tb, 0, 16);
    /* Staged blocks go after the table: in the slot when all fit, else in the scratch. */
    size_t staged = 0;
    for (int i = 0; i < n && !all_inline; i++) {
        hmpi_layout_t l;
        block_layout(sb, i, &l);
        if (i != me && !hmpi_coll_direct(block_buf(sb, i), &l))
            staged += l.size;
    }
    hmpi_coll_area_t sc = a;
    if (!all_inline && (staged > 0 || !tab)) {
        size_t need = staged + (tab ? 0 : tb) + 16;
        sc = (hmpi_coll_area_t){hmpi_coll_scratch(t, e, need), need, 0};
        if (!tab)
            tab = hmpi_coll_take(&sc, tb, 0, 16);
    }
    for (int i = 0; i < n; i++) {
        hmpi_layout_t l;
        block_layout(sb, i, &l);
        void *b = block_buf(sb, i);
        if (i == me) {
            tab[i] = (hmpi_coll_blk_t){0, 0};
        } else if (!all_inline && hmpi_coll_direct(b, &l)) {
            tab[i] = (hmpi_coll_blk_t){(uintptr_t)hmpi_coll_at(b, l.lo), l.size};
            any_direct = 1;
        } else {
            void *to = hmpi_coll_take(&sc, l.size, 0, 1);
            HMPI_ASSERT_INTERNAL(tab && to); /* sized above for the table and every block */
            int err2 = hmpi_coll_pack(to, b, block_count(sb, i), sb->type, &l);
            err = err != MPI_SUCCESS ? err : err2;
            tab[i] = (hmpi_coll_blk_t){(uintptr_t)to, l.size};
            if (!all_inline)
                hmpi_stat_add(HMPI_STAT_coll_staged_bytes, l.size);
        }
    }
    h->table = (uintptr_t)tab;
    hmpi_coll_publish(t, e, any_direct ? HMPI_COLL_ARRIVED : HMPI_COLL_DONE);
    if (recvbuf != MPI_IN_PLACE) {
        hmpi_layout_t sl, rl;
        int err2 = block_layout(sb, me, &sl);
        if (err2 == MPI_SUCCESS && (err2 = hmpi_layout_get(rtype, rcount, &rl)) == MPI_SUCCESS)
            err2 = hmpi_coll_move(recvbuf, rcount, rtype, &rl, block_buf(sb, me),
                                  block_count(sb, me), sb->type, &sl);
        err = err != MPI_SUCCESS ? err : err2;
    }
    if (any_direct) {
        hmpi_coll_wait_all(t, e, HMPI_COLL_DONE);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    }
    return err;
}

static int scatter_team(hmpi_coll_team_t *t, blocks_t *sb, void *recvbuf, int rcount,
                        MPI_Datatype rtype, int root)
{
    HMPI_ASSERT_INTERNAL(root >= 0 && root < t->ep.n);
    int err;
    if (t->ep.me == root) {
        if ((err = blocks_check(sb, t->ep.n)) != MPI_SUCCESS)
            return err;
        if (recvbuf != MPI_IN_PLACE && rcount < 0)
            return MPI_ERR_COUNT;
        return scatter_root(t, hmpi_coll_begin(t), sb, recvbuf, rcount, rtype);
    }
    hmpi_layout_t rl;
    if ((err = hmpi_layout_get(rtype, rcount, &rl)) != MPI_SUCCESS)
        return err;
    uint64_t e = hmpi_coll_begin(t);
    hmpi_coll_wait(t, root, e, HMPI_COLL_ARRIVED);
    hmpi_coll_blk_t b = hmpi_coll_blk(hmpi_coll_half(t, root, e), t->ep.me);
    err = hmpi_coll_unpack(recvbuf, rcount, rtype, &rl, (const void *)(uintptr_t)b.addr, b.bytes);
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return err;
}

static int scatter_entry(const void *sendbuf, const int *scounts, const int *displs, int scount,
                         MPI_Datatype stype, void *recvbuf, int rcount, MPI_Datatype rtype,
                         int root, MPI_Comm comm, int v)
{
    const char *fn = v ? "MPI_Scatterv" : "MPI_Scatter";
    HMPI_ENTER(fn);
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    int err;
    if (s) {
        err = hmpi_check_root(root, c->size);
        if (!err)
            err = check_side(c->rank == root, v, sendbuf, scount, stype, HMPI_SIDE_SEND);
        if (!err)
            err = check_side(1, 0, recvbuf, rcount, rtype, HMPI_SIDE_RECV);
        if (err)
            return hmpi_raise_in(comm, err, fn);
    } else if (hmpi_check_comm_null(comm, fn)) {
        return MPI_ERR_COMM;
    }
    if (s && s->mode == HMPI_COLL_HIER) {
        if (!v && hmpi_coll_scatter_hier(s, c, sendbuf, scount, stype, recvbuf, rcount, rtype,
                                         root, &err) == 0) {
            HMPI_COLL_COUNT(scatter, 1);
            return hmpi_raise_in(comm, err, fn);
        }
        s = NULL;
    }
    if (v)
        HMPI_COLL_COUNT(scatterv, s != NULL);
    else
        HMPI_COLL_COUNT(scatter, s != NULL);
    if (!s)
        return v ? PMPI_Scatterv(sendbuf, scounts, displs, stype, recvbuf, rcount, rtype, root, comm)
                 : PMPI_Scatter(sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm);
    blocks_t sb = {(void *)sendbuf, scounts, displs, scount, stype, 0};
    return hmpi_raise_in(comm, scatter_team(&s->team, &sb, recvbuf, rcount, rtype, root), fn);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatter_entry(sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         root, comm, 0);
}
HMPI_PMPI(Scatter)

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    return scatter_entry(sendbuf, sendcounts, displs, 0, sendtype, recvbuf, recvcount, recvtype,
                         root, comm, 1);
}
HMPI_PMPI(Scatterv)

/* ---- allgather ----------------------------------------------------------------------- */

static int allgather_team(hmpi_coll_team_t *t, const void *sendbuf, int scount, MPI_Datatype stype,
                          blocks_t *rb)
{
    int n = t->ep.n, me = t->ep.me, err;
    if ((err = blocks_check(rb, n)) != MPI_SUCCESS)
        return err;
    int inplace = sendbuf == MPI_IN_PLACE;
    const void *mine = inplace ? block_buf(rb, me) : sendbuf;
    int mcount = inplace ? block_count(rb, me) : scount;
    MPI_Datatype mtype = inplace ? rb->type : stype;
    hmpi_layout_t ml;
    if ((err = hmpi_layout_get(mtype, mcount, &ml)) != MPI_SUCCESS)
        return err;
    uint64_t e = hmpi_coll_begin(t);
    /* everybody waits for everybody's block anyway: read it where it lies; but with
     * more ranks than cores a block that fits the slot is copied there, so that we need
     * not wait for the readers at the end (that wait costs time slices) */
    int direct =
        expose_one(t, e, hmpi_coll_claim(t, e), mine, mcount, mtype, &ml, !hmpi_node.crowded, &err);
    hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    for (int k = 1; k < n; k++) {
        int j = (me + k) % n;
        hmpi_coll_wait(t, j, e, HMPI_COLL_ARRIVED);
        const hmpi_coll_half_t *hj = hmpi_coll_half(t, j, e);
        int err2 = block_put(rb, j, (const void *)(uintptr_t)hj->addr, hj->bytes);
        err = err != MPI_SUCCESS ? err : err2;
    }
    hmpi_coll_seen(t, e);
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    /* our own block after DONE: it touches no peer's memory */
    if (!inplace) {
        hmpi_layout_t rl;
        int err2 = block_layout(rb, me, &rl);
        if (err2 == MPI_SUCCESS)
            err2 = hmpi_coll_move(block_buf(rb, me), block_count(rb, me), rb->type, &rl, sendbuf,
                                  scount, stype, &ml);
        err = err != MPI_SUCCESS ? err : err2;
    }
    if (direct)
        hmpi_coll_wait_all(t, e, HMPI_COLL_DONE);
    return err;
}

static int allgather_entry(const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf,
                           const int *rcounts, const int *displs, int rcount, MPI_Datatype rtype,
                           MPI_Comm comm, int v)
{
    const char *fn = v ? "MPI_Allgatherv" : "MPI_Allgather";
    HMPI_ENTER(fn);
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    int err;
    if (s) {
        err = check_side(1, 0, sendbuf, scount, stype, HMPI_SIDE_SEND);
        if (!err)
            err = check_side(1, v, recvbuf, rcount, rtype, HMPI_SIDE_RECV);
        if (err)
            return hmpi_raise_in(comm, err, fn);
    } else if (hmpi_check_comm_null(comm, fn)) {
        return MPI_ERR_COMM;
    }
    if (s && s->mode == HMPI_COLL_HIER) {
        if (!v && hmpi_coll_allgather_hier(s, c, sendbuf, scount, stype, recvbuf, rcount, rtype,
                                           &err) == 0) {
            HMPI_COLL_COUNT(allgather, 1);
            return hmpi_raise_in(comm, err, fn);
        }
        s = NULL;
    }
    if (v)
        HMPI_COLL_COUNT(allgatherv, s != NULL);
    else
        HMPI_COLL_COUNT(allgather, s != NULL);
    if (!s)
        return v ? PMPI_Allgatherv(sendbuf, scount, stype, recvbuf, rcounts, displs, rtype, comm)
                 : PMPI_Allgather(sendbuf, scount, stype, recvbuf, rcount, rtype, comm);
    blocks_t rb = {recvbuf, rcounts, displs, rcount, rtype, 0};
    return hmpi_raise_in(comm, allgather_team(&s->team, sendbuf, scount, stype, &rb), fn);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather_entry(sendbuf, sendcount, sendtype, recvbuf, NULL, NULL, recvcount, recvtype,
                           comm, 0);
}
HMPI_PMPI(Allgather)

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    return allgather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0,
                           recvtype, comm, 1);
}
HMPI_PMPI(Allgatherv)
