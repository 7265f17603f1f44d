/* other_mpi.c: a plain MPI program, built with the other MPI's wrapper (an Open MPI
 * program for an MPICH build of HMPI, and the reverse) by tests/mpi/launch/CMakeLists.txt.
 * HMPI must stop it before MPI_Init returns: if rank 0 prints its line, HMPI failed. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("other_mpi: ran with %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
