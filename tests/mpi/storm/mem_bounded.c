/* mem_bounded.c: memory stays bounded over a long run. Ranks exchange messages in pairs
 * (rank ^ 1), 32 in flight each way, sizes cycling through every protocol (immediate,
 * copy, synergistic, a global buffer outside the heap), with an OPI pass every 16th
 * message; one million messages move in all by default. The resident set after a
 * tenth of the run is the baseline: by the end it may not have grown by more than
 * 16 MiB (a leak of one envelope, request or pool buffer per message would be far more).
 *   mem_bounded [--messages=N]       (N in total over the job; default 1000000) */
#include "../p2p_common.h"

#include "hmpi.h"

#define WINDOW 32
#define BIG (70u << 10)
#define GROWTH_MAX (16u << 20)

static unsigned char global_buf[WINDOW][BIG];

static size_t size_of(long i)
{
    if (i % 256 == 1)
        return BIG; /* from a global buffer: process_vm_readv or bounce */
    if (i % 64 == 2)
        return 20000; /* synergistic */
    static const size_t small[4] = {8, 200, 2000, 0};
    return small[i % 4];
}

static long resident_bytes(void)
{
    long pages = 0, size = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    CHECK(f, "cannot read /proc/self/statm");
    CHECK(fscanf(f, "%ld %ld", &size, &pages) == 2, "bad /proc/self/statm");
    fclose(f);
    return pages * 4096;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(nranks % 2 == 0, "mem_bounded needs an even number of ranks");
    long total = 1000000;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--messages=", 11) == 0)
            total = strtol(argv[i] + 11, NULL, 10);
    long n = total / nranks; /* each rank sends n and receives n */
    n -= n % WINDOW;
    int peer = rank ^ 1;
    uint64_t seed = p2p_seed(argc, argv, 42);

    unsigned char *sbuf[WINDOW], *rbuf[WINDOW];
    for (int w = 0; w < WINDOW; w++) {
        sbuf[w] = malloc(BIG);
        rbuf[w] = malloc(BIG);
        CHECK(sbuf[w] && rbuf[w], "out of memory");
    }
    long baseline = 0;
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; i += WINDOW) {
        if (i == (n / 10) - (n / 10) % WINDOW)
            baseline = resident_bytes();
        MPI_Request rq[2 * WINDOW];
        for (int w = 0; w < WINDOW; w++) {
            long k = i + w;
            size_t len = size_of(k);
            MPI_Irecv(rbuf[w], (int)len, MPI_BYTE, peer, w, MPI_COMM_WORLD, &rq[w]);
            unsigned char *s = len == BIG ? global_buf[w] : sbuf[w];
            /* full payloads now and then, otherwise a stamp at both ends */
            uint64_t key = p2p_key(rank, w, (uint64_t)k, seed);
            if (k % 97 == 0)
                p2p_fill(s, len, key);
            else if (len >= 16) {
                memcpy(s, &key, 8);
                memcpy(s + len - 8, &key, 8);
            }
            MPI_Isend(s, (int)len, MPI_BYTE, peer, w, MPI_COMM_WORLD, &rq[WINDOW + w]);
        }
        MPI_Waitall(2 * WINDOW, rq, MPI_STATUSES_IGNORE);
        for (int w = 0; w < WINDOW; w++) {
            long k = i + w;
            size_t len = size_of(k);
            uint64_t key = p2p_key(peer, w, (uint64_t)k, seed), got[2];
            if (k % 97 == 0)
                P2P_CHECK_DATA(rbuf[w], len, key, "message %ld", k);
            else if (len >= 16) {
                memcpy(&got[0], rbuf[w], 8);
                memcpy(&got[1], rbuf[w] + len - 8, 8);
                CHECK(got[0] == key && got[1] == key, "message %ld of %zu bytes: wrong stamp", k,
                      len);
            }
        }
        if ((i / WINDOW) % 16 == 0) { /* an OPI pass both ways */
            size_t len = 1 + (size_t)(p2p_mix((uint64_t)i) % (256u << 10));
            void *p = NULL, *q = NULL;
            MPI_Request g;
            P2P_OK(OPI_Alloc(&p, len));
            memset(p, rank + 1, len);
            P2P_OK(OPI_Igive(&p, (int)len, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &g));
            P2P_OK(OPI_Take(&q, (int)len, MPI_BYTE, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(((unsigned char *)q)[0] == peer + 1 && ((unsigned char *)q)[len - 1] == peer + 1,
                  "OPI pass %ld: wrong contents", i);
            P2P_OK(OPI_Free(&q));
            P2P_OK(MPI_Wait(&g, MPI_STATUS_IGNORE));
        }
    }
    long end = resident_bytes();
    long growth = end - baseline, worst;
    MPI_Allreduce(&growth, &worst, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mem_bounded: %ld messages in %.1f s; resident set grew by at most %.2f MiB "
               "after the first tenth (limit %u MiB)\n",
               n * nranks, MPI_Wtime() - t0, (double)worst / (1 << 20), GROWTH_MAX >> 20);
    CHECK(growth <= (long)GROWTH_MAX, "rank %d: resident set grew by %ld bytes over the run", rank,
          growth);
    for (int w = 0; w < WINDOW; w++) {
        free(sbuf[w]);
        free(rbuf[w]);
    }
    MPI_Finalize();
    return 0;
}
