/* gather_hier.c: MPI_Gather, MPI_Scatter and MPI_Allgather on communicators that span
 * nodes, blocking, nonblocking and persistent. Each node moves its members' blocks,
 * packed, to or from its leader by direct access; the leaders exchange whole nodes' worth
 * with the MPI below (Gatherv, Scatterv, Allgatherv over bytes, nodes listed in leader
 * order: "node-major"); the members' ranks need not be contiguous per node, pos_of[] says
 * where each block sits. Buffers the leader shares with its node are allocated in the
 * shared heap for the call (for a nonblocking or persistent one, with its operation). */
#include "coll.h"
#include "nbc.h"
#include "../heap/heap.h"

#include <limits.h>
#include <string.h>

/* Leaders' byte counts and displacements for node-major buffers of `block` bytes per
 * member. NULL on a non-leader. */
static int *leader_counts(hmpi_coll_comm_t *s, int block)
{
    if (s->team.ep.me != 0)
        return NULL;
    int *cd = hmpi_coll_alloc(sizeof(int) * 2 * (size_t)s->nleaders);
    for (int l = 0; l < s->nleaders; l++) {
        cd[l] = s->node_count[l] * block;
        cd[s->nleaders + l] = s->node_first[l] * block;
    }
    return cd;
}

/* One epoch: member 0 publishes buf; every member in want (or all when want < 0) runs
 * take(buf) on it; member 0 waits for them. */
static int from_leader(hmpi_coll_team_t *t, const void *buf, int want,
                       int (*take)(const void *buf, void *arg), void *arg)
{
    HMPI_ASSERT_INTERNAL(want >= -1 && want < t->ep.n);
    int err = MPI_SUCCESS;
    uint64_t e = hmpi_coll_begin(t);
    if (t->ep.me == 0) {
        hmpi_coll_half_t *h = hmpi_coll_claim(t, e);
        h->addr = (uintptr_t)buf;
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        if (want < 0 || want == 0)
            err = take(buf, arg);
        if (want > 0)
            hmpi_coll_wait(t, want, e, HMPI_COLL_DONE);
        else if (want < 0)
            hmpi_coll_wait_all(t, e, HMPI_COLL_DONE);
    } else if (want < 0 || want == t->ep.me) {
        hmpi_coll_wait(t, 0, e, HMPI_COLL_ARRIVED);
        err = take((const void *)(uintptr_t)hmpi_coll_half(t, 0, e)->addr, arg);
    }
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return err;
}

/* Unpacks the node-major blocks of buf into recvbuf in rank order (all of them, or
 * only block `only`). */
typedef struct {
    hmpi_coll_comm_t *s;
    void *recvbuf;
    int rcount, block, only, size;
    MPI_Datatype rtype;
    MPI_Aint rext;
    const hmpi_layout_t *rl;
} unpack_arg_t;

static int unpack_blocks(const void *buf, void *arg)
{
    unpack_arg_t *u = arg;
    int err = MPI_SUCCESS;
    for (int r = 0; r < u->size && err == MPI_SUCCESS; r++) {
        if (u->only >= 0 && r != u->only)
            continue;
        const unsigned char *src =
            (const unsigned char *)buf + (size_t)u->s->pos_of[r] * (size_t)u->block;
        void *dst = hmpi_coll_at(u->recvbuf, (MPI_Aint)r * u->rcount * u->rext);
        err = hmpi_coll_unpack(dst, u->rcount, u->rtype, u->rl, src, (size_t)u->block);
    }
    return err;
}

/* Checks common to the three: the block fits the MPI below's int counts. */
static int block_ok(hmpi_comm_t *c, size_t block)
{
    return block <= (size_t)INT_MAX / (size_t)c->size;
}

int hmpi_coll_allgather_hier(hmpi_coll_comm_t *s, hmpi_comm_t *c, const void *sendbuf, int scount,
                             MPI_Datatype stype, void *recvbuf, int rcount, MPI_Datatype rtype,
                             int *err_p)
{
    hmpi_coll_team_t *t = &s->team;
    hmpi_layout_t rl, one;
    if (rcount < 0 || hmpi_layout_get(rtype, rcount, &rl) != MPI_SUCCESS ||
        hmpi_layout_get(rtype, 1, &one) != MPI_SUCCESS || !block_ok(c, rl.size))
        return 1; /* the MPI below reports what is wrong */
    int block = (int)rl.size, leader = t->ep.me == 0, err;
    if (sendbuf == MPI_IN_PLACE) {
        sendbuf = hmpi_coll_at(recvbuf, (MPI_Aint)c->rank * rcount * one.extent);
        scount = rcount;
        stype = rtype;
    }
    void *node = leader ? hmpi_coll_shared_alloc((size_t)t->ep.n * (size_t)block) : NULL;
    void *all = leader ? hmpi_coll_shared_alloc((size_t)c->size * (size_t)block) : NULL;
    err = hmpi_coll_team_gather_bytes(t, sendbuf, scount, stype, node, block, 0);
    if (leader) {
        int *cd = leader_counts(s, block);
        int err2 = PMPI_Allgatherv(node, t->ep.n * block, MPI_BYTE, all, cd, cd + s->nleaders,
                                   MPI_BYTE, s->leaders);
        err = err != MPI_SUCCESS ? err : err2;
        hmpi_heap_free(cd);
    }
    unpack_arg_t u = {s, recvbuf, rcount, block, -1, c->size, rtype, one.extent, &rl};
    int err2 = from_leader(t, all, -1, unpack_blocks, &u);
    hmpi_heap_free(node);
    hmpi_heap_free(all);
    *err_p = err != MPI_SUCCESS ? err : err2;
    return 0;
}

int hmpi_coll_gather_hier(hmpi_coll_comm_t *s, hmpi_comm_t *c, const void *sendbuf, int scount,
                          MPI_Datatype stype, void *recvbuf, int rcount, MPI_Datatype rtype,
                          int root, int *err_p)
{
    hmpi_coll_team_t *t = &s->team;
    if (root < 0 || root >= c->size)
        return 1;
    /* Every member knows the block from its own arguments (equal signatures). */
    hmpi_layout_t rl = {0}, one = {0}, sl;
    int me_root = c->rank == root;
    if (me_root && (rcount < 0 || hmpi_layout_get(rtype, rcount, &rl) != MPI_SUCCESS ||
                    hmpi_layout_get(rtype, 1, &one) != MPI_SUCCESS))
        return 1;
    if (me_root && sendbuf == MPI_IN_PLACE) {
        sendbuf = hmpi_coll_at(recvbuf, (MPI_Aint)root * rcount * one.extent);
        scount = rcount;
        stype = rtype;
    }
    if (scount < 0 || hmpi_layout_get(stype, scount, &sl) != MPI_SUCCESS || !block_ok(c, sl.size))
        return 1;
    int block = (int)sl.size, leader = t->ep.me == 0, err;
    int lroot = c->local_of[root] >= 0 ? hmpi_coll_member(t, root) : -1;
    void *node = leader ? hmpi_coll_shared_alloc((size_t)t->ep.n * (size_t)block) : NULL;
    void *all =
        leader && lroot >= 0 ? hmpi_coll_shared_alloc((size_t)c->size * (size_t)block) : NULL;
    err = hmpi_coll_team_gather_bytes(t, sendbuf, scount, stype, node, block, 0);
    if (leader) {
        int *cd = leader_counts(s, block);
        int err2 = PMPI_Gatherv(node, t->ep.n * block, MPI_BYTE, all, cd, cd + s->nleaders,
                                MPI_BYTE, s->leader_of[root], s->leaders);
        err = err != MPI_SUCCESS ? err : err2;
        hmpi_heap_free(cd);
    }
    if (lroot >= 0) { /* the root takes the blocks from its leader */
        unpack_arg_t u = {s, recvbuf, rcount, block, -1, c->size, rtype, one.extent, &rl};
        int err2 = from_leader(t, all, lroot, unpack_blocks, &u);
        err = err != MPI_SUCCESS ? err : err2;
    }
    hmpi_heap_free(node);
    hmpi_heap_free(all);
    *err_p = err;
    return 0;
}

/* Scatter: the root packs its blocks node-major into the leader's buffer. */
typedef struct {
    hmpi_coll_comm_t *s;
    const void *sendbuf;
    int scount, block, size;
    MPI_Datatype stype;
    MPI_Aint sext;
    const hmpi_layout_t *sl;
} pack_arg_t;

static int pack_blocks(const void *buf, void *arg)
{
    pack_arg_t *p = arg;
    int err = MPI_SUCCESS;
    for (int r = 0; r < p->size && err == MPI_SUCCESS; r++) {
        unsigned char *dst =
            (unsigned char *)(uintptr_t)buf + (size_t)p->s->pos_of[r] * (size_t)p->block;
        err = hmpi_coll_pack(dst, hmpi_coll_at(p->sendbuf, (MPI_Aint)r * p->scount * p->sext),
                             p->scount, p->stype, p->sl);
    }
    return err;
}

/* A member takes its block (member index `me`) from the leader's node buffer. */
typedef struct {
    void *recvbuf;
    int rcount, block, me;
    MPI_Datatype rtype;
    const hmpi_layout_t *rl;
} take_arg_t;

static int take_block(const void *buf, void *arg)
{
    take_arg_t *a = arg;
    if (a->recvbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    return hmpi_coll_unpack(a->recvbuf, a->rcount, a->rtype, a->rl,
                            (const unsigned char *)buf + (size_t)a->me * (size_t)a->block,
                            (size_t)a->block);
}

int hmpi_coll_scatter_hier(hmpi_coll_comm_t *s, hmpi_comm_t *c, const void *sendbuf, int scount,
                           MPI_Datatype stype, void *recvbuf, int rcount, MPI_Datatype rtype,
                           int root, int *err_p)
{
    hmpi_coll_team_t *t = &s->team;
    if (root < 0 || root >= c->size)
        return 1;
    hmpi_layout_t sl = {0}, one = {0}, rl = {0};
    int me_root = c->rank == root;
    if (me_root && (scount < 0 || hmpi_layout_get(stype, scount, &sl) != MPI_SUCCESS ||
                    hmpi_layout_get(stype, 1, &one) != MPI_SUCCESS))
        return 1;
    if (me_root && recvbuf == MPI_IN_PLACE) {
        rl = sl;
    } else if (rcount < 0 || hmpi_layout_get(rtype, rcount, &rl) != MPI_SUCCESS) {
        return 1;
    }
    if (!block_ok(c, rl.size))
        return 1;
    int block = (int)rl.size, leader = t->ep.me == 0, err = MPI_SUCCESS;
    int lroot = c->local_of[root] >= 0 ? hmpi_coll_member(t, root) : -1;
    void *all =
        leader && lroot >= 0 ? hmpi_coll_shared_alloc((size_t)c->size * (size_t)block) : NULL;
    void *node = leader ? hmpi_coll_shared_alloc((size_t)t->ep.n * (size_t)block) : NULL;
    if (lroot >= 0) { /* the root packs everything into its leader's buffer */
        pack_arg_t p = {s, sendbuf, scount, block, c->size, stype, one.extent, &sl};
        err = from_leader(t, all, lroot, pack_blocks, &p);
    }
    if (leader) {
        int *cd = leader_counts(s, block);
        int err2 = PMPI_Scatterv(all, cd, cd + s->nleaders, MPI_BYTE, node, t->ep.n * block,
                                 MPI_BYTE, s->leader_of[root], s->leaders);
        err = err != MPI_SUCCESS ? err : err2;
        hmpi_heap_free(cd);
    }
    take_arg_t a = {recvbuf, rcount, block, t->ep.me, rtype, &rl};
    int err2 = from_leader(t, node, -1, take_block, &a);
    hmpi_heap_free(node);
    hmpi_heap_free(all);
    *err_p = err != MPI_SUCCESS ? err : err2;
    return 0;
}

/* ---- nonblocking and persistent (nbc.h) ---------------------------------------------------
 * The same three programs, a phase each for an epoch of the node's team (from_leader's
 * without its waits) and for the leaders' nonblocking call of the MPI below:
 *  - allgather: every member packs its block into its leader's buffer; the leaders'
 *    Iallgatherv; every member unpacks all blocks;
 *  - gather: the same, the last epoch only on the root's node, for the root;
 *  - scatter: on the root's node the root packs every block into its leader's buffer;
 *    the leaders' Iscatterv; every member unpacks its block.
 * The shared buffers and the leaders' counts are made once, at the start call (a
 * persistent operation keeps them for all its starts). */

/* What members take from their leader's buffers. */
static int take_pack_own(hmpi_coll_op_t *op, const void *buf)
{
    unsigned char *dst =
        (unsigned char *)(uintptr_t)buf + (size_t)op->s->team.ep.me * (size_t)op->block;
    return hmpi_coll_pack(dst, op->in, op->scount, op->stype, &op->sl);
}

static int take_unpack_all(hmpi_coll_op_t *op, const void *buf)
{
    unpack_arg_t u = {op->s,       op->recvbuf, op->count, op->block, -1,
                      op->c->size, op->type,    op->rext,  &op->l};
    return unpack_blocks(buf, &u);
}

static int take_pack_all(hmpi_coll_op_t *op, const void *buf)
{
    pack_arg_t p = {op->s,       op->sendbuf, op->scount, op->block,
                    op->c->size, op->stype,   op->sext,   &op->sl};
    return pack_blocks(buf, &p);
}

static int take_my_block(hmpi_coll_op_t *op, const void *buf)
{
    take_arg_t a = {op->recvbuf, op->count, op->block, op->s->team.ep.me, op->type, &op->l};
    return take_block(buf, &a);
}

/* The phases: own[0] is the leader's node buffer (its members' blocks in member order),
 * own[1] its buffer of every block (node-major). */
static int ph_pack_own(hmpi_coll_op_t *op)
{
    return hmpi_coll_phase_from_leader(op, op->own[0], -1, take_pack_own);
}
static int ph_unpack_all(hmpi_coll_op_t *op)
{
    return hmpi_coll_phase_from_leader(op, op->own[1], -1, take_unpack_all);
}
static int ph_root_unpacks(hmpi_coll_op_t *op)
{
    return hmpi_coll_phase_from_leader(op, op->own[1], op->root, take_unpack_all);
}
static int ph_root_packs(hmpi_coll_op_t *op)
{
    return hmpi_coll_phase_from_leader(op, op->own[1], op->root, take_pack_all);
}
static int ph_take_mine(hmpi_coll_op_t *op)
{
    return hmpi_coll_phase_from_leader(op, op->own[0], -1, take_my_block);
}

static int leaders_iallgatherv(hmpi_coll_op_t *op)
{
    hmpi_coll_comm_t *s = op->s;
    return PMPI_Iallgatherv(op->own[0], s->team.ep.n * op->block, MPI_BYTE, op->own[1], op->cd,
                            op->cd + s->nleaders, MPI_BYTE, s->leaders, &op->below);
}
static int leaders_igatherv(hmpi_coll_op_t *op)
{
    hmpi_coll_comm_t *s = op->s;
    return PMPI_Igatherv(op->own[0], s->team.ep.n * op->block, MPI_BYTE, op->own[1], op->cd,
                         op->cd + s->nleaders, MPI_BYTE, s->leader_of[op->croot], s->leaders,
                         &op->below);
}
static int leaders_iscatterv(hmpi_coll_op_t *op)
{
    hmpi_coll_comm_t *s = op->s;
    return PMPI_Iscatterv(op->own[1], op->cd, op->cd + s->nleaders, MPI_BYTE, op->own[0],
                          s->team.ep.n * op->block, MPI_BYTE, s->leader_of[op->croot], s->leaders,
                          &op->below);
}
static int ph_leaders_allgather(hmpi_coll_op_t *op)
{
    return hmpi_coll_phase_below(op, leaders_iallgatherv);
}
static int ph_leaders_gather(hmpi_coll_op_t *op)
{
    return hmpi_coll_phase_below(op, leaders_igatherv);
}
static int ph_leaders_scatter(hmpi_coll_op_t *op)
{
    return hmpi_coll_phase_below(op, leaders_iscatterv);
}

/* The program's buffers and counts (on the leader: with all, its buffer of every block),
 * and its phases. */
static void hier_op(hmpi_coll_op_t *op, int block, int all, int n, const hmpi_coll_phase_fn *ph)
{
    hmpi_coll_comm_t *s = op->s;
    hmpi_coll_team_t *t = &s->team;
    HMPI_ASSERT_INTERNAL(op->nphases + n <= HMPI_COLL_PHASES && block_ok(op->c, (size_t)block));
    op->block = block;
    if (t->ep.me == 0) {
        op->own[0] = hmpi_coll_shared_alloc((size_t)t->ep.n * (size_t)block);
        if (all)
            op->own[1] = hmpi_coll_shared_alloc((size_t)op->c->size * (size_t)block);
        op->cd = leader_counts(s, block);
    }
    for (int i = 0; i < n; i++)
        op->phase_fn[op->nphases++] = ph[i];
}

/* A gather's or allgather's input: sendbuf, or with MPI_IN_PLACE this rank's block of
 * recvbuf (op->scount, op->stype and op->sl then say that block). */
static int hier_input(hmpi_coll_op_t *op)
{
    op->in = op->sendbuf;
    if (op->sendbuf != MPI_IN_PLACE)
        return MPI_SUCCESS;
    op->in = hmpi_coll_at(op->recvbuf, (MPI_Aint)op->c->rank * op->count * op->rext);
    op->scount = op->count;
    op->stype = op->type;
    return hmpi_layout_get(op->type, op->count, &op->sl);
}

int hmpi_coll_iallgather_hier(hmpi_coll_op_t *op, int block)
{
    int err = hier_input(op);
    if (err == MPI_SUCCESS)
        err = hmpi_layout_get(op->type, op->count, &op->l);
    if (err != MPI_SUCCESS)
        return err;
    static const hmpi_coll_phase_fn ph[] = {ph_pack_own, ph_leaders_allgather, ph_unpack_all};
    hier_op(op, block, 1, 3, ph);
    return MPI_SUCCESS;
}

int hmpi_coll_igather_hier(hmpi_coll_op_t *op, int block)
{
    int here = op->root >= 0; /* the root is on this node */
    int err = hier_input(op);
    if (err == MPI_SUCCESS && op->c->rank == op->croot)
        err = hmpi_layout_get(op->type, op->count, &op->l);
    if (err != MPI_SUCCESS)
        return err;
    static const hmpi_coll_phase_fn ph[] = {ph_pack_own, ph_leaders_gather, ph_root_unpacks};
    hier_op(op, block, here, here ? 3 : 2, ph);
    return MPI_SUCCESS;
}

int hmpi_coll_iscatter_hier(hmpi_coll_op_t *op, int block)
{
    int here = op->root >= 0, err = MPI_SUCCESS;
    if (op->c->rank == op->croot)
        err = hmpi_layout_get(op->stype, op->scount, &op->sl);
    if (err != MPI_SUCCESS)
        return err;
    static const hmpi_coll_phase_fn root_node[] = {ph_root_packs, ph_leaders_scatter, ph_take_mine};
    static const hmpi_coll_phase_fn other_node[] = {ph_leaders_scatter, ph_take_mine};
    if (here)
        hier_op(op, block, 1, 3, root_node);
    else
        hier_op(op, block, 0, 2, other_node);
    return MPI_SUCCESS;
}
