/* p2p_reclaim.c: a completed send takes its buffer's cache lines back only when the
 * program rewrites the buffer between its sends (HMPI_RECLAIM_MAX, p2p/send.c).
 * Ranks 2i and 2i+1 exchange a 16 KiB heap buffer ROUNDS times with Isend/Irecv; with
 * "rewrite" each rank refills its send buffer with other bytes before every send, with
 * "same" it fills it once. Every message is checked byte for byte, and every send
 * buffer unchanged after its send. Whether the lines were taken back is what the
 * counter `reclaimed` says (tests/mpi/p2p/CMakeLists.txt checks it: every send after the first
 * with "rewrite", none with "same"). An odd last rank sits out. */
#include "../p2p_common.h"

enum { BYTES = 16 << 10, ROUNDS = 20, TAG = 7 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 2 && (!strcmp(argv[1], "rewrite") || !strcmp(argv[1], "same")),
          "usage: p2p_reclaim rewrite|same");
    int rewrite = !strcmp(argv[1], "rewrite");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    unsigned char *out = malloc(BYTES), *in = malloc(BYTES);
    CHECK(out && in, "out of memory");
    if (peer < size) {
        for (int k = 0; k < ROUNDS; k++) {
            uint64_t key = p2p_key(rank, TAG, rewrite ? (uint64_t)k : 0, 0x2ec1a1u);
            if (k == 0 || rewrite)
                p2p_fill(out, BYTES, key);
            memset(in, 0x5a, BYTES);
            MPI_Request rq[2];
            MPI_Status st[2];
            MPI_Irecv(in, BYTES, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(out, BYTES, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, st);
            P2P_CHECK_DATA(in, BYTES, p2p_key(peer, TAG, rewrite ? (uint64_t)k : 0, 0x2ec1a1u),
                           "round %d: received", k);
            P2P_CHECK_DATA(out, BYTES, key, "round %d: send buffer changed", k);
        }
    }
    free(out);
    free(in);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_reclaim: OK (%s)\n", argv[1]);
    MPI_Finalize();
    return 0;
}
