/* hello.c: the tiny project built against an installed HMPI. Rank 0 sends 1 MB
 * allocated after MPI_Init (so in HMPI's shared heap) to every other rank, which checks
 * every byte and sends it back plus its rank; OPI_Alloc/OPI_Free and HMPI_Is_shared
 * come from hmpi.h. Rank 0 prints "install_hello: OK". */
#include <hmpi.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = malloc(N);
    void *opi = NULL;
    if (!HMPI_Active() || !HMPI_Is_shared(buf) || OPI_Alloc(&opi, 64) != MPI_SUCCESS ||
        !HMPI_Is_shared(opi) || OPI_Free(&opi) != MPI_SUCCESS)
        bad++;
    if (rank == 0) {
        for (int i = 0; i < N; i++)
            buf[i] = (unsigned char)(i * 7 + 3);
        unsigned char *echo = malloc(N);
        for (int r = 1; r < size; r++) {
            MPI_Send(buf, N, MPI_BYTE, r, 0, MPI_COMM_WORLD);
            MPI_Recv(echo, N, MPI_BYTE, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < N; i++)
                bad += echo[i] != (unsigned char)(i * 7 + 3 + r);
        }
        free(echo);
    } else {
        MPI_Status st;
        MPI_Recv(buf, N, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &st);
        for (int i = 0; i < N; i++) {
            bad += buf[i] != (unsigned char)(i * 7 + 3);
            buf[i] = (unsigned char)(buf[i] + rank);
        }
        MPI_Send(buf, N, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
    int total = 0;
    MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("install_hello: %s\n", total == 0 ? "OK" : "WRONG");
    free(buf);
    MPI_Finalize();
    return 0;
}
