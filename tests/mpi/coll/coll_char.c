/* coll_char.c: reductions on the character types (MPI_CHAR, MPI_SIGNED_CHAR,
 * MPI_UNSIGNED_CHAR, MPI_WCHAR) with every predefined op but MINLOC/MAXLOC give what the
 * MPI below gives: the reference is the fold, in rank order, of every rank's input with
 * the MPI below's MPI_Reduce_local (which HMPI passes through), asked with errors
 * returned; a pair it refuses is left out here (tests/mpi/coll/coll_op_ext.c checks that every
 * call refuses it). Checked through MPI_Allreduce (also in place), MPI_Reduce to the last
 * rank and MPI_Scan, at 1, 8, 1,000 and 70,000 elements, each rank's values spanning the
 * type's range (wrapping sums and products, negative chars). MPICH 4.0.2's MAX and MIN on
 * MPI_UNSIGNED_CHAR compare as if signed, and Open MPI's MPI_SUM (4.1.4 and 5.0.7) on
 * the three 8-bit character types saturates (127 + 1 = 127; measured in
 * MPI_Reduce_local, and its collectives compute the same): there HMPI is right (C's
 * wrapping arithmetic) and differs from the MPI below, so those pairs are left out over
 * it (docs/collectives.md). */
#define CHECK_WITH_MPI
#include "../../check.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
#define MPICH_40 1
#else
#define MPICH_40 0
#endif
#if defined(OPEN_MPI) /* 4.1.4 and 5.0.7 alike */
#define OMPI_ANY 1
#else
#define OMPI_ANY 0
#endif

static int rank, nranks;

static const struct {
    const char *name;
    MPI_Op op;
} ops[] = {{"MPI_SUM", MPI_SUM},   {"MPI_PROD", MPI_PROD}, {"MPI_MAX", MPI_MAX},
           {"MPI_MIN", MPI_MIN},   {"MPI_LAND", MPI_LAND}, {"MPI_LOR", MPI_LOR},
           {"MPI_LXOR", MPI_LXOR}, {"MPI_BAND", MPI_BAND}, {"MPI_BOR", MPI_BOR},
           {"MPI_BXOR", MPI_BXOR}};
enum { NOPS = sizeof ops / sizeof ops[0] };

/* Rank r's input: n elements of size bytes, element i's bytes from (r, i). */
static void fill(unsigned char *p, int r, int n, int size)
{
    for (int i = 0; i < n; i++)
        for (int b = 0; b < size; b++) {
            unsigned v = (unsigned)(r * 37 + i * 11 + b * 5) * 2654435761u >> 24;
            /* zeros now and then, for the logical ops */
            p[(size_t)i * (size_t)size + (size_t)b] = (unsigned char)((i + r) % 7 ? v : 0);
        }
}

/* The MPI below's fold of ranks 0..upto's inputs into ref; MPI_SUCCESS or its error. */
static int reference(unsigned char *ref, unsigned char *tmp, int upto, int n, int size,
                     MPI_Datatype type, MPI_Op op)
{
    fill(ref, 0, n, size);
    for (int r = 1; r <= upto; r++) {
        /* inout = in op inout: the fold x0 op x1 op ... keeps rank order */
        memcpy(tmp, ref, (size_t)n * (size_t)size);
        fill(ref, r, n, size);
        int err = MPI_Reduce_local(tmp, ref, n, type, op);
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

static int one(const char *tname, MPI_Datatype type, int size, int o, int n)
{
    size_t bytes = (size_t)n * (size_t)size;
    unsigned char *in = malloc(bytes), *out = malloc(bytes), *ref = malloc(bytes),
                  *tmp = malloc(bytes);
    CHECK(in && out && ref && tmp, "malloc");
    MPI_Op op = ops[o].op;
    /* The MPI below's answer on this pair, the same in every rank. */
    int ok = reference(ref, tmp, nranks - 1, n, size, type, op) == MPI_SUCCESS;
    if (!ok)
        goto done;
    fill(in, rank, n, size);
    memset(out, 0xa5, bytes);
    CHECK(MPI_Allreduce(in, out, n, type, op, MPI_COMM_WORLD) == MPI_SUCCESS,
          "MPI_Allreduce %s %s n=%d failed", ops[o].name, tname, n);
    CHECK(memcmp(out, ref, bytes) == 0, "MPI_Allreduce %s %s n=%d: not the MPI below's result",
          ops[o].name, tname, n);
    memcpy(out, in, bytes);
    CHECK(MPI_Allreduce(MPI_IN_PLACE, out, n, type, op, MPI_COMM_WORLD) == MPI_SUCCESS,
          "in-place MPI_Allreduce failed");
    CHECK(memcmp(out, ref, bytes) == 0, "in-place MPI_Allreduce %s %s n=%d: wrong", ops[o].name,
          tname, n);
    memset(out, 0xa5, bytes);
    CHECK(MPI_Reduce(in, out, n, type, op, nranks - 1, MPI_COMM_WORLD) == MPI_SUCCESS,
          "MPI_Reduce failed");
    CHECK(rank != nranks - 1 || memcmp(out, ref, bytes) == 0, "MPI_Reduce %s %s n=%d: wrong",
          ops[o].name, tname, n);
    CHECK(reference(ref, tmp, rank, n, size, type, op) == MPI_SUCCESS, "MPI_Reduce_local");
    memset(out, 0xa5, bytes);
    CHECK(MPI_Scan(in, out, n, type, op, MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Scan failed");
    CHECK(memcmp(out, ref, bytes) == 0, "MPI_Scan %s %s n=%d: wrong", ops[o].name, tname, n);
done:
    free(in), free(out), free(ref), free(tmp);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const struct {
        const char *name;
        MPI_Datatype type;
        int size;
    } types[] = {{"MPI_CHAR", MPI_CHAR, 1},
                 {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, 1},
                 {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, 1},
                 {"MPI_WCHAR", MPI_WCHAR, (int)sizeof(wchar_t)}};
    const int counts[] = {1, 8, 1000, 70000};
    int tested = 0;
    for (int t = 0; t < 4; t++)
        for (int o = 0; o < NOPS; o++) {
            if (MPICH_40 && types[t].type == MPI_UNSIGNED_CHAR &&
                (ops[o].op == MPI_MAX || ops[o].op == MPI_MIN))
                continue;
            if (OMPI_ANY && types[t].size == 1 && ops[o].op == MPI_SUM)
                continue;
            int ok = 1;
            for (int c = 0; c < 4; c++)
                ok &= one(types[t].name, types[t].type, types[t].size, o, counts[c]);
            tested += ok;
        }
    if (rank == 0)
        printf("coll_char: %d pairs of type and op the MPI below accepts, checked on %d ranks\n",
               tested, nranks);
    MPI_Finalize();
    return 0;
}
