/* rma_small.c: windows over the smallest blocks malloc makes (one to four ints, one
 * double), created and freed again and again as a program's loop would: the window's
 * MPI_WIN_BASE is the buffer the program gave, and in fence epochs MPI_Accumulate from
 * every rank, MPI_Put to the right neighbour and MPI_Get from the left one land exactly
 * there. On simulated nodes the window spans nodes and these go through the MPI below
 * (MPICH 4.0.2 over UCX took the base of a window over an 8-byte-aligned block 8 bytes
 * too low, docs/design.md, "The shared heap"). Plain MPI: passes on any correct MPI. */
#define CHECK_WITH_MPI
#include "../../check.h"

#include <mpi.h>
#include <stdlib.h>

enum { REPS = 4, MAXN = 4 };

static int rank, nranks;

static void check_base(MPI_Win win, const void *buf, const char *what, int n)
{
    void *base = NULL;
    int flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    CHECK(flag && base == buf, "%s window of %d: MPI_WIN_BASE %p, the buffer given %p", what, n,
          base, buf);
}

/* A window of n ints over malloc(n * sizeof(int)): accumulate from every rank, then a
 * put to the right and a get from the left, each checked element by element. */
static void ints(int n, int rep)
{
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    int *win_buf = malloc((size_t)n * sizeof(int));
    int *origin = malloc((size_t)n * sizeof(int));
    int *got = malloc((size_t)n * sizeof(int));
    CHECK(win_buf && origin && got, "malloc");
    for (int i = 0; i < n; i++) {
        win_buf[i] = 0;
        origin[i] = 1000 * rank + 10 * i + rep + 1;
        got[i] = -1;
    }
    MPI_Win win;
    MPI_Win_create(win_buf, (MPI_Aint)n * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    check_base(win, win_buf, "int", n);

    MPI_Win_fence(0, win);
    for (int t = 0; t < nranks; t++)
        MPI_Accumulate(origin, n, MPI_INT, t, 0, n, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < n; i++) {
        /* sum over ranks r of 1000 r + 10 i + rep + 1 */
        int want = 1000 * nranks * (nranks - 1) / 2 + nranks * (10 * i + rep + 1);
        CHECK(win_buf[i] == want,
              "int window of %d, rep %d: element %d is %d after the "
              "accumulates, not %d",
              n, rep, i, win_buf[i], want);
    }

    MPI_Win_fence(0, win);
    MPI_Put(origin, n, MPI_INT, right, 0, n, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Get(got, n, MPI_INT, left, 0, n, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < n; i++) {
        int from_left = 1000 * left + 10 * i + rep + 1;
        int from_left_left = 1000 * ((left + nranks - 1) % nranks) + 10 * i + rep + 1;
        CHECK(win_buf[i] == from_left,
              "int window of %d, rep %d: element %d is %d after "
              "the put from rank %d, not %d",
              n, rep, i, win_buf[i], left, from_left);
        CHECK(got[i] == from_left_left,
              "int window of %d, rep %d: got %d from rank %d's "
              "element %d, not %d",
              n, rep, got[i], left, i, from_left_left);
    }
    MPI_Win_free(&win);
    free(got);
    free(origin);
    free(win_buf);
}

/* A window of one double over malloc(sizeof(double)): every rank adds its value. */
static void one_double(int rep)
{
    double *win_buf = malloc(sizeof(double)), *origin = malloc(sizeof(double));
    CHECK(win_buf && origin, "malloc");
    *win_buf = 0.5;
    *origin = rank + 0.25 * rep;
    MPI_Win win;
    MPI_Win_create(win_buf, sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    check_base(win, win_buf, "double", 1);
    MPI_Win_fence(0, win);
    for (int t = 0; t < nranks; t++)
        MPI_Accumulate(origin, 1, MPI_DOUBLE, t, 0, 1, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_fence(0, win);
    double want = 0.5 + nranks * (nranks - 1) / 2.0 + nranks * 0.25 * rep; /* exact */
    CHECK(*win_buf == want, "double window, rep %d: %g after the accumulates, not %g", rep,
          *win_buf, want);
    MPI_Win_free(&win);
    free(origin);
    free(win_buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int rep = 0; rep < REPS; rep++) {
        for (int n = 1; n <= MAXN; n++)
            ints(n, rep);
        one_double(rep);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("rma_small: OK (%d ranks)\n", nranks);
    MPI_Finalize();
    return 0;
}
