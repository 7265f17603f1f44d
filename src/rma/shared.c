/* shared.c: MPI-3 shared-memory windows: MPI_Win_allocate_shared and MPI_Win_shared_query.
 * The memory comes from the shared heap, so every member sees every segment at one
 * address. By default the segments are contiguous across ranks, as the standard says:
 * rank 0 allocates the sum and each member takes its offset; with the info key
 * alloc_shared_noncontig=true each member allocates its own segment in its own slice. */
#include "rma.h"
#include "../core/check.h"
#include "../common/log.h"
#include "../heap/heap.h"
#include "../node/node.h"
#include "../core/comm.h"
#include "../p2p/p2p.h"

#include <stdint.h>
#include <string.h>

static int info_true(MPI_Info info, const char *key)
{
    if (info == MPI_INFO_NULL)
        return 0;
    char value[16];
    int flag = 0;
    if (PMPI_Info_get(info, key, (int)sizeof value - 1, value, &flag) != MPI_SUCCESS || !flag)
        return 0;
    return strcmp(value, "true") == 0;
}

/* What the program gets as the base of a segment of size 0 (from MPI_Win_allocate_shared
 * and MPI_Win_shared_query; HMPI's own operations keep the segment's place in the heap).
 * MPI-4.1 names an address only for MPI_PROC_NULL when every segment is empty ("as if
 * MPI_ALLOC_MEM was called with size = 0"); for one empty segment it names none, so
 * HMPI answers as its MPI below does: MPICH gives NULL; Open MPI gives NULL in a
 * noncontiguous window and the segment's place in the contiguous block otherwise. */
static void *empty_base(void *at, int noncontig)
{
#ifdef OPEN_MPI
    return noncontig ? NULL : at;
#else
    (void)at;
    (void)noncontig;
    return NULL;
#endif
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    HMPI_ENTER("MPI_Win_allocate_shared");
    hmpi_comm_t *c = hmpi_rma_comm(comm);
    if (!c || c->has_remote || size < 0 || disp_unit <= 0) /* the below says what is wrong */
        return PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
    void *own = NULL; /* what this rank allocated (and frees at MPI_Win_free) */
    char *mine = NULL;
    int ok, noncontig = info_true(info, "alloc_shared_noncontig");
    if (noncontig) {
        own = mine = hmpi_heap_shared_alloc((size_t)size);
        ok = own != NULL;
    } else {
        MPI_Aint *sizes = hmpi_heap_malloc(sizeof(MPI_Aint) * (size_t)c->size);
        if (!sizes) { /* the collective below cannot be joined without it */
            hmpi_log_error("out of memory creating a shared window of %d members", c->size);
            PMPI_Abort(hmpi_node.world, 1);
        }
        /* Waited for with point-to-point progress (window.c, hmpi_rma_setup). */
        if (hmpi_p2p_below_allgather(c, &size, (int)sizeof size, sizes, comm, HMPI_WAIT_RMA) !=
            MPI_SUCCESS) {
            hmpi_log_error("creating a shared window: the allgather of the sizes failed");
            PMPI_Abort(hmpi_node.world, 1);
        }
        MPI_Aint offset = 0, total = 0;
        for (int r = 0; r < c->size; r++) {
            offset += r < c->rank ? sizes[r] : 0;
            total += sizes[r];
        }
        hmpi_heap_free(sizes);
        uint64_t base = 0;
        if (c->rank == 0) {
            own = hmpi_heap_shared_alloc((size_t)total);
            base = (uint64_t)(uintptr_t)own;
        }
        PMPI_Bcast(&base, 1, MPI_UINT64_T, 0, comm);
        ok = base != 0;
        mine = ok ? (char *)(uintptr_t)base + offset : NULL;
    }
    hmpi_win_t *w = hmpi_rma_setup(c, comm, mine, size, disp_unit, ok, MPI_WIN_FLAVOR_SHARED);
    if (!hmpi_rma_below_own(w, mine, own, size, disp_unit, info, comm, win))
        return PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
    w->noncontig = noncontig;
    *(void **)baseptr = size == 0 ? empty_base(mine, noncontig) : mine;
    return hmpi_rma_install(w, *win);
}
HMPI_PMPI(Win_allocate_shared)

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    HMPI_ENTER("MPI_Win_shared_query");
    hmpi_win_t *w = hmpi_win_get(win);
    if (!w || w->flavor != MPI_WIN_FLAVOR_SHARED)
        return PMPI_Win_shared_query(win, rank, size, disp_unit, baseptr);
    if (rank == MPI_PROC_NULL) { /* the lowest rank with a segment that is not empty */
        for (rank = 0; rank < w->size && w->mem[rank].size == 0; rank++)
            ;
        if (rank == w->size) {
            *size = 0;
            *disp_unit = w->mem[0].disp_unit;
            *(void **)baseptr = NULL;
            return MPI_SUCCESS;
        }
    } else if (rank < 0 || rank >= w->size) {
        return hmpi_raise_win(win, MPI_ERR_RANK, "MPI_Win_shared_query");
    }
    *size = (MPI_Aint)w->mem[rank].size;
    *disp_unit = w->mem[rank].disp_unit;
    *(void **)baseptr =
        w->mem[rank].size == 0 ? empty_base(w->mem[rank].base, w->noncontig) : w->mem[rank].base;
    return MPI_SUCCESS;
}
HMPI_PMPI(Win_shared_query)
