/* own_names.c: a program may use any name that is not MPI's or HMPI's API. This one
 * defines names HMPI once exported from libhmpi.so (its internals: the OPI state `opi`,
 * `opi_span`, `opi_code`, `opi_raise`, the tables `hmpi_below`, `hmpi_region`), each
 * with a meaning of its own, then sends heap and stack messages and passes an OPI
 * buffer through HMPI. Were libhmpi to export them, the dynamic linker would bind
 * HMPI's own references to the program's definitions (tests/check_exports.py checks
 * the export list; this checks the consequence): HMPI must neither call nor overwrite
 * these, and the messages must arrive byte for byte. */
#include "../../check.h"

#include <hmpi.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The program's own, with the former internal names. */
long opi[64] = {1, 2, 3};
char hmpi_region[4096] = "the program's own region";
double hmpi_below[8] = {0.5};
int opi_code = 42;
static int calls;

size_t opi_span(int count, const void *t)
{
    (void)t;
    calls++;
    return (size_t)count * 1000;
}

int opi_raise(MPI_Comm comm, int code)
{
    (void)comm;
    fprintf(stderr, "own_names: HMPI called the program's opi_raise(%d)\n", code);
    abort();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs 2 ranks");
    int peer = rank ^ 1;
    if (peer >= size)
        peer = rank;

    enum { N = 1 << 20 };
    uint8_t *heap = malloc(N), stack[300];
    CHECK(heap != NULL, "malloc");
    for (int round = 0; round < 20; round++) {
        for (size_t i = 0; i < N; i++)
            heap[i] = (uint8_t)(i * 7 + (size_t)rank + (size_t)round);
        for (size_t i = 0; i < sizeof stack; i++)
            stack[i] = (uint8_t)(i + (size_t)rank * 3 + (size_t)round);
        uint8_t *in = malloc(N), sin[300];
        MPI_Sendrecv(heap, N, MPI_BYTE, peer, 1, in, N, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(stack, (int)sizeof stack, MPI_BYTE, peer, 2, sin, (int)sizeof sin, MPI_BYTE,
                     peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (size_t i = 0; i < N; i++)
            CHECK(in[i] == (uint8_t)(i * 7 + (size_t)peer + (size_t)round),
                  "rank %d round %d: heap byte %zu", rank, round, i);
        for (size_t i = 0; i < sizeof sin; i++)
            CHECK(sin[i] == (uint8_t)(i + (size_t)peer * 3 + (size_t)round),
                  "rank %d round %d: stack byte %zu", rank, round, i);
        free(in);
    }

    /* An OPI buffer from rank 0 to rank 1 (OPI's own state must be HMPI's `opi`). */
    if (size >= 2 && rank < 2) {
        void *p = NULL;
        if (rank == 0) {
            CHECK(OPI_Alloc(&p, 4096) == MPI_SUCCESS && p != NULL, "OPI_Alloc");
            memset(p, 0x5C, 4096);
            CHECK(OPI_Give(&p, 4096, MPI_BYTE, 1, 3, MPI_COMM_WORLD) == MPI_SUCCESS && p == NULL,
                  "OPI_Give");
        } else {
            CHECK(OPI_Take(&p, 4096, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
                          MPI_SUCCESS &&
                      p != NULL,
                  "OPI_Take");
            for (int i = 0; i < 4096; i++)
                CHECK(((uint8_t *)p)[i] == 0x5C, "OPI byte %d", i);
            CHECK(OPI_Free(&p) == MPI_SUCCESS, "OPI_Free");
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    CHECK(opi[0] == 1 && opi[1] == 2 && opi[2] == 3 && opi[63] == 0, "the program's opi changed");
    CHECK(strcmp(hmpi_region, "the program's own region") == 0 && hmpi_region[4095] == 0,
          "the program's hmpi_region changed");
    CHECK(hmpi_below[0] == 0.5 && hmpi_below[7] == 0.0, "the program's hmpi_below changed");
    CHECK(opi_code == 42 && calls == 0, "the program's opi_code/opi_span were used (%d calls)",
          calls);
    if (rank == 0)
        printf("own_names: %d ranks, HMPI %s, the program's names untouched\n", size,
               HMPI_Active() ? "active" : "off");
    free(heap);
    MPI_Finalize();
    return 0;
}
