/* part_early.c: the early bird of partitioned communication, proven by a handshake, not a
 * sleep. Ranks pair up (0 with 1, 2 with 3, ...: neighbours, so on one node also under
 * HMPI_NODE_SIZE=2). The sender marks only the send partitions that make up the first
 * receive partition and then waits for the receiver's word (a plain message) before it
 * even writes the others. The receiver polls MPI_Parrived for its first partition, checks
 * its bytes, checks that its last partition has not arrived, and only then sends the
 * word. So partition 0 was read while the rest was not yet marked. Partition counts
 * equal (4/4) and not (8/2, 2/8); send buffers in the shared heap and static.
 *
 * MPI-4.1 §4.2.3 makes this early arrival the advice of a high quality implementation,
 * not a rule: HMPI's own path keeps it (p2p/part.c). Where HMPI is not active the
 * handshake would wait on the MPI below's choice, so the receiver then waits for the
 * whole message first and the test checks only the data. */
#include "../p2p_common.h"

#include <sched.h>

static int rank, nranks;
static int static_buf[1 << 14];

static int value(int round, int c, size_t i)
{
    return (int)p2p_mix(((uint64_t)round << 40) ^ ((uint64_t)c << 32) ^ i);
}

static void early(int sparts, int rparts, int use_static, int c, int hmpi)
{
    enum { N = 1 << 14 }; /* ints in all */
    int partner = rank ^ 1;
    if (partner >= nranks)
        return;
    MPI_Request q;
    if (rank % 2 == 0) { /* sender */
        int *buf = use_static ? static_buf : malloc(N * sizeof(int));
        size_t per = N / (size_t)sparts;
        /* send partitions 0..k-1 cover receive partition 0 */
        int k = sparts >= rparts ? sparts / rparts : 1;
        MPI_Psend_init(buf, sparts, (MPI_Count)per, MPI_INT, partner, 3, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &q);
        for (int round = 0; round < 3; round++) {
            for (size_t i = 0; i < N; i++)
                buf[i] = -1; /* nothing of this round yet */
            MPI_Start(&q);
            for (size_t i = 0; i < (size_t)k * per; i++)
                buf[i] = value(round, c, i);
            CHECK(MPI_Pready_range(0, k - 1, q) == MPI_SUCCESS, "MPI_Pready_range(0, %d)", k - 1);
            int word = -1;
            MPI_Recv(&word, 1, MPI_INT, partner, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(word == round, "the receiver's word is %d, not %d", word, round);
            for (size_t i = (size_t)k * per; i < N; i++)
                buf[i] = value(round, c, i);
            for (int p = k; p < sparts; p++)
                CHECK(MPI_Pready(p, q) == MPI_SUCCESS, "MPI_Pready(%d)", p);
            CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait (send)");
        }
        MPI_Request_free(&q);
        if (!use_static)
            free(buf);
    } else { /* receiver */
        int *buf = malloc(N * sizeof(int));
        size_t per = N / (size_t)rparts;
        MPI_Precv_init(buf, rparts, (MPI_Count)per, MPI_INT, partner, 3, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &q);
        /* MPI-4.1 §4.2.3: an inactive request's partitions have arrived (MPICH 4.0.2
         * alone refuses the call with MPI_ERR_REQUEST) */
        int fresh = 0;
        CHECK(!hmpi || (MPI_Parrived(q, rparts - 1, &fresh) == MPI_SUCCESS && fresh),
              "MPI_Parrived of a request never started");
        for (int round = 0; round < 3; round++) {
            memset(buf, 0, N * sizeof(int));
            MPI_Start(&q);
            if (hmpi) {
                int flag = 0;
                while (!flag) {
                    CHECK(MPI_Parrived(q, 0, &flag) == MPI_SUCCESS, "MPI_Parrived(0)");
                    if (!flag)
                        sched_yield(); /* more ranks than cores: let the sender run */
                }
                for (size_t i = 0; i < per; i++)
                    CHECK(buf[i] == value(round, c, i),
                          "%d->%d, %s buffer, round %d: early int %zu is %d, want %d", sparts,
                          rparts, use_static ? "static" : "heap", round, i, buf[i],
                          value(round, c, i));
                flag = 1;
                CHECK(MPI_Parrived(q, rparts - 1, &flag) == MPI_SUCCESS && !flag,
                      "%d->%d: the last partition arrived before it was marked", sparts, rparts);
                MPI_Send(&round, 1, MPI_INT, partner, 4, MPI_COMM_WORLD);
                MPI_Status st;
                CHECK(MPI_Wait(&q, &st) == MPI_SUCCESS, "MPI_Wait (receive)");
                int n = -1;
                MPI_Get_count(&st, MPI_INT, &n);
                CHECK(n == N && st.MPI_SOURCE == partner && st.MPI_TAG == 3,
                      "status: %d ints from %d tag %d", n, st.MPI_SOURCE, st.MPI_TAG);
            } else {
                MPI_Send(&round, 1, MPI_INT, partner, 4, MPI_COMM_WORLD);
                CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait (receive)");
            }
            for (size_t i = 0; i < N; i++)
                CHECK(buf[i] == value(round, c, i), "%d->%d round %d: int %zu is %d", sparts,
                      rparts, round, i, buf[i]);
            int flag = 0;
            CHECK(!hmpi || (MPI_Parrived(q, 0, &flag) == MPI_SUCCESS && flag),
                  "MPI_Parrived of a request waited for");
        }
        MPI_Request_free(&q);
        free(buf);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int hmpi = HMPI_Active && HMPI_Active();
    static const int pairs[][2] = {{4, 4}, {8, 2}, {2, 8}, {4, 16}, {16, 16}};
    int c = 0;
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++)
        for (int s = 0; s < 2; s++)
            early(pairs[k][0], pairs[k][1], s, c++, hmpi);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("part_early: OK (%d ranks, %s)\n", nranks,
               hmpi ? "early partitions seen before the rest was marked"
                    : "HMPI not active: data only");
    MPI_Finalize();
    return 0;
}
