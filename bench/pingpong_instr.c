/* pingpong_instr.c: a 2-rank 8-byte ping-pong whose receives never wait, for counting
 * the instructions of the hot path with valgrind --tool=callgrind (bench/instr_cost).
 * A timed ping-pong's cost is hidden in the noise of a shared machine, and its
 * instruction count varies with how long each receive spins; here each rank tells the
 * other through a pair of FIFOs (outside MPI) that its message is sent, so every
 * MPI_Recv finds the message there and every count is the same from run to run.
 * Plain MPI, linked with the MPI below; run under hmpirun.
 *   pingpong_instr ROUNDS DIR     (DIR: a directory both ranks see, for the FIFOs) */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what)
{
    fprintf(stderr, "pingpong_instr: %s: %s\n", what, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* One byte through fd, or from it. */
static void poke(int fd)
{
    char c = 1;
    if (write(fd, &c, 1) != 1)
        die("write");
}

static void wait_poke(int fd)
{
    char c;
    if (read(fd, &c, 1) != 1)
        die("read");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: pingpong_instr ROUNDS DIR\n");
        return 2;
    }
    long rounds = atol(argv[1]);
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "pingpong_instr: run with 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    char to1[4096], to0[4096];
    snprintf(to1, sizeof to1, "%s/to1", argv[2]);
    snprintf(to0, sizeof to0, "%s/to0", argv[2]);
    if (rank == 0 &&
        ((mkfifo(to1, 0600) && errno != EEXIST) || (mkfifo(to0, 0600) && errno != EEXIST)))
        die("mkfifo");
    MPI_Barrier(MPI_COMM_WORLD);
    /* Opened in the same order on both sides: each open waits for the other end. */
    int out = -1, in = -1;
    if (rank == 0) {
        out = open(to1, O_WRONLY);
        in = open(to0, O_RDONLY);
    } else {
        in = open(to1, O_RDONLY);
        out = open(to0, O_WRONLY);
    }
    if (out < 0 || in < 0)
        die("open");

    unsigned char sbuf[8], rbuf[8];
    int peer = 1 - rank;
    for (long i = 0; i < rounds; i++) {
        if (rank == 0) {
            memset(sbuf, (int)(i & 0xff), sizeof sbuf);
            MPI_Send(sbuf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            poke(out);
            wait_poke(in);
            MPI_Recv(rbuf, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int k = 0; k < 8; k++)
                if (rbuf[k] != (unsigned char)((i + 1) & 0xff)) {
                    fprintf(stderr, "pingpong_instr: round %ld: wrong byte\n", i);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
        } else {
            wait_poke(in);
            MPI_Recv(rbuf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int k = 0; k < 8; k++)
                if (rbuf[k] != (unsigned char)(i & 0xff)) {
                    fprintf(stderr, "pingpong_instr: round %ld: wrong byte\n", i);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            memset(sbuf, (int)((i + 1) & 0xff), sizeof sbuf);
            MPI_Send(sbuf, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            poke(out);
        }
    }
    close(out);
    close(in);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(to1);
        unlink(to0);
        printf("pingpong_instr: %ld rounds of 8 bytes, checked\n", rounds);
    }
    MPI_Finalize();
    return 0;
}
