/* gather_hier.c: MPI_Gather, MPI_Scatter and MPI_Allgather on communicators that span
 * nodes. Each node moves its members' blocks, packed, to or from its leader by direct
 * access; the leaders exchange whole nodes' worth with the MPI below (Gatherv, Scatterv,
 * Allgatherv over bytes, nodes listed in leader order: "node-major"); the members'
 * ranks need not be contiguous per node, pos_of[] says where each block sits. Buffers
 * the leader shares with its node are allocated in the shared heap for the call. */
#include "coll.h"
#include "../common/log.h"
#include "../heap/heap.h"

#include <limits.h>
#include <string.h>

/* A shared buffer of n bytes: the job stops when the heap has none (peers wait on us). */
static void *shared_buf(size_t n)
{
    void *p = hmpi_heap_shared_alloc(n ? n : 1);
    if (!p) {
        hmpi_log_error("collectives: no shared memory for %zu bytes; stopping", n);
        PMPI_Abort(hmpi_node.world, 1);
    }
    return p;
}

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
    void *node = leader ? shared_buf((size_t)t->ep.n * (size_t)block) : NULL;
    void *all = leader ? shared_buf((size_t)c->size * (size_t)block) : NULL;
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
    void *node = leader ? shared_buf((size_t)t->ep.n * (size_t)block) : NULL;
    void *all = leader && lroot >= 0 ? shared_buf((size_t)c->size * (size_t)block) : NULL;
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
    void *all = leader && lroot >= 0 ? shared_buf((size_t)c->size * (size_t)block) : NULL;
    void *node = leader ? shared_buf((size_t)t->ep.n * (size_t)block) : NULL;
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
