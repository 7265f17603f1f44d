/* sessions.c: MPI 4's sessions model (MPI-4.1 §11.3) under HMPI: a program that never
 * calls MPI_Init makes its communicator from the pset mpi://WORLD and sends, receives and
 * reduces on it; a second session open at the same time; the world model mixed in
 * (MPI_Init while a session is open, the session used past MPI_Finalize). Every value
 * received is checked. Standard MPI only. */
#define CHECK_WITH_MPI
#include "../check.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

#undef CHECK_FAIL_
#define CHECK_FAIL_() abort() /* MPI_COMM_WORLD may not be there to abort */

/* A communicator of every process from session s, by the pset mpi://WORLD. */
static MPI_Comm world_of(MPI_Session s, const char *tag)
{
    MPI_Group g;
    MPI_Comm c;
    CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g) == MPI_SUCCESS, "no group");
    CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) == MPI_SUCCESS,
          "MPI_Comm_create_from_group failed");
    MPI_Group_free(&g);
    return c;
}

/* Messages around a ring (sizes across HMPI's protocols) and an allreduce on c. */
static void traffic(MPI_Comm c, int salt)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    static const int counts[] = {1, 64, 20000, 300000};
    for (int k = 0; k < 4; k++) {
        int n = counts[k];
        int *out = malloc(sizeof(int) * (size_t)n), *in = malloc(sizeof(int) * (size_t)n);
        CHECK(out && in, "out of memory");
        for (int i = 0; i < n; i++)
            out[i] = rank * 7919 + i + salt, in[i] = -1;
        MPI_Request q;
        CHECK(MPI_Irecv(in, n, MPI_INT, prev, k, c, &q) == MPI_SUCCESS, "Irecv");
        CHECK(MPI_Send(out, n, MPI_INT, next, k, c) == MPI_SUCCESS, "Send");
        MPI_Status st;
        CHECK(MPI_Wait(&q, &st) == MPI_SUCCESS, "Wait");
        CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == k, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
        for (int i = 0; i < n; i++)
            CHECK(in[i] == prev * 7919 + i + salt, "element %d of %d: %d", i, n, in[i]);
        free(out);
        free(in);
    }
    long v = rank + salt, sum = 0;
    CHECK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c) == MPI_SUCCESS, "Allreduce");
    CHECK(sum == (long)size * (size - 1) / 2 + (long)size * salt, "sum %ld", sum);
}

int main(void)
{
    MPI_Session s1, s2;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1) == MPI_SUCCESS, "init");
    MPI_Comm c1 = world_of(s1, "org.hmpi.test.one");
    traffic(c1, 1);
    /* A second session at the same time, its own communicator. */
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2) == MPI_SUCCESS, "init 2");
    MPI_Comm c2 = world_of(s2, "org.hmpi.test.two");
    traffic(c2, 2);
    traffic(c1, 3);
    /* A session's own errors: a bad rank on its communicator returns MPI_ERR_RANK. */
    int x = 0, size;
    MPI_Comm_size(c2, &size);
    int rc = MPI_Send(&x, 1, MPI_INT, size, 0, c2), cls = rc;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "a send to rank %d gave class %d", size, cls);
    MPI_Comm_free(&c2);
    CHECK(MPI_Session_finalize(&s2) == MPI_SUCCESS, "finalize 2");
    /* The world model while a session is open, and the session past MPI_Finalize. */
    MPI_Init(NULL, NULL);
    traffic(MPI_COMM_WORLD, 4);
    traffic(c1, 5);
    MPI_Finalize();
    traffic(c1, 6);
    int rank;
    MPI_Comm_rank(c1, &rank);
    MPI_Comm_free(&c1);
    CHECK(MPI_Session_finalize(&s1) == MPI_SUCCESS, "finalize");
    if (rank == 0)
        printf("sessions: ok\n");
    return 0;
}
