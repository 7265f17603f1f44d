/* coll_bottom.c: collectives and receives whose buffers are MPI_BOTTOM plus a datatype
 * of absolute addresses (MPI-4.1 §5.1.12), on both sides: MPI_Bcast, MPI_Gather,
 * MPI_Scatter, MPI_Allgather, MPI_Allgatherv, MPI_Alltoall, and MPI_Recv/MPI_Irecv of a
 * short and a long message from the partner rank^1. The types pick two runs out of
 * each 16-int block of a private array (3 ints, then 4), so the data must go through
 * pack/unpack; a block type is resized to the block's extent so that count and rank
 * offsets step from block to block. Every int is checked, gaps included. */
#define CHECK_WITH_MPI
#include "../../check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 16, NDATA = 7, MAXR = 16 };

static int rank, nranks;

/* Block b of array a (B ints from a + b*B) holds NDATA values at these places. */
static int at(int k) { return k < 3 ? 1 + k : 8 + (k - 3); }

static int val(int who, int tag, int k) { return 10000 * (tag + 1) + 100 * who + k; }

/* One block of a as an absolute type, extent B ints: count n steps through n blocks. */
static MPI_Datatype block_type(const int *a)
{
    int len[2] = {3, 4};
    MPI_Aint disp[2], lb;
    MPI_Get_address(a + 1, &disp[0]);
    MPI_Get_address(a + 8, &disp[1]);
    MPI_Get_address(a, &lb);
    MPI_Datatype t, r;
    MPI_Type_create_hindexed(2, len, disp, MPI_INT, &t);
    MPI_Type_create_resized(t, lb, (MPI_Aint)(B * sizeof(int)), &r);
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    return r;
}

static void fill(int *a, int nblocks, int filler)
{
    for (int i = 0; i < nblocks * B; i++)
        a[i] = filler;
}

static void put(int *a, int block, int who, int tag)
{
    for (int k = 0; k < NDATA; k++)
        a[block * B + at(k)] = val(who, tag, k);
}

/* Block b of a holds who's values of tag (or filler everywhere when who < 0). */
static void expect(const int *a, int block, int who, int tag, int filler, const char *what)
{
    for (int i = 0, k = 0; i < B; i++) {
        int in = k < NDATA && at(k) == i;
        int want = in && who >= 0 ? val(who, tag, k) : filler;
        CHECK(a[block * B + i] == want, "%s: block %d int %d is %d, expected %d", what, block, i,
              a[block * B + i], want);
        k += in;
    }
}

static int sbuf[MAXR * B], rbuf[MAXR * B];

static void collectives(void)
{
    CHECK(nranks <= MAXR, "at most %d ranks", MAXR);
    MPI_Datatype st = block_type(sbuf), rt = block_type(rbuf);
    int n = nranks;
    for (int root = 0; root < n; root++) {
        /* Bcast: the root's block from MPI_BOTTOM, into MPI_BOTTOM elsewhere. */
        int tag = 1;
        fill(sbuf, 1, -1);
        fill(rbuf, 1, -2);
        if (rank == root)
            put(sbuf, 0, root, tag);
        CHECK(MPI_Bcast(MPI_BOTTOM, 1, rank == root ? st : rt, root, MPI_COMM_WORLD) == MPI_SUCCESS,
              "MPI_Bcast");
        if (rank == root)
            expect(sbuf, 0, root, tag, -1, "MPI_Bcast at the root");
        else
            expect(rbuf, 0, root, tag, -2, "MPI_Bcast");

        /* Gather: every block from MPI_BOTTOM to the root's MPI_BOTTOM. */
        tag = 2;
        fill(sbuf, 1, -1);
        fill(rbuf, n, -2);
        put(sbuf, 0, rank, tag);
        CHECK(MPI_Gather(MPI_BOTTOM, 1, st, MPI_BOTTOM, 1, rt, root, MPI_COMM_WORLD) == MPI_SUCCESS,
              "MPI_Gather");
        for (int i = 0; i < n; i++)
            expect(rbuf, i, rank == root ? i : -1, tag, -2, "MPI_Gather");

        /* Scatter: the root's blocks from MPI_BOTTOM to each MPI_BOTTOM. */
        tag = 3;
        fill(sbuf, n, -1);
        fill(rbuf, 1, -2);
        if (rank == root)
            for (int i = 0; i < n; i++)
                put(sbuf, i, i, tag);
        CHECK(MPI_Scatter(MPI_BOTTOM, 1, st, MPI_BOTTOM, 1, rt, root, MPI_COMM_WORLD) ==
                  MPI_SUCCESS,
              "MPI_Scatter");
        expect(rbuf, 0, rank, tag, -2, "MPI_Scatter");
    }

    /* Allgather and Allgatherv (blocks in reverse order). */
    int tag = 4;
    fill(sbuf, 1, -1);
    fill(rbuf, n, -2);
    put(sbuf, 0, rank, tag);
    CHECK(MPI_Allgather(MPI_BOTTOM, 1, st, MPI_BOTTOM, 1, rt, MPI_COMM_WORLD) == MPI_SUCCESS,
          "MPI_Allgather");
    for (int i = 0; i < n; i++)
        expect(rbuf, i, i, tag, -2, "MPI_Allgather");
    int counts[MAXR], displs[MAXR];
    for (int i = 0; i < n; i++) {
        counts[i] = 1;
        displs[i] = n - 1 - i;
    }
    fill(rbuf, n, -2);
    CHECK(MPI_Allgatherv(MPI_BOTTOM, 1, st, MPI_BOTTOM, counts, displs, rt, MPI_COMM_WORLD) ==
              MPI_SUCCESS,
          "MPI_Allgatherv");
    for (int i = 0; i < n; i++)
        expect(rbuf, n - 1 - i, i, tag, -2, "MPI_Allgatherv");

    /* Alltoall: block i to rank i. */
    tag = 5;
    fill(sbuf, n, -1);
    fill(rbuf, n, -2);
    for (int i = 0; i < n; i++)
        put(sbuf, i, rank * MAXR + i, tag);
    CHECK(MPI_Alltoall(MPI_BOTTOM, 1, st, MPI_BOTTOM, 1, rt, MPI_COMM_WORLD) == MPI_SUCCESS,
          "MPI_Alltoall");
    for (int i = 0; i < n; i++)
        expect(rbuf, i, i * MAXR + rank, tag, -2, "MPI_Alltoall");
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
}

/* Receives into MPI_BOTTOM from the partner: 1 block (an immediate message, by
 * MPI_Sendrecv) and 600 blocks (copied, by MPI_Irecv). */
static void receives(void)
{
    enum { MANY = 600 };
    int *r = malloc(sizeof(int) * MANY * B), *packed = malloc(sizeof(int) * MANY * NDATA);
    CHECK(r && packed, "out of memory");
    MPI_Datatype rt = block_type(r);
    int peer = (rank ^ 1) < nranks ? rank ^ 1 : rank;
    for (int m = 0; m < 2; m++) {
        int nb = m ? MANY : 1, tag = 6 + m;
        for (int i = 0; i < nb * NDATA; i++)
            packed[i] = 1000000 * tag + 10000 * rank + i;
        fill(r, nb, -2);
        if (m == 0) {
            CHECK(MPI_Sendrecv(packed, NDATA, MPI_INT, peer, tag, MPI_BOTTOM, 1, rt, peer, tag,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                  "MPI_Sendrecv into MPI_BOTTOM");
        } else {
            MPI_Request rq;
            CHECK(MPI_Irecv(MPI_BOTTOM, nb, rt, peer, tag, MPI_COMM_WORLD, &rq) == MPI_SUCCESS,
                  "MPI_Irecv into MPI_BOTTOM");
            MPI_Barrier(MPI_COMM_WORLD); /* posted everywhere before the sends */
            CHECK(MPI_Send(packed, nb * NDATA, MPI_INT, peer, tag, MPI_COMM_WORLD) == MPI_SUCCESS,
                  "MPI_Send");
            CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait");
        }
        for (int b = 0; b < nb; b++)
            for (int i = 0, k = 0; i < B; i++) {
                int in = k < NDATA && at(k) == i;
                int want = in ? 1000000 * tag + 10000 * peer + b * NDATA + k : -2;
                CHECK(r[b * B + i] == want,
                      "receive of %d blocks into MPI_BOTTOM: block %d int "
                      "%d is %d, expected %d",
                      nb, b, i, r[b * B + i], want);
                k += in;
            }
    }
    MPI_Type_free(&rt);
    free(packed);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    collectives();
    receives();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_bottom: OK\n");
    MPI_Finalize();
    return 0;
}
