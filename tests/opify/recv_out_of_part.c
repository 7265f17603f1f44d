/* The receive fills 4 elements; the code then reads and writes beyond them. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, i;
    int a[8], b[8];
    long s = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        MPI_Recv(a, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fails: read outside the received part */
        for (i = 0; i < 8; i++)
            s += a[i];
        MPI_Recv(b, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* expect: receiver fails: partial overwrite */
        b[6] = 1;
        s += b[2];
        printf("%ld\n", s);
    }
    MPI_Finalize();
    return 0;
}
