/* count_tool.c: a tiny profiling tool in the PMPI style. It defines MPI_Send,
 * MPI_Isend and MPI_Finalize, counts the calls, and forwards each to the next
 * definition of the same function in the symbol search order: HMPI's, when the tool
 * comes before libhmpi (docs/ecosystem.md, "Tool stacking"). At MPI_Finalize every
 * rank prints "count_tool[rank]: MPI_Send=n MPI_Isend=m".
 *
 * Built with -DCOUNT_TOOL_PMPI it is the classic PMPI tool and forwards to PMPI_*,
 * which HMPI exports as well (the same functions as its MPI_*), so the calls still
 * reach HMPI. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long n_send, n_isend;

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*finalize_fn)(void);

#ifndef COUNT_TOOL_PMPI
/* The next definition of name after this library. */
static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "count_tool: no %s after the tool\n", name);
        abort();
    }
    return f;
}
#endif

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    n_send++;
#ifdef COUNT_TOOL_PMPI
    return PMPI_Send(buf, count, type, dest, tag, comm);
#else
    static send_fn f;
    if (!f)
        f = (send_fn)next("MPI_Send");
    return f(buf, count, type, dest, tag, comm);
#endif
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    n_isend++;
#ifdef COUNT_TOOL_PMPI
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
#else
    static isend_fn f;
    if (!f)
        f = (isend_fn)next("MPI_Isend");
    return f(buf, count, type, dest, tag, comm, req);
#endif
}

int MPI_Finalize(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("count_tool[%d]: MPI_Send=%ld MPI_Isend=%ld\n", rank, n_send, n_isend);
    fflush(stdout);
#ifdef COUNT_TOOL_PMPI
    return PMPI_Finalize();
#else
    return ((finalize_fn)next("MPI_Finalize"))();
#endif
}
