/* gather.c: MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v). On a node the data moves
 * once, straight between user buffers:
 *  - gather: small blocks through the senders' slots (senders do not wait); large ones
 *    written by the senders themselves into the root's recvbuf when it lies in the
 *    shared heap and is contiguous (in parallel), else read by the root from the
 *    senders' buffers (or their staged copies);
 *  - scatter: every member reads its block from the root's sendbuf (or from the
 *    root's slot or scratch, where the root staged it);
 *  - allgather: every member publishes its block and reads all the others.
 * On communicators that span nodes the non-v ones are hierarchical (gather_hier.c), in
 * their nonblocking and persistent forms too; the v variants pass to the MPI below. */
#include "coll.h"
#include "nbc.h"
#include "../core/check.h"
#include "../core/errors.h"
#include "../node/node.h"

#include <limits.h>

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
    return err ? err
               : hmpi_coll_unpack(block_buf(b, i), block_count(b, i), b->type, &l, src, bytes);
}

/* Publishes one block (buf, count, type) in h: in the slot when small, the buffer itself
 * when it is in the shared heap and contiguous (returns 1: the caller waits for its
 * readers), else a packed copy in the scratch. prefer_direct: the buffer itself even
 * when small (when the caller waits for everybody anyway). try: a nonblocking
 * collective's step, which cannot wait for the scratch: -1 while an older epoch's
 * readers still hold it (nothing is published). */
static int expose_one(hmpi_coll_team_t *t, uint64_t e, hmpi_coll_half_t *h, const void *buf,
                      int count, MPI_Datatype type, const hmpi_layout_t *l, int prefer_direct,
                      int try, int *err_p)
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
        at = try ? hmpi_coll_try_scratch(t, e, l->size) : hmpi_coll_scratch(t, e, l->size);
        if (!at)
            return -1;
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
        expose_one(t, e, hmpi_coll_claim(t, e), sendbuf, scount, stype, sl, 0, 0, &err);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return err;
    }
    hmpi_coll_wait(t, root, e, HMPI_COLL_ARRIVED);
    const hmpi_coll_half_t *hr = hmpi_coll_half(t, root, e);
    if (hr->table) { /* push: write into the root's recvbuf */
        hmpi_coll_blk_t b = ((const hmpi_coll_blk_t *)(uintptr_t)hr->table)[t->ep.me];
        err = b.bytes < sl->size
                  ? MPI_ERR_TRUNCATE
                  : hmpi_coll_pack((void *)(uintptr_t)b.addr, sendbuf, scount, stype, sl);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return err;
    }
    int direct = expose_one(t, e, hmpi_coll_claim(t, e), sendbuf, scount, stype, sl, 0, 0, &err);
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

/* The calls of the three families, blocking, nonblocking and persistent. */
typedef enum { NB_GATHER, NB_SCATTER, NB_ALLGATHER } nb_kind_t;

/* The checks every call of kind makes on an accelerated communicator c: the root (not in
 * an allgather), then each side where it is significant: the send side everywhere but at
 * a scatter's non-roots (a vector of counts in MPI_Scatterv), the receive side everywhere
 * but at a gather's non-roots (a vector in MPI_Gatherv and MPI_Allgatherv). Inline: the
 * entry points pass kind as a constant. */
static inline int check_sides(nb_kind_t kind, int v, const hmpi_comm_t *c, int root,
                              const void *sendbuf, int scount, MPI_Datatype stype,
                              const void *recvbuf, int rcount, MPI_Datatype rtype)
{
    int me_root = kind != NB_ALLGATHER && c->rank == root;
    int err = kind != NB_ALLGATHER ? hmpi_check_root(root, c->size) : MPI_SUCCESS;
    if (!err)
        err = check_side(kind != NB_SCATTER || me_root, kind == NB_SCATTER && v, sendbuf, scount,
                         stype, HMPI_SIDE_SEND);
    if (!err)
        err = check_side(kind != NB_GATHER || me_root, kind != NB_SCATTER && v, recvbuf, rcount,
                         rtype, HMPI_SIDE_RECV);
    return err;
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
        err = check_sides(NB_GATHER, v, c, root, sendbuf, scount, stype, recvbuf, rcount, rtype);
        if (err)
            return hmpi_raise_in(comm, err, fn);
    } else if (hmpi_check_comm_null(comm, fn)) {
        return MPI_ERR_COMM;
    }
    if (s && s->mode == HMPI_COLL_HIER) {
        if (!v && hmpi_coll_gather_hier(s, c, sendbuf, scount, stype, recvbuf, rcount, rtype, root,
                                        &err) == 0) {
            HMPI_COLL_COUNT(gather, 1);
            return hmpi_raise_in(comm, err, fn);
        }
        s = NULL;
    }
    if (v)
        HMPI_COLL_COUNT(gatherv, s != NULL);
    else
        HMPI_COLL_COUNT(gather, s != NULL);
    if (!s && v)
        HMPI_COLL_RETURN_BELOW(PMPI_Gatherv, PMPI_Igatherv, comm, sendbuf, scount, stype, recvbuf,
                               rcounts, displs, rtype, root, comm);
    if (!s)
        HMPI_COLL_RETURN_BELOW(PMPI_Gather, PMPI_Igather, comm, sendbuf, scount, stype, recvbuf,
                               rcount, rtype, root, comm);
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

/* The root's table of blocks in h: in its slot when they all fit there, else the
 * blocks of its sendbuf that lie in the heap by address and packed copies of the others
 * in its scratch. Returns 1 when peers read the sendbuf in place (the root waits for
 * them), 0 when they read copies; with try (a nonblocking step), -1 while an older
 * epoch's readers still hold the scratch (nothing is published). */
static int scatter_table(hmpi_coll_team_t *t, uint64_t e, hmpi_coll_half_t *h, const blocks_t *sb,
                         int try, int *err_p)
{
    int n = t->ep.n, me = t->ep.me, any_direct = 0;
    size_t total = 0, tb = sizeof(hmpi_coll_blk_t) * (size_t)n;
    for (int i = 0; i < n; i++) {
        hmpi_layout_t l;
        block_layout(sb, i, &l);
        if (i != me)
            total += l.size;
    }
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
        void *p = try ? hmpi_coll_try_scratch(t, e, need) : hmpi_coll_scratch(t, e, need);
        if (!p)
            return -1;
        sc = (hmpi_coll_area_t){p, need, 0};
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
            int err = hmpi_coll_pack(to, b, block_count(sb, i), sb->type, &l);
            *err_p = *err_p != MPI_SUCCESS ? *err_p : err;
            tab[i] = (hmpi_coll_blk_t){(uintptr_t)to, l.size};
            if (!all_inline)
                hmpi_stat_add(HMPI_STAT_coll_staged_bytes, l.size);
        }
    }
    h->table = (uintptr_t)tab;
    return any_direct;
}

/* The root's own block, from its sendbuf to its recvbuf (unless in place). */
static int scatter_own(const blocks_t *sb, int me, void *recvbuf, int rcount, MPI_Datatype rtype)
{
    if (recvbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    hmpi_layout_t sl, rl;
    int err = block_layout(sb, me, &sl);
    if (err == MPI_SUCCESS && (err = hmpi_layout_get(rtype, rcount, &rl)) == MPI_SUCCESS)
        err = hmpi_coll_move(recvbuf, rcount, rtype, &rl, block_buf(sb, me), block_count(sb, me),
                             sb->type, &sl);
    return err;
}

static int scatter_root(hmpi_coll_team_t *t, uint64_t e, const blocks_t *sb, void *recvbuf,
                        int rcount, MPI_Datatype rtype)
{
    int err = MPI_SUCCESS;
    int any_direct = scatter_table(t, e, hmpi_coll_claim(t, e), sb, 0, &err);
    hmpi_coll_publish(t, e, any_direct ? HMPI_COLL_ARRIVED : HMPI_COLL_DONE);
    int err2 = scatter_own(sb, t->ep.me, recvbuf, rcount, rtype);
    err = err != MPI_SUCCESS ? err : err2;
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
        err = check_sides(NB_SCATTER, v, c, root, sendbuf, scount, stype, recvbuf, rcount, rtype);
        if (err)
            return hmpi_raise_in(comm, err, fn);
    } else if (hmpi_check_comm_null(comm, fn)) {
        return MPI_ERR_COMM;
    }
    if (s && s->mode == HMPI_COLL_HIER) {
        if (!v && hmpi_coll_scatter_hier(s, c, sendbuf, scount, stype, recvbuf, rcount, rtype, root,
                                         &err) == 0) {
            HMPI_COLL_COUNT(scatter, 1);
            return hmpi_raise_in(comm, err, fn);
        }
        s = NULL;
    }
    if (v)
        HMPI_COLL_COUNT(scatterv, s != NULL);
    else
        HMPI_COLL_COUNT(scatter, s != NULL);
    if (!s && v)
        HMPI_COLL_RETURN_BELOW(PMPI_Scatterv, PMPI_Iscatterv, comm, sendbuf, scounts, displs, stype,
                               recvbuf, rcount, rtype, root, comm);
    if (!s)
        HMPI_COLL_RETURN_BELOW(PMPI_Scatter, PMPI_Iscatter, comm, sendbuf, scount, stype, recvbuf,
                               rcount, rtype, root, comm);
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
    int direct = expose_one(t, e, hmpi_coll_claim(t, e), mine, mcount, mtype, &ml,
                            !hmpi_node.crowded, 0, &err);
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
        err = check_sides(NB_ALLGATHER, v, c, 0, sendbuf, scount, stype, recvbuf, rcount, rtype);
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
    if (!s && v)
        HMPI_COLL_RETURN_BELOW(PMPI_Allgatherv, PMPI_Iallgatherv, comm, sendbuf, scount, stype,
                               recvbuf, rcounts, displs, rtype, comm);
    if (!s)
        HMPI_COLL_RETURN_BELOW(PMPI_Allgather, PMPI_Iallgather, comm, sendbuf, scount, stype,
                               recvbuf, rcount, rtype, comm);
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
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype,
                           comm, 1);
}
HMPI_PMPI(Allgatherv)

/* ---- nonblocking and persistent (nbc.h) --------------------------------------------------
 * The team phases of MPI_Igather(v), MPI_Iscatter(v), MPI_Iallgather(v) and their _init
 * forms: the blocking algorithms above, each wait a test that keeps its step. A gather's
 * root also publishes where its recvbuf's blocks lie in the heap, so that a sender that
 * comes after it writes its block there itself (a sender that came first is read by the
 * root): whoever arrives last moves the block. */

/* A sender's half.aux: it wrote its block into the root's recvbuf (nothing to read). */
enum { PUSHED = 1 };

static blocks_t op_blocks(const hmpi_coll_op_t *op, int send)
{
    if (send)
        return (blocks_t){(void *)op->sendbuf, op->scounts, op->sdispls,
                          op->scount,          op->stype,   op->sext};
    return (blocks_t){op->recvbuf, op->rcounts, op->rdispls, op->count, op->type, op->rext};
}

static int gather_sender(hmpi_coll_op_t *op, hmpi_coll_team_t *t, uint64_t e)
{
    int me = t->ep.me, root = op->root;
    if (op->step == 1) { /* the root reads our buffer in place */
        if (!hmpi_epoch_reached(&t->ep, root, e, HMPI_COLL_DONE))
            return 0;
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return 1;
    }
    hmpi_coll_half_t *h = hmpi_coll_try_claim(t, e);
    if (!h)
        return 0;
    if (hmpi_epoch_reached(&t->ep, root, e, HMPI_COLL_ARRIVED)) {
        const hmpi_coll_half_t *hr = hmpi_coll_half(t, root, e);
        hmpi_coll_blk_t b = {0, 0};
        if (hr->table)
            b = ((const hmpi_coll_blk_t *)(uintptr_t)hr->table)[me];
        if (b.addr) { /* the root came first: our block straight into its recvbuf */
            op->err = b.bytes < op->sl.size ? MPI_ERR_TRUNCATE
                                            : hmpi_coll_pack((void *)(uintptr_t)b.addr, op->sendbuf,
                                                             op->scount, op->stype, &op->sl);
            h->aux = PUSHED;
            hmpi_coll_publish(t, e, HMPI_COLL_DONE);
            return 1;
        }
    }
    int direct = expose_one(t, e, h, op->sendbuf, op->scount, op->stype, &op->sl, 0, 1, &op->err);
    if (direct < 0)
        return 0;
    hmpi_coll_publish(t, e, direct ? HMPI_COLL_ARRIVED : HMPI_COLL_DONE);
    op->step = direct;
    return !direct;
}

int hmpi_coll_phase_gather(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    uint64_t e = hmpi_coll_op_epoch(op);
    int n = t->ep.n, me = t->ep.me;
    if (me != op->root)
        return gather_sender(op, t, e);
    blocks_t rb = op_blocks(op, 0);
    if (op->step == 0) {
        hmpi_coll_half_t *h = hmpi_coll_try_claim(t, e);
        if (!h)
            return 0;
        int any = 0;
        for (int i = 0; i < n && !any; i++) {
            hmpi_layout_t l;
            any = i != me && block_layout(&rb, i, &l) == MPI_SUCCESS &&
                  hmpi_coll_direct(block_buf(&rb, i), &l);
        }
        h->table = 0;
        if (any) { /* where senders that come after us write their blocks */
            size_t tb = sizeof(hmpi_coll_blk_t) * (size_t)n;
            hmpi_coll_area_t a = {h->data, t->cap, 0};
            hmpi_coll_blk_t *tab = hmpi_coll_take(&a, tb, 0, 16);
            if (!tab && !(tab = hmpi_coll_try_scratch(t, e, tb)))
                return 0;
            for (int i = 0; i < n; i++) {
                hmpi_layout_t l;
                block_layout(&rb, i, &l);
                void *b = block_buf(&rb, i);
                tab[i] = (hmpi_coll_blk_t){
                    i != me && hmpi_coll_direct(b, &l) ? (uintptr_t)hmpi_coll_at(b, l.lo) : 0,
                    l.size};
            }
            h->table = (uintptr_t)tab;
        }
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        if (op->sendbuf != MPI_IN_PLACE) {
            hmpi_layout_t rl;
            if ((op->err = block_layout(&rb, me, &rl)) == MPI_SUCCESS)
                op->err = hmpi_coll_move(block_buf(&rb, me), block_count(&rb, me), rb.type, &rl,
                                         op->sendbuf, op->scount, op->stype, &op->sl);
        }
        op->step = 1;
        op->k = 1;
    }
    for (; op->k < n; op->k++) {
        int i = (me + op->k) % n;
        if (!hmpi_epoch_reached(&t->ep, i, e, HMPI_COLL_ARRIVED))
            return 0;
        const hmpi_coll_half_t *hi = hmpi_coll_half(t, i, e);
        if (hi->aux == PUSHED)
            continue;
        int err = block_put(&rb, i, (const void *)(uintptr_t)hi->addr, hi->bytes);
        hmpi_coll_op_note(op, err);
    }
    hmpi_coll_seen(t, e);
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return 1;
}

int hmpi_coll_phase_scatter(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    uint64_t e = hmpi_coll_op_epoch(op);
    int me = t->ep.me, root = op->root;
    if (me != root) {
        if (!hmpi_epoch_reached(&t->ep, root, e, HMPI_COLL_ARRIVED))
            return 0;
        hmpi_coll_blk_t b = hmpi_coll_blk(hmpi_coll_half(t, root, e), me);
        op->err = hmpi_coll_unpack(op->recvbuf, op->count, op->type, &op->l,
                                   (const void *)(uintptr_t)b.addr, b.bytes);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return 1;
    }
    blocks_t sb = op_blocks(op, 1);
    if (op->step == 0) {
        hmpi_coll_half_t *h = hmpi_coll_try_claim(t, e);
        if (!h)
            return 0;
        int any_direct = scatter_table(t, e, h, &sb, 1, &op->err);
        if (any_direct < 0)
            return 0;
        hmpi_coll_publish(t, e, any_direct ? HMPI_COLL_ARRIVED : HMPI_COLL_DONE);
        int err = scatter_own(&sb, me, op->recvbuf, op->count, op->type);
        hmpi_coll_op_note(op, err);
        if (!any_direct)
            return 1;
        op->step = 1; /* the members read our sendbuf in place */
    }
    if (!hmpi_coll_op_all(op, HMPI_COLL_DONE))
        return 0;
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return 1;
}

int hmpi_coll_phase_allgather(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    uint64_t e = hmpi_coll_op_epoch(op);
    int n = t->ep.n, me = t->ep.me, inplace = op->sendbuf == MPI_IN_PLACE;
    blocks_t rb = op_blocks(op, 0);
    switch (op->step) {
    case 0: {
        hmpi_coll_half_t *h = hmpi_coll_try_claim(t, e);
        if (!h)
            return 0;
        const void *mine = inplace ? block_buf(&rb, me) : op->sendbuf;
        int direct =
            expose_one(t, e, h, mine, inplace ? block_count(&rb, me) : op->scount,
                       inplace ? rb.type : op->stype, &op->sl, !hmpi_node.crowded, 1, &op->err);
        if (direct < 0)
            return 0;
        op->direct = direct;
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        op->step = 1;
        op->k = 1;
    } /* fall through */
    case 1:
        for (; op->k < n; op->k++) {
            int j = (me + op->k) % n;
            if (!hmpi_epoch_reached(&t->ep, j, e, HMPI_COLL_ARRIVED))
                return 0;
            const hmpi_coll_half_t *hj = hmpi_coll_half(t, j, e);
            int err = block_put(&rb, j, (const void *)(uintptr_t)hj->addr, hj->bytes);
            hmpi_coll_op_note(op, err);
        }
        hmpi_coll_seen(t, e);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        if (!inplace) { /* our own block after DONE: it touches no peer's memory */
            hmpi_layout_t rl;
            int err = block_layout(&rb, me, &rl);
            if (err == MPI_SUCCESS)
                err = hmpi_coll_move(block_buf(&rb, me), block_count(&rb, me), rb.type, &rl,
                                     op->sendbuf, op->scount, op->stype, &op->sl);
            hmpi_coll_op_note(op, err);
        }
        if (!op->direct)
            return 1;
        op->step = 2; /* the others read our block in place */
        /* fall through */
    default: return hmpi_coll_op_all(op, HMPI_COLL_DONE);
    }
}

/* The MPI below's calls, where the communicator turns out not accelerated at the end of
 * its setup (nbc.h). */
static int below_igather(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Igather(op->sendbuf, op->scount, op->stype, op->recvbuf, op->count, op->type,
                        op->croot, op->c->handle, req);
}
static int below_igatherv(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Igatherv(op->sendbuf, op->scount, op->stype, op->recvbuf, op->rcounts, op->rdispls,
                         op->type, op->croot, op->c->handle, req);
}
static int below_iscatter(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Iscatter(op->sendbuf, op->scount, op->stype, op->recvbuf, op->count, op->type,
                         op->croot, op->c->handle, req);
}
static int below_iscatterv(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Iscatterv(op->sendbuf, op->scounts, op->sdispls, op->stype, op->recvbuf, op->count,
                          op->type, op->croot, op->c->handle, req);
}
static int below_iallgather(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Iallgather(op->sendbuf, op->scount, op->stype, op->recvbuf, op->count, op->type,
                           op->c->handle, req);
}
static int below_iallgatherv(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Iallgatherv(op->sendbuf, op->scount, op->stype, op->recvbuf, op->rcounts,
                            op->rdispls, op->type, op->c->handle, req);
}

/* The whole call to the MPI below (comm not accelerated here, or a v form across nodes,
 * as the blocking forms decide; the same on every member). */
static int nb_below(nb_kind_t kind, int v, const void *sendbuf, const int *scounts,
                    const int *sdispls, int scount, MPI_Datatype stype, void *recvbuf,
                    const int *rcounts, const int *rdispls, int rcount, MPI_Datatype rtype,
                    int root, MPI_Comm comm, int persistent, MPI_Request *request)
{
#if HMPI_MPI4_CALLS
    if (persistent) {
        MPI_Info i = MPI_INFO_NULL;
        switch (kind) {
        case NB_GATHER:
            return v ? PMPI_Gatherv_init(sendbuf, scount, stype, recvbuf, rcounts, rdispls, rtype,
                                         root, comm, i, request)
                     : PMPI_Gather_init(sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm,
                                        i, request);
        case NB_SCATTER:
            return v ? PMPI_Scatterv_init(sendbuf, scounts, sdispls, stype, recvbuf, rcount, rtype,
                                          root, comm, i, request)
                     : PMPI_Scatter_init(sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm,
                                         i, request);
        default:
            return v ? PMPI_Allgatherv_init(sendbuf, scount, stype, recvbuf, rcounts, rdispls,
                                            rtype, comm, i, request)
                     : PMPI_Allgather_init(sendbuf, scount, stype, recvbuf, rcount, rtype, comm, i,
                                           request);
        }
    }
#else
    (void)persistent;
#endif
    switch (kind) {
    case NB_GATHER:
        return v ? PMPI_Igatherv(sendbuf, scount, stype, recvbuf, rcounts, rdispls, rtype, root,
                                 comm, request)
                 : PMPI_Igather(sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm,
                                request);
    case NB_SCATTER:
        return v ? PMPI_Iscatterv(sendbuf, scounts, sdispls, stype, recvbuf, rcount, rtype, root,
                                  comm, request)
                 : PMPI_Iscatter(sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm,
                                 request);
    default:
        return v ? PMPI_Iallgatherv(sendbuf, scount, stype, recvbuf, rcounts, rdispls, rtype, comm,
                                    request)
                 : PMPI_Iallgather(sendbuf, scount, stype, recvbuf, rcount, rtype, comm, request);
    }
}

/* The bytes of one member's block of a gather, scatter or allgather across nodes (the
 * same on every member: equal signatures), or -1 where they pass the MPI below's int
 * counts (the call goes there whole, as the blocking one does). */
static int hier_block(nb_kind_t kind, const hmpi_comm_t *c, int root, const void *sendbuf,
                      int scount, MPI_Datatype stype, const void *recvbuf, int rcount,
                      MPI_Datatype rtype)
{
    int own_recv = kind == NB_SCATTER ? !(c->rank == root && recvbuf == MPI_IN_PLACE)
                                      : sendbuf == MPI_IN_PLACE;
    hmpi_layout_t l;
    int err = own_recv ? hmpi_layout_get(rtype, rcount, &l) : hmpi_layout_get(stype, scount, &l);
    return err == MPI_SUCCESS && l.size <= (size_t)INT_MAX / (size_t)c->size ? (int)l.size : -1;
}

/* The checks and the operation of every nonblocking and persistent gather, scatter and
 * allgather: the team's program (across nodes the hierarchical one), or the MPI below's
 * call. */
static int nb_start(nb_kind_t kind, int v, const void *sendbuf, const int *scounts,
                    const int *sdispls, int scount, MPI_Datatype stype, void *recvbuf,
                    const int *rcounts, const int *rdispls, int rcount, MPI_Datatype rtype,
                    int root, MPI_Comm comm, int persistent, MPI_Request *request, const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = NULL;
    hmpi_coll_comm_t *s = hmpi_coll_get_nb(comm, &c);
    int err = MPI_SUCCESS, rooted = kind != NB_ALLGATHER, below = 0, block = -1;
    int me_root = s && rooted && c->rank == root;
    if (s) {
        /* the root and the sides as the blocking calls check them */
        err = check_sides(kind, v, c, root, sendbuf, scount, stype, recvbuf, rcount, rtype);
        if (!err && !request)
            err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
        /* the v forms' arrays where they are significant */
        if (!err && v && kind == NB_SCATTER && me_root && (!scounts || !sdispls))
            err = hmpi_err_what(MPI_ERR_ARG, "sendcounts or displs is NULL");
        if (!err && v && kind != NB_SCATTER && (kind == NB_ALLGATHER || me_root) &&
            (!rcounts || !rdispls))
            err = hmpi_err_what(MPI_ERR_ARG, "recvcounts or displs is NULL");
        if (err)
            return hmpi_raise_in(comm, err, fn);
        /* Across nodes hierarchical as the blocking calls are (gather_hier.c), or where
         * they go to the MPI below (the v forms, blocks beyond its int counts) its call; a
         * persistent one runs that at each start under a request of HMPI's
         * (hmpi_coll_phase_below_call). */
        if (s->mode == HMPI_COLL_HIER) {
            block =
                v ? -1 : hier_block(kind, c, root, sendbuf, scount, stype, recvbuf, rcount, rtype);
            below = block < 0;
        }
    }
    s = hmpi_coll_nb_route(s, below, persistent);
    if (!s) {
        if (hmpi_check_comm_null(comm, fn))
            return MPI_ERR_COMM;
        return nb_below(kind, v, sendbuf, scounts, sdispls, scount, stype, recvbuf, rcounts,
                        rdispls, rcount, rtype, root, comm, persistent, request);
    }
    static int (*const below_of[3][2])(hmpi_coll_op_t *,
                                       MPI_Request *) = {{below_igather, below_igatherv},
                                                         {below_iscatter, below_iscatterv},
                                                         {below_iallgather, below_iallgatherv}};
    hmpi_coll_phase_fn phase = below                ? hmpi_coll_phase_below_call
                               : kind == NB_GATHER  ? hmpi_coll_phase_gather
                               : kind == NB_SCATTER ? hmpi_coll_phase_scatter
                                                    : hmpi_coll_phase_allgather;
    hmpi_coll_op_t *op = hmpi_coll_op_new(s, c, block < 0, &phase);
    if (!op)
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    op->sendbuf = sendbuf;
    op->scounts = scounts;
    op->sdispls = sdispls;
    op->scount = scount;
    op->stype = stype;
    op->recvbuf = recvbuf;
    op->rcounts = rcounts;
    op->rdispls = rdispls;
    op->count = rcount;
    op->type = rtype;
    op->croot = root;
    op->root = hmpi_coll_op_member(s, c, root);
    op->persistent = (uint8_t)persistent;
    op->below_start = below_of[kind][v];
    /* Each side where this member reads it: the blocks (checked as the blocking calls
     * do), or one block's layout, and the types held. */
    int many_send = kind == NB_SCATTER && me_root,
        many_recv = kind != NB_SCATTER && (kind == NB_ALLGATHER || me_root);
    int send_used = many_send || (kind != NB_SCATTER && sendbuf != MPI_IN_PLACE);
    int recv_used = many_recv || (kind == NB_SCATTER && recvbuf != MPI_IN_PLACE);
    if (many_send) {
        blocks_t sb = op_blocks(op, 1);
        err = blocks_check(&sb, c->size);
        op->sext = sb.extent;
    } else if (send_used) {
        err = hmpi_layout_get(stype, scount, &op->sl);
    }
    if (!err && many_recv) {
        blocks_t rb = op_blocks(op, 0);
        err = blocks_check(&rb, c->size);
        op->rext = rb.extent;
        if (!err && kind == NB_ALLGATHER && sendbuf == MPI_IN_PLACE) /* our block is the input */
            err = block_layout(&rb, c->rank, &op->sl);
    } else if (!err && recv_used) {
        err = hmpi_layout_get(rtype, rcount, &op->l);
    }
    if (!err && send_used)
        err = hmpi_coll_op_hold(op, stype);
    if (!err && recv_used)
        err = hmpi_coll_op_hold(op, rtype);
    if (!err && block >= 0) {
        static int (*const hier_of[3])(hmpi_coll_op_t *, int) = {
            hmpi_coll_igather_hier, hmpi_coll_iscatter_hier, hmpi_coll_iallgather_hier};
        err = hier_of[kind](op, block);
    }
    return hmpi_coll_op_go(op, err, request, comm, fn);
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return nb_start(NB_GATHER, 0, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL,
                    recvcount, recvtype, root, comm, 0, request, "MPI_Igather");
}
HMPI_PMPI(Igather)

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    return nb_start(NB_GATHER, 1, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, recvcounts,
                    displs, 0, recvtype, root, comm, 0, request, "MPI_Igatherv");
}
HMPI_PMPI(Igatherv)

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    return nb_start(NB_SCATTER, 0, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL,
                    recvcount, recvtype, root, comm, 0, request, "MPI_Iscatter");
}
HMPI_PMPI(Iscatter)

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    return nb_start(NB_SCATTER, 1, sendbuf, sendcounts, displs, 0, sendtype, recvbuf, NULL, NULL,
                    recvcount, recvtype, root, comm, 0, request, "MPI_Iscatterv");
}
HMPI_PMPI(Iscatterv)

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return nb_start(NB_ALLGATHER, 0, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL,
                    recvcount, recvtype, 0, comm, 0, request, "MPI_Iallgather");
}
HMPI_PMPI(Iallgather)

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    return nb_start(NB_ALLGATHER, 1, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, recvcounts,
                    displs, 0, recvtype, 0, comm, 0, request, "MPI_Iallgatherv");
}
HMPI_PMPI(Iallgatherv)

#if HMPI_MPI4_CALLS
int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request *request)
{
    (void)info;
    return nb_start(NB_GATHER, 0, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL,
                    recvcount, recvtype, root, comm, 1, request, "MPI_Gather_init");
}
HMPI_PMPI(Gather_init)

int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return nb_start(NB_GATHER, 1, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, recvcounts,
                    displs, 0, recvtype, root, comm, 1, request, "MPI_Gatherv_init");
}
HMPI_PMPI(Gatherv_init)

int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    (void)info;
    return nb_start(NB_SCATTER, 0, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL,
                    recvcount, recvtype, root, comm, 1, request, "MPI_Scatter_init");
}
HMPI_PMPI(Scatter_init)

int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return nb_start(NB_SCATTER, 1, sendbuf, sendcounts, displs, 0, sendtype, recvbuf, NULL, NULL,
                    recvcount, recvtype, root, comm, 1, request, "MPI_Scatterv_init");
}
HMPI_PMPI(Scatterv_init)

int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    (void)info;
    return nb_start(NB_ALLGATHER, 0, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL,
                    recvcount, recvtype, 0, comm, 1, request, "MPI_Allgather_init");
}
HMPI_PMPI(Allgather_init)

int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return nb_start(NB_ALLGATHER, 1, sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, recvcounts,
                    displs, 0, recvtype, 0, comm, 1, request, "MPI_Allgatherv_init");
}
HMPI_PMPI(Allgatherv_init)
#endif
