/* opi_errors.c: every misuse of OPI returns its error class under MPI_ERRORS_RETURN and
 * leaves the caller's buffer as it was: free or give of NULL, of a pointer that OPI did
 * not hand out (malloc, stack, inside an OPI buffer), double free, give after free or
 * after giving, a count beyond the buffer, bad counts, ranks, tags, communicators and
 * datatypes, and a take too small for the buffer given (MPI_ERR_TRUNCATE). */
#include "opi_common.h"

#include <stdalign.h>

static int rank, nranks;

static void expect(int rc, int cls, const char *what)
{
    int got = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, text, &len);
    CHECK(got == cls, "%s: error class %d, expected %d (%s)", what, got, cls, text);
}

static void on_free(void)
{
    void *p = NULL;
    expect(OPI_Free(NULL), MPI_ERR_ARG, "OPI_Free(NULL)");
    expect(OPI_Free(&p), MPI_ERR_BUFFER, "free of a NULL buffer");

    void *m = malloc(1000);
    p = m;
    expect(OPI_Free(&p), MPI_ERR_BUFFER, "free of malloc'ed memory");
    CHECK(p == m, "a failed free must leave the pointer");
    free(m);
    void *a = aligned_alloc(64, 4096);
    p = (char *)a + 128;
    expect(OPI_Free(&p), MPI_ERR_BUFFER, "free of aligned malloc'ed memory");
    free(a);
    alignas(64) char stack[256];
    p = stack + 128;
    expect(OPI_Free(&p), MPI_ERR_BUFFER, "free of a stack buffer");

    OPI_Alloc(&p, 1000);
    void *inside = (char *)p + 64, *copy = p;
    expect(OPI_Free(&inside), MPI_ERR_BUFFER, "free of a pointer inside an OPI buffer");
    CHECK(OPI_Free(&p) == MPI_SUCCESS && p == NULL, "free");
    expect(OPI_Free(&copy), MPI_ERR_BUFFER, "double free");
    CHECK(copy != NULL, "a failed free must leave the pointer");
    void *again = NULL;
    OPI_Alloc(&again, 1000); /* most likely the same buffer again: usable as ever */
    CHECK(OPI_Free(&again) == MPI_SUCCESS, "free after reuse");
    expect(OPI_Alloc(NULL, 10), MPI_ERR_ARG, "OPI_Alloc(NULL)");
    expect(OPI_Alloc(&p, (size_t)1 << 60), MPI_ERR_ARG, "OPI_Alloc too large");
}

static void on_give(void)
{
    int right = (rank + 1) % nranks;
    void *p = NULL, *copy;
    expect(OPI_Give(NULL, 1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_ARG, "give(NULL)");
    expect(OPI_Give(&p, 1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "give NULL");
    void *m = malloc(256);
    p = m;
    expect(OPI_Give(&p, 1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "give malloc");
    CHECK(p == m, "a failed give must leave the pointer");
    free(m);

    OPI_Alloc(&p, 100);
    copy = p;
    expect(OPI_Give(&p, 101, MPI_BYTE, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT,
           "count beyond the buffer");
    expect(OPI_Give(&p, 26, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT,
           "count * size beyond the buffer");
    expect(OPI_Give(&p, -1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "count < 0");
    expect(OPI_Give(&p, 1, MPI_INT, nranks, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "rank");
    expect(OPI_Give(&p, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
           "give to ANY_SOURCE");
    expect(OPI_Give(&p, 1, MPI_INT, right, -5, MPI_COMM_WORLD), MPI_ERR_TAG, "tag");
    expect(OPI_Give(&p, 1, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG,
           "give with ANY_TAG");
    expect(OPI_Give(&p, 1, MPI_DATATYPE_NULL, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "datatype");
    expect(OPI_Give(&p, 1, MPI_INT, right, 0, MPI_COMM_NULL), MPI_ERR_COMM, "COMM_NULL");
    CHECK(p == copy, "failed gives must leave the pointer");
    /* After all that the buffer is still ours: a give of exactly its size works. */
    CHECK(OPI_Give(&p, 25, MPI_INT, rank, 3, MPI_COMM_WORLD) == 0 && !p, "give to self");
    expect(OPI_Give(&copy, 25, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
           "give of a buffer given away");
    expect(OPI_Free(&copy), MPI_ERR_BUFFER, "free of a buffer given away");
    CHECK(OPI_Take(&p, 25, MPI_INT, rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == 0, "take");
    CHECK(OPI_Free(&p) == 0, "free");
    expect(OPI_Give(&copy, 1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
           "give after free");
}

static void on_take(void)
{
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    void *p = NULL;
    MPI_Request r;
    expect(OPI_Take(NULL, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_ARG,
           "take(NULL)");
    expect(OPI_Take(&p, -1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_COUNT,
           "take count < 0");
    expect(OPI_Itake(&p, 1, MPI_INT, nranks + 3, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK, "take rank");
    expect(OPI_Itake(&p, 1, MPI_INT, left, -2, MPI_COMM_WORLD, &r), MPI_ERR_TAG, "take tag");
    CHECK(p == NULL, "failed takes leave *ptr");

    /* Truncation: 100 ints given, 50 taken. The buffer is the taker's all the same. */
    int *q = NULL;
    OPI_Alloc((void **)&q, 100 * sizeof(int));
    for (int i = 0; i < 100; i++)
        q[i] = i;
    OPI_Give((void **)&q, 100, MPI_INT, right, 8, MPI_COMM_WORLD);
    MPI_Status st;
    int rc = OPI_Take(&p, 50, MPI_INT, left, 8, MPI_COMM_WORLD, &st);
    expect(rc, MPI_ERR_TRUNCATE, "take smaller than the give");
    CHECK(p != NULL, "a truncated take still hands over the buffer");
    if (opi_same_node(left)) /* the giver's buffer itself (MPI leaves a truncated copy undefined) */
        for (int i = 0; i < 50; i++)
            CHECK(((int *)p)[i] == i, "truncated take: int %d is %d", i, ((int *)p)[i]);
    CHECK(OPI_Free(&p) == 0, "free truncated");
    /* The same through a request. */
    OPI_Alloc((void **)&q, 100 * sizeof(int));
    OPI_Give((void **)&q, 100, MPI_INT, right, 9, MPI_COMM_WORLD);
    CHECK(OPI_Itake(&p, 10, MPI_INT, left, 9, MPI_COMM_WORLD, &r) == 0, "itake");
    expect(MPI_Wait(&r, &st), MPI_ERR_TRUNCATE, "wait on a truncated take");
    CHECK(p != NULL, "a truncated itake still hands over the buffer");
    OPI_Free(&p);
}

/* A communicator not enabled: MPI_ERR_COMM until OPI_Comm_enable; OPI traffic of the
 * parent does not leak into it. */
static void on_comm(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    void *p = NULL;
    OPI_Alloc(&p, 8);
    expect(OPI_Give(&p, 8, MPI_BYTE, 0, 0, dup), MPI_ERR_COMM, "give on a comm not enabled");
    expect(OPI_Take(&p, 8, MPI_BYTE, 0, 0, dup, MPI_STATUS_IGNORE), MPI_ERR_COMM,
           "take on a comm not enabled");
    CHECK(OPI_Comm_enable(dup) == 0, "enable");
    CHECK(OPI_Give(&p, 8, MPI_BYTE, rank, 0, dup) == 0, "give once enabled");
    CHECK(OPI_Take(&p, 8, MPI_BYTE, rank, 0, dup, MPI_STATUS_IGNORE) == 0, "take once enabled");
    OPI_Free(&p);
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    /* Errors of calls without a communicator go to MPI_COMM_WORLD's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    opi_same_node(0);
    on_free();
    on_give();
    on_take();
    on_comm();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("opi_errors: ok (%d ranks, HMPI %s)\n", nranks, HMPI_Active() ? "on" : "off");
    MPI_Finalize();
    return 0;
}
