/* rma_bottom.c: one-sided operations whose buffers are given as MPI_BOTTOM plus a
 * datatype of absolute addresses (MPI-4.1 §5.1.12: "the buffer argument MPI_BOTTOM ...
 * the displacements in the datatype are absolute addresses"; §12.2: for a dynamic
 * window the target displacement is an address, so target_disp 0 with a target type of
 * absolute addresses names the target memory the same way). Origin buffers at MPI_BOTTOM
 * with a non-contiguous type (two runs) and a contiguous one (one run), result buffers
 * at MPI_BOTTOM, and targets addressed by absolute types on dynamic windows, through
 * MPI_Put, MPI_Get, MPI_Accumulate, MPI_Get_accumulate (fence epochs) and MPI_Rput,
 * MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate (a lock_all epoch), on every window
 * kind, to the next rank (on another simulated node under HMPI_NODE_SIZE=2 for some).
 * Every int of origin, result and target is checked. */
#include "rma_common.h"
#include "../same_node.h"

#include <stdio.h>

enum { N = 16, NDATA = 7 }; /* ints in a window; ints an operation moves */

static int rank, nranks;

/* The 7 ints an operation moves as two runs (3 then 4) of a (16-int) array a, or as
 * one run of 7 from a[2]: a datatype of absolute addresses, for MPI_BOTTOM. */
static MPI_Datatype abs_type(const int *a, int contiguous)
{
    int len[2] = {3, 4};
    MPI_Aint disp[2];
    MPI_Get_address(a + 1, &disp[0]);
    MPI_Get_address(a + 8, &disp[1]);
    if (contiguous) {
        len[0] = NDATA;
        MPI_Get_address(a + 2, &disp[0]);
    }
    MPI_Datatype t;
    MPI_Type_create_hindexed(contiguous ? 1 : 2, len, disp, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Index of the k-th of the 7 ints in an array laid out as abs_type says. */
static int at(int k, int contiguous) { return contiguous ? 2 + k : k < 3 ? 1 + k : 8 + (k - 3); }

static int val(int who, int round, int k) { return 1000 * (who + 1) + 100 * round + k; }

/* Checks a 16-int array: the 7 places of the layout hold want(k), the others filler. */
#define CHECK_LAYOUT(a, contiguous, filler, want, ...)                                     \
    do {                                                                                   \
        for (int i_ = 0, k_ = 0; i_ < N; i_++) {                                           \
            int in_ = k_ < NDATA && at(k_, contiguous) == i_;                              \
            int w_ = in_ ? (want) : (filler);                                              \
            char what_[160];                                                               \
            snprintf(what_, sizeof what_, __VA_ARGS__);                                    \
            CHECK((a)[i_] == w_, "%s: int %d is %d, expected %d", what_, i_, (a)[i_], w_); \
            if (in_)                                                                       \
                k_++;                                                                      \
        }                                                                                  \
    } while (0)

static int obuf[N], rbuf[N];

/* The target's window: ints 0..6 of it (a contiguous target type). */
static void check_target(twin_t *w, int from, int round, int acc, const char *what)
{
    tw_self_begin(w, rank);
    for (int k = 0; k < NDATA; k++) {
        int want = acc ? 5 + val(from, round, k) : val(from, round, k);
        CHECK(w->base[k] == want, "%s (window %s): target int %d is %d, expected %d", what,
              wkind_names[w->kind], k, w->base[k], want);
    }
    for (int k = NDATA; k < N; k++)
        CHECK(w->base[k] == -7, "%s: target int %d written (%d)", what, k, w->base[k]);
    tw_self_end(w, rank);
}

static void fill_window(twin_t *w, int first)
{
    tw_self_begin(w, rank);
    for (int k = 0; k < N; k++)
        w->base[k] = k < NDATA ? first : -7;
    tw_self_end(w, rank);
}

static void fill_origin(int round, int contiguous)
{
    for (int i = 0; i < N; i++)
        obuf[i] = -1;
    for (int k = 0; k < NDATA; k++)
        obuf[at(k, contiguous)] = val(rank, round, k);
    for (int i = 0; i < N; i++)
        rbuf[i] = -2;
}

/* Origin (and result) buffers at MPI_BOTTOM. */
static void origin_side(twin_t *w, int contiguous)
{
    int to = (rank + 1) % nranks, from = (rank - 1 + nranks) % nranks;
    MPI_Datatype ot = abs_type(obuf, contiguous), rt = abs_type(rbuf, contiguous);
    const char *shape = contiguous ? "contiguous" : "two runs";
    MPI_Aint d0 = tw_disp(w, to, 0);
    for (int op = 0; op < 8; op++) {
        int round = op;
        fill_origin(round, contiguous);
        fill_window(w, op == 2 || op == 3 || op == 6 || op == 7 ? 5 : 0);
        if (op == 1 || op == 5) { /* a get: the target holds the data */
            tw_self_begin(w, rank);
            for (int k = 0; k < NDATA; k++)
                w->base[k] = val(rank, round, k);
            tw_self_end(w, rank);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Request rq = MPI_REQUEST_NULL;
        const char *name;
        if (op < 4)
            MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win);
        else
            MPI_Win_lock_all(0, w->win);
        switch (op) {
        case 0:
            name = "MPI_Put from MPI_BOTTOM";
            CHECK(MPI_Put(MPI_BOTTOM, 1, ot, to, d0, NDATA, MPI_INT, w->win) == MPI_SUCCESS, "%s",
                  name);
            break;
        case 1:
            name = "MPI_Get into MPI_BOTTOM";
            CHECK(MPI_Get(MPI_BOTTOM, 1, rt, to, d0, NDATA, MPI_INT, w->win) == MPI_SUCCESS, "%s",
                  name);
            break;
        case 2:
            name = "MPI_Accumulate from MPI_BOTTOM";
            CHECK(MPI_Accumulate(MPI_BOTTOM, 1, ot, to, d0, NDATA, MPI_INT, MPI_SUM, w->win) ==
                      MPI_SUCCESS,
                  "%s", name);
            break;
        case 3:
            name = "MPI_Get_accumulate, both at MPI_BOTTOM";
            CHECK(MPI_Get_accumulate(MPI_BOTTOM, 1, ot, MPI_BOTTOM, 1, rt, to, d0, NDATA, MPI_INT,
                                     MPI_SUM, w->win) == MPI_SUCCESS,
                  "%s", name);
            break;
        case 4:
            name = "MPI_Rput from MPI_BOTTOM";
            CHECK(MPI_Rput(MPI_BOTTOM, 1, ot, to, d0, NDATA, MPI_INT, w->win, &rq) == MPI_SUCCESS,
                  "%s", name);
            break;
        case 5:
            name = "MPI_Rget into MPI_BOTTOM";
            CHECK(MPI_Rget(MPI_BOTTOM, 1, rt, to, d0, NDATA, MPI_INT, w->win, &rq) == MPI_SUCCESS,
                  "%s", name);
            break;
        case 6:
            name = "MPI_Raccumulate from MPI_BOTTOM";
            CHECK(MPI_Raccumulate(MPI_BOTTOM, 1, ot, to, d0, NDATA, MPI_INT, MPI_SUM, w->win,
                                  &rq) == MPI_SUCCESS,
                  "%s", name);
            break;
        default:
            name = "MPI_Rget_accumulate, both at MPI_BOTTOM";
            CHECK(MPI_Rget_accumulate(MPI_BOTTOM, 1, ot, MPI_BOTTOM, 1, rt, to, d0, NDATA, MPI_INT,
                                      MPI_SUM, w->win, &rq) == MPI_SUCCESS,
                  "%s", name);
        }
        if (op < 4) {
            MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win);
        } else {
            CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS, "%s: MPI_Wait", name);
            MPI_Win_unlock_all(w->win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        char what[128];
        snprintf(what, sizeof what, "%s (%s, window %s)", name, shape, wkind_names[w->kind]);
        CHECK_LAYOUT(obuf, contiguous, -1, val(rank, round, k_), "%s: origin", what);
        if (op == 1 || op == 5) /* got the target's values */
            CHECK_LAYOUT(rbuf, contiguous, -2, val(to, round, k_), "%s: result", what);
        else if (op == 3 || op == 7) /* got the target's old values: 5 */
            CHECK_LAYOUT(rbuf, contiguous, -2, 5, "%s: result", what);
        else
            CHECK_LAYOUT(rbuf, contiguous, -2, -2, "%s: untouched", what);
        if (op != 1 && op != 5)
            check_target(w, from, round, op == 2 || op == 3 || op == 6 || op == 7, what);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Type_free(&ot);
    MPI_Type_free(&rt);
}

/* A dynamic window's target named by MPI_BOTTOM: target_disp 0 and a target type of
 * the target's absolute addresses (two runs of its window). */
static void target_side(twin_t *w)
{
    int to = (rank + 1) % nranks, from = (rank - 1 + nranks) % nranks;
    int len[2] = {3, 4};
    MPI_Aint disp[2] = {w->disp0[to] + 1 * (MPI_Aint)sizeof(int),
                        w->disp0[to] + 8 * (MPI_Aint)sizeof(int)};
    MPI_Datatype tt;
    MPI_Type_create_hindexed(2, len, disp, MPI_INT, &tt);
    MPI_Type_commit(&tt);
    for (int op = 0; op < 3; op++) {
        int src[NDATA], got[NDATA + 1];
        for (int k = 0; k < NDATA; k++)
            src[k] = val(rank, 10 + op, k);
        for (int k = 0; k <= NDATA; k++)
            got[k] = -3;
        tw_self_begin(w, rank);
        for (int i = 0; i < N; i++)
            w->base[i] = -7;
        for (int k = 0; k < NDATA; k++)
            w->base[at(k, 0)] = op == 1 ? val(rank, 10 + op, k) : op == 2 ? 5 : -7;
        tw_self_end(w, rank);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win);
        const char *name = op == 0   ? "MPI_Put to MPI_BOTTOM"
                           : op == 1 ? "MPI_Get from MPI_BOTTOM"
                                     : "MPI_Accumulate to MPI_BOTTOM";
        int rc = op == 0   ? MPI_Put(src, NDATA, MPI_INT, to, 0, 1, tt, w->win)
                 : op == 1 ? MPI_Get(got, NDATA, MPI_INT, to, 0, 1, tt, w->win)
                           : MPI_Accumulate(src, NDATA, MPI_INT, to, 0, 1, tt, MPI_SUM, w->win);
        CHECK(rc == MPI_SUCCESS, "%s: returned %d", name, rc);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (op == 1) {
            for (int k = 0; k < NDATA; k++)
                CHECK(got[k] == val(to, 11, k), "%s: int %d is %d, expected %d", name, k, got[k],
                      val(to, 11, k));
            CHECK(got[NDATA] == -3, "%s: wrote past the origin buffer", name);
        } else {
            tw_self_begin(w, rank);
            CHECK_LAYOUT(w->base, 0, -7, (op == 2 ? 5 : 0) + val(from, 10 + op, k_),
                         "%s (window %s): target", name, wkind_names[w->kind]);
            tw_self_end(w, rank);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Type_free(&tt);
}

#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 5
int HMPI_Active(void) __attribute__((weak));

/* Whether the MPI below carries operations to peer: HMPI off, or peer on another
 * (simulated) node, as HMPI's MPI_Comm_split_type says. */
static int below_carries(int peer) { return !HMPI_Active || !HMPI_Active() || !same_node(peer); }
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const wkind_t kinds[] = {WK_ALLOCATE, WK_CREATE_HEAP, WK_CREATE_GLOBAL, WK_DYNAMIC_HEAP};
    for (int i = 0; i < 4; i++) {
        twin_t w;
        tw_create(&w, kinds[i], N, MPI_COMM_WORLD, NULL);
        origin_side(&w, 0);
        origin_side(&w, 1);
        /* Open MPI 5's osc/rdma refuses a dynamic window's target given as
         * target_disp 0 and absolute addresses (MPI_ERR_RMA_RANGE, without HMPI too):
         * there the part runs only where HMPI carries it, on every rank or none. */
        int skip = 0;
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 5
        int mine = below_carries((rank + 1) % nranks);
        MPI_Allreduce(&mine, &skip, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
#endif
        if (kinds[i] == WK_DYNAMIC_HEAP && !skip)
            target_side(&w);
        tw_free(&w);
    }
    if (rank == 0)
        printf("rma_bottom: OK\n");
    MPI_Finalize();
    return 0;
}
