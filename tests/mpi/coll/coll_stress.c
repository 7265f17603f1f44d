/* coll_stress.c: a seeded random sequence of collectives of every family on several
 * communicators at once, with random delays on random ranks, so that fast ranks run
 * ahead into the next collectives while slow ones still read the previous ones (the
 * reuse of HMPI's per-communicator slots), and every pair of collectives back to back;
 * each result checked. Then point-to-point
 * progress inside collectives: a rank blocked in a synchronous send to a rank that is
 * waiting in a collective for it (the receive is posted) must get through. */
#include "coll_common.h"

#include <sched.h>
#include <time.h>

static uint64_t rng_state;

static uint64_t rnd(void) { return tc_mix(rng_state++); }

static void delay(uint64_t r)
{
    switch (r % 8) {
    case 0: {
        struct timespec ts = {0, (long)(r >> 8) % 300000};
        nanosleep(&ts, NULL);
        break;
    }
    case 1: sched_yield(); break;
    default: break;
    }
}

/* One collective of kind op on tc with count ints, checked. */
static void one(const tc_comm_t *tc, int op, int count, int root, int kind, uint64_t seed)
{
    int n = tc->size, me = tc->rank;
    int *a = tc_alloc(kind, sizeof(int) * (size_t)count * (size_t)n + 4);
    int *b = tc_alloc(kind == BUF_HEAP ? BUF_GLOBAL : BUF_HEAP,
                      sizeof(int) * (size_t)count * (size_t)n + 4);
    switch (op) {
    case 0: MPI_Barrier(tc->comm); break;
    case 1: /* bcast */
        for (int i = 0; i < count && me == root; i++)
            a[i] = tc_int(seed, root, i);
        MPI_Bcast(a, count, MPI_INT, root, tc->comm);
        for (int i = 0; i < count; i++)
            CHECK(a[i] == tc_int(seed, root, i), "bcast %s count %d int %d", tc->name, count, i);
        break;
    case 2: /* reduce, allreduce */
    case 3:
        for (int i = 0; i < count; i++)
            a[i] = tc_int(seed, me, i) >> 4;
        if (op == 2)
            MPI_Reduce(a, b, count, MPI_INT, MPI_SUM, root, tc->comm);
        else
            MPI_Allreduce(a, b, count, MPI_INT, MPI_SUM, tc->comm);
        if (op == 3 || me == root)
            for (int i = 0; i < count; i++) {
                int want = 0;
                for (int j = 0; j < n; j++)
                    want += tc_int(seed, j, i) >> 4;
                CHECK(b[i] == want, "%s %s count %d int %d", op == 2 ? "reduce" : "allreduce",
                      tc->name, count, i);
            }
        break;
    case 4: /* allgather */
        for (int i = 0; i < count; i++)
            a[i] = tc_int(seed, me, i);
        MPI_Allgather(a, count, MPI_INT, b, count, MPI_INT, tc->comm);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < count; i++)
                CHECK(b[j * count + i] == tc_int(seed, j, i), "allgather %s", tc->name);
        break;
    case 5: /* alltoall */
        for (int j = 0; j < n; j++)
            for (int i = 0; i < count; i++)
                a[j * count + i] = tc_int(seed, me * 64 + j, i);
        MPI_Alltoall(a, count, MPI_INT, b, count, MPI_INT, tc->comm);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < count; i++)
                CHECK(b[j * count + i] == tc_int(seed, j * 64 + me, i), "alltoall %s", tc->name);
        break;
    case 6: /* gather then scatter back */
        for (int i = 0; i < count; i++)
            a[i] = tc_int(seed, me, i);
        MPI_Gather(a, count, MPI_INT, b, count, MPI_INT, root, tc->comm);
        for (int j = 0; j < n && me == root; j++)
            for (int i = 0; i < count; i++)
                CHECK(b[j * count + i] == tc_int(seed, j, i), "gather %s", tc->name);
        MPI_Scatter(b, count, MPI_INT, a, count, MPI_INT, root, tc->comm);
        for (int i = 0; i < count; i++)
            CHECK(a[i] == tc_int(seed, me, i), "scatter %s", tc->name);
        break;
    case 7: /* scan */
        for (int i = 0; i < count; i++)
            a[i] = tc_int(seed, me, i) >> 4;
        MPI_Scan(a, b, count, MPI_INT, MPI_SUM, tc->comm);
        for (int i = 0; i < count; i++) {
            int want = 0;
            for (int j = 0; j <= me; j++)
                want += tc_int(seed, j, i) >> 4;
            CHECK(b[i] == want, "scan %s", tc->name);
        }
        break;
    case 8: /* reduce_scatter_block */
        for (int i = 0; i < count * n; i++)
            a[i] = tc_int(seed, me, i) >> 4;
        MPI_Reduce_scatter_block(a, b, count, MPI_INT, MPI_SUM, tc->comm);
        for (int i = 0; i < count; i++) {
            int want = 0;
            for (int j = 0; j < n; j++)
                want += tc_int(seed, j, me * count + i) >> 4;
            CHECK(b[i] == want, "reduce_scatter_block %s", tc->name);
        }
        break;
    }
}

static void part_random(void)
{
    uint64_t mine = tc_mix(0xC011 + (uint64_t)tc_rank); /* this rank's delays */
    rng_state = 42;                                     /* everybody's sequence */
    static const int sizes[] = {0, 1, 3, 64, 700, 5000, 40000};
    for (int step = 0; step < 600; step++) {
        uint64_t r = rnd();
        int c = (int)(r % (uint64_t)tc_ncomms), op = (int)((r >> 8) % 9);
        int count = sizes[(r >> 16) % 7];
        if (op == 5 || op == 8 || op == 4)
            count = count > 5000 ? 5000 : count;
        const tc_comm_t *tc = &tc_comms[c];
        int root = (int)((r >> 24) % (uint64_t)tc->size);
        delay(tc_mix(mine + (uint64_t)step));
        one(tc, op, count, root, (int)((r >> 32) % BUF_KINDS), r);
        tc_release();
    }
}

/* Every pair of collectives back to back, small then large and the other way, from
 * buffers HMPI must stage or not: the epoch after one that ends without DONE (small
 * allreduce), scratch reuse, slot halves. */
static void part_pairs(void)
{
    static const int sizes[2] = {2, 3000};
    uint64_t seed = 7;
    for (int c = 0; c < tc_ncomms; c++) {
        const tc_comm_t *tc = &tc_comms[c];
        for (int a = 0; a < 9; a++)
            for (int b = 0; b < 9; b++)
                for (int s = 0; s < 2; s++, seed++) {
                    one(tc, a, sizes[s], (int)(seed % tc->size), (int)(seed % BUF_KINDS), seed);
                    tc_release();
                    one(tc, b, sizes[!s], (int)((seed + 1) % tc->size),
                        (int)((seed + 1) % BUF_KINDS), seed * 31);
                    tc_release();
                }
    }
}

/* A rank blocked in MPI_Ssend to a rank that posted the receive and then waits in a
 * collective: the collective's wait must let the message through. */
static void part_progress(void)
{
    for (int c = 0; c < tc_ncomms; c++) {
        const tc_comm_t *tc = &tc_comms[c];
        int n = tc->size, me = tc->rank;
        if (n < 2)
            continue;
        for (int size = 8; size <= (1 << 20); size *= 64) {
            int *rbuf = malloc((size_t)size), *sbuf = malloc((size_t)size);
            memset(sbuf, me, (size_t)size);
            MPI_Request req;
            int left = (me + n - 1) % n, right = (me + 1) % n;
            if (me == 0) {
                MPI_Irecv(rbuf, size, MPI_BYTE, left, 7, tc->comm, &req);
                MPI_Barrier(tc->comm); /* rank n-1 is in Ssend until we match it */
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else if (me == n - 1) {
                MPI_Ssend(sbuf, size, MPI_BYTE, right, 7, tc->comm);
                MPI_Barrier(tc->comm);
            } else {
                MPI_Barrier(tc->comm);
            }
            if (me == 0)
                CHECK(((unsigned char *)rbuf)[size - 1] == (unsigned char)left, "progress data");
            /* the same inside an allreduce and a bcast */
            int x = 1, sum = 0;
            if (me == 0) {
                MPI_Irecv(rbuf, size, MPI_BYTE, left, 8, tc->comm, &req);
                MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, tc->comm);
                MPI_Bcast(&x, 1, MPI_INT, n - 1, tc->comm);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else {
                if (me == n - 1)
                    MPI_Ssend(sbuf, size, MPI_BYTE, right, 8, tc->comm);
                MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, tc->comm);
                MPI_Bcast(&x, 1, MPI_INT, n - 1, tc->comm);
            }
            CHECK(sum == n, "allreduce during progress");
            free(rbuf);
            free(sbuf);
        }
    }
}

static void run(void)
{
    part_pairs();
    part_random();
    part_progress();
}

int main(int argc, char **argv) { return tc_main(argc, argv, run); }
