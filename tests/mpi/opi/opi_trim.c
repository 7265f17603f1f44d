/* opi_trim.c: 1e5 buffers given to one rank. Rank 0 frees every buffer it takes into
 * its own pool, which would grow without bound if it were never trimmed; trimmed
 * buffers of other ranks' slices travel back to their owners, who reuse them. The
 * test checks with OPI_Pool_query that rank 0's pool stays within HMPI_OPI_POOL_MAX /
 * _DEPTH, that no giver's buffers alive (in flight, in pools, on return queues) exceed
 * a bound set by the flow-control window rather than by the message count, and that
 * givers mostly reuse buffers instead of allocating new ones. Run it with small pool
 * limits (tests/mpi/opi/CMakeLists.txt). */
#include "opi_common.h"

enum {
    TOTAL = 100000, /* buffers given to rank 0, from all ranks together */
    WINDOW = 256,   /* a giver runs at most this far ahead of rank 0's takes */
    ACK_EVERY = 64,
    ACK_TAG = 99,
    NSIZES = 4,
};
static const size_t sizes[NSIZES] = {64, 500, 2000, 4096};

int main(int argc, char **argv)
{
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    opi_same_node(0);
    const char *env = getenv("HMPI_OPI_POOL_MAX");
    const char *dep = getenv("HMPI_OPI_POOL_DEPTH");
    CHECK(env && dep, "run with HMPI_OPI_POOL_MAX and HMPI_OPI_POOL_DEPTH set (CMakeLists.txt)");
    unsigned long long pool_max = strtoull(env, NULL, 10) * (strchr(env, 'K') ? 1024 : 1);
    unsigned long long depth = strtoull(dep, NULL, 10);
    int givers = nranks > 1 ? nranks - 1 : 1;
    int mine = rank == 0 ? 0 : TOTAL / givers + (rank <= TOTAL % givers);

    OPI_Pool_info info;
    unsigned long long max_owned = 0, max_cached = 0;
    if (rank != 0) {
        int acked = 0, acks = 0;
        for (int i = 0; i < mine; i++) {
            while (i - acked >= WINDOW) { /* flow control: wait for rank 0 to catch up */
                MPI_Recv(&acked, 1, MPI_INT, 0, ACK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                acks++;
            }
            size_t sz = sizes[i % NSIZES];
            unsigned *p = NULL;
            CHECK(OPI_Alloc((void **)&p, sz) == 0, "alloc %d", i);
            p[0] = (unsigned)i;
            p[sz / sizeof *p - 1] = (unsigned)i ^ 0xabcdefu;
            OPI_Give((void **)&p, (int)sz, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            OPI_Pool_query(&info);
            if (info.owned_blocks > max_owned)
                max_owned = info.owned_blocks;
        }
        for (; acks < mine / ACK_EVERY; acks++)
            MPI_Recv(&acked, 1, MPI_INT, 0, ACK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        int *got = calloc((size_t)nranks, sizeof(int));
        int expected = nranks > 1 ? TOTAL : 0;
        for (int k = 0; k < expected; k++) {
            unsigned *p = NULL;
            MPI_Status st;
            OPI_Take((void **)&p, 4096, MPI_BYTE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
            int g = st.MPI_SOURCE, i = got[g]++;
            size_t sz = sizes[i % NSIZES];
            CHECK(opi_count(&st, MPI_BYTE) == (int)sz, "count");
            CHECK(p[0] == (unsigned)i && p[sz / sizeof *p - 1] == ((unsigned)i ^ 0xabcdefu),
                  "buffer %d of %d: contents", i, g);
            OPI_Free((void **)&p);
            OPI_Pool_query(&info);
            CHECK(info.cached_bytes <= pool_max, "pool holds %llu bytes, limit %llu",
                  info.cached_bytes, pool_max);
            CHECK(info.cached_blocks <= depth * NSIZES, "pool holds %llu buffers, limit %llu",
                  info.cached_blocks, depth * NSIZES);
            if (info.cached_bytes > max_cached)
                max_cached = info.cached_bytes;
            if (got[g] % ACK_EVERY == 0)
                MPI_Send(&got[g], 1, MPI_INT, g, ACK_TAG, MPI_COMM_WORLD);
        }
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OPI_Pool_query(&info);
    /* A giver's buffers alive: at most WINDOW in flight, plus what two pools (rank 0's
     * and its own) and its return queue hold; far below its message count. */
    unsigned long long bound = WINDOW + 2 * (pool_max / 128) + 64; /* buffers >= 128 B */
    CHECK(info.heap_allocs - info.heap_frees == info.owned_blocks,
          "rank %d: %llu allocated, "
          "%llu freed, %llu alive",
          rank, info.heap_allocs, info.heap_frees, info.owned_blocks);
    if (rank != 0) {
        CHECK(max_owned <= bound, "rank %d: %llu buffers of its heap alive (bound %llu, %d given)",
              rank, max_owned, bound, mine);
        CHECK(info.pool_hits > 0, "rank %d never reused a buffer", rank);
    }
    int local_givers = 0;
    for (int g = 1; g < nranks; g++)
        local_givers += opi_same_node(g);
    if (rank == 0 && local_givers) /* its pool overflowed with the givers' buffers */
        CHECK(info.returned > 0, "rank 0 trimmed no buffer back to its owner");
    if (rank == 0 && nranks > 1 && !local_givers) /* it took copies into its own buffers */
        CHECK(info.pool_hits > (unsigned long long)TOTAL / 2, "rank 0 reused %llu buffers of %d",
              info.pool_hits, TOTAL);
    if (getenv("OPI_TRIM_VERBOSE") || rank == 0)
        printf("rank %d: gave %d, heap allocs %llu frees %llu, returned %llu, max alive %llu, "
               "pool %llu B (max %llu B)\n",
               rank, mine, info.heap_allocs, info.heap_frees, info.returned, max_owned,
               info.cached_bytes, max_cached);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("opi_trim: ok (%d ranks, HMPI %s)\n", nranks, HMPI_Active() ? "on" : "off");
    MPI_Finalize();
    return 0;
}
