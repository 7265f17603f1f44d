/* count_tool_f.c: the classic PMPI tool for Fortran programs, written in C as such tools
 * are: it defines the gfortran names mpi_send_, mpi_isend_ and mpi_finalize_, counts the
 * calls and forwards each to its profiling name (pmpi_send_, ...). Those reach HMPI: on
 * MPICH pmpi_send_ calls the C MPI_Send, on Open MPI HMPI defines pmpi_send_ itself
 * (src/mpi/fortran.c). At MPI_Finalize every rank prints
 * "count_tool_f[rank]: MPI_SEND=n MPI_ISEND=m". */
#include <mpi.h>
#include <stdio.h>

void pmpi_send_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
                MPI_Fint *comm, MPI_Fint *ierr);
void pmpi_isend_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
                 MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr);
void pmpi_finalize_(MPI_Fint *ierr);

static long n_send, n_isend;

void mpi_send_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
               MPI_Fint *comm, MPI_Fint *ierr)
{
    n_send++;
    pmpi_send_(buf, count, type, dest, tag, comm, ierr);
}

void mpi_isend_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
                MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)
{
    n_isend++;
    pmpi_isend_(buf, count, type, dest, tag, comm, req, ierr);
}

void mpi_finalize_(MPI_Fint *ierr)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("count_tool_f[%d]: MPI_SEND=%ld MPI_ISEND=%ld\n", rank, n_send, n_isend);
    fflush(stdout);
    pmpi_finalize_(ierr);
}
