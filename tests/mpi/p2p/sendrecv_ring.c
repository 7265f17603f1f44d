/* sendrecv_ring.c: every rank sends to the next and receives from the previous with
 * MPI_Sendrecv, 8 B to 4 MiB, from heap (shared) and pre-init (private) buffers. The
 * standard promises this cannot deadlock, also when the ring mixes local and off-node
 * peers (HMPI_NODE_SIZE): a rank blocked on one side must keep the other side moving. */
#define CHECK_WITH_MPI
#include "../../check.h"

#include <mpi.h>
#include <stdint.h>
#include <string.h>

static uint8_t pat_byte(uint32_t seed, size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ seed * 40503u ^ (uint32_t)(i >> 8) * 97u;
    return (uint8_t)(x ^ x >> 13 ^ x >> 24);
}

int main(int argc, char **argv)
{
    const size_t max = (size_t)4 << 20;
    uint8_t *pre_out = malloc(max), *pre_in = malloc(max); /* before MPI_Init: private */
    CHECK(pre_out && pre_in, "malloc");
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint8_t *heap_out = malloc(max), *heap_in = malloc(max);
    CHECK(heap_out && heap_in, "malloc");
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    const size_t sizes[] = {8, 300, 9000, 70000, (size_t)1 << 20, max};
    for (int round = 0; round < 3; round++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k];
            int tag = (int)(10 * round + k);
            uint8_t *out = round == 1 ? pre_out : heap_out;
            uint8_t *in = round == 2 ? pre_in : heap_in;
            for (size_t i = 0; i < n; i++)
                out[i] = pat_byte((uint32_t)(rank * 100 + tag), i);
            memset(in, 0, n);
            MPI_Status st;
            MPI_Sendrecv(out, (int)n, MPI_BYTE, next, tag, in, (int)n, MPI_BYTE, prev, tag,
                         MPI_COMM_WORLD, &st);
            int got = -1;
            MPI_Get_count(&st, MPI_BYTE, &got);
            CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == tag && got == (int)n,
                  "rank %d: status source %d tag %d count %d", rank, st.MPI_SOURCE, st.MPI_TAG,
                  got);
            for (size_t i = 0; i < n; i++)
                CHECK(in[i] == pat_byte((uint32_t)(prev * 100 + tag), i),
                      "rank %d: %zu B from rank %d differ at byte %zu", rank, n, prev, i);
        }
    }
    free(heap_out);
    free(heap_in);
    if (rank == 0)
        printf("sendrecv_ring: %d ranks ok\n", size);
    MPI_Finalize();
    free(pre_out);
    free(pre_in);
    return 0;
}
