/* opi_common.h: what the OPI tests (tests/mpi/opi/) share: byte patterns derived
 * from (giver, tag, sequence) and a check that names the first byte that differs,
 * and which peers share this rank's node (where a give passes the pointer itself). */
#ifndef HMPI_TEST_OPI_COMMON_H
#define HMPI_TEST_OPI_COMMON_H

#define CHECK_WITH_MPI
#include "../../check.h"
#include "hmpi.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPICH annotates MPI_Waitall & co. with access sizes that MPI_STATUSES_IGNORE trips. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

static inline unsigned char opi_byte(int giver, int tag, uint64_t seq, size_t i)
{
    uint64_t x = ((uint64_t)giver << 40) ^ ((uint64_t)tag << 20) ^ (seq << 8) ^ i;
    x = (x ^ (x >> 31)) * 0x9E3779B97F4A7C15ull;
    return (unsigned char)(x >> 56);
}

static inline void opi_fill(void *buf, size_t n, int giver, int tag, uint64_t seq)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        b[i] = opi_byte(giver, tag, seq, i);
}

#define opi_verify(buf, n, giver, tag, seq, what)                                                  \
    do {                                                                                           \
        const unsigned char *b_ = (const unsigned char *)(buf);                                    \
        for (size_t i_ = 0; i_ < (size_t)(n); i_++)                                                \
            CHECK(b_[i_] == opi_byte((giver), (tag), (seq), i_),                                   \
                  "%s: byte %zu of %zu is %u, expected %u (giver %d tag %d seq %llu)", (what), i_, \
                  (size_t)(n), b_[i_], opi_byte((giver), (tag), (seq), i_), (giver), (tag),        \
                  (unsigned long long)(seq));                                                      \
    } while (0)

/* 1 when world rank peer shares this rank's node (simulated nodes included) and HMPI
 * is active: then a give to it passes the pointer, else the contents. */
static inline int opi_same_node(int peer)
{
    static int *node_of, size = -1;
    if (size < 0) {
        MPI_Comm shm;
        int me, id;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
        MPI_Allreduce(&me, &id, 1, MPI_INT, MPI_MIN, shm);
        node_of = malloc(sizeof(int) * (size_t)size);
        MPI_Allgather(&id, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD);
        MPI_Comm_free(&shm);
    }
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    return HMPI_Active() && node_of[peer] == node_of[me];
}

static inline int opi_count(const MPI_Status *st, MPI_Datatype t)
{
    int c = -1;
    MPI_Get_count(st, t, &c);
    return c;
}

#endif
