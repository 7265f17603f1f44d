/* rma_shared.c: MPI-3 shared-memory windows on the node's communicator
 * (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), which HMPI_NODE_SIZE narrows):
 *   contiguous  the default layout: each segment starts where the previous rank's ends,
 *               one rank's segment is empty, MPI_PROC_NULL queries the first non-empty
 *               one; attributes; under HMPI every rank sees every segment at the same
 *               address; stores through one rank's pointer are read through another's,
 *               in both directions; RMA calls and loads/stores on the same window;
 *   noncontig   alloc_shared_noncontig=true: every segment usable from every rank;
 *               an empty segment's base is the MPI below's answer (NULL; Open MPI's in a
 *               contiguous window: its place in the block);
 *   self        one process (MPI_COMM_SELF), with a segment and with none;
 *   empty       every segment empty. */
#include "rma_common.h"

#include <hmpi.h>
#include <stdio.h>

static int wrank, wsize, rank, nranks; /* in MPI_COMM_WORLD and in the node's comm */
static MPI_Comm node;

static int h(int owner, int i, int round) { return round * 100000 + owner * 1000 + i; }

/* Did HMPI serve this window? Its segments are in the shared heap. (HMPI lets the MPI
 * below allocate when the below cannot make its own window over HMPI's memory: Open MPI
 * 4.1 at times fails the first MPI_Win_create on a communicator.) The answer is the
 * node's: a window is served on every member or on none. */
static int served(const int *base)
{
    int mine = HMPI_Active() && (base == NULL || HMPI_Is_shared(base)), all;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, node);
    return all;
}

/* Loads and stores between ranks, in the seed article's way: lock_all(NOCHECK) epoch,
 * MPI_Win_sync + barrier + MPI_Win_sync around each exchange. */
static void loads_and_stores(MPI_Win win, int **seg, const MPI_Aint *bytes, const char *what)
{
    int right = (rank + 1) % nranks;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    for (int i = 0; i < (int)(bytes[rank] / sizeof(int)); i++)
        seg[rank][i] = h(rank, i, 1);
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    for (int q = 0; q < nranks; q++)
        for (int i = 0; i < (int)(bytes[q] / sizeof(int)); i++)
            CHECK(seg[q][i] == h(q, i, 1), "%s: rank %d reads %d of rank %d: %d", what, rank, i, q,
                  seg[q][i]);
    MPI_Barrier(node);
    /* now through another rank's pointer: each writes its right neighbour's segment */
    for (int i = 0; i < (int)(bytes[right] / sizeof(int)); i++)
        seg[right][i] = h(right, i, 2);
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    for (int i = 0; i < (int)(bytes[rank] / sizeof(int)); i++)
        CHECK(seg[rank][i] == h(rank, i, 2), "%s: own segment %d: %d", what, i, seg[rank][i]);
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);
}

/* Queries every segment; checks sizes, units and (contig) the layout. */
static void query_all(MPI_Win win, int *base, const MPI_Aint *bytes, int contig, int **seg,
                      const char *what)
{
    char *first = NULL;
    MPI_Aint off = 0;
    int by_hmpi = served(base);
    for (int q = 0; q < nranks; q++) {
        MPI_Aint size;
        int unit;
        int *p;
        CHECK(MPI_Win_shared_query(win, q, &size, &unit, &p) == MPI_SUCCESS, "%s: query", what);
        /* Open MPI 4.1 reports noncontiguous segments rounded up to whole pages */
        int size_ok = contig || by_hmpi ? size == bytes[q] : size >= bytes[q];
        CHECK(size_ok && unit == (int)sizeof(int), "%s: rank %d: size %ld unit %d", what, q,
              (long)size, unit);
        seg[q] = p;
        if (q == rank)
            CHECK(p == base, "%s: own segment at %p, base %p", what, (void *)p, (void *)base);
        /* An empty segment's base: MPI-4.1 names none (only MPI_PROC_NULL's when every
         * segment is empty), so a program sees its MPI's answer, with HMPI or without:
         * MPICH's is NULL, Open MPI's NULL when noncontiguous and otherwise the
         * segment's place in the block. */
        if (size == 0) {
#ifdef OPEN_MPI
            CHECK(contig ? !first || (char *)p == first + off : p == NULL,
                  "%s: empty segment %d at %p", what, q, (void *)p);
#else
            CHECK(p == NULL, "%s: empty segment %d at %p, not NULL", what, q, (void *)p);
#endif
        }
        if (size > 0 && !first)
            first = (char *)p - off;
        if (contig && size > 0)
            CHECK((char *)p == first + off, "%s: segment %d not contiguous", what, q);
        off += bytes[q];
    }
    MPI_Aint size;
    int unit;
    int *p;
    MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &p);
    int q0 = 0;
    while (q0 < nranks && bytes[q0] == 0)
        q0++;
    if (q0 < nranks)
        CHECK(size >= bytes[q0] && p == seg[q0], "%s: PROC_NULL query", what);
    else
        CHECK(size == 0, "%s: PROC_NULL query of an empty window", what);
    /* one address everywhere: HMPI's promise (any MPI may map segments anywhere) */
    if (by_hmpi) {
        uint64_t mine = (uint64_t)(uintptr_t)base, *all = malloc(sizeof(uint64_t) * (size_t)nranks);
        MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, node);
        for (int q = 0; q < nranks; q++)
            CHECK(bytes[q] == 0 || all[q] == (uint64_t)(uintptr_t)seg[q],
                  "%s: rank %d's segment is at %p here, %p there", what, q, (void *)seg[q],
                  (void *)(uintptr_t)all[q]);
        free(all);
    }
}

static void attrs(MPI_Win win, int *base, MPI_Aint bytes, const char *what)
{
    int *flavor, *model, flag;
    void *b;
    MPI_Aint *size;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "%s: flavor", what);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    CHECK(flag && *model == MPI_WIN_UNIFIED, "%s: model", what);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag);
    CHECK(flag && *size == bytes, "%s: size attribute %ld", what, (long)*size);
    MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag);
    CHECK(flag && (bytes == 0 || b == base), "%s: base attribute", what);
}

static void contiguous(void)
{
    const char *what = "contiguous";
    MPI_Aint *bytes = malloc(sizeof(MPI_Aint) * (size_t)nranks);
    for (int q = 0; q < nranks; q++)
        bytes[q] = q == 1 ? 0 : (MPI_Aint)((q + 1) * 24 * sizeof(int)); /* rank 1: empty */
    int *base, **seg = malloc(sizeof(int *) * (size_t)nranks);
    MPI_Win win;
    CHECK(MPI_Win_allocate_shared(bytes[rank], sizeof(int), MPI_INFO_NULL, node, &base, &win) ==
              MPI_SUCCESS,
          "allocate_shared");
    attrs(win, base, bytes[rank], what);
    query_all(win, base, bytes, 1, seg, what);
    loads_and_stores(win, seg, bytes, what);

    /* RMA on the same window: put into the right neighbour, accumulate into rank 0 */
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    static int v[4], one = 1;
    for (int i = 0; i < 4; i++)
        v[i] = h(rank, i, 3);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    if (bytes[right] >= (MPI_Aint)(4 * sizeof(int)))
        MPI_Put(v, 4, MPI_INT, right, 0, 4, MPI_INT, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, 5, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (bytes[rank] >= (MPI_Aint)(4 * sizeof(int)))
        for (int i = 0; i < 4; i++)
            CHECK(base[i] == h(left, i, 3), "%s: put landed %d", what, base[i]);
    if (rank == 0)
        CHECK(base[5] == h(0, 5, 2) + nranks, "%s: accumulate %d", what, base[5]);
    /* a load through a queried pointer sees the RMA results too */
    CHECK(seg[0][5] == h(0, 5, 2) + nranks, "%s: accumulate seen by rank %d", what, rank);
    MPI_Barrier(node);
    CHECK(MPI_Win_free(&win) == MPI_SUCCESS, "free");
    free(seg);
    free(bytes);
}

static void noncontig(void)
{
    const char *what = "noncontig";
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    MPI_Aint *bytes = malloc(sizeof(MPI_Aint) * (size_t)nranks);
    for (int q = 0; q < nranks; q++)
        bytes[q] = q == 1 ? 0 : (MPI_Aint)((1000 + q) * sizeof(int)); /* rank 1: empty */
    int *base, **seg = malloc(sizeof(int *) * (size_t)nranks);
    MPI_Win win;
    CHECK(MPI_Win_allocate_shared(bytes[rank], sizeof(int), info, node, &base, &win) == MPI_SUCCESS,
          "allocate_shared noncontig");
    MPI_Info_free(&info);
    attrs(win, base, bytes[rank], what);
    query_all(win, base, bytes, 0, seg, what);
    loads_and_stores(win, seg, bytes, what);
    CHECK(MPI_Win_free(&win) == MPI_SUCCESS, "free");
    free(seg);
    free(bytes);
}

static void self(void)
{
    for (int n = 100; n >= 0; n -= 100) {
        int *base, *p, unit;
        MPI_Aint size;
        MPI_Win win;
        CHECK(MPI_Win_allocate_shared(n * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                                      MPI_COMM_SELF, &base, &win) == MPI_SUCCESS,
              "self");
        MPI_Win_shared_query(win, 0, &size, &unit, &p);
        CHECK(size == n * (MPI_Aint)sizeof(int) && unit == (int)sizeof(int), "self: query");
        if (n) {
            CHECK(p == base, "self: base");
            MPI_Win_lock_all(0, win);
            for (int i = 0; i < n; i++)
                p[i] = i;
            MPI_Win_sync(win);
            int got;
            MPI_Get(&got, 1, MPI_INT, 0, n - 1, 1, MPI_INT, win);
            MPI_Win_flush(0, win);
            CHECK(got == n - 1, "self: get %d", got);
            MPI_Win_unlock_all(win);
        }
        CHECK(MPI_Win_free(&win) == MPI_SUCCESS, "self: free");
    }
}

static void empty(void)
{
    int *base, *p, unit;
    MPI_Aint size;
    MPI_Win win;
    CHECK(MPI_Win_allocate_shared(0, 1, MPI_INFO_NULL, node, &base, &win) == MPI_SUCCESS, "empty");
    MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &p);
    CHECK(size == 0, "empty: PROC_NULL size %ld", (long)size);
    MPI_Win_shared_query(win, rank, &size, &unit, &p);
    CHECK(size == 0 && p == base, "empty: own segment: size %ld at %p, base %p", (long)size,
          (void *)p, (void *)base);
#ifndef OPEN_MPI
    CHECK(p == NULL, "empty: own empty segment at %p, not NULL (as MPICH)", (void *)p);
#endif
    MPI_Win_fence(0, win);
    MPI_Win_fence(0, win);
    CHECK(MPI_Win_free(&win) == MPI_SUCCESS, "empty: free");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, wrank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &nranks);
    for (int round = 0; round < 3; round++) {
        contiguous();
        noncontig();
        self();
        empty();
    }
    MPI_Comm_free(&node);
    if (wrank == 0)
        printf("rma_shared: %d ranks, %d per node: ok\n", wsize, nranks);
    MPI_Finalize();
    return 0;
}
