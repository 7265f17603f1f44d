/* p2p_behind_coll.c: a collective call does not hold back a send and a receive that
 * match. MPI-4.1 §3.5 (progress): "If a pair of matching send and receives have been
 * initiated on two processes, then at least one of these two operations will complete,
 * independently of other actions in the system". Each step: the odd rank of a pair
 * (partners rank^1) posts MPI_Irecv from its partner, then enters a collective call;
 * the even rank sends with MPI_Ssend (which returns only once the receive is matched)
 * and only then enters the same call. The odd rank's call must let the match happen:
 * an MPI that waited in it for the even rank, without moving the receive along, would
 * hang here. The calls, each the first of its kind on its communicator:
 *   1 MPI_Barrier, the first collective on MPI_COMM_WORLD
 *   2 MPI_Comm_dup of MPI_COMM_WORLD
 *   3 MPI_Allreduce, the first collective on that duplicate
 *   4 MPI_Comm_split of MPI_COMM_WORLD (pairs apart: color rank % 2)
 *   5 MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
 *   6 MPI_Win_create over MPI_COMM_WORLD
 *   7 MPI_Win_free of that window
 *   8 MPI_Win_allocate_shared over the shared communicator of step 5
 *   9 MPI_Win_allocate over MPI_COMM_WORLD
 *  10 MPI_Comm_free of the duplicate, which collectives used (step 3)
 *  11 MPI_Cart_create of a ring over MPI_COMM_WORLD (periodic above 2 ranks: at 2 both
 *     neighbours would be the same rank, and MPICH's alltoallw pairs the two messages
 *     the other way round)
 *  12 MPI_Neighbor_alltoall, the first collective on that ring
 *  13 MPI_Neighbor_allgatherv on it
 *  14 MPI_Neighbor_alltoallw on it
 *  15 MPI_Win_allocate over MPI_COMM_WORLD
 *  16 MPI_Win_set_info of that window (collective)
 *  17 MPI_Win_free of it
 * (The MPI below carries the neighbourhood collectives and MPI_Win_set_info; HMPI waits
 * for them moving its engine: passed through, steps 12-14 and 16 hung.)
 * Messages of 64 bytes (odd steps) and 200,000 bytes (even), checked byte for byte,
 * with the status's source, tag and count. Results of the calls are checked too.
 * Argument (optional): the only step with a message; the others only make what later
 * steps use (to see one step alone). */
#include "../p2p_common.h"

#define SEED 0xB41Dull
#define BIG 200000

static int rank, nranks;
static MPI_Comm dup_c = MPI_COMM_NULL, split_c = MPI_COMM_NULL, shared_c = MPI_COMM_NULL,
                ring_c = MPI_COMM_NULL;
static MPI_Win win = MPI_WIN_NULL, win2 = MPI_WIN_NULL;
static char winbuf[64];

/* A neighbourhood collective on the ring: each rank sends rank * 10 + k to its k-th
 * neighbour (left, right) and checks what its neighbours sent (nothing from
 * MPI_PROC_NULL, at the ends of a ring that is not periodic). */
static void neighbors(int step)
{
    int left = -1, right = -1;
    P2P_OK(MPI_Cart_shift(ring_c, 0, 1, &left, &right));
    int out[2] = {rank * 10, rank * 10 + 1}, in[2] = {-1, -1};
    /* From the left neighbour, what it sent right (its [1]); from the right, its [0]. */
    int want[2] = {left * 10 + 1, right * 10};
    if (step == 12) {
        P2P_OK(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring_c));
    } else if (step == 13) {
        int counts[2] = {1, 1}, displs[2] = {0, 1};
        P2P_OK(MPI_Neighbor_allgatherv(&out[0], 1, MPI_INT, in, counts, displs, MPI_INT, ring_c));
        want[0] = left * 10, want[1] = right * 10;
    } else {
        int counts[2] = {1, 1};
        MPI_Aint displs[2] = {0, sizeof(int)};
        MPI_Datatype types[2] = {MPI_INT, MPI_INT};
        P2P_OK(
            MPI_Neighbor_alltoallw(out, counts, displs, types, in, counts, displs, types, ring_c));
    }
    if (left == MPI_PROC_NULL)
        want[0] = -1;
    if (right == MPI_PROC_NULL)
        want[1] = -1;
    CHECK(in[0] == want[0] && in[1] == want[1], "step %d: got %d %d from %d %d, expected %d %d",
          step, in[0], in[1], left, right, want[0], want[1]);
}

static void call(int step)
{
    switch (step) {
    case 1: P2P_OK(MPI_Barrier(MPI_COMM_WORLD)); break;
    case 2: {
        P2P_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup_c));
        int r = -1;
        MPI_Comm_rank(dup_c, &r);
        CHECK(r == rank, "MPI_Comm_dup: rank %d in the duplicate, %d in the parent", r, rank);
        break;
    }
    case 3: {
        long in = rank + 1, out = 0;
        P2P_OK(MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, dup_c));
        CHECK(out == (long)nranks * (nranks + 1) / 2, "MPI_Allreduce: %ld", out);
        break;
    }
    case 4: {
        P2P_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split_c));
        int r = -1, n = -1;
        MPI_Comm_rank(split_c, &r);
        MPI_Comm_size(split_c, &n);
        CHECK(n == nranks / 2 && r == (nranks - 1 - rank) / 2,
              "MPI_Comm_split: rank %d of %d (world rank %d of %d)", r, n, rank, nranks);
        break;
    }
    case 5:
        P2P_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                                   &shared_c));
        CHECK(shared_c != MPI_COMM_NULL, "MPI_Comm_split_type: MPI_COMM_NULL");
        break;
    case 6:
        P2P_OK(MPI_Win_create(winbuf, sizeof winbuf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        break;
    case 7:
        P2P_OK(MPI_Win_free(&win));
        CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle");
        break;
    case 8: {
        char *base = NULL;
        MPI_Win w;
        P2P_OK(MPI_Win_allocate_shared(16, 1, MPI_INFO_NULL, shared_c, &base, &w));
        CHECK(base != NULL, "MPI_Win_allocate_shared: NULL base");
        P2P_OK(MPI_Win_free(&w));
        break;
    }
    case 9: {
        char *base = NULL;
        MPI_Win w;
        P2P_OK(MPI_Win_allocate(32, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w));
        CHECK(base != NULL, "MPI_Win_allocate: NULL base");
        P2P_OK(MPI_Win_free(&w));
        break;
    }
    case 10:
        P2P_OK(MPI_Comm_free(&dup_c));
        CHECK(dup_c == MPI_COMM_NULL, "MPI_Comm_free left the handle");
        break;
    case 11: {
        int dims[1] = {nranks}, periods[1] = {nranks > 2};
        P2P_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring_c));
        CHECK(ring_c != MPI_COMM_NULL, "MPI_Cart_create: MPI_COMM_NULL");
        break;
    }
    case 12:
    case 13:
    case 14: neighbors(step); break;
    case 15: {
        char *base = NULL;
        P2P_OK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win2));
        break;
    }
    case 16: {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "no_locks", "false");
        P2P_OK(MPI_Win_set_info(win2, info));
        MPI_Info_free(&info);
        break;
    }
    case 17: P2P_OK(MPI_Win_free(&win2)); break;
    }
}

static void behind(int step)
{
    static char buf[BIG];
    int peer = rank ^ 1, n = step % 2 ? 64 : BIG;
    uint64_t k = p2p_key(peer, step, 0, SEED);
    if (rank % 2) {
        MPI_Request rq;
        MPI_Status st;
        memset(buf, 0, sizeof buf);
        P2P_OK(MPI_Irecv(buf, n, MPI_BYTE, peer, step, MPI_COMM_WORLD, &rq));
        call(step);
        P2P_OK(MPI_Wait(&rq, &st));
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == step && p2p_count(&st, MPI_BYTE) == n,
              "step %d: status source %d tag %d count %d", step, st.MPI_SOURCE, st.MPI_TAG,
              p2p_count(&st, MPI_BYTE));
        P2P_CHECK_DATA(buf, (size_t)n, k, "step %d", step);
    } else {
        p2p_fill(buf, (size_t)n, p2p_key(rank, step, 0, SEED));
        P2P_OK(MPI_Ssend(buf, n, MPI_BYTE, peer, step, MPI_COMM_WORLD));
        call(step);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(nranks % 2 == 0, "needs an even number of ranks");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int only = argc > 1 ? atoi(argv[1]) : 0;
    for (int step = 1; step <= 17; step++) {
        if (only && step != only)
            call(step);
        else
            behind(step);
    }
    MPI_Comm_free(&split_c);
    MPI_Comm_free(&shared_c);
    MPI_Comm_free(&ring_c);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_behind_coll: OK\n");
    MPI_Finalize();
    return 0;
}
