/* coll_common.h: what the collective tests (coll_*.c) share: the communicators every
 * case runs on (world, reversed, subsets by split, a dup, self), buffers of every kind
 * HMPI treats differently (malloc'ed after MPI_Init: shared heap; on the stack; global;
 * malloc'ed before MPI_Init: private), deterministic data, and derived datatypes.
 * Standard MPI only: the tests pass on any correct MPI, with or without HMPI. */
#ifndef HMPI_TEST_COLL_COMMON_H
#define HMPI_TEST_COLL_COMMON_H

#define CHECK_WITH_MPI
#include "../../check.h"

#include "hmpi.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- buffers ------------------------------------------------------------------------ */

enum { BUF_HEAP, BUF_STACK, BUF_GLOBAL, BUF_PREINIT, BUF_KINDS };
static const char *const tc_buf_name[BUF_KINDS] = {"heap", "stack", "global", "preinit"};

#define TC_AREA ((size_t)40 << 20) /* global and pre-init areas */
#define TC_STACK ((size_t)1 << 20) /* the stack area, in tc_main's frame */

static unsigned char tc_global[TC_AREA] __attribute__((aligned(64)));
static unsigned char *tc_preinit, *tc_stack, *tc_heaparea;
static size_t tc_used[BUF_KINDS];
static void *tc_heap[256];
static int tc_nheap;

/* n bytes of the given kind (64-aligned, garbage-filled); a kind without room falls back
 * to malloc. Released all at once by tc_release. Heap buffers come from one area
 * malloc'ed after MPI_Init (the shared heap under HMPI), kept for the whole run so that
 * the pages are not faulted in again for every case. */
static inline void *tc_alloc(int kind, size_t n)
{
    size_t cap = kind == BUF_STACK ? TC_STACK : TC_AREA;
    unsigned char *base = kind == BUF_STACK    ? tc_stack
                          : kind == BUF_GLOBAL ? tc_global
                          : kind == BUF_HEAP   ? tc_heaparea
                                               : tc_preinit;
    size_t need = (n + 63) & ~(size_t)63;
    void *p;
    if (base && tc_used[kind] + need + 64 <= cap) {
        p = base + tc_used[kind];
        tc_used[kind] += need + 64; /* a gap, so neighbours never touch */
    } else {
        CHECK(tc_nheap < 256, "too many heap buffers");
        p = tc_heap[tc_nheap++] = malloc(n ? n : 1);
        CHECK(p, "malloc(%zu)", n);
    }
    memset(p, 0xA5, n);
    return p;
}

static inline void tc_release(void)
{
    for (int i = 0; i < tc_nheap; i++)
        free(tc_heap[i]);
    tc_nheap = 0;
    memset(tc_used, 0, sizeof tc_used);
}

/* ---- communicators ------------------------------------------------------------------ */

typedef struct {
    MPI_Comm comm;
    const char *name;
    int rank, size;
} tc_comm_t;

enum { TC_MAX_COMMS = 8 };
static tc_comm_t tc_comms[TC_MAX_COMMS];
static int tc_ncomms, tc_rank, tc_size;

static inline void tc_add_comm(MPI_Comm c, const char *name)
{
    if (c == MPI_COMM_NULL)
        return;
    tc_comm_t *t = &tc_comms[tc_ncomms++];
    t->comm = c;
    t->name = name;
    MPI_Comm_rank(c, &t->rank);
    MPI_Comm_size(c, &t->size);
}

static inline void tc_make_comms(void)
{
    MPI_Comm c;
    tc_add_comm(MPI_COMM_WORLD, "world");
    MPI_Comm_split(MPI_COMM_WORLD, 0, tc_size - tc_rank, &c);
    tc_add_comm(c, "reversed");
    MPI_Comm_split(MPI_COMM_WORLD, tc_rank % 2, tc_rank, &c);
    tc_add_comm(c, "parity");
    /* the first ranks, in reverse order, and the rest */
    int first = tc_rank < (tc_size + 2) / 3 + 1;
    MPI_Comm_split(MPI_COMM_WORLD, first, first ? -tc_rank : tc_rank, &c);
    tc_add_comm(c, "firsts-reversed");
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    tc_add_comm(c, "dup");
    tc_add_comm(MPI_COMM_SELF, "self");
}

static inline void tc_free_comms(void)
{
    for (int i = 0; i < tc_ncomms; i++)
        if (tc_comms[i].comm != MPI_COMM_WORLD && tc_comms[i].comm != MPI_COMM_SELF)
            MPI_Comm_free(&tc_comms[i].comm);
    tc_ncomms = 0;
}

/* Runs run() between MPI_Init and MPI_Finalize with the stack area in this frame. */
static inline int tc_main(int argc, char **argv, void (*run)(void))
{
    tc_preinit = malloc(TC_AREA); /* before MPI_Init: never in the shared heap */
    CHECK(tc_preinit, "pre-init malloc");
    MPI_Init(&argc, &argv);
    tc_heaparea = malloc(TC_AREA);
    CHECK(tc_heaparea, "malloc");
    unsigned char stack_area[TC_STACK] __attribute__((aligned(64)));
    tc_stack = stack_area;
    MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tc_size);
    tc_make_comms();
    run();
    tc_release();
    tc_free_comms();
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0)
        printf("%s: ok (%d ranks)\n", argv[0], tc_size);
    MPI_Finalize();
    free(tc_heaparea);
    free(tc_preinit);
    return 0;
}

/* 1 when HMPI does collectives on c itself (active, and c within one node): cases that
 * would otherwise pass to the MPI below can dodge that MPI's known bugs. */
static inline int tc_hmpi_does(MPI_Comm c)
{
    if (!HMPI_Active())
        return 0;
    MPI_Comm node;
    int size, nsize;
    MPI_Comm_size(c, &size);
    MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    int all = 0, mine = nsize == size;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, c);
    return all;
}

/* ---- data --------------------------------------------------------------------------- */

static inline uint64_t tc_mix(uint64_t x) /* splitmix64 */
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A value for (case, rank, index): every rank computes every rank's data. */
static inline uint64_t tc_h(uint64_t seed, int rank, long i)
{
    return tc_mix(seed * 0x100000001B3ull ^ ((uint64_t)rank << 40) ^ (uint64_t)i);
}

static inline int tc_int(uint64_t seed, int rank, long i)
{
    return (int)(tc_h(seed, rank, i) & 0x3fffffff) - 0x20000000;
}

/* ---- derived datatypes -------------------------------------------------------------- */

/* k ints, each followed by a hole of one int: a non-contiguous layout of k ints. */
static inline MPI_Datatype tc_strided_ints(int k)
{
    MPI_Datatype t;
    MPI_Type_vector(k, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

/* k ints in a row, as one element. */
static inline MPI_Datatype tc_block_ints(int k)
{
    MPI_Datatype t;
    MPI_Type_contiguous(k, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Fills count ints of a strided (stride 2) layout at buf with tc_int(seed, rank, i). */
static inline void tc_fill_strided(int *buf, int count, uint64_t seed, int rank)
{
    for (int i = 0; i < count; i++)
        buf[2 * i] = tc_int(seed, rank, i);
}

#endif
