/* errors_fatal.c: one erroneous call under the default handler, MPI_ERRORS_ARE_FATAL,
 * chosen by argv[1]; errors_fatal.py runs it and judges the job from outside (exit
 * status, time, the message naming the function and the argument). Every rank makes
 * the same call, so no rank is left waiting for another. Returns 0 only when the call
 * returned, which is the failure the driver looks for. */
#include <mpi.h>

#include <stdio.h>
#include <string.h>

static int rank, size, buf[4];

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (strcmp(c, "before_init") == 0) {
        MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        printf("errors_fatal: %s returned\n", c);
        return 0;
    }
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5) /* sessions */
    /* Under sessions alone: an error on a session's communicator, and one of no object
     * (a group of a session finalized since), which has no handler but the initial one. */
    if (strncmp(c, "session_", 8) == 0) {
        MPI_Session s, gone;
        MPI_Group g, old;
        MPI_Comm comm;
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &gone);
        MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
        MPI_Group_from_session_pset(gone, "mpi://WORLD", &old);
        MPI_Session_finalize(&gone);
        MPI_Comm_create_from_group(g, "org.hmpi.test.fatal", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL,
                                   &comm);
        MPI_Comm_size(comm, &size);
        if (strcmp(c, "session_rank") == 0)
            MPI_Send(buf, 1, MPI_INT, size + 5, 0, comm);
        else
            MPI_Comm_create_from_group(old, "org.hmpi.test.old", MPI_INFO_NULL,
                                       MPI_ERRORS_ARE_FATAL, &comm);
        printf("errors_fatal: %s returned\n", c);
        MPI_Session_finalize(&s);
        return 0;
    }
#endif
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (strcmp(c, "send_rank") == 0) {
        MPI_Send(buf, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    } else if (strcmp(c, "bcast_root") == 0) {
        MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD);
    } else if (strcmp(c, "send_type") == 0) {
        MPI_Datatype t;
        MPI_Type_contiguous(2, MPI_INT, &t); /* never committed */
        MPI_Send(buf, 1, t, 0, 0, MPI_COMM_WORLD);
    } else if (strcmp(c, "acc_op") == 0) {
        MPI_Win win;
        MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_fence(0, win);
        MPI_Accumulate(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win);
        MPI_Win_fence(0, win);
        MPI_Win_free(&win);
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
    } else if (strcmp(c, "pready_range") == 0) {
        MPI_Request q[2];
        MPI_Psend_init(buf, 2, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
        MPI_Precv_init(buf + 2, 2, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]);
        MPI_Startall(2, q);
        MPI_Pready(5, q[0]);
#endif
    } else if (strcmp(c, "after_finalize") == 0) {
        MPI_Finalize();
        MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        printf("errors_fatal: %s returned\n", c);
        return 0;
    }
    printf("errors_fatal: %s returned\n", c);
    MPI_Finalize();
    return 0;
}
