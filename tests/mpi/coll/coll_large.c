/* coll_large.c: MPI 4's large-count collectives (MPICH only; registered where the MPI
 * below has them). The data movers with one count per side and the reductions are
 * called as _c on odd ranks and as the int call on even ranks in the same collective,
 * which completes only if both reach the same implementation (HMPI); MPI_IN_PLACE and
 * roots other than 0 included. The v and w forms are called as _c everywhere. Results
 * checked element by element against values computed locally; one MPI_Bcast_c of more
 * than 2 GiB (count past INT_MAX) between ranks 0 and 1. */
#include "../p2p_common.h"

#include <limits.h>

#define K 3 /* elements per rank */
#define BIG ((size_t)1 << 31 | 4099)

static int rank, size, use_c;

static int v(int r, int i) { return r * 1000 + i + 1; }

#if MPI_VERSION >= 4
static void movers(void)
{
    int root = 1 % size, *all = malloc((size_t)size * K * sizeof(int));
    int mine[K], got[K];
    for (int i = 0; i < K; i++)
        mine[i] = v(rank, i);

    int b[K];
    for (int i = 0; i < K; i++)
        b[i] = rank == root ? v(root, i) : -1;
    if (use_c)
        MPI_Bcast_c(b, K, MPI_INT, root, MPI_COMM_WORLD);
    else
        MPI_Bcast(b, K, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < K; i++)
        CHECK(b[i] == v(root, i), "bcast[%d] = %d", i, b[i]);

    memset(all, 0xff, (size_t)size * K * sizeof(int));
    if (use_c)
        MPI_Gather_c(mine, K, MPI_INT, all, K, MPI_INT, root, MPI_COMM_WORLD);
    else
        MPI_Gather(mine, K, MPI_INT, all, K, MPI_INT, root, MPI_COMM_WORLD);
    for (int r = 0; rank == root && r < size; r++)
        for (int i = 0; i < K; i++)
            CHECK(all[r * K + i] == v(r, i), "gather[%d][%d] = %d", r, i, all[r * K + i]);

    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++)
            all[r * K + i] = v(r, i) + 7;
    if (use_c)
        MPI_Scatter_c(all, K, MPI_INT, got, K, MPI_INT, root, MPI_COMM_WORLD);
    else
        MPI_Scatter(all, K, MPI_INT, got, K, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < K; i++)
        CHECK(got[i] == v(rank, i) + 7, "scatter[%d] = %d", i, got[i]);

    /* In place: each rank's block already at its place. */
    memset(all, 0xff, (size_t)size * K * sizeof(int));
    memcpy(all + rank * K, mine, sizeof mine);
    if (use_c)
        MPI_Allgather_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, K, MPI_INT, MPI_COMM_WORLD);
    else
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, K, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++)
            CHECK(all[r * K + i] == v(r, i), "allgather[%d][%d] = %d", r, i, all[r * K + i]);

    int *send = malloc((size_t)size * K * sizeof(int));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++)
            send[r * K + i] = v(rank, i) * 10 + r;
    if (use_c)
        MPI_Alltoall_c(send, K, MPI_INT, all, K, MPI_INT, MPI_COMM_WORLD);
    else
        MPI_Alltoall(send, K, MPI_INT, all, K, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++)
            CHECK(all[r * K + i] == v(r, i) * 10 + rank, "alltoall[%d][%d] = %d", r, i,
                  all[r * K + i]);
    free(send);
    free(all);
}

/* SUM of v(r, i) over ranks r in [lo, hi). */
static long sum(int lo, int hi, int i)
{
    long s = 0;
    for (int r = lo; r < hi; r++)
        s += v(r, i);
    return s;
}

static void reductions(void)
{
    int root = size - 1;
    long mine[K], got[K];
    for (int i = 0; i < K; i++)
        mine[i] = v(rank, i);
#define RUN(cint, cc) (use_c ? (cc) : (cint))
    memset(got, 0, sizeof got);
    RUN(MPI_Reduce(mine, got, K, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD),
        MPI_Reduce_c(mine, got, K, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD));
    for (int i = 0; rank == root && i < K; i++)
        CHECK(got[i] == sum(0, size, i), "reduce[%d] = %ld", i, got[i]);
    RUN(MPI_Allreduce(mine, got, K, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
        MPI_Allreduce_c(mine, got, K, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < K; i++)
        CHECK(got[i] == sum(0, size, i), "allreduce[%d] = %ld", i, got[i]);
    RUN(MPI_Scan(mine, got, K, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
        MPI_Scan_c(mine, got, K, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < K; i++)
        CHECK(got[i] == sum(0, rank + 1, i), "scan[%d] = %ld", i, got[i]);
    RUN(MPI_Exscan(mine, got, K, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
        MPI_Exscan_c(mine, got, K, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; rank > 0 && i < K; i++)
        CHECK(got[i] == sum(0, rank, i), "exscan[%d] = %ld", i, got[i]);

    /* Reduce-scatter: rank r gets element r of the sums (one element each). */
    long *in = malloc((size_t)size * sizeof *in), one = 0;
    for (int r = 0; r < size; r++)
        in[r] = v(rank, r);
    RUN(MPI_Reduce_scatter_block(in, &one, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
        MPI_Reduce_scatter_block_c(in, &one, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(one == sum(0, size, rank), "reduce_scatter_block = %ld", one);
    int *ci = malloc((size_t)size * sizeof *ci);
    MPI_Count *cc = malloc((size_t)size * sizeof *cc);
    for (int r = 0; r < size; r++)
        ci[r] = 1, cc[r] = 1;
    one = 0;
    RUN(MPI_Reduce_scatter(in, &one, ci, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
        MPI_Reduce_scatter_c(in, &one, cc, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(one == sum(0, size, rank), "reduce_scatter = %ld", one);
#undef RUN
    free(in);
    free(ci);
    free(cc);
}

/* Rank r contributes r + 1 elements. */
static void vforms(void)
{
    int root = 0, total = size * (size + 1) / 2;
    MPI_Count *counts = malloc((size_t)size * sizeof *counts);
    MPI_Aint *displs = malloc((size_t)size * sizeof *displs);
    int *all = malloc((size_t)total * sizeof(int)), mine[64];
    for (int r = 0, d = 0; r < size; d += r + 1, r++)
        counts[r] = r + 1, displs[r] = d;
    for (int i = 0; i <= rank; i++)
        mine[i] = v(rank, i);
    MPI_Gatherv_c(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD);
    for (int r = 0; rank == root && r < size; r++)
        for (int i = 0; i <= r; i++)
            CHECK(all[displs[r] + i] == v(r, i), "gatherv_c[%d][%d]", r, i);
    memset(all, 0xff, (size_t)total * sizeof(int));
    MPI_Allgatherv_c(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i <= r; i++)
            CHECK(all[displs[r] + i] == v(r, i), "allgatherv_c[%d][%d]", r, i);
    int got[64];
    MPI_Scatterv_c(all, counts, displs, MPI_INT, got, rank + 1, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i <= rank; i++)
        CHECK(got[i] == v(rank, i), "scatterv_c[%d]", i);

    /* All-to-all: one element to every rank, as v and as w. */
    MPI_Count *ones = malloc((size_t)size * sizeof *ones);
    MPI_Aint *at = malloc((size_t)size * sizeof *at), *bytes = malloc((size_t)size * sizeof *bytes);
    MPI_Datatype *types = malloc((size_t)size * sizeof *types);
    int *send = malloc((size_t)size * sizeof *send), *recv = malloc((size_t)size * sizeof *recv);
    for (int r = 0; r < size; r++) {
        ones[r] = 1, at[r] = r, bytes[r] = r * (MPI_Aint)sizeof(int), types[r] = MPI_INT;
        send[r] = v(rank, r);
    }
    MPI_Alltoallv_c(send, ones, at, MPI_INT, recv, ones, at, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        CHECK(recv[r] == v(r, rank), "alltoallv_c[%d] = %d", r, recv[r]);
    memset(recv, 0, (size_t)size * sizeof *recv);
    MPI_Alltoallw_c(send, ones, bytes, types, recv, ones, bytes, types, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        CHECK(recv[r] == v(r, rank), "alltoallw_c[%d] = %d", r, recv[r]);
    free(counts);
    free(displs);
    free(all);
    free(ones);
    free(at);
    free(bytes);
    free(types);
    free(send);
    free(recv);
}

static void big_bcast(void)
{
    MPI_Comm pair = p2p_first_pair();
    if (pair == MPI_COMM_NULL)
        return;
    unsigned char *buf = p2p_malloc(BIG);
    uint64_t key = p2p_key(0, 9, 0, 0xB16);
    if (rank == 0)
        p2p_fill(buf, BIG, key);
    else
        memset(buf, 0, BIG);
    CHECK(MPI_Bcast_c(buf, (MPI_Count)BIG, MPI_BYTE, 0, pair) == MPI_SUCCESS, "big bcast");
    P2P_CHECK_DATA(buf, BIG, key, "MPI_Bcast_c of %zu bytes", BIG);
    free(buf);
    MPI_Comm_free(&pair);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    use_c = rank % 2;
#if MPI_VERSION >= 4
    for (int round = 0; round < 3; round++) {
        movers();
        reductions();
        vforms();
    }
    big_bcast();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_large: OK\n");
#else
    if (rank == 0)
        printf("coll_large: the MPI below has no MPI 4 large-count calls\n");
#endif
    MPI_Finalize();
    return 0;
}
