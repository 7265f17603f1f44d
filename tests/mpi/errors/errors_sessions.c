/* errors_sessions.c: bad input to the sessions' calls (MPI-4.1 §11.3) gets the error
 * class the standard names, through the handler it names, and the program goes on:
 *  - a finalized session (its handle, MPI_SESSION_NULL, and a copy of the old handle):
 *    MPI_ERR_SESSION, an error of no object (MPI_COMM_WORLD's or MPI_COMM_SELF's handler,
 *    as the MPI below raises it: both return here);
 *  - a pset name that does not exist: MPI_ERR_ARG through the session's own handler,
 *    called once;
 *  - a group of a session finalized since, and MPI_GROUP_NULL, to the constructors from
 *    groups: MPI_ERR_GROUP, of no object.
 * The world model runs meanwhile so that errors of no object can return (under sessions
 * alone they end the job: errors_fatal's session cases). With HMPI_DISABLE=1 the MPI
 * below decides alone: the checks it does not make are left out (MPICH 4.0 raises a bad
 * pset on MPI_COMM_WORLD, neither MPI refuses a finalized session's group, Open MPI 5.0
 * builds on MPI_GROUP_NULL). */
#define CHECK_WITH_MPI
#include "../../check.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int session_calls, session_class;

static void on_session_error(MPI_Session *s, int *code, ...)
{
    session_calls++;
    MPI_Error_class(*code, &session_class);
}

static int class_of(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    const char *d = getenv("HMPI_DISABLE");
    int hmpi = !(d && strcmp(d, "0") != 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    MPI_Session s, gone, copy;
    MPI_Errhandler eh;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "init");
    MPI_Session_create_errhandler(on_session_error, &eh);
    MPI_Session_set_errhandler(s, eh);
    MPI_Errhandler_free(&eh);

    /* A pset that does not exist. */
    MPI_Group g = MPI_GROUP_NULL;
    int rc = MPI_Group_from_session_pset(s, "mpi://NO_SUCH_PSET", &g);
    CHECK(class_of(rc) == MPI_ERR_ARG, "a bad pset name gave class %d", class_of(rc));
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
    int handler_known = hmpi; /* MPICH 4.0 alone raises it on MPI_COMM_WORLD */
#else
    int handler_known = 1;
#endif
    if (handler_known)
        CHECK(session_calls == 1 && session_class == MPI_ERR_ARG,
              "the session's handler: %d calls, class %d", session_calls, session_class);

    /* A session finalized: its handle (MPI_SESSION_NULL now) and a copy of the old one. */
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &gone) == MPI_SUCCESS, "init 2");
    MPI_Group of_gone;
    CHECK(MPI_Group_from_session_pset(gone, "mpi://WORLD", &of_gone) == MPI_SUCCESS, "group 2");
    copy = gone;
    CHECK(MPI_Session_finalize(&gone) == MPI_SUCCESS, "finalize 2");
    CHECK(gone == MPI_SESSION_NULL, "the finalized handle is not MPI_SESSION_NULL");
    rc = MPI_Group_from_session_pset(gone, "mpi://WORLD", &g);
    CHECK(class_of(rc) == MPI_ERR_SESSION, "MPI_SESSION_NULL gave class %d", class_of(rc));
    if (hmpi) { /* the MPI below reads the freed object itself */
        int n = 0;
        rc = MPI_Group_from_session_pset(copy, "mpi://WORLD", &g);
        CHECK(class_of(rc) == MPI_ERR_SESSION, "a finalized session gave class %d", class_of(rc));
        rc = MPI_Session_get_num_psets(copy, MPI_INFO_NULL, &n);
        CHECK(class_of(rc) == MPI_ERR_SESSION, "its psets: class %d", class_of(rc));
        rc = MPI_Session_finalize(&copy);
        CHECK(class_of(rc) == MPI_ERR_SESSION, "finalized twice: class %d", class_of(rc));
    }

    /* A group of the finalized session, and MPI_GROUP_NULL, to both constructors. */
    MPI_Comm c = MPI_COMM_NULL;
    if (hmpi) {
        rc = MPI_Comm_create_from_group(of_gone, "org.hmpi.test.gone", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &c);
        CHECK(class_of(rc) == MPI_ERR_GROUP, "a finalized session's group gave class %d",
              class_of(rc));
        rc = MPI_Intercomm_create_from_groups(of_gone, 0, of_gone, 0, "org.hmpi.test.gone2",
                                              MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
        CHECK(class_of(rc) == MPI_ERR_GROUP, "the same to the intercommunicator: class %d",
              class_of(rc));
    }
#ifdef OPEN_MPI
    int null_known = hmpi; /* Open MPI 5.0 alone builds on it */
#else
    int null_known = 1;
#endif
    if (null_known) {
        rc = MPI_Comm_create_from_group(MPI_GROUP_NULL, "org.hmpi.test.null", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &c);
        CHECK(class_of(rc) == MPI_ERR_GROUP, "MPI_GROUP_NULL gave class %d", class_of(rc));
    }
    MPI_Group_free(&of_gone);

    /* The session still works, and so does a group of it. */
    CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g) == MPI_SUCCESS, "group");
    CHECK(MPI_Comm_create_from_group(g, "org.hmpi.test.good", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                     &c) == MPI_SUCCESS,
          "a good group");
    int size, sum = 0, one = 1;
    MPI_Comm_size(c, &size);
    CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS && sum == size, "sum %d",
          sum);
    MPI_Comm_free(&c);
    MPI_Group_free(&g);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "finalize");
    MPI_Finalize();
    if (rank == 0)
        printf("errors_sessions: ok\n");
    return 0;
}
