/* check.h: the one assertion helper of the tests. CHECK(cond, fmt, ...) prints where
 * and why, then fails the test (MPI_Abort under MPI, exit(1) otherwise). */
#ifndef HMPI_TEST_CHECK_H
#define HMPI_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#ifdef CHECK_WITH_MPI
#include <mpi.h>
#define CHECK_FAIL_() MPI_Abort(MPI_COMM_WORLD, 1)
#else
#define CHECK_FAIL_() exit(1)
#endif

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            fflush(stderr);                                                          \
            CHECK_FAIL_();                                                           \
        }                                                                            \
    } while (0)

#endif
