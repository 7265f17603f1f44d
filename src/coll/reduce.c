/* reduce.c: MPI_Reduce and MPI_Allreduce. On a node, small vectors are copied into the
 * members' slots and combined by whoever needs the result (one synchronisation, no
 * wait at the end); large ones are split into slices that all members reduce in
 * parallel, reading every input where it lies (or a staged copy when it is not in the
 * shared heap) and writing the root's buffer, or every member's own buffer for
 * allreduce. Inputs are folded in rank order, so non-commutative ops are right and
 * every member of an allreduce gets the same bits. Across nodes (commutative ops):
 * node, leaders with the MPI below, node. */
#include "coll.h"
#include "nbc.h"
#include "../core/check.h"
#include "../common/knobs.h"
#include "../core/errors.h"

#include <stdlib.h>
#include <string.h>

/* Slice of member i: elements [*first, *first + *m) of count. Slices start on cache
 * lines for small element types. */
void hmpi_coll_slice(int count, int n, int i, MPI_Aint extent, MPI_Aint *first_p, int *m_p)
{
    HMPI_ASSERT_INTERNAL(count >= 0 && i >= 0 && i < n);
    long gran = extent > 0 && extent < 64 ? 64 / (long)extent : 1;
    long per = ((long)count + n - 1) / n;
    per = (per + gran - 1) / gran * gran;
    long lo = per * i < count ? per * i : count;
    long hi = lo + per < count ? lo + per : count;
    *first_p = (MPI_Aint)lo;
    *m_p = (int)(hi - lo);
}

void *hmpi_coll_stage_span(hmpi_coll_area_t *a, const void *in, const hmpi_layout_t *l,
                           size_t align)
{
    const void *from = hmpi_coll_at(in, l->lo);
    void *to = hmpi_coll_take(a, l->span, (uintptr_t)from, align);
    HMPI_ASSERT_INTERNAL(to != NULL);
    memcpy(to, from, l->span);
    return hmpi_coll_at(to, -l->lo);
}

const void **hmpi_coll_inputs(hmpi_coll_team_t *t, uint64_t e, const void **stack)
{
    const void **x = t->ep.n <= HMPI_COLL_STACK_INPUTS
                         ? stack
                         : hmpi_coll_alloc(sizeof(void *) * (size_t)t->ep.n);
    for (int i = 0; i < t->ep.n; i++)
        x[i] = (const void *)(uintptr_t)hmpi_coll_half(t, i, e)->addr;
    return x;
}

void hmpi_coll_inputs_free(const void **x, const void **stack)
{
    if (x != stack)
        hmpi_heap_free((void *)x);
}

int hmpi_coll_expose_input(hmpi_coll_team_t *t, uint64_t e, hmpi_coll_half_t *h, const void *in,
                           const hmpi_layout_t *l, size_t extra, void **extra_p)
{
    int direct = l->span > 0 && hmpi_heap_is_shared_range(hmpi_coll_at(in, l->lo), l->span);
    size_t need = extra + (direct ? 0 : hmpi_coll_room(l->span, 64));
    hmpi_coll_area_t a = {NULL, 0, 0};
    if (need) {
        a.base = hmpi_coll_scratch(t, e, need);
        a.len = need;
    }
    if (extra_p)
        *extra_p = extra ? hmpi_coll_take(&a, extra, 0, 64) : NULL;
    if (direct) {
        h->addr = (uintptr_t)in;
    } else {
        h->addr = (uintptr_t)hmpi_coll_stage_span(&a, in, l, 64);
        hmpi_stat_add(HMPI_STAT_coll_staged_bytes, l->span);
    }
    /* the scratch had room for both: it is 64-aligned, so the extra took no padding */
    HMPI_ASSERT_INTERNAL(!extra_p || !extra || *extra_p);
    return direct;
}

/* ---- reduce ------------------------------------------------------------------------ */

/* A reduce whose inputs fit the ring (coll.h): a non-root stages its input in its ring
 * entry and returns, up to RING epochs ahead of the root, as the MPI below's eager sends
 * let its members; the root folds the entries in member order. Every member takes this
 * way or none does: it depends on the span of count x type, the same everywhere. */
static int reduce_ring(hmpi_coll_team_t *t, uint64_t e, const void *in, void *recvbuf, int count,
                       MPI_Datatype type, MPI_Op op, int root, const hmpi_layout_t *one,
                       const hmpi_layout_t *l, int commute)
{
    int me = t->ep.me, n = t->ep.n;
    if (me != root) {
        hmpi_coll_ring_t *r = hmpi_coll_ring_claim(t, e);
        hmpi_coll_area_t a = {r->data, HMPI_COLL_RING_BYTES, 0};
        const unsigned char *x = hmpi_coll_stage_span(&a, in, l, 16);
        r->off = (uint32_t)((const unsigned char *)hmpi_coll_at(x, l->lo) - r->data);
        atomic_store_explicit(&r->seq, e, memory_order_release);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return MPI_SUCCESS;
    }
    const void *stack[HMPI_COLL_STACK_INPUTS];
    const void **x =
        n <= HMPI_COLL_STACK_INPUTS ? stack : hmpi_coll_alloc(sizeof(void *) * (size_t)n);
    for (int i = 0; i < n; i++) {
        if (i == me) {
            x[i] = in;
            continue;
        }
        hmpi_coll_ring_t *r = hmpi_coll_ring(t, i, e);
        if (atomic_load_explicit(&r->seq, memory_order_acquire) < e)
            hmpi_coll_wait_slow(&r->seq, e);
        /* off is below 16 as written; masked, a corrupted one cannot read past the entry */
        x[i] = hmpi_coll_at(r->data + (r->off & 15u), -l->lo);
    }
    hmpi_coll_seen(t, e); /* every member began e */
    int err = hmpi_coll_reduce_slice(recvbuf, x, n, in == recvbuf ? me : -1, 0, count, type, op,
                                     one, commute);
    hmpi_coll_inputs_free(x, stack);
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    return err;
}

int hmpi_coll_team_reduce(hmpi_coll_team_t *t, const void *sendbuf, void *recvbuf, int count,
                          MPI_Datatype type, MPI_Op op, int root)
{
    hmpi_layout_t one, l;
    int err = hmpi_coll_layouts(type, count, &one, &l);
    if (err != MPI_SUCCESS)
        return err;
    HMPI_ASSERT_INTERNAL(root >= 0 && root < t->ep.n);
    int me = t->ep.me, commute = hmpi_coll_commutative(op);
    const void *in = (me == root && sendbuf == MPI_IN_PLACE) ? recvbuf : sendbuf;
    uint64_t e = hmpi_coll_begin(t);
    if (count == 0) {
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return MPI_SUCCESS;
    }
    if (l.span + 16 <= HMPI_COLL_RING_BYTES)
        return reduce_ring(t, e, in, recvbuf, count, type, op, root, &one, &l, commute);
    const void *stack[HMPI_COLL_STACK_INPUTS], **x;
    hmpi_coll_half_t *h = hmpi_coll_claim(t, e);

    if (l.span + 16 <= t->cap) {
        /* Small: everybody copies its input into its slot; the root folds them. */
        if (me != root) {
            hmpi_coll_stage_slot(t, h, in, &l);
            hmpi_coll_publish(t, e, HMPI_COLL_DONE);
            return MPI_SUCCESS;
        }
        h->addr = (uintptr_t)in; /* read by ourselves only */
        hmpi_coll_wait_all(t, e, HMPI_COLL_ARRIVED);
        x = hmpi_coll_inputs(t, e, stack);
        err = hmpi_coll_reduce_slice(recvbuf, x, t->ep.n, in == recvbuf ? me : -1, 0, count, type,
                                     op, &one, commute);
        hmpi_coll_inputs_free(x, stack);
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        return err;
    }

    /* Large: every member reduces its slice into the root's result buffer: recvbuf when
     * it is in the shared heap, else the root's scratch (copied out at the end). */
    void *res = NULL;
    int res_shared = 0;
    if (me == root) {
        res_shared = hmpi_heap_is_shared_range(hmpi_coll_at(recvbuf, l.lo), l.span);
        res = recvbuf;
    }
    void *area = NULL;
    int direct = hmpi_coll_expose_input(
        t, e, h, in, &l, me == root && !res_shared ? hmpi_coll_room(l.span, 64) : 0, &area);
    if (me == root && !res_shared)
        res = hmpi_coll_at(area, -l.lo);
    h->aux = (uintptr_t)res;
    hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    hmpi_coll_wait_all(t, e, HMPI_COLL_ARRIVED);

    void *dst = (void *)(uintptr_t)hmpi_coll_half(t, root, e)->aux;
    MPI_Aint first;
    int m;
    hmpi_coll_slice(count, t->ep.n, me, one.extent, &first, &m);
    x = hmpi_coll_inputs(t, e, stack);
    if (m > 0)
        err = hmpi_coll_reduce_slice(dst, x, t->ep.n, x[root] == dst ? root : -1, first, m, type,
                                     op, &one, commute);
    hmpi_coll_inputs_free(x, stack);
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    if (me == root || direct)
        hmpi_coll_wait_all(t, e, HMPI_COLL_DONE);
    if (me == root && !res_shared && err == MPI_SUCCESS)
        err = hmpi_coll_copy_typed(recvbuf, res, count, type, &l);
    return err;
}

/* Across nodes (commutative op): to each node's leader, the leaders' reduce to the
 * leader of the root's node, then to the root when it is not that leader. The leaders
 * never reduce in place: see below_reduce. */
static int reduce_hier(hmpi_coll_comm_t *s, hmpi_comm_t *c, const void *sendbuf, void *recvbuf,
                       int count, MPI_Datatype type, MPI_Op op, int root)
{
    hmpi_coll_team_t *t = &s->team;
    int lroot = c->local_of[root] >= 0 ? hmpi_coll_member(t, root) : -1;
    int leader = t->ep.me == 0, err;
    const void *in = (c->rank == root && sendbuf == MPI_IN_PLACE) ? recvbuf : sendbuf;
    void *tmp = NULL, *tmp2 = NULL, *node_res = NULL, *out = NULL;
    hmpi_layout_t l;
    if ((err = hmpi_layout_get(type, count, &l)) != MPI_SUCCESS)
        return err;
    if (leader) {
        tmp = hmpi_coll_alloc(l.span);
        node_res = hmpi_coll_at(tmp, -l.lo);
        if (lroot == 0) {
            out = recvbuf;
        } else if (lroot > 0) {
            tmp2 = hmpi_coll_alloc(l.span);
            out = hmpi_coll_at(tmp2, -l.lo);
        }
    }
    err = hmpi_coll_team_reduce(t, in, node_res, count, type, op, 0);
    if (leader && err == MPI_SUCCESS)
        err = PMPI_Reduce(node_res, out, count, type, op, s->leader_of[root], s->leaders);
    if (lroot > 0) {
        int err2 = hmpi_coll_team_bcast(t, leader ? out : recvbuf, count, type, 0, lroot);
        err = err != MPI_SUCCESS ? err : err2;
    }
    hmpi_heap_free(tmp);
    hmpi_heap_free(tmp2);
    return err;
}

/* The MPI below's reduce. MPICH 4.0.2 (Debian bookworm's) crashes in MPI_Reduce with
 * MPI_IN_PLACE at a root other than 0 once the vector exceeds 2 KiB (it reads the
 * sendbuf argument): that root gives it a copy of its input instead. */
static int below_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                        int root, MPI_Comm comm)
{
#ifdef MPICH_VERSION
    int rank = -1, inter = 1;
    if (sendbuf == MPI_IN_PLACE && root != 0 && count > 0 &&
        PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter &&
        PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == root) {
        hmpi_layout_t l;
        int err = hmpi_layout_get(type, count, &l);
        if (err != MPI_SUCCESS)
            return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
        void *tmp = hmpi_coll_alloc(l.span), *in = hmpi_coll_at(tmp, -l.lo);
        err = hmpi_coll_copy_typed(in, recvbuf, count, type, &l);
        if (err == MPI_SUCCESS)
            err = PMPI_Reduce(in, recvbuf, count, type, op, root, comm);
        hmpi_heap_free(tmp);
        return err;
    }
#endif
    HMPI_COLL_RETURN_BELOW(PMPI_Reduce, PMPI_Ireduce, comm, sendbuf, recvbuf, count, type, op, root,
                           comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm)
{
    HMPI_ENTER("MPI_Reduce");
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    if (s) { /* checked before the op is asked whether it commutes */
        int err = hmpi_check_root(root, c->size);
        if (!err)
            err = hmpi_check_reduce(sendbuf, c->rank == root ? recvbuf : MPI_IN_PLACE, count, type,
                                    op);
        if (err)
            return hmpi_raise_in(comm, err, "MPI_Reduce");
    }
    if (s && hmpi_op_outside(op, type, 0))
        s = NULL; /* a pair the standard does not define: the MPI below's to take or refuse */
    if (s && s->mode == HMPI_COLL_HIER && !hmpi_coll_commutative(op))
        s = NULL; /* rank order across nodes: the MPI below */
    HMPI_COLL_COUNT(reduce, s != NULL);
    if (!s && hmpi_check_comm_null(comm, "MPI_Reduce"))
        return MPI_ERR_COMM;
    if (!s)
        return below_reduce(sendbuf, recvbuf, count, type, op, root, comm);
    int err;
    if (s->mode == HMPI_COLL_FLAT)
        err = hmpi_coll_team_reduce(&s->team, sendbuf, recvbuf, count, type, op, root);
    else
        err = reduce_hier(s, c, sendbuf, recvbuf, count, type, op, root);
    return hmpi_raise_in(comm, err, "MPI_Reduce");
}
HMPI_PMPI(Reduce)

/* ---- allreduce --------------------------------------------------------------------- */

/* Member i's input to a small allreduce: in the meeting line (l > 0) or its slot. */
static const void *small_input(const hmpi_coll_team_t *t, int i, uint64_t l, uint64_t e)
{
    return l ? (const void *)hmpi_coll_line_data(t, i, l) : hmpi_coll_half(t, i, e)->data;
}

/* Every member's input of meeting l (or, l 0, of the slots of epoch e) folded into
 * recvbuf by kernel k, in one order on every member: x1 op x0, then x2 op that, ...
 * Inlined always: each caller's l is known (an 8-byte allreduce paid 35 instructions
 * for the call and the tests of l). */
__attribute__((always_inline)) static inline void small_fold(const hmpi_coll_team_t *t, uint64_t l,
                                                             uint64_t e, void *recvbuf,
                                                             hmpi_op_kernel_t k, int count,
                                                             size_t bytes)
{
    if (t->ep.n == 1) {
        memcpy(recvbuf, small_input(t, 0, l, e), bytes);
        return;
    }
    k(recvbuf, small_input(t, 1, l, e), small_input(t, 0, l, e), (size_t)count);
    for (int i = 2; i < t->ep.n; i++)
        k(recvbuf, small_input(t, i, l, e), recvbuf, (size_t)count);
}

/* The common small case without detours: a predefined op on a basic type, the vector in
 * the meeting line when it fits (coll.h), else in the slots. Same order (x1 op x0, then
 * x2 op that, ...) as the general path. */
static int allreduce_small_basic(hmpi_coll_team_t *t, const void *sendbuf, void *recvbuf, int count,
                                 size_t bytes, hmpi_op_kernel_t k)
{
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (t->ep.n > t->flat_max) {
        /* a large team has no meeting line: bytes <= t->cap (the caller's test) */
        HMPI_ASSERT_INTERNAL(bytes <= t->cap);
        hmpi_coll_tree_allreduce(t, in, recvbuf, count, bytes, k);
        return MPI_SUCCESS;
    }
    uint64_t l = 0, e = 0;
    if (bytes <= t->line.cap) {
        l = hmpi_coll_line_meet(t, in, bytes);
    } else {
        HMPI_ASSERT_INTERNAL(bytes <= t->cap); /* the caller's test: one of the two holds it */
        e = hmpi_coll_begin(t);
        memcpy(hmpi_coll_claim(t, e)->data, in, bytes);
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        hmpi_coll_wait_all(t, e, HMPI_COLL_ARRIVED);
        /* No DONE: nobody waits for it, and the next epoch's ARRIVED implies it (coll.h);
         * one store fewer, and its line is not taken back from the peers spinning on it. */
    }
    small_fold(t, l, e, recvbuf, k, count, bytes);
    return MPI_SUCCESS;
}

static int allreduce_team(hmpi_coll_team_t *t, const void *sendbuf, void *recvbuf, int count,
                          MPI_Datatype type, MPI_Op op)
{
    hmpi_layout_t one, l;
    int err = hmpi_coll_layouts(type, count, &one, &l);
    if (err != MPI_SUCCESS)
        return err;
    int me = t->ep.me, commute = hmpi_coll_commutative(op);
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    uint64_t e;
    hmpi_coll_half_t *h = hmpi_coll_open(t, count == 0, &e);
    if (!h)
        return MPI_SUCCESS;
    const void *stack[HMPI_COLL_STACK_INPUTS], **x;

    if (l.span + 16 <= t->cap) {
        /* Small: inputs into the slots, everybody folds all of them (same order, same
         * bits everywhere). */
        x = hmpi_coll_small_inputs(t, e, h, in, &l, stack);
        err = hmpi_coll_reduce_slice(recvbuf, x, t->ep.n, -1, 0, count, type, op, &one, commute);
        hmpi_coll_inputs_free(x, stack);
        return err; /* no DONE: see allreduce_small_basic */
    }

    /* Large: reduce-scatter into each member's result buffer (its recvbuf when shared,
     * else its scratch), then everybody copies the others' slices. */
    int res_shared = hmpi_heap_is_shared_range(hmpi_coll_at(recvbuf, l.lo), l.span);
    void *area = NULL;
    int direct =
        hmpi_coll_expose_input(t, e, h, in, &l, res_shared ? 0 : hmpi_coll_room(l.span, 64), &area);
    void *res = res_shared ? recvbuf : hmpi_coll_at(area, -l.lo);
    h->aux = (uintptr_t)res;
    hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    hmpi_coll_wait_all(t, e, HMPI_COLL_ARRIVED);

    MPI_Aint first;
    int m;
    hmpi_coll_slice(count, t->ep.n, me, one.extent, &first, &m);
    x = hmpi_coll_inputs(t, e, stack);
    if (m > 0)
        err = hmpi_coll_reduce_slice(res, x, t->ep.n, x[me] == res ? me : -1, first, m, type, op,
                                     &one, commute);
    hmpi_coll_inputs_free(x, stack);
    /* Nobody writes a recvbuf before every member finished reading the inputs (one of
     * them may be that recvbuf, in place), and the slices are complete. */
    hmpi_coll_publish(t, e, HMPI_COLL_MID);
    hmpi_coll_wait_all(t, e, HMPI_COLL_MID);
    for (int k = 1; k <= t->ep.n && err == MPI_SUCCESS; k++) {
        int j = (me + k) % t->ep.n;
        if (j == me && res_shared)
            continue;
        hmpi_coll_slice(count, t->ep.n, j, one.extent, &first, &m);
        if (m == 0)
            continue;
        const void *from = (const void *)(uintptr_t)hmpi_coll_half(t, j, e)->aux;
        hmpi_layout_t lm = hmpi_layout_n(&one, m);
        MPI_Aint off = first * one.extent;
        err =
            hmpi_coll_copy_typed(hmpi_coll_at(recvbuf, off), hmpi_coll_at(from, off), m, type, &lm);
    }
    hmpi_coll_publish(t, e, HMPI_COLL_DONE);
    if (res_shared || direct)
        hmpi_coll_wait_all(t, e, HMPI_COLL_DONE);
    return err;
}

static int allreduce_hier(hmpi_coll_comm_t *s, const void *sendbuf, void *recvbuf, int count,
                          MPI_Datatype type, MPI_Op op)
{
    hmpi_coll_team_t *t = &s->team;
    int leader = t->ep.me == 0;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int err = hmpi_coll_team_reduce(t, leader && in == recvbuf ? MPI_IN_PLACE : in,
                                    leader ? recvbuf : NULL, count, type, op, 0);
    if (leader && err == MPI_SUCCESS)
        err = PMPI_Allreduce(MPI_IN_PLACE, recvbuf, count, type, op, s->leaders);
    int err2 = hmpi_coll_team_bcast(t, recvbuf, count, type, 0, -1);
    return err != MPI_SUCCESS ? err : err2;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    HMPI_ENTER("MPI_Allreduce");
    hmpi_comm_t *c;
    hmpi_coll_comm_t *s = hmpi_coll_get(comm, &c);
    int size, err;
    hmpi_op_kernel_t k;
    /* The common case first. A kernel exists only for a predefined op on a basic type it
     * is defined for, so with a positive count and buffers that are not NULL the
     * arguments pass every check below. */
    if (s && s->mode == HMPI_COLL_FLAT && count > 0 && sendbuf && recvbuf &&
        recvbuf != MPI_IN_PLACE && (k = hmpi_op_kernel_size(op, type, &size))) {
        size_t bytes = (size_t)count * (size_t)size;
        if (bytes <= s->team.line.cap || bytes <= s->team.cap) {
            HMPI_COLL_COUNT(allreduce, 1);
            return allreduce_small_basic(&s->team, sendbuf, recvbuf, count, bytes, k);
        }
    }
    if (s && (err = hmpi_check_reduce(sendbuf, recvbuf, count, type, op)) != MPI_SUCCESS)
        return hmpi_raise_in(comm, err, "MPI_Allreduce");
    if (s && recvbuf == MPI_IN_PLACE && count > 0)
        return hmpi_raise_in(comm, hmpi_err_what(MPI_ERR_BUFFER, "recvbuf is MPI_IN_PLACE"),
                             "MPI_Allreduce");
    if (s && hmpi_op_outside(op, type, 0))
        s = NULL; /* a pair the standard does not define: the MPI below's to take or refuse */
    if (s && s->mode == HMPI_COLL_HIER && !hmpi_coll_commutative(op))
        s = NULL;
    HMPI_COLL_COUNT(allreduce, s != NULL);
    if (!s && hmpi_check_comm_null(comm, "MPI_Allreduce"))
        return MPI_ERR_COMM;
    if (!s)
        HMPI_COLL_RETURN_BELOW(PMPI_Allreduce, PMPI_Iallreduce, comm, sendbuf, recvbuf, count, type,
                               op, comm);
    if (s->mode == HMPI_COLL_FLAT)
        err = allreduce_team(&s->team, sendbuf, recvbuf, count, type, op);
    else
        err = allreduce_hier(s, sendbuf, recvbuf, count, type, op);
    return hmpi_raise_in(comm, err, "MPI_Allreduce");
}
HMPI_PMPI(Allreduce)

/* ---- nonblocking and persistent (nbc.h) --------------------------------------------------
 * The team phases of MPI_Iallreduce and MPI_Ireduce (and their _init forms): the
 * blocking algorithms above, each wait a test that keeps its step. */

/* Every member's input of op's epoch folded into dst, elements [first, first + m). */
static int fold(hmpi_coll_op_t *op, void *dst, MPI_Aint first, int m)
{
    hmpi_coll_team_t *t = &op->s->team;
    const void *stack[HMPI_COLL_STACK_INPUTS];
    const void **x = hmpi_coll_inputs(t, op->e, stack);
    int self = -1;
    for (int i = 0; i < t->ep.n; i++)
        if (x[i] == dst)
            self = i;
    int err = m > 0 ? hmpi_coll_reduce_slice(dst, x, t->ep.n, self, first, m, op->type, op->mop,
                                             &op->one, op->commute)
                    : MPI_SUCCESS;
    hmpi_coll_inputs_free(x, stack);
    return err;
}

/* The smallest: a basic type in the meeting line, folded by everyone (allreduce_small_basic). */
static int line_allreduce(hmpi_coll_op_t *op)
{
    if (!hmpi_coll_op_meet(op, op->in, op->bytes))
        return 0;
    small_fold(&op->s->team, op->meet, 0, op->recvbuf, op->kernel, op->count, op->bytes);
    return 1;
}

/* A basic type within the slot (allreduce_small_basic's other case): every member copies
 * its input into its slot and folds them all; no DONE (coll.h). */
static int slot_allreduce(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    uint64_t e = hmpi_coll_op_epoch(op);
    if (op->step == 0) {
        hmpi_coll_half_t *h = hmpi_coll_try_claim(t, e);
        if (!h)
            return 0;
        memcpy(h->data, op->in, op->bytes);
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        op->step = 1;
    }
    if (!hmpi_coll_op_all(op, HMPI_COLL_ARRIVED))
        return 0;
    small_fold(t, 0, e, op->recvbuf, op->kernel, op->count, op->bytes);
    return 1;
}

int hmpi_coll_phase_allreduce(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    if (op->kernel && t->line.line && op->bytes <= t->line.cap)
        return line_allreduce(op);
    if (op->kernel && op->bytes <= t->cap)
        return slot_allreduce(op);
    uint64_t e = hmpi_coll_op_epoch(op);
    int me = t->ep.me, small = op->l.span + 16 <= t->cap;
    MPI_Aint first;
    int m;
    switch (op->step) {
    case 0: {
        int ret;
        hmpi_coll_half_t *h = hmpi_coll_op_open(t, e, op->count == 0, &ret);
        if (!h)
            return ret;
        if (small) {
            hmpi_coll_stage_slot(t, h, op->in, &op->l);
        } else {
            op->res_shared =
                hmpi_heap_is_shared_range(hmpi_coll_at(op->recvbuf, op->l.lo), op->l.span);
            op->res = op->recvbuf;
            if (!hmpi_coll_op_expose(op, h, e, !op->res_shared))
                return 0;
            h->aux = (uintptr_t)op->res;
        }
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        op->step = 1;
    } /* fall through */
    case 1:
        if (!hmpi_coll_op_all(op, HMPI_COLL_ARRIVED))
            return 0;
        if (small) { /* everybody folds all inputs (same order, same bits); no DONE */
            op->err = fold(op, op->recvbuf, 0, op->count);
            return 1;
        }
        hmpi_coll_slice(op->count, t->ep.n, me, op->one.extent, &first, &m);
        op->err = fold(op, op->res, first, m);
        hmpi_coll_publish(t, e, HMPI_COLL_MID);
        op->step = 2; /* fall through */
    case 2:
        if (!hmpi_coll_op_all(op, HMPI_COLL_MID))
            return 0;
        for (int k = 1; k <= t->ep.n && op->err == MPI_SUCCESS; k++) {
            int j = (me + k) % t->ep.n;
            if (j == me && op->res_shared)
                continue;
            hmpi_coll_slice(op->count, t->ep.n, j, op->one.extent, &first, &m);
            if (m == 0)
                continue;
            const void *from = (const void *)(uintptr_t)hmpi_coll_half(t, j, e)->aux;
            hmpi_layout_t lm = hmpi_layout_n(&op->one, m);
            MPI_Aint off = first * op->one.extent;
            op->err = hmpi_coll_copy_typed(hmpi_coll_at(op->recvbuf, off), hmpi_coll_at(from, off),
                                           m, op->type, &lm);
        }
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        if (!op->res_shared && !op->direct)
            return 1;
        op->step = 3; /* peers read our buffers: they must be done */
        /* fall through */
    default: return hmpi_coll_op_all(op, HMPI_COLL_DONE);
    }
}

int hmpi_coll_phase_reduce(hmpi_coll_op_t *op)
{
    hmpi_coll_team_t *t = &op->s->team;
    uint64_t e = hmpi_coll_op_epoch(op);
    int me = t->ep.me, root = op->root, small = op->l.span + 16 <= t->cap;
    switch (op->step) {
    case 0: {
        int ret;
        hmpi_coll_half_t *h = hmpi_coll_op_open(t, e, op->count == 0, &ret);
        if (!h)
            return ret;
        if (small) {
            /* everybody copies its input into its slot; the root folds them */
            if (me != root) {
                hmpi_coll_stage_slot(t, h, op->in, &op->l);
                hmpi_coll_publish(t, e, HMPI_COLL_DONE);
                return 1;
            }
            h->addr = (uintptr_t)op->in; /* read by ourselves only */
        } else {
            op->res = NULL;
            if (me == root) {
                op->res_shared =
                    hmpi_heap_is_shared_range(hmpi_coll_at(op->recvbuf, op->l.lo), op->l.span);
                op->res = op->recvbuf;
            }
            if (!hmpi_coll_op_expose(op, h, e, me == root && !op->res_shared))
                return 0;
            h->aux = (uintptr_t)op->res;
        }
        hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
        op->step = 1;
    } /* fall through */
    case 1:
        if (!hmpi_coll_op_all(op, HMPI_COLL_ARRIVED))
            return 0;
        if (small) {
            op->err = fold(op, op->recvbuf, 0, op->count);
            hmpi_coll_publish(t, e, HMPI_COLL_DONE);
            return 1;
        }
        {
            void *dst = (void *)(uintptr_t)hmpi_coll_half(t, root, e)->aux;
            MPI_Aint first;
            int m;
            hmpi_coll_slice(op->count, t->ep.n, me, op->one.extent, &first, &m);
            op->err = fold(op, dst, first, m);
        }
        hmpi_coll_publish(t, e, HMPI_COLL_DONE);
        if (me != root && !op->direct)
            return 1;
        op->step = 2; /* fall through */
    default:
        if (!hmpi_coll_op_all(op, HMPI_COLL_DONE))
            return 0;
        if (me == root && !op->res_shared && op->err == MPI_SUCCESS)
            op->err = hmpi_coll_copy_typed(op->recvbuf, op->res, op->count, op->type, &op->l);
        return 1;
    }
}

static int below_iallreduce(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Iallreduce(op->sendbuf, op->recvbuf, op->count, op->type, op->mop, op->c->handle,
                           req);
}

static int below_ireduce(hmpi_coll_op_t *op, MPI_Request *req)
{
    return PMPI_Ireduce(op->sendbuf, op->recvbuf, op->count, op->type, op->mop, op->croot,
                        op->c->handle, req);
}

/* The leaders' part of a hierarchical allreduce: member 0 holds its node's result. */
static int leaders_allreduce_start(hmpi_coll_op_t *op)
{
    return PMPI_Iallreduce(MPI_IN_PLACE, op->recvbuf, op->count, op->type, op->mop, op->s->leaders,
                           &op->below);
}
static int leaders_allreduce(hmpi_coll_op_t *op)
{
    return hmpi_coll_phase_below(op, leaders_allreduce_start);
}

/* A reduce across nodes (MPI_Ireduce, MPI_Reduce_init), as reduce_hier: the leader's
 * node result in a buffer of its own (own[0], op->recvbuf for the team's reduce), and its
 * result from the leaders' reduce (hout) in the root's recvbuf when the leader is the
 * root, else in a shared buffer (own[1]) the root copies from. The leaders' reduce takes
 * no MPI_IN_PLACE: MPICH 4.0.2 crashes on it at a root other than 0 (below_reduce). */
static void hier_reduce_buffers(hmpi_coll_op_t *op, int lroot)
{
    if (op->s->team.ep.me != 0)
        return;
    op->own[0] = hmpi_coll_alloc(op->l.span);
    op->hout = op->recvbuf;
    if (lroot > 0) {
        op->own[1] = hmpi_coll_shared_alloc(op->l.span);
        op->hout = hmpi_coll_at(op->own[1], -op->l.lo);
    }
    op->recvbuf = hmpi_coll_at(op->own[0], -op->l.lo);
}

static int leaders_reduce_start(hmpi_coll_op_t *op)
{
    return PMPI_Ireduce(op->recvbuf, op->hout, op->count, op->type, op->mop,
                        op->s->leader_of[op->croot], op->s->leaders, &op->below);
}
static int leaders_reduce(hmpi_coll_op_t *op)
{
    return hmpi_coll_phase_below(op, leaders_reduce_start);
}

/* The root (a member other than the leader) copies the result from its leader's. */
static int take_result(hmpi_coll_op_t *op, const void *buf)
{
    return hmpi_coll_copy_typed(op->recvbuf, buf, op->count, op->type, &op->l);
}
static int hier_to_root(hmpi_coll_op_t *op)
{
    int lroot = hmpi_coll_op_member(op->s, op->c, op->croot);
    return hmpi_coll_phase_from_leader(op, op->hout, lroot, take_result);
}

/* After the leaders' part: the leader's result goes to its node. */
static int hier_bcast_from_leader(hmpi_coll_op_t *op)
{
    op->root = 0;
    return hmpi_coll_phase_bcast(op);
}

/* The reduction calls' checks, shared by the blocking and nonblocking forms. */
static int reduce_args(hmpi_comm_t *c, const void *sendbuf, const void *recvbuf, int count,
                       MPI_Datatype type, MPI_Op op, int root, int all)
{
    int err = hmpi_check_reduce(sendbuf, all || c->rank == root ? recvbuf : MPI_IN_PLACE, count,
                                type, op);
    if (!err && !all)
        err = hmpi_check_root(root, c->size);
    if (!err && all && recvbuf == MPI_IN_PLACE && count > 0)
        err = hmpi_err_what(MPI_ERR_BUFFER, "recvbuf is MPI_IN_PLACE");
    return err;
}

/* slot_allreduce's first step and its test, in the start call of an MPI_Iallreduce alone
 * in its queue: 1 once every member arrived (the caller folds), else 0 with the epoch
 * begun in *e_p and *step and *at for its operation. */
static int slot_now(hmpi_coll_team_t *t, const void *in, size_t bytes, uint64_t *e_p, int *step,
                    int *at)
{
    uint64_t e = *e_p = hmpi_coll_begin(t);
    *step = *at = 0;
    hmpi_coll_half_t *h = hmpi_coll_try_claim(t, e);
    if (!h)
        return 0;
    memcpy(h->data, in, bytes);
    hmpi_coll_publish(t, e, HMPI_COLL_ARRIVED);
    *step = 1;
    for (; *at < t->ep.n; (*at)++)
        if (*at != t->ep.me && !hmpi_epoch_reached(&t->ep, *at, e, HMPI_COLL_ARRIVED))
            return 0;
    if (t->ep.seen_done < e - 1) /* as hmpi_coll_op_all */
        t->ep.seen_done = e - 1;
    return 1;
}

/* MPI_Iallreduce, MPI_Ireduce and their _init forms: the program on this node's team
 * (across nodes, the hierarchical one), or the MPI below's call (a communicator not
 * accelerated, a pair of op and type it does not define, a non-commutative op across
 * nodes). */
static int start_reduction(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                           MPI_Op mop, int root, int all, MPI_Comm comm, int persistent,
                           MPI_Request *request, const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = NULL;
    hmpi_coll_comm_t *s = hmpi_coll_get_nb(comm, &c);
    int err = MPI_SUCCESS, size;
    hmpi_op_kernel_t k;
    /* The common case first, as MPI_Allreduce's: a kernel exists only for a predefined op
     * on a basic type it is defined for, so with a positive count and buffers that are not
     * NULL the arguments pass every check below, the op commutes and the type needs no
     * hold. */
    if (s && all && s->mode == HMPI_COLL_FLAT && count > 0 && sendbuf && recvbuf &&
        recvbuf != MPI_IN_PLACE && request && (k = hmpi_op_kernel_size(mop, type, &size))) {
        hmpi_coll_team_t *t = &s->team;
        const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
        size_t bytes = (size_t)count * (size_t)size;
        /* In the meeting line or the slots with nothing before it: the last to arrive
         * folds at once and makes no operation; the others' operation goes on from the
         * meeting or the epoch begun. */
        int line = t->line.line && bytes <= t->line.cap, at = 0, step = 0;
        uint64_t meet = 0, e = 0;
        if (!persistent && (line || bytes <= t->cap) && hmpi_coll_alone(s) &&
            (line ? hmpi_coll_meet_now(t, in, bytes, &meet, &at)
                  : slot_now(t, in, bytes, &e, &step, &at))) {
            HMPI_COLL_COUNT(nonblocking, 1);
            small_fold(t, meet, e, recvbuf, k, count, bytes);
            *request = hmpi_req_handle(hmpi_req_coll_done());
            return MPI_SUCCESS;
        }
        hmpi_coll_phase_fn phase = hmpi_coll_phase_allreduce;
        hmpi_coll_op_t *op = hmpi_coll_op_new(hmpi_coll_nb_route(s, 0, 0), c, 1, &phase);
        if (!op)
            return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
        hmpi_coll_op_tried(op, e, meet, meet ? 1 : step, at);
        op->sendbuf = sendbuf;
        op->recvbuf = recvbuf;
        op->in = in;
        op->count = count;
        op->type = type;
        op->mop = mop;
        op->persistent = (uint8_t)persistent;
        op->commute = 1;
        op->below_start = below_iallreduce;
        op->kernel = k;
        op->bytes = bytes;
        if (!line && bytes > t->cap) { /* (line_ and slot_allreduce need no layout) */
            err = hmpi_layout_get(type, 1, &op->one);
            if (err == MPI_SUCCESS)
                err = hmpi_layout_get(type, count, &op->l);
        }
        return hmpi_coll_op_go(op, err, request, comm, fn);
    }
    if (s)
        err = reduce_args(c, sendbuf, recvbuf, count, type, mop, root, all);
    if (!err && s && !request)
        err = hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    if (err)
        return hmpi_raise_in(comm, err, fn);
    int hier = s && (s->mode == HMPI_COLL_HIER);
    int below = s && (hmpi_op_outside(mop, type, 0) || (hier && !hmpi_coll_commutative(mop)));
    s = hmpi_coll_nb_route(s, below, 0);
    if (!s) {
        if (hmpi_check_comm_null(comm, fn))
            return MPI_ERR_COMM;
#if HMPI_MPI4_CALLS
        if (persistent)
            return all ? PMPI_Allreduce_init(sendbuf, recvbuf, count, type, mop, comm,
                                             MPI_INFO_NULL, request)
                       : PMPI_Reduce_init(sendbuf, recvbuf, count, type, mop, root, comm,
                                          MPI_INFO_NULL, request);
#endif
        return all ? PMPI_Iallreduce(sendbuf, recvbuf, count, type, mop, comm, request)
                   : PMPI_Ireduce(sendbuf, recvbuf, count, type, mop, root, comm, request);
    }
    hmpi_coll_phase_fn flat[] = {all ? hmpi_coll_phase_allreduce : hmpi_coll_phase_reduce};
    hmpi_coll_phase_fn spans[] = {hmpi_coll_phase_reduce, leaders_allreduce,
                                  hier_bcast_from_leader};
    /* A reduce across nodes: to the leader, the leaders' reduce, on the root's node from
     * its leader to the root where they differ. */
    int lroot = hier && !all ? hmpi_coll_op_member(s, c, root) : -1;
    hmpi_coll_phase_fn spans_reduce[] = {hmpi_coll_phase_reduce, leaders_reduce, hier_to_root};
    hmpi_coll_op_t *op = !hier ? hmpi_coll_op_new(s, c, 1, flat)
                         : all ? hmpi_coll_op_new(s, c, 3, spans)
                               : hmpi_coll_op_new(s, c, lroot > 0 ? 3 : 2, spans_reduce);
    if (!op)
        return hmpi_raise_in(comm, MPI_ERR_NO_MEM, fn);
    op->croot = root;
    op->below_start = all ? below_iallreduce : below_ireduce;
    int me_root = all || c->rank == root;
    op->in = me_root && sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (hier) {
        op->root = 0; /* the node's result at its leader: in place in recvbuf, or (a reduce)
                       * in its own buffer (hier_reduce_buffers) */
        op->in = op->in == recvbuf ? recvbuf : op->in;
    } else {
        op->root = all ? 0 : hmpi_coll_op_member(s, c, root);
    }
    err = hmpi_coll_op_reduction(op, sendbuf, recvbuf, count, type, mop, count, persistent);
    if (!err && hier && !all)
        hier_reduce_buffers(op, lroot);
    if (!err && all && !hier && count > 0 && (op->kernel = hmpi_op_kernel_size(mop, type, &size)))
        op->bytes = (size_t)count * (size_t)size;
    return hmpi_coll_op_go(op, err, request, comm, fn);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
    return start_reduction(sendbuf, recvbuf, count, type, op, 0, 1, comm, 0, request,
                           "MPI_Iallreduce");
}
HMPI_PMPI(Iallreduce)

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    return start_reduction(sendbuf, recvbuf, count, type, op, root, 0, comm, 0, request,
                           "MPI_Ireduce");
}
HMPI_PMPI(Ireduce)

#if HMPI_MPI4_CALLS
int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return start_reduction(sendbuf, recvbuf, count, type, op, 0, 1, comm, 1, request,
                           "MPI_Allreduce_init");
}
HMPI_PMPI(Allreduce_init)

int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return start_reduction(sendbuf, recvbuf, count, type, op, root, 0, comm, 1, request,
                           "MPI_Reduce_init");
}
HMPI_PMPI(Reduce_init)
#endif
