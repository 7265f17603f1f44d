/* rma_atomic.c: accumulate atomicity under contention from every rank, on windows over
 * MPI-allocated, heap and private (global) memory:
 *   sum       every rank adds 1 to the same element ITERS times (MPI_Accumulate, flushed
 *             now and then, in a lock_all epoch; then again under fence), and int64
 *             and double sums into a neighbouring element: totals must be exact;
 *   tickets   every rank takes TICKETS tickets with MPI_Fetch_and_op(SUM, 1): together
 *             they must be exactly 0 .. n*TICKETS-1;
 *   mutex     a spin lock made of MPI_Compare_and_swap guards a non-atomic
 *             get-increment-put of a counter; released with MPI_Fetch_and_op(REPLACE);
 *             the counter must count every critical section;
 *   no_op     a reader's MPI_Get_accumulate(NO_OP) of a counter others increment never
 *             sees it go down.
 * Usage: rma_atomic [ITERS] (default 10000; the other phases scale with it: ITERS/50
 * tickets, ITERS/250 critical sections, ITERS/20 reads). Through the MPI below every
 * operation waits for the target's progress, so the CTest variants that go there use
 * fewer. */
#include "rma_common.h"

#include <sched.h>
#include <stdio.h>

enum { TICKETS_MAX = 1000 };

static int rank, nranks, iters = 10000, nticket, ncritical, nread;

/* Element layout of the window (int64 slots). */
enum {
    E_SUM = 0,
    E_SUM64 = 1,
    E_DSUM = 2,
    E_TICKET = 3,
    E_MUTEX = 4,
    E_COUNTER = 5,
    E_FENCE = 6,
    E_MONO = 7,
    E_N = 8
};

typedef struct {
    MPI_Win win;
    int64_t *base;
    void *to_free;
} awin_t;

static void make(awin_t *w, wkind_t kind)
{
    static int64_t global[E_N];
    MPI_Aint bytes = E_N * sizeof(int64_t);
    memset(w, 0, sizeof *w);
    if (kind == WK_ALLOCATE) {
        MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &w->base, &w->win);
    } else {
        w->base = kind == WK_CREATE_HEAP ? (w->to_free = malloc((size_t)bytes)) : global;
        MPI_Win_create(w->base, bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
    }
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win);
    memset(w->base, 0, (size_t)bytes);
    MPI_Win_unlock(rank, w->win);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void drop(awin_t *w)
{
    MPI_Win_free(&w->win);
    free(w->to_free);
}

/* The target of the contended element: the last rank, so that with simulated nodes it
 * is local to some origins and remote to others. */
static int target(void) { return nranks - 1; }

static int64_t read_own(awin_t *w, int e)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win);
    int64_t v = w->base[e];
    MPI_Win_unlock(rank, w->win);
    return v;
}

static void sums(awin_t *w, const char *what)
{
    int t = target();
    int one = 1;
    int64_t one64 = 1;
    double half = 0.5;
    MPI_Win_lock_all(0, w->win);
    for (int i = 0; i < iters; i++) {
        /* an int at the start of element E_SUM (nothing else touches that element) */
        MPI_Accumulate(&one, 1, MPI_INT, t, E_SUM, 1, MPI_INT, MPI_SUM, w->win);
        if (i % 4 == 0)
            MPI_Accumulate(&one64, 1, MPI_INT64_T, t, E_SUM64, 1, MPI_INT64_T, MPI_SUM, w->win);
        if (i % 8 == 0)
            MPI_Accumulate(&half, 1, MPI_DOUBLE, t, E_DSUM, 1, MPI_DOUBLE, MPI_SUM, w->win);
        if (i % 64 == 0)
            MPI_Win_flush(t, w->win);
    }
    MPI_Win_unlock_all(w->win);
    /* the same under fence */
    MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win);
    for (int i = 0; i < iters / 10; i++)
        MPI_Accumulate(&one64, 1, MPI_INT64_T, t, E_FENCE, 1, MPI_INT64_T, MPI_SUM, w->win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == t) {
        int64_t v;
        int lo;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win);
        memcpy(&lo, &w->base[E_SUM], sizeof lo);
        int64_t s64 = w->base[E_SUM64], fence = w->base[E_FENCE];
        double d;
        memcpy(&d, &w->base[E_DSUM], sizeof d);
        MPI_Win_unlock(rank, w->win);
        CHECK(lo == nranks * iters, "%s: int sum %d, want %d", what, lo, nranks * iters);
        v = (int64_t)nranks * ((iters + 3) / 4);
        CHECK(s64 == v, "%s: int64 sum %lld, want %lld", what, (long long)s64, (long long)v);
        double dv = 0.5 * nranks * ((iters + 7) / 8);
        CHECK(d == dv, "%s: double sum %g, want %g", what, d, dv);
        CHECK(fence == (int64_t)nranks * (iters / 10), "%s: fence sum %lld", what,
              (long long)fence);
    }
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void tickets(awin_t *w, const char *what)
{
    int t = target();
    int64_t one = 1, mine[TICKETS_MAX];
    MPI_Win_lock_all(0, w->win);
    for (int i = 0; i < nticket; i++) {
        MPI_Fetch_and_op(&one, &mine[i], MPI_INT64_T, t, E_TICKET, MPI_SUM, w->win);
        if (i % 8 == 7)
            MPI_Win_flush(t, w->win);
    }
    MPI_Win_unlock_all(w->win);
    int64_t *all = rank == 0 ? malloc(sizeof(int64_t) * (size_t)nticket * (size_t)nranks) : NULL;
    MPI_Gather(mine, nticket, MPI_INT64_T, all, nticket, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(all, (size_t)nticket * (size_t)nranks, sizeof(int64_t), cmp64);
        for (int i = 0; i < nticket * nranks; i++)
            CHECK(all[i] == i, "%s: ticket %d is %lld", what, i, (long long)all[i]);
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == t)
        CHECK(read_own(w, E_TICKET) == (int64_t)nticket * nranks, "%s: tickets", what);
}

static void mutex(awin_t *w, const char *what)
{
    int t = target();
    int64_t free_ = 0, me = rank + 1, old, zero = 0, count;
    MPI_Win_lock_all(0, w->win);
    for (int i = 0; i < ncritical; i++) {
        for (;;) {
            MPI_Compare_and_swap(&me, &free_, &old, MPI_INT64_T, t, E_MUTEX, w->win);
            MPI_Win_flush(t, w->win);
            if (old == 0)
                break;
            CHECK(old >= 1 && old <= nranks && old != me, "%s: mutex holds %lld", what,
                  (long long)old);
            sched_yield(); /* oversubscribed: let the holder run */
        }
        MPI_Get(&count, 1, MPI_INT64_T, t, E_COUNTER, 1, MPI_INT64_T, w->win);
        MPI_Win_flush(t, w->win);
        count++;
        MPI_Put(&count, 1, MPI_INT64_T, t, E_COUNTER, 1, MPI_INT64_T, w->win);
        MPI_Win_flush(t, w->win);
        MPI_Fetch_and_op(&zero, &old, MPI_INT64_T, t, E_MUTEX, MPI_REPLACE, w->win);
        MPI_Win_flush(t, w->win);
        CHECK(old == me, "%s: released a mutex held by %lld", what, (long long)old);
    }
    MPI_Win_unlock_all(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == t) {
        count = read_own(w, E_COUNTER);
        CHECK(count == (int64_t)ncritical * nranks, "%s: counter %lld, want %d", what,
              (long long)count, ncritical * nranks);
    }
}

/* Rank 0 reads while the others add: what it reads never decreases. */
static void monotonic(awin_t *w, const char *what)
{
    int t = target();
    int64_t one = 1, v, last = -1;
    MPI_Win_lock_all(0, w->win);
    for (int i = 0; i < nread; i++) {
        if (rank == 0 && nranks > 1) {
            MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &v, 1, MPI_INT64_T, t, E_MONO, 1, MPI_INT64_T,
                               MPI_NO_OP, w->win);
            MPI_Win_flush(t, w->win);
            CHECK(v >= last, "%s: counter went from %lld to %lld", what, (long long)last,
                  (long long)v);
            last = v;
        } else {
            MPI_Accumulate(&one, 1, MPI_INT64_T, t, E_MONO, 1, MPI_INT64_T, MPI_SUM, w->win);
            MPI_Win_flush(t, w->win);
        }
    }
    MPI_Win_unlock_all(w->win);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc > 1)
        iters = atoi(argv[1]);
    CHECK(iters >= 250 && iters / 50 <= TICKETS_MAX, "ITERS %d out of range", iters);
    nticket = iters / 50, ncritical = iters / 250, nread = iters / 20;
    const wkind_t kinds[] = {WK_ALLOCATE, WK_CREATE_HEAP, WK_CREATE_GLOBAL};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s np%d", wkind_names[kinds[k]], nranks);
        awin_t w;
        make(&w, kinds[k]);
        sums(&w, what);
        tickets(&w, what);
        mutex(&w, what);
        monotonic(&w, what);
        drop(&w);
    }
    if (rank == 0)
        printf("rma_atomic: %d ranks: ok\n", nranks);
    MPI_Finalize();
    return 0;
}
