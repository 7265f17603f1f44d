/* errors.c: raising MPI errors (errors.h). Cold code: nothing here runs unless a call
 * has already failed, so it may format strings and ask the MPI below questions. */
#include "errors.h"
#include "../common/log.h"
#include "../node/node.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

int hmpi_mpi_state = HMPI_STATE_BEFORE;
_Atomic int hmpi_mpi_sessions;
int hmpi_mpi_world;

/* The description of the argument that failed last in this thread; cleared once
 * raised, so an error decided without one is not given a stale one. */
static _Thread_local char what[192];

int hmpi_err_what(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return code;
}

static const char *class_name(int code)
{
    int cls = code;
    PMPI_Error_class(code, &cls);
#if HMPI_MPI4_CALLS
    if (cls == MPI_ERR_SESSION)
        return "MPI_ERR_SESSION";
#endif
    switch (cls) {
        // clang-format off
#define C(x) case x: return #x;
    C(MPI_ERR_BUFFER) C(MPI_ERR_COUNT) C(MPI_ERR_TYPE) C(MPI_ERR_TAG) C(MPI_ERR_COMM)
    C(MPI_ERR_RANK) C(MPI_ERR_REQUEST) C(MPI_ERR_ROOT) C(MPI_ERR_GROUP) C(MPI_ERR_OP)
    C(MPI_ERR_ARG) C(MPI_ERR_TRUNCATE) C(MPI_ERR_OTHER) C(MPI_ERR_INTERN)
    C(MPI_ERR_IN_STATUS) C(MPI_ERR_WIN) C(MPI_ERR_RMA_SYNC) C(MPI_ERR_RMA_RANGE)
    C(MPI_ERR_RMA_CONFLICT) C(MPI_ERR_LOCKTYPE) C(MPI_ERR_DISP) C(MPI_ERR_SIZE)
    C(MPI_ERR_NO_MEM) C(MPI_ERR_INFO)
#undef C
    default: return "MPI error";
        // clang-format on
    }
}

/* Is eh one that ends the job? The handle is ours to free (MPI_*_get_errhandler). */
static int fatal(MPI_Errhandler eh)
{
    int f = eh == MPI_ERRORS_ARE_FATAL;
#ifdef MPI_ERRORS_ABORT
    f = f || eh == MPI_ERRORS_ABORT;
#endif
    if (eh != MPI_ERRHANDLER_NULL)
        PMPI_Errhandler_free(&eh);
    return f;
}

/* With fn NULL the description names the function itself (OPI's do). */
static void say(const char *fn, int code)
{
    if (fn)
        hmpi_log_error("%s: %s (%s)", fn, what[0] ? what : "failed", class_name(code));
    else if (what[0])
        hmpi_log_error("%s (%s)", what, class_name(code));
}

/* An error of no object while the world model does not run (sessions alone): the
 * initial error handler takes it, which is fatal (MPI-4.1 §9.3; MPICH 4.0 and 4.2 and
 * Open MPI 5.0 end the job then too, and both MPIs refuse MPI_COMM_WORLD and
 * MPI_COMM_SELF, even to ask for their handler). The job ends through HMPI's own
 * world (node.h), or this process alone where HMPI has none (HMPI_DISABLE=1). */
static _Noreturn void raise_initial(int code, const char *fn)
{
    say(fn, code);
    if (!fn && !what[0])
        hmpi_log_error("an MPI call failed (%s) with no object to raise it on", class_name(code));
    if (hmpi_node.world != MPI_COMM_WORLD)
        PMPI_Abort(hmpi_node.world, code);
    exit(EXIT_FAILURE);
}

int hmpi_err_comm(MPI_Comm comm, int code, const char *fn)
{
    if (!hmpi_mpi_world &&
        (comm == MPI_COMM_NULL || comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF))
        raise_initial(code, fn);
    if (comm == MPI_COMM_NULL)
        comm = MPI_COMM_WORLD;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    PMPI_Comm_get_errhandler(comm, &eh);
    if (fatal(eh))
        say(fn, code);
    what[0] = '\0';
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

int hmpi_err_win(MPI_Win win, int code, const char *fn)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    PMPI_Win_get_errhandler(win, &eh);
    if (fatal(eh))
        say(fn, code);
    what[0] = '\0';
    PMPI_Win_call_errhandler(win, code);
    return code;
}

#if HMPI_MPI4_CALLS
int hmpi_err_session(MPI_Session s, int code, const char *fn)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    PMPI_Session_get_errhandler(s, &eh);
    int ret = eh == MPI_ERRORS_RETURN;
    if (fatal(eh)) /* (frees eh) */
        say(fn, code);
    what[0] = '\0';
    if (!ret)
        PMPI_Session_call_errhandler(s, code);
    return code;
}
#endif

void hmpi_err_state(const char *fn)
{
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if ((init && !fin) || atomic_load(&hmpi_mpi_sessions) > 0) {
        hmpi_mpi_state = HMPI_STATE_RUNNING;
        return;
    }
    hmpi_log_error("%s called %s", fn,
                   hmpi_mpi_state == HMPI_STATE_BEFORE ? "before MPI_Init" : "after MPI_Finalize");
    exit(EXIT_FAILURE);
}
