/* rma_errors.c: misuse of RMA epochs is reported as MPI_ERR_RMA_SYNC through the
 * window's error handler (a counting handler here), and the window stays usable.
 * Checked on windows over MPI-allocated and heap memory, spanning the job.
 *   everywhere (MPICH and Open MPI agree): put/get/accumulate outside any epoch or
 *     after MPI_MODE_NOSUCCEED, unlock without lock, unlock_all without lock_all,
 *     wait without post, flush/flush_all outside a passive epoch, fence inside a lock
 *     epoch, a target rank out of range; except that Open MPI 5 (osc/sm) lets the
 *     operations, flushes and fence through on an MPI_Win_allocate window (the standard
 *     calls them erroneous, not detected): there, without HMPI, either answer passes;
 *   under HMPI (stricter than the MPIs below, as the standard reads): complete without
 *     start, lock twice, start twice or inside a lock epoch, post twice, request-based
 *     operations outside a passive epoch, a target range outside the window
 *     (MPI_ERR_RMA_RANGE), a bad lock type (MPI_ERR_LOCKTYPE), a user-defined op
 *     (MPI_ERR_OP), MPI_Win_free inside an epoch. */
#include "rma_common.h"

#include <hmpi.h>
#include <stdio.h>

static int rank, nranks, raised, last_code;

static void counting(MPI_Win *win, int *code, ...)
{
    raised++;
    last_code = *code;
}

static void user_op(void *in, void *inout, int *len, MPI_Datatype *type) {}

/* Runs call, expects error class cls raised through the handler. */
#define EXPECT(cls, call)                                                                    \
    do {                                                                                     \
        int before_ = raised, rc_ = (call), c_;                                              \
        MPI_Error_class(rc_, &c_);                                                           \
        CHECK(c_ == (cls), "%s: %s returned class %d, want %d (%s)", what, #call, c_, (cls), \
              #cls);                                                                         \
        CHECK(raised == before_ + 1, "%s: %s: handler called %d times", what, #call,         \
              raised - before_);                                                             \
        MPI_Error_class(last_code, &c_);                                                     \
        CHECK(c_ == (cls), "%s: %s: handler got class %d", what, #call, c_);                 \
    } while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s: %s failed", what, #call)

/* EXPECT where the MPI below is known to detect it, else success or that class. */
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
#define BELOW_LAX 1
#else
#define BELOW_LAX 0
#endif
#define EXPECT_OR_LAX(cls, call)                                                                  \
    do {                                                                                          \
        if (strict || !BELOW_LAX) {                                                               \
            EXPECT(cls, call);                                                                    \
        } else {                                                                                  \
            int rc_ = (call), c_;                                                                 \
            MPI_Error_class(rc_, &c_);                                                            \
            CHECK(c_ == MPI_SUCCESS || c_ == (cls), "%s: %s returned class %d", what, #call, c_); \
        }                                                                                         \
    } while (0)

static void run(wkind_t kind)
{
    char what[64];
    snprintf(what, sizeof what, "%s np%d", wkind_names[kind], nranks);
    int strict = HMPI_Active(), t = (rank + 1) % nranks, l = (rank + nranks - 1) % nranks;
    twin_t tw;
    tw_create(&tw, kind, 64, MPI_COMM_WORLD, NULL);
    MPI_Win win = tw.win;
    MPI_Errhandler eh;
    MPI_Win_create_errhandler(counting, &eh);
    MPI_Win_set_errhandler(win, eh);
    MPI_Errhandler_free(&eh);
    static int v = 7, res, two[2];
    MPI_Request rq;
    MPI_Group world, one, from;
    MPI_Win_get_group(win, &world);
    MPI_Group_incl(world, 1, &t, &one);  /* my target */
    MPI_Group_incl(world, 1, &l, &from); /* my origin */

    EXPECT_OR_LAX(MPI_ERR_RMA_SYNC, MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win));
    EXPECT_OR_LAX(MPI_ERR_RMA_SYNC, MPI_Get(&res, 1, MPI_INT, t, 0, 1, MPI_INT, win));
    EXPECT_OR_LAX(MPI_ERR_RMA_SYNC, MPI_Accumulate(&v, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock(t, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_wait(win));
    EXPECT_OR_LAX(MPI_ERR_RMA_SYNC, MPI_Win_flush(t, win));
    EXPECT_OR_LAX(MPI_ERR_RMA_SYNC, MPI_Win_flush_all(win));
    if (strict) {
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_complete(win));
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Rput(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win, &rq));
        EXPECT(MPI_ERR_LOCKTYPE, MPI_Win_lock(12345, t, 0, win));
    }

    OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    EXPECT_OR_LAX(MPI_ERR_RMA_SYNC, MPI_Win_fence(0, win));
    EXPECT(MPI_ERR_RANK, MPI_Put(&v, 1, MPI_INT, nranks + 3, 0, 1, MPI_INT, win));
    if (strict) {
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, win));
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_start(one, 0, win)); /* one access epoch at a time */
        EXPECT(MPI_ERR_RMA_RANGE, MPI_Put(&v, 1, MPI_INT, t, tw_disp(&tw, t, 64), 1, MPI_INT, win));
        EXPECT(MPI_ERR_RMA_RANGE,
               MPI_Get(&res, 2, MPI_INT, t, tw_disp(&tw, t, 63), 2, MPI_INT, win));
        OK(MPI_Get(two, 2, MPI_INT, t, tw_disp(&tw, t, 62), 2, MPI_INT, win)); /* the end: in */
        MPI_Op op;
        MPI_Op_create(user_op, 1, &op);
        EXPECT(MPI_ERR_OP, MPI_Accumulate(&v, 1, MPI_INT, t, 0, 1, MPI_INT, op, win));
        MPI_Op_free(&op);
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_free(&win));
    }
    OK(MPI_Win_unlock(t, win));

    /* active target: complete the epochs that are right, then misuse */
    if (strict) {
        OK(MPI_Win_post(from, 0, win));
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_post(from, 0, win));
        OK(MPI_Win_start(one, 0, win));
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_start(one, 0, win));
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Rget(&res, 1, MPI_INT, t, 0, 1, MPI_INT, win, &rq));
        OK(MPI_Win_complete(win));
        OK(MPI_Win_wait(win));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    OK(MPI_Put(&v, 1, MPI_INT, t, tw_disp(&tw, t, 5), 1, MPI_INT, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    EXPECT_OR_LAX(MPI_ERR_RMA_SYNC, MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win));

    /* the window still works, and the data put under fence arrived */
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    CHECK(tw.base[5] == 7, "%s: put under fence: %d", what, tw.base[5]);
    OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group_free(&one);
    MPI_Group_free(&from);
    MPI_Group_free(&world);
    tw_free(&tw);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    run(WK_ALLOCATE);
    run(WK_CREATE_HEAP);
    if (rank == 0)
        printf("rma_errors: %d ranks (%s): ok\n", nranks, HMPI_Active() ? "strict" : "common");
    MPI_Finalize();
    return 0;
}
