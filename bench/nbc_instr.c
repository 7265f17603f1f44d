/* nbc_instr.c: 8-byte collectives of 2 ranks in a loop that never waits inside a counted
 * call, for counting their instructions with valgrind --tool=callgrind
 * (bench/nbc_instr_cost). Rank 0 starts (the root of the broadcasts, the first to arrive
 * at the reductions and the barrier), hands a token to rank 1 on another communicator,
 * which starts and completes its call (the last to arrive) and hands the token back;
 * rank 0 then completes its own. Only counted_start, counted_wait and counted_blocking
 * are counted. The blocking allreduce cannot be sequenced so: rank 0 calls it first and
 * waits inside (its count spins), rank 1 sleeps 200 us before its call so that it
 * arrives last. Plain MPI, linked with the MPI below; run under hmpirun.
 *   nbc_instr FORM ROUNDS    FORM: bcast allreduce ibcast iallreduce ibarrier persistent */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BCAST, ALLREDUCE, IBCAST, IALLREDUCE, IBARRIER, PERSISTENT, NFORMS };
static const char *forms[NFORMS] = {"bcast",      "allreduce", "ibcast",
                                    "iallreduce", "ibarrier",  "persistent"};
static int form;
static double a[1] = {1}, b[1];
static MPI_Request persistent;

__attribute__((noinline)) void counted_start(MPI_Request *q)
{
    if (form == IBCAST)
        MPI_Ibcast(a, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, q);
    else if (form == IALLREDUCE)
        MPI_Iallreduce(a, b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, q);
    else if (form == IBARRIER)
        MPI_Ibarrier(MPI_COMM_WORLD, q);
    else
        MPI_Start(q);
}

__attribute__((noinline)) void counted_wait(MPI_Request *q) { MPI_Wait(q, MPI_STATUS_IGNORE); }

__attribute__((noinline)) void counted_blocking(void)
{
    if (form == BCAST)
        MPI_Bcast(a, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    else
        MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, tok = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (form = 0; form < NFORMS && (argc < 2 || strcmp(argv[1], forms[form])); form++)
        ;
    if (argc != 3 || form == NFORMS || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage (2 ranks): nbc_instr FORM ROUNDS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rounds = atoi(argv[2]);
    fprintf(stderr, "nbc_instr: rank %d pid %d\n", rank, (int)getpid());
    MPI_Comm side;
    MPI_Comm_dup(MPI_COMM_WORLD, &side);
    MPI_Barrier(MPI_COMM_WORLD); /* the communicator's setup done before the _init */
    persistent = MPI_REQUEST_NULL;
#if MPI_VERSION >= 4 /* (Open MPI 4.1 has no persistent collectives) */
    MPI_Allreduce_init(a, b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &persistent);
#else
    if (form == PERSISTENT) {
        if (rank == 0)
            fprintf(stderr, "nbc_instr: persistent collectives need MPI 4\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#endif
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < rounds; i++) {
        MPI_Request q = persistent;
        if (form == BCAST || form == ALLREDUCE) {
            if (rank == 0 && form == ALLREDUCE)
                MPI_Send(&tok, 1, MPI_INT, 1, 0, side);
            if (rank == 1) {
                MPI_Recv(&tok, 1, MPI_INT, 0, 0, side, MPI_STATUS_IGNORE);
                if (form == ALLREDUCE)
                    usleep(200);
            }
            counted_blocking();
            if (rank == 0 && form == BCAST)
                MPI_Send(&tok, 1, MPI_INT, 1, 0, side);
        } else if (rank == 0) {
            counted_start(&q);
            MPI_Send(&tok, 1, MPI_INT, 1, 0, side);
            MPI_Recv(&tok, 1, MPI_INT, 1, 0, side, MPI_STATUS_IGNORE);
            counted_wait(&q);
            continue;
        } else {
            MPI_Recv(&tok, 1, MPI_INT, 0, 0, side, MPI_STATUS_IGNORE);
            counted_start(&q);
            counted_wait(&q);
        }
        if (rank == 0)
            MPI_Recv(&tok, 1, MPI_INT, 1, 0, side, MPI_STATUS_IGNORE);
        else
            MPI_Send(&tok, 1, MPI_INT, 0, 0, side);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (persistent != MPI_REQUEST_NULL)
        MPI_Request_free(&persistent);
    MPI_Comm_free(&side);
    MPI_Finalize();
    return 0;
}
