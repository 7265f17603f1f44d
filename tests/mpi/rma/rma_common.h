/* rma_common.h: what the RMA tests share: the kinds of window memory a program can
 * expose (allocated by MPI; malloc'ed after MPI_Init, which is the shared heap under HMPI;
 * malloc'ed before MPI_Init, a global array, a stack array, which are private memory;
 * dynamic windows with heap or global memory attached) and how to address element i of
 * a rank's window whatever the kind. Plain MPI: every test passes on any correct MPI. */
#ifndef HMPI_TEST_RMA_COMMON_H
#define HMPI_TEST_RMA_COMMON_H

#define CHECK_WITH_MPI
#include "../../check.h"

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    WK_ALLOCATE,       /* MPI_Win_allocate */
    WK_CREATE_HEAP,    /* MPI_Win_create over malloc after MPI_Init */
    WK_CREATE_PREINIT, /* MPI_Win_create over malloc before MPI_Init */
    WK_CREATE_GLOBAL,  /* MPI_Win_create over a global array */
    WK_CREATE_STACK,   /* MPI_Win_create over an array on the stack */
    WK_DYNAMIC_HEAP,   /* MPI_Win_create_dynamic + attach of malloc'ed memory */
    WK_DYNAMIC_GLOBAL, /* MPI_Win_create_dynamic + attach of a global array */
    WK_COUNT
} wkind_t;

static const char *const wkind_names[WK_COUNT] = {"allocate",      "create_heap",  "create_preinit",
                                                  "create_global", "create_stack", "dynamic_heap",
                                                  "dynamic_global"};

enum { TW_MAX = 32768 }; /* ints, the most one window of a test holds */

static int tw_global[TW_MAX];
static int *tw_preinit; /* the test's main sets it before MPI_Init */

typedef struct {
    wkind_t kind;
    MPI_Win win;
    int *base; /* this rank's window memory */
    size_t nints;
    MPI_Aint *disp0; /* [ranks]: displacement of element 0 at each rank */
    MPI_Aint unit;   /* displacement per int */
    int *to_free;
} twin_t;

/* Makes a window of nints ints of the given kind over comm; stack is an array of at
 * least nints ints in a frame that outlives the window (WK_CREATE_STACK). */
static inline void tw_create(twin_t *w, wkind_t kind, size_t nints, MPI_Comm comm, int *stack)
{
    int n;
    MPI_Comm_size(comm, &n);
    CHECK(nints <= TW_MAX, "window too large");
    memset(w, 0, sizeof *w);
    w->kind = kind;
    w->nints = nints;
    w->disp0 = calloc((size_t)n, sizeof(MPI_Aint));
    w->unit = 1;
    MPI_Aint bytes = (MPI_Aint)(nints * sizeof(int));
    switch (kind) {
    case WK_ALLOCATE:
        CHECK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, comm, &w->base, &w->win) ==
                  MPI_SUCCESS,
              "MPI_Win_allocate");
        return;
    case WK_CREATE_HEAP: w->base = w->to_free = malloc((size_t)bytes); break;
    case WK_CREATE_PREINIT: w->base = tw_preinit; break;
    case WK_CREATE_GLOBAL: w->base = tw_global; break;
    case WK_CREATE_STACK: w->base = stack; break;
    case WK_DYNAMIC_HEAP: w->base = w->to_free = malloc((size_t)bytes); break;
    case WK_DYNAMIC_GLOBAL: w->base = tw_global; break;
    default: CHECK(0, "kind %d", (int)kind);
    }
    CHECK(w->base != NULL, "no memory for kind %s", wkind_names[kind]);
    if (kind == WK_DYNAMIC_HEAP || kind == WK_DYNAMIC_GLOBAL) {
        CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w->win) == MPI_SUCCESS, "dynamic");
        CHECK(MPI_Win_attach(w->win, w->base, bytes) == MPI_SUCCESS, "attach");
        MPI_Aint mine;
        MPI_Get_address(w->base, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, w->disp0, 1, MPI_AINT, comm);
        w->unit = sizeof(int);
    } else {
        CHECK(MPI_Win_create(w->base, bytes, sizeof(int), MPI_INFO_NULL, comm, &w->win) ==
                  MPI_SUCCESS,
              "MPI_Win_create");
    }
}

static inline void tw_free(twin_t *w)
{
    if (w->kind == WK_DYNAMIC_HEAP || w->kind == WK_DYNAMIC_GLOBAL)
        MPI_Win_detach(w->win, w->base);
    CHECK(MPI_Win_free(&w->win) == MPI_SUCCESS, "MPI_Win_free");
    CHECK(w->win == MPI_WIN_NULL, "MPI_Win_free leaves MPI_WIN_NULL");
    free(w->to_free);
    free(w->disp0);
}

/* Target displacement of int i in rank's window. */
static inline MPI_Aint tw_disp(const twin_t *w, int rank, size_t i)
{
    return w->disp0[rank] + (MPI_Aint)i * w->unit;
}

/* The window's flavor as MPI_Win_create_flavor should report it. */
static inline int tw_flavor(const twin_t *w)
{
    switch (w->kind) {
    case WK_ALLOCATE: return MPI_WIN_FLAVOR_ALLOCATE;
    case WK_DYNAMIC_HEAP:
    case WK_DYNAMIC_GLOBAL: return MPI_WIN_FLAVOR_DYNAMIC;
    default: return MPI_WIN_FLAVOR_CREATE;
    }
}

/* Local stores and loads to one's own window, in a way valid in every memory model:
 * inside an exclusive lock epoch on oneself. */
static inline void tw_self_begin(twin_t *w, int rank)
{
    CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win) == MPI_SUCCESS, "self lock");
}

static inline void tw_self_end(twin_t *w, int rank)
{
    CHECK(MPI_Win_unlock(rank, w->win) == MPI_SUCCESS, "self unlock");
}

#endif
