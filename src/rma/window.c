/* window.c: the window table and the window life cycle: MPI_Win_create, MPI_Win_allocate,
 * MPI_Win_create_dynamic (+ attach/detach), MPI_Win_free, the attributes HMPI must
 * answer itself, and MPI_Win_set_info (collective). Each constructor also makes the MPI below's window over the same memory,
 * so its handle is the one the program holds. Creation and freeing are collective; the
 * operations and the synchronization live in ops.c, acc.c and sync_*.c. */
#include "rma.h"
#include "../core/check.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../common/stats.h"
#include "../heap/heap.h"
#include "../core/comm.h"
#include "../node/node.h"
#include "../p2p/p2p.h"

#include <stdint.h>
#include <string.h>

/* ---- the table ------------------------------------------------------------------------ */

hmpi_win_t *hmpi_win_table[HMPI_WIN_BUCKETS];

static void forget(hmpi_win_t *w)
{
    hmpi_win_t **pp = &hmpi_win_table[hmpi_win_bucket(w->handle)];
    while (*pp && *pp != w)
        pp = &(*pp)->next;
    HMPI_ASSERT_INTERNAL(*pp == w); /* installed, under its handle's bucket */
    if (*pp)
        *pp = w->next;
}

static void destroy(hmpi_win_t *w)
{
    if (w->group != MPI_GROUP_NULL)
        PMPI_Group_free(&w->group);
    hmpi_heap_free(w->mem);
    hmpi_heap_free(w->rank_of_wl);
    hmpi_heap_free(w->acc);
    hmpi_heap_free(w->start_ranks);
    hmpi_heap_free(w->post_ranks);
    hmpi_heap_free(w->seen_post);
    hmpi_heap_free(w->seen_done);
    hmpi_heap_free(w->scratch);
    hmpi_heap_free(w);
}

/* ---- validity ---------------------------------------------------------------------------- */

/* What it checks:
 *  - the geometry: this rank in the group, its local index among nlocal >= 1 local
 *    members (the first is the leader, which owns the control block), the tables made;
 *  - the local members: rank_of_wl in group order, each naming a member whose wl points
 *    back, every other member remote (wl -1) and reached through the MPI below; a path
 *    one of the three; a local window (not mixed) has every member local and none
 *    through the below, and a mixed one has one or the other; a dynamic window is
 *    local; a shared one's members are all in the shared heap (direct);
 *  - the epochs (the standard's rule: an access epoch at a time; HMPI's calls check it
 *    before any change): a fence epoch excludes every other epoch; lock_all excludes
 *    locks and a PSCW access epoch, and so do locks; nlocks counts the targets marked
 *    locked; each mark is shared or exclusive, never both, and NOCHECK only on a lock;
 *    START marks exactly the access epoch's targets, none outside it; the groups of an
 *    open access or exposure epoch name members of the window. */
int hmpi_rma_win_is_valid(const hmpi_win_t *w)
{
    int n = w->size;
    if (n < 1 || w->rank < 0 || w->rank >= n || w->nlocal < 1 || w->nlocal > n || w->wl < 0 ||
        w->wl >= w->nlocal || w->leader != (w->wl == 0) || !w->ctrl || !w->mem || !w->rank_of_wl ||
        !w->acc || !w->start_ranks || !w->post_ranks || !w->seen_post || !w->seen_done ||
        !w->scratch || w->rank_of_wl[w->wl] != w->rank)
        return 0;
    int below = 0, locals = 0;
    for (int i = 0; i < w->nlocal; i++) {
        int r = w->rank_of_wl[i];
        if (r < 0 || r >= n || (i > 0 && r <= w->rank_of_wl[i - 1]) || w->mem[r].wl != i)
            return 0;
    }
    for (int r = 0; r < n; r++) {
        const hmpi_rma_member_t *m = &w->mem[r];
        if (m->wl < -1 || m->wl >= w->nlocal || m->path > HMPI_RMA_BELOW ||
            (m->wl < 0 && m->path != HMPI_RMA_BELOW) ||
            (w->flavor == MPI_WIN_FLAVOR_SHARED && m->path != HMPI_RMA_DIRECT))
            return 0;
        below |= m->path == HMPI_RMA_BELOW;
        locals += m->wl >= 0;
    }
    if (locals != w->nlocal || w->mixed != (below || w->nlocal < n) || (w->dynamic && w->mixed))
        return 0;
    /* the epochs */
    int locked = 0, marked = 0;
    for (int r = 0; r < n; r++) {
        uint8_t a = w->acc[r];
        if ((a & ~(HMPI_ACC_START | HMPI_ACC_LOCKED | HMPI_ACC_NOCHECK)) ||
            (a & HMPI_ACC_LOCKED) == HMPI_ACC_LOCKED ||
            ((a & HMPI_ACC_NOCHECK) && !(a & HMPI_ACC_LOCKED)))
            return 0;
        locked += (a & HMPI_ACC_LOCKED) != 0;
        marked += (a & HMPI_ACC_START) != 0;
    }
    if (w->nlocks != locked ||
        (w->fence && (w->lock_all || w->nlocks || w->started || w->posted)) ||
        (w->lock_all && (w->nlocks || w->started)) || (w->nlocks && w->started))
        return 0;
    if (!w->started && marked)
        return 0;
    if (w->started) {
        if (w->nstart < 0 || w->nstart > n || marked != w->nstart)
            return 0;
        for (int i = 0; i < w->nstart; i++)
            if (w->start_ranks[i] < 0 || w->start_ranks[i] >= n ||
                !(w->acc[w->start_ranks[i]] & HMPI_ACC_START))
                return 0;
    }
    if (w->posted) {
        if (w->npost < 0 || w->npost > n)
            return 0;
        for (int i = 0; i < w->npost; i++)
            if (w->post_ranks[i] < 0 || w->post_ranks[i] >= n)
                return 0;
    }
    return 1;
}

/* ---- waiting ---------------------------------------------------------------------------- */

void hmpi_rma_barrier(hmpi_win_t *w)
{
    hmpi_barrier_arrive(&w->bar);
    hmpi_rma_wait_t wt = {{0}};
    while (!hmpi_barrier_poll(&w->bar))
        hmpi_rma_wait_step(w, &wt);
    hmpi_wait_end(&wt.b, HMPI_WAIT_RMA);
}

/* ---- creation --------------------------------------------------------------------------- */

/* What each member publishes at creation. */
enum { PUB_OK = 1, PUB_HEAP = 2 };
typedef struct {
    uint64_t base, size;
    uint64_t ctrl; /* the local leader's control block, 0 from the others */
    int32_t disp_unit;
    int32_t flags; /* PUB_* */
} pub_t;

hmpi_comm_t *hmpi_rma_comm(MPI_Comm comm)
{
    if (!hmpi_node.active || !hmpi_knobs.RMA)
        return NULL;
    hmpi_comm_t *c = hmpi_comm_get(comm);
    return c && !c->inter ? c : NULL; /* (on an intercommunicator the below raises) */
}

static void *zalloc(size_t n) { return hmpi_heap_calloc(n ? n : 1, 1); }

/* How origins reach a member. A dynamic window's member is reached directly at heap
 * addresses (decided per operation, move.c) and through CMA at the others. */
static int member_path(const pub_t *p, int local, int flavor)
{
    if (local < 0)
        return HMPI_RMA_BELOW;
    if ((p->flags & PUB_HEAP) && flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return HMPI_RMA_DIRECT;
    return hmpi_ctrl()->rank[local].cma_ok ? HMPI_RMA_CMA : HMPI_RMA_BELOW;
}

hmpi_win_t *hmpi_rma_setup(hmpi_comm_t *c, MPI_Comm comm, void *base, MPI_Aint size, int disp_unit,
                           int ok, int flavor)
{
    int n = c->size;
    pub_t *all = zalloc(sizeof(pub_t) * (size_t)n);
    if (!all) { /* the collective below cannot be joined without it */
        hmpi_log_error("out of memory creating a window of %d members", n);
        PMPI_Abort(hmpi_node.world, 1);
    }
    hmpi_win_t *w = zalloc(sizeof *w);
    if (w) {
        w->group = MPI_GROUP_NULL;
        w->rank = c->rank;
        w->size = n;
        w->nlocal = c->nlocal;
        w->mem = zalloc(sizeof(hmpi_rma_member_t) * (size_t)n);
        w->rank_of_wl = zalloc(sizeof(int) * (size_t)c->nlocal);
        w->acc = zalloc((size_t)n);
        w->start_ranks = zalloc(sizeof(int) * (size_t)n);
        w->post_ranks = zalloc(sizeof(int) * (size_t)n);
        w->scratch = zalloc(sizeof(int) * (size_t)n);
        w->seen_post = zalloc(sizeof(uint32_t) * (size_t)c->nlocal);
        w->seen_done = zalloc(sizeof(uint32_t) * (size_t)c->nlocal);
    }
    if (!w || !w->mem || !w->rank_of_wl || !w->acc || !w->start_ranks || !w->post_ranks ||
        !w->scratch || !w->seen_post || !w->seen_done)
        ok = 0;

    /* Local members in group order; the first one is the leader. */
    int wl = 0, my_wl = -1;
    for (int r = 0; r < n && ok; r++) {
        if (c->local_of[r] < 0)
            continue;
        if (r == c->rank)
            my_wl = wl;
        w->rank_of_wl[wl++] = r;
    }
    HMPI_ASSERT_INTERNAL(!ok || (wl == c->nlocal && my_wl >= 0)); /* this rank is local */
    hmpi_rma_ctrl_t *ctrl = NULL;
    if (ok && my_wl == 0) {
        size_t bytes = hmpi_rma_ctrl_size((uint32_t)c->nlocal);
        ctrl = hmpi_heap_shared_alloc(bytes);
        if (ctrl) {
            memset(ctrl, 0, bytes);
            hmpi_rma_ctrl_init(ctrl, (uint32_t)c->nlocal);
        } else {
            ok = 0;
        }
    }
    pub_t mine = {(uint64_t)(uintptr_t)base, (uint64_t)size, (uint64_t)(uintptr_t)ctrl, disp_unit,
                  ok ? PUB_OK : 0};
    if (size == 0 || hmpi_heap_is_shared_range(base, (size_t)size))
        mine.flags |= PUB_HEAP;
    /* Nonblocking, waited for with point-to-point progress: a member that posted a
     * receive may be here while a peer still waits in a synchronous send for its match
     * (hmpi_p2p_below_wait). Once complete, every member is in this call: the blocking
     * calls of the below that follow (MPI_Win_create, ...) hold nobody back. */
    if (hmpi_p2p_below_allgather(c, &mine, (int)sizeof mine, all, comm, HMPI_WAIT_RMA) !=
        MPI_SUCCESS) {
        hmpi_log_error("creating a window: the allgather of the members failed");
        PMPI_Abort(hmpi_node.world, 1);
    }
    int all_ok = 1;
    for (int r = 0; r < n && all_ok; r++)
        all_ok = (all[r].flags & PUB_OK) != 0;
    /* Every member has the same table, so every member takes the same decisions. */
    if (all_ok) {
        w->wl = my_wl;
        w->leader = my_wl == 0;
        w->flavor = flavor;
        w->model = MPI_WIN_UNIFIED;
        w->attr_base = base;
        w->attr_size = size;
        w->attr_disp_unit = disp_unit;
        w->mixed = c->has_remote;
        for (int r = 0; r < n; r++) {
            hmpi_rma_member_t *m = &w->mem[r];
            int local = c->local_of[r];
            m->base = (char *)(uintptr_t)all[r].base;
            m->size = all[r].size;
            m->disp_unit = all[r].disp_unit;
            m->wl = -1;
            m->path = (uint8_t)member_path(&all[r], local, flavor);
            m->pid = local >= 0 ? hmpi_ctrl()->rank[local].pid : 0;
            w->mixed |= m->path == HMPI_RMA_BELOW;
        }
        for (int i = 0; i < w->nlocal; i++)
            w->mem[w->rank_of_wl[i]].wl = i;
        w->ctrl = (hmpi_rma_ctrl_t *)(uintptr_t)all[w->rank_of_wl[0]].ctrl;
        if (w->ctrl)
            hmpi_barrier_init(&w->bar, hmpi_rma_barrier_flags(w->ctrl), (uint32_t)w->nlocal,
                              (uint32_t)w->wl);
        w->dynamic = flavor == MPI_WIN_FLAVOR_DYNAMIC;
        /* A dynamic window's targets are addresses, known one operation at a time: it
         * is accelerated only when every member can be reached without the below (the
         * below's lock could not be forced on an address not yet attached). */
        if (w->dynamic && w->mixed)
            all_ok = 0;
    }
    hmpi_heap_free(all);
    if (!all_ok) {
        hmpi_heap_free(ctrl); /* no member kept its address */
        if (w)
            w->ctrl = NULL, destroy(w);
        return NULL;
    }
    return w;
}

int hmpi_rma_install(hmpi_win_t *w, MPI_Win win)
{
    /* A freed window left the table before the below freed its handle (MPI_Win_free),
     * so the below's new handle names no window there. */
    HMPI_ASSERT_INTERNAL(hmpi_win_get(win) == NULL);
    HMPI_ASSERT_EXPENSIVE(hmpi_rma_win_is_valid(w));
    w->handle = win;
    PMPI_Win_get_group(win, &w->group);
    unsigned b = hmpi_win_bucket(win);
    w->next = hmpi_win_table[b];
    hmpi_win_table[b] = w;
    hmpi_stat_add(HMPI_STAT_rma_windows, 1);
    return MPI_SUCCESS;
}

void hmpi_rma_discard(hmpi_win_t *w)
{
    if (w->leader)
        hmpi_heap_free(w->ctrl);
    destroy(w);
}

int hmpi_rma_below_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                          MPI_Win *win)
{
    MPI_Errhandler old;
    PMPI_Comm_get_errhandler(comm, &old);
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    /* Open MPI 4.1 at times fails the first MPI_Win_create on a communicator (its
     * backing file clashes with another communicator's) and not the second: one retry.
     * The members agree on the outcome, so that none is left in another call. */
    int rc = MPI_ERR_WIN;
    for (int attempt = 0; attempt < 2 && rc != MPI_SUCCESS; attempt++) {
        MPI_Win made = MPI_WIN_NULL;
        int ok = PMPI_Win_create(base, size, disp_unit, info, comm, &made) == MPI_SUCCESS, all;
        if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
            all = 0;
        if (all) {
            *win = made;
            rc = MPI_SUCCESS;
        } else if (ok) {
            PMPI_Win_free(&made);
        }
    }
    PMPI_Comm_set_errhandler(comm, old);
    PMPI_Errhandler_free(&old);
    return rc;
}

int hmpi_rma_below_own(hmpi_win_t *w, void *mine, void *own, MPI_Aint size, int disp_unit,
                       MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    if (w && hmpi_rma_below_create(mine, size, disp_unit, info, comm, win) == MPI_SUCCESS) {
        w->own_mem = own;
        return 1;
    }
    if (w)
        hmpi_rma_discard(w);
    hmpi_heap_free(own);
    return 0;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    HMPI_ENTER("MPI_Win_create");
    hmpi_comm_t *c = hmpi_rma_comm(comm);
    if (!c || size < 0 || disp_unit <= 0)
        return PMPI_Win_create(base, size, disp_unit, info, comm, win);
    hmpi_win_t *w = hmpi_rma_setup(c, comm, base, size, disp_unit, 1, MPI_WIN_FLAVOR_CREATE);
    if (w && hmpi_rma_below_create(base, size, disp_unit, info, comm, win) == MPI_SUCCESS)
        return hmpi_rma_install(w, *win);
    if (w)
        hmpi_rma_discard(w);
    return PMPI_Win_create(base, size, disp_unit, info, comm, win); /* the below reports */
}
HMPI_PMPI(Win_create)

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    HMPI_ENTER("MPI_Win_allocate");
    hmpi_comm_t *c = hmpi_rma_comm(comm);
    if (!c || size < 0 || disp_unit <= 0)
        return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    void *mem = hmpi_heap_shared_alloc((size_t)size);
    hmpi_win_t *w =
        hmpi_rma_setup(c, comm, mem, size, disp_unit, mem != NULL, MPI_WIN_FLAVOR_ALLOCATE);
    if (!hmpi_rma_below_own(w, mem, mem, size, disp_unit, info, comm, win))
        return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    *(void **)baseptr = mem;
    return hmpi_rma_install(w, *win);
}
HMPI_PMPI(Win_allocate)

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    HMPI_ENTER("MPI_Win_create_dynamic");
    hmpi_comm_t *c = hmpi_rma_comm(comm);
    if (!c)
        return PMPI_Win_create_dynamic(info, comm, win);
    hmpi_win_t *w = hmpi_rma_setup(c, comm, NULL, 0, 1, 1, MPI_WIN_FLAVOR_DYNAMIC);
    int rc = PMPI_Win_create_dynamic(info, comm, win);
    if (w && rc == MPI_SUCCESS)
        return hmpi_rma_install(w, *win);
    if (w)
        hmpi_rma_discard(w);
    return rc;
}
HMPI_PMPI(Win_create_dynamic)

/* Attached memory needs no publication: an origin reaches a target address directly
 * when it is in the shared heap and through process_vm_* otherwise. The below keeps its
 * own list (its window is the program's). */
int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    HMPI_ENTER("MPI_Win_attach");
    return PMPI_Win_attach(win, base, size);
}
HMPI_PMPI(Win_attach)

int MPI_Win_detach(MPI_Win win, const void *base)
{
    HMPI_ENTER("MPI_Win_detach");
    return PMPI_Win_detach(win, base);
}
HMPI_PMPI(Win_detach)

int MPI_Win_free(MPI_Win *win)
{
    HMPI_ENTER("MPI_Win_free");
    hmpi_win_t *w = win ? hmpi_win_get(*win) : NULL;
    if (!w)
        return PMPI_Win_free(win);
    if (w->lock_all || w->nlocks || w->started || w->posted)
        return hmpi_raise_win(*win, MPI_ERR_RMA_SYNC, "MPI_Win_free");
    HMPI_ASSERT_EXPENSIVE(hmpi_rma_win_is_valid(w));
    /* Once every local member is here, no local origin touches this rank's memory or
     * the control block again except to leave it. */
    hmpi_rma_barrier(w);
    forget(w);
    int rc = PMPI_Win_free(win);
    if (w->leader) {
        hmpi_rma_wait_t wt = {{0}};
        while (atomic_load_explicit(&w->ctrl->departed, memory_order_acquire) !=
               (uint32_t)w->nlocal - 1)
            hmpi_rma_wait_step(NULL, &wt);
        hmpi_backoff_end(&wt.b);
        hmpi_heap_free(w->ctrl);
    } else {
        atomic_fetch_add_explicit(&w->ctrl->departed, 1, memory_order_release);
        hmpi_wait_wake_all(); /* the leader may sleep */
    }
    hmpi_heap_free(w->own_mem);
    destroy(w);
    return rc;
}
HMPI_PMPI(Win_free)

/* ---- attributes ------------------------------------------------------------------------- */

/* The below's window is always made by MPI_Win_create (over HMPI's memory), so the
 * flavor is HMPI's to say; direct loads and stores make the memory model unified; and
 * base, size and displacement unit are answered as the program was given them (MPICH
 * reports NULL for an empty segment of a shared window, and may move a base it did not
 * allocate). A dynamic window's are the below's (MPI_BOTTOM, 0, 1). */
int MPI_Win_get_attr(MPI_Win win, int keyval, void *value, int *flag)
{
    HMPI_ENTER("MPI_Win_get_attr");
    hmpi_win_t *w = hmpi_win_get(win);
    void *v = NULL;
    if (w && keyval == MPI_WIN_CREATE_FLAVOR)
        v = &w->flavor;
    else if (w && keyval == MPI_WIN_MODEL)
        v = &w->model;
    else if (w && !w->dynamic && keyval == MPI_WIN_BASE)
        v = w->attr_base;
    else if (w && !w->dynamic && keyval == MPI_WIN_SIZE)
        v = &w->attr_size;
    else if (w && !w->dynamic && keyval == MPI_WIN_DISP_UNIT)
        v = &w->attr_disp_unit;
    else
        return PMPI_Win_get_attr(win, keyval, value, flag);
    *(void **)value = v;
    *flag = 1;
    return MPI_SUCCESS;
}
HMPI_PMPI(Win_get_attr)

/* Collective, and the MPI below's blocks until the members arrive, without moving HMPI's
 * engine: a local peer's synchronous send to a receive posted before the call hung (over
 * both MPIs, measured; the surface table of docs/mpi-surface.md). Every local member is
 * in the call first, as for MPI_Win_free: then none of them waits for this rank. */
int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    HMPI_ENTER("MPI_Win_set_info");
    hmpi_win_t *w = hmpi_win_get(win);
    if (w)
        hmpi_rma_barrier(w);
    return PMPI_Win_set_info(win, info);
}
HMPI_PMPI(Win_set_info)

/* ---- statistics ------------------------------------------------------------------------- */

void hmpi_rma_count_below(int kind, int count, MPI_Datatype type)
{
    static const hmpi_stat_t ops[] = {HMPI_STAT_rma_puts_remote, HMPI_STAT_rma_gets_remote,
                                      HMPI_STAT_rma_accs_remote};
    if (!hmpi_stats_on)
        return;
    int size = 0;
    if (type != MPI_DATATYPE_NULL && count > 0)
        PMPI_Type_size(type, &size);
    hmpi_stat_add(ops[kind], 1);
    hmpi_stat_add(HMPI_STAT_rma_bytes_remote, (uint64_t)size * (uint64_t)(count > 0 ? count : 0));
}

/* ---- init / finalize --------------------------------------------------------------------- */

int hmpi_rma_init(void) { return 0; }

/* Windows still open at MPI_Finalize (an erroneous program) are only forgotten: their
 * memory and control blocks stay in the region, which lives as long as the process. */
void hmpi_rma_finalize(void)
{
    for (int b = 0; b < HMPI_WIN_BUCKETS; b++) {
        while (hmpi_win_table[b]) {
            hmpi_win_t *w = hmpi_win_table[b];
            hmpi_win_table[b] = w->next;
            destroy(w);
        }
    }
}
