/* opi_types.c: OPI_Give/OPI_Take with a datatype whose bytes are not in increasing
 * order: a struct of two blocks declared in reversed order (displacements {8, 0}).
 * Its packed form is bytes 8..15 then 0..7 of each element, so a take of contents (a
 * giver on another node) must unpack, not memcpy, the arriving bytes; a local take
 * gets the giver's buffer itself. Checked byte for byte, blocking and nonblocking, with
 * the same type on both sides and with MPI_INT on one side. */
#include "opi_common.h"

enum { ELEMS = 3, INTS = 4 * ELEMS };

static int rank, nranks;

/* Two blocks of two ints each: block 0 at byte 8, block 1 at byte 0; extent 16. */
static MPI_Datatype reversed_type(void)
{
    int lens[2] = {2, 2};
    MPI_Aint disps[2] = {8, 0};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT}, t;
    MPI_Type_create_struct(2, lens, disps, types, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Position in the buffer of the k-th int of the packed stream of the reversed type. */
static int placed(int k)
{
    int e = k / 4, j = k % 4;
    return e * 4 + (j < 2 ? 2 + j : j - 2);
}

static int value(int giver, int tag, int i) { return giver * 100000 + tag * 1000 + i; }

/* mode 0: both sides use the reversed type; 1: the giver gives MPI_INT, the taker
 * takes the reversed type; 2: the giver gives the reversed type, the taker MPI_INT. */
static void exchange(MPI_Datatype rev, int mode, int nonblocking)
{
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    int tag = mode * 2 + nonblocking;
    MPI_Datatype gt = mode == 1 ? MPI_INT : rev, tt = mode == 2 ? MPI_INT : rev;
    int gc = mode == 1 ? INTS : ELEMS, tc = mode == 2 ? INTS : ELEMS;
    int *p = NULL;
    CHECK(OPI_Alloc((void **)&p, INTS * sizeof(int)) == MPI_SUCCESS && p, "alloc");
    for (int i = 0; i < INTS; i++)
        p[i] = value(rank, tag, i);
    int *q = NULL;
    MPI_Status st;
    if (nonblocking) {
        MPI_Request r[2];
        CHECK(OPI_Itake((void **)&q, tc, tt, left, tag, MPI_COMM_WORLD, &r[0]) == 0, "itake");
        CHECK(OPI_Igive((void **)&p, gc, gt, right, tag, MPI_COMM_WORLD, &r[1]) == 0, "igive");
        MPI_Status sts[2];
        CHECK(MPI_Waitall(2, r, sts) == MPI_SUCCESS, "waitall");
        st = sts[0];
    } else {
        CHECK(OPI_Give((void **)&p, gc, gt, right, tag, MPI_COMM_WORLD) == 0, "give");
        CHECK(OPI_Take((void **)&q, tc, tt, left, tag, MPI_COMM_WORLD, &st) == 0, "take");
    }
    CHECK(q != NULL, "mode %d: take gave no buffer", mode);
    CHECK(opi_count(&st, tt) == tc, "mode %d: count %d, expected %d", mode, opi_count(&st, tt), tc);
    for (int i = 0; i < INTS; i++) {
        /* Locally the giver's buffer itself arrives. Remotely the giver's type picks the
         * packed order and the taker's type lays it out: reversed on both sides is the
         * identity; reversed on one side moves packed int k to placed(k) (mode 1) or
         * takes packed int k from placed(k) (mode 2). */
        int want = value(left, tag, i);
        if (!opi_same_node(left) && mode != 0)
            want = value(left, tag, placed(i)); /* placed() is its own inverse */
        CHECK(q[i] == want, "mode %d%s: int %d is %d, expected %d (from %d)", mode,
              nonblocking ? " nonblocking" : "", i, q[i], want, left);
    }
    CHECK(OPI_Free((void **)&q) == MPI_SUCCESS, "free");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    opi_same_node(0);
    MPI_Datatype rev = reversed_type();
    int size;
    MPI_Aint lb, extent;
    MPI_Type_size(rev, &size);
    MPI_Type_get_extent(rev, &lb, &extent);
    CHECK(size == 16 && lb == 0 && extent == 16, "reversed type: size %d lb %ld extent %ld", size,
          (long)lb, (long)extent);
    for (int mode = 0; mode < 3; mode++)
        for (int nb = 0; nb < 2; nb++)
            exchange(rev, mode, nb);
    MPI_Type_free(&rev);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("opi_types: ok (%d ranks, HMPI %s)\n", nranks, HMPI_Active() ? "on" : "off");
    MPI_Finalize();
    return 0;
}
