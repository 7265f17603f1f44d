/* sessions_common.h: what the sessions tests share (MPI 4, standard MPI only): a
 * communicator from a session's pset, and traffic on a communicator whose every value
 * is checked: point-to-point around a ring at sizes across HMPI's protocols, the
 * collectives, and a window. CHECK ends the process with abort(): under sessions
 * MPI_COMM_WORLD may not be there to abort. */
#ifndef HMPI_TEST_SESSIONS_COMMON_H
#define HMPI_TEST_SESSIONS_COMMON_H

#define CHECK_WITH_MPI
#include "../../check.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#undef CHECK_FAIL_
#define CHECK_FAIL_() abort()

/* A communicator from session s's pset (its errors return). */
static inline MPI_Comm comm_of(MPI_Session s, const char *pset, const char *tag)
{
    MPI_Group g;
    MPI_Comm c;
    CHECK(MPI_Group_from_session_pset(s, pset, &g) == MPI_SUCCESS, "no group of %s", pset);
    CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) == MPI_SUCCESS,
          "MPI_Comm_create_from_group(%s) failed", pset);
    MPI_Group_free(&g);
    return c;
}

/* Messages around a ring (sizes across HMPI's protocols, in buffers allocated now) and an
 * allreduce on c. */
static inline void traffic(MPI_Comm c, int salt)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    static const int counts[] = {1, 64, 20000, 300000};
    for (int k = 0; k < 4; k++) {
        int n = counts[k];
        int *out = malloc(sizeof(int) * (size_t)n), *in = malloc(sizeof(int) * (size_t)n);
        CHECK(out && in, "out of memory");
        for (int i = 0; i < n; i++)
            out[i] = rank * 7919 + i + salt, in[i] = -1;
        MPI_Request q;
        CHECK(MPI_Irecv(in, n, MPI_INT, prev, k, c, &q) == MPI_SUCCESS, "Irecv");
        CHECK(MPI_Send(out, n, MPI_INT, next, k, c) == MPI_SUCCESS, "Send");
        MPI_Status st;
        CHECK(MPI_Wait(&q, &st) == MPI_SUCCESS, "Wait");
        CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == k, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
        for (int i = 0; i < n; i++)
            CHECK(in[i] == prev * 7919 + i + salt, "element %d of %d: %d", i, n, in[i]);
        free(out);
        free(in);
    }
    long v = rank + salt, sum = 0;
    CHECK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c) == MPI_SUCCESS, "Allreduce");
    CHECK(sum == (long)size * (size - 1) / 2 + (long)size * salt, "sum %ld", sum);
}

/* The collectives on c: barrier, broadcast, reduce, allgather, alltoall, scan. */
static inline void collectives(MPI_Comm c, int salt)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    CHECK(MPI_Barrier(c) == MPI_SUCCESS, "Barrier");
    enum { N = 5000 };
    int *b = malloc(sizeof(int) * N);
    CHECK(b, "out of memory");
    for (int i = 0; i < N; i++)
        b[i] = rank == size - 1 ? i * 3 + salt : -1;
    CHECK(MPI_Bcast(b, N, MPI_INT, size - 1, c) == MPI_SUCCESS, "Bcast");
    for (int i = 0; i < N; i++)
        CHECK(b[i] == i * 3 + salt, "Bcast element %d: %d", i, b[i]);
    for (int i = 0; i < N; i++)
        b[i] = rank + i;
    int *r = malloc(sizeof(int) * N);
    CHECK(r, "out of memory");
    CHECK(MPI_Reduce(b, r, N, MPI_INT, MPI_SUM, 0, c) == MPI_SUCCESS, "Reduce");
    for (int i = 0; rank == 0 && i < N; i++)
        CHECK(r[i] == size * (size - 1) / 2 + size * i, "Reduce element %d: %d", i, r[i]);
    int *all = malloc(sizeof(int) * (size_t)size * 2), mine[2] = {rank * 10 + salt, -rank};
    int *to = malloc(sizeof(int) * (size_t)size), *from = malloc(sizeof(int) * (size_t)size);
    CHECK(all && to && from, "out of memory");
    CHECK(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, c) == MPI_SUCCESS, "Allgather");
    for (int p = 0; p < size; p++)
        CHECK(all[2 * p] == p * 10 + salt && all[2 * p + 1] == -p, "Allgather from %d", p);
    for (int p = 0; p < size; p++)
        to[p] = rank * 1000 + p + salt, from[p] = -1;
    CHECK(MPI_Alltoall(to, 1, MPI_INT, from, 1, MPI_INT, c) == MPI_SUCCESS, "Alltoall");
    for (int p = 0; p < size; p++)
        CHECK(from[p] == p * 1000 + rank + salt, "Alltoall from %d: %d", p, from[p]);
    long v = rank + 1, pre = 0;
    CHECK(MPI_Scan(&v, &pre, 1, MPI_LONG, MPI_SUM, c) == MPI_SUCCESS, "Scan");
    CHECK(pre == (long)(rank + 1) * (rank + 2) / 2, "Scan %ld", pre);
    free(b);
    free(r);
    free(all);
    free(to);
    free(from);
}

/* A window on c: each rank puts into the next one's and gets from the previous one's,
 * between fences, then the same under a passive lock. */
static inline void window(MPI_Comm c, int salt)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    enum { N = 1000 };
    int *base, *got = malloc(sizeof(int) * N), *out = malloc(sizeof(int) * N);
    CHECK(got && out, "out of memory");
    MPI_Win win;
    CHECK(MPI_Win_allocate(sizeof(int) * N, sizeof(int), MPI_INFO_NULL, c, &base, &win) ==
              MPI_SUCCESS,
          "Win_allocate");
    for (int i = 0; i < N; i++)
        base[i] = -1, out[i] = rank * 100000 + i + salt;
    MPI_Win_fence(0, win);
    CHECK(MPI_Put(out, N, MPI_INT, next, 0, N, MPI_INT, win) == MPI_SUCCESS, "Put");
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK(base[i] == prev * 100000 + i + salt, "put element %d: %d", i, base[i]);
    CHECK(MPI_Get(got, N, MPI_INT, prev, 0, N, MPI_INT, win) == MPI_SUCCESS, "Get");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == ((prev + size - 1) % size) * 100000 + i + salt, "get element %d: %d", i,
              got[i]);
    int one = 1;
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    CHECK(MPI_Accumulate(&one, 1, MPI_INT, next, 0, 1, MPI_INT, MPI_SUM, win) == MPI_SUCCESS,
          "Accumulate");
    MPI_Win_unlock(next, win);
    MPI_Barrier(c);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    int first = base[0];
    MPI_Win_unlock(rank, win);
    CHECK(first == prev * 100000 + salt + 1, "accumulated %d", first);
    MPI_Win_free(&win);
    free(got);
    free(out);
}

#endif
