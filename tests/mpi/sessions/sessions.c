/* sessions.c: MPI 4's sessions model (MPI-4.1 §11.3) under HMPI: a program that never
 * calls MPI_Init makes its communicator from the pset mpi://WORLD and sends, receives,
 * reduces, runs the collectives and a window on it; a one-rank communicator from
 * mpi://SELF; memory allocated before the first init sent and freed after it; a second
 * session open at the same time; a communicator's own error handler; the world model
 * mixed in (MPI_Init while a session is open, the session used past MPI_Finalize).
 * Every value received is checked. Standard MPI only (also run with HMPI_DISABLE=1). */
#include "sessions_common.h"

static int handled; /* calls of on_error */

static void on_error(MPI_Comm *comm, int *code, ...)
{
    int cls = *code;
    MPI_Error_class(*code, &cls);
    CHECK(cls == MPI_ERR_RANK, "the handler got class %d", cls);
    handled++;
}

/* A one-rank communicator: a message to itself, collectives and a window over itself. */
static void self_traffic(MPI_Session s)
{
    MPI_Comm c = comm_of(s, "mpi://SELF", "org.hmpi.test.self");
    int size = 0, rank = -1;
    MPI_Comm_size(c, &size);
    MPI_Comm_rank(c, &rank);
    CHECK(size == 1 && rank == 0, "mpi://SELF gave size %d rank %d", size, rank);
    enum { N = 50000 };
    int *out = malloc(sizeof(int) * N), *in = malloc(sizeof(int) * N);
    CHECK(out && in, "out of memory");
    for (int i = 0; i < N; i++)
        out[i] = i ^ 0x5a5a, in[i] = -1;
    MPI_Request q;
    CHECK(MPI_Irecv(in, N, MPI_INT, 0, 3, c, &q) == MPI_SUCCESS, "Irecv from self");
    CHECK(MPI_Send(out, N, MPI_INT, 0, 3, c) == MPI_SUCCESS, "Send to self");
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Wait");
    for (int i = 0; i < N; i++)
        CHECK(in[i] == (i ^ 0x5a5a), "self element %d: %d", i, in[i]);
    traffic(c, 11);
    collectives(c, 12);
    window(c, 13);
    free(out);
    free(in);
    MPI_Comm_free(&c);
}

int main(void)
{
    /* Memory of the program before any init (private to the process under HMPI). */
    enum { EARLY = 100000 };
    int *early = malloc(sizeof(int) * EARLY), *late_in = NULL;
    CHECK(early, "out of memory");
    for (int i = 0; i < EARLY; i++)
        early[i] = i * 13;

    MPI_Session s1, s2;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1) == MPI_SUCCESS, "init");
    MPI_Comm c1 = comm_of(s1, "mpi://WORLD", "org.hmpi.test.one");
    int rank, size;
    MPI_Comm_rank(c1, &rank);
    MPI_Comm_size(c1, &size);
    traffic(c1, 1);
    collectives(c1, 1);
    window(c1, 1);

    /* The early buffer, sent around the ring and received into memory of now. */
    late_in = malloc(sizeof(int) * EARLY);
    CHECK(late_in, "out of memory");
    CHECK(MPI_Sendrecv(early, EARLY, MPI_INT, (rank + 1) % size, 7, late_in, EARLY, MPI_INT,
                       (rank + size - 1) % size, 7, c1, MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "Sendrecv of the early buffer");
    for (int i = 0; i < EARLY; i++)
        CHECK(late_in[i] == i * 13, "early element %d: %d", i, late_in[i]);
    CHECK(MPI_Sendrecv(late_in, EARLY, MPI_INT, (rank + 1) % size, 8, early, EARLY, MPI_INT,
                       (rank + size - 1) % size, 8, c1, MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "Sendrecv into the early buffer");
    for (int i = 0; i < EARLY; i++)
        CHECK(early[i] == i * 13, "early element %d: %d", i, early[i]);
    free(early); /* allocated before the first init, freed after it */
    free(late_in);

    self_traffic(s1);

    /* A second session at the same time, its own communicator. */
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2) == MPI_SUCCESS, "init 2");
    MPI_Comm c2 = comm_of(s2, "mpi://WORLD", "org.hmpi.test.two");
    traffic(c2, 2);
    traffic(c1, 3);
    /* A session's own errors: a bad rank on its communicator returns MPI_ERR_RANK, and a
     * handler of the program's is called once for it. */
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, size, 0, c2), cls = rc;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "a send to rank %d gave class %d", size, cls);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_Comm_set_errhandler(c2, eh);
    MPI_Errhandler_free(&eh);
    MPI_Send(&x, 1, MPI_INT, size, 0, c2);
    CHECK(handled == 1, "the handler was called %d times", handled);
    MPI_Comm_free(&c2);
    CHECK(MPI_Session_finalize(&s2) == MPI_SUCCESS, "finalize 2");
    CHECK(s2 == MPI_SESSION_NULL, "a finalized session's handle is not MPI_SESSION_NULL");

    /* The world model while a session is open, and the session past MPI_Finalize. */
    MPI_Init(NULL, NULL);
    traffic(MPI_COMM_WORLD, 4);
    collectives(MPI_COMM_WORLD, 4);
    traffic(c1, 5);
    MPI_Finalize();
    traffic(c1, 6);
    collectives(c1, 6);
    window(c1, 6);
    MPI_Comm_free(&c1);
    CHECK(MPI_Session_finalize(&s1) == MPI_SUCCESS, "finalize");
    if (rank == 0)
        printf("sessions: ok\n");
    return 0;
}
