/* rma_large.c: MPI 4's large-count one-sided calls on HMPI's windows (MPICH 4 only; the
 * test is registered where the MPI below has them). Windows from MPI_Win_allocate_c,
 * MPI_Win_create_c and MPI_Win_allocate_shared_c (MPI_Win_shared_query_c gives the
 * neighbour's segment, read directly); MPI_Put_c/Get_c in fence epochs and
 * MPI_Rput_c/Rget_c in a lock_all epoch, data checked element by element; a shared
 * counter that every rank increments under contention through MPI_Accumulate_c,
 * MPI_Accumulate, MPI_Raccumulate_c, MPI_Get_accumulate_c and MPI_Rget_accumulate_c at
 * once (exact only if one implementation does all of them atomically); a put and a get
 * of more than 2 GiB (count past INT_MAX) between ranks 0 and 1. The runner checks
 * from HMPI_STATS that the operations went through HMPI's windows. */
#include "../p2p_common.h"

#include <limits.h>

#define N 1000
#define ITERS 200
#define BIG ((size_t)1 << 31 | 4099)

static int rank, size, right, left;

static double val(int owner, int i) { return owner * 1e6 + i + 0.25; }

#if MPI_VERSION >= 4
static void windows_and_moves(void)
{
    double *a, *mine = malloc(N * sizeof *mine), *got = malloc(N * sizeof *got);
    MPI_Win wa;
    CHECK(MPI_Win_allocate_c((MPI_Aint)(N * sizeof(double)), (MPI_Aint)sizeof(double),
                             MPI_INFO_NULL, MPI_COMM_WORLD, &a, &wa) == MPI_SUCCESS,
          "MPI_Win_allocate_c");
    for (int i = 0; i < N; i++) {
        mine[i] = val(rank, i);
        a[i] = -1;
    }
    /* Fence: put mine into right's window, then get left's window back. */
    MPI_Win_fence(0, wa);
    MPI_Put_c(mine, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, wa);
    MPI_Win_fence(0, wa);
    for (int i = 0; i < N; i++)
        CHECK(a[i] == val(left, i), "MPI_Put_c: a[%d] = %g, expected %g", i, a[i], val(left, i));
    MPI_Get_c(got, N, MPI_DOUBLE, left, 0, N, MPI_DOUBLE, wa);
    MPI_Win_fence(0, wa);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == val((left + size - 1) % size, i), "MPI_Get_c: got[%d] = %g", i, got[i]);
    /* Lock_all: request-based, half a window each, at a displacement. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, wa);
    MPI_Request rq[2];
    MPI_Rput_c(mine, N / 2, MPI_DOUBLE, right, N / 2, N / 2, MPI_DOUBLE, wa, &rq[0]);
    MPI_Waitall(1, rq, MPI_STATUSES_IGNORE);
    MPI_Win_flush_all(wa);
    MPI_Win_unlock_all(wa);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N / 2; i++)
        CHECK(a[N / 2 + i] == val(left, i), "MPI_Rput_c: a[%d] = %g", N / 2 + i, a[N / 2 + i]);
    MPI_Win_lock_all(0, wa);
    MPI_Rget_c(got, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, wa, &rq[1]);
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    MPI_Win_unlock_all(wa);
    for (int i = 0; i < N; i++) {
        double want = i < N / 2 ? val(rank, i) : val(rank, i - N / 2);
        CHECK(got[i] == want, "MPI_Rget_c: got[%d] = %g, expected %g", i, got[i], want);
    }
    MPI_Win_free(&wa);

    /* A shared window: the neighbour's segment through MPI_Win_shared_query_c. */
    double *s;
    MPI_Win ws;
    MPI_Win_allocate_shared_c((MPI_Aint)(N * sizeof(double)), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &s,
                              &ws);
    MPI_Win_lock_all(0, ws);
    for (int i = 0; i < N; i++)
        s[i] = val(rank, i);
    MPI_Win_sync(ws);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(ws);
    MPI_Aint seg = 0, du = 0;
    double *theirs = NULL;
    CHECK(MPI_Win_shared_query_c(ws, right, &seg, &du, &theirs) == MPI_SUCCESS,
          "MPI_Win_shared_query_c");
    CHECK(seg == (MPI_Aint)(N * sizeof(double)) && du == 8 && theirs,
          "MPI_Win_shared_query_c: size %ld, disp_unit %ld, %p", (long)seg, (long)du,
          (void *)theirs);
    for (int i = 0; i < N; i++)
        CHECK(theirs[i] == val(right, i), "shared segment of %d: [%d] = %g", right, i, theirs[i]);
    MPI_Win_unlock_all(ws);
    MPI_Win_free(&ws);
    free(mine);
    free(got);
}

/* Every rank adds 1 to rank 0's counter ITERS times in each of five ways at once. */
static void counter(void)
{
    long *c = malloc(sizeof *c);
    *c = 0;
    MPI_Win w;
    MPI_Win_create_c(c, (MPI_Aint)sizeof *c, (MPI_Aint)sizeof *c, MPI_INFO_NULL, MPI_COMM_WORLD,
                     &w);
    long one = 1, old = 0;
    MPI_Win_lock_all(0, w);
    for (int i = 0; i < ITERS; i++) {
        MPI_Request rq[2];
        MPI_Accumulate_c(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, w);
        MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, w);
        MPI_Raccumulate_c(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, w, &rq[0]);
        MPI_Get_accumulate_c(&one, 1, MPI_LONG, &old, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, w);
        MPI_Win_flush(0, w);
        MPI_Rget_accumulate_c(&one, 1, MPI_LONG, &old, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, w,
                              &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
    MPI_Win_unlock_all(w);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(*c == 5L * ITERS * size, "counter %ld, expected %ld", *c, 5L * ITERS * size);
    MPI_Win_free(&w);
    free(c);
}

/* More than 2 GiB into rank 1's window from rank 0, and back out. */
static void big(void)
{
    MPI_Comm pair = p2p_first_pair();
    if (pair == MPI_COMM_NULL)
        return;
    unsigned char *win_mem;
    MPI_Win w;
    MPI_Win_allocate_c(rank == 1 ? (MPI_Aint)BIG : 0, 1, MPI_INFO_NULL, pair, &win_mem, &w);
    unsigned char *buf = p2p_malloc(BIG);
    uint64_t key = p2p_key(0, 1, 0, 0x1A26E);
    if (rank == 0)
        p2p_fill(buf, BIG, key);
    MPI_Win_fence(0, w);
    if (rank == 0)
        MPI_Put_c(buf, (MPI_Count)BIG, MPI_BYTE, 1, 0, (MPI_Count)BIG, MPI_BYTE, w);
    MPI_Win_fence(0, w);
    if (rank == 1)
        P2P_CHECK_DATA(win_mem, BIG, key, "MPI_Put_c of %zu bytes", BIG);
    if (rank == 0) {
        memset(buf, 0, BIG);
        MPI_Get_c(buf, (MPI_Count)BIG, MPI_BYTE, 1, 0, (MPI_Count)BIG, MPI_BYTE, w);
    }
    MPI_Win_fence(0, w);
    if (rank == 0)
        P2P_CHECK_DATA(buf, BIG, key, "MPI_Get_c of %zu bytes", BIG);
    free(buf);
    MPI_Win_free(&w);
    MPI_Comm_free(&pair);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
#if MPI_VERSION >= 4
    windows_and_moves();
    counter();
    big();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("rma_large: OK\n");
#else
    if (rank == 0)
        printf("rma_large: the MPI below has no MPI 4 large-count calls\n");
#endif
    MPI_Finalize();
    return 0;
}
