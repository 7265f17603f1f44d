/* datatype.h: the datatype cache (datatype.c): what the parts need to know of a
 * datatype: its packed size and whether count elements are one contiguous run of bytes
 * (then they move by memcpy, otherwise by MPI_Pack/MPI_Unpack of the MPI below), and
 * the one description of where count elements lie (hmpi_layout_t). */
#ifndef HMPI_CORE_DATATYPE_H
#define HMPI_CORE_DATATYPE_H

#include "../common/hidden.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* count elements of a datatype at a buffer: where their bytes lie and how they move.
 * The one description of a buffer's layout that p2p, coll, rma and opi use; the layout
 * of one element (count 1) gives the type's own true lower bound (lo), extent and true
 * extent (span). */
typedef struct {
    size_t size;     /* bytes of data (packed), of all count elements */
    MPI_Aint lo;     /* the data lies in [buf + lo, buf + lo + span) */
    MPI_Aint extent; /* stride between elements (one element's extent) */
    size_t span;     /* (lo and extent in the cache entry's order: one copy fills them) */
    int contig;      /* the data is exactly that span: memcpy moves it */
    int derived;     /* made by the program: it may free it while operations use it */
} hmpi_layout_t;

/* The cache behind hmpi_layout_get, the private record of a type: one entry per
 * handle, committed types only (a free drops the entry: the MPI below may hand the same
 * handle to the next new type). Not filled under MPI_THREAD_MULTIPLE, so a hit needs no
 * other test. */
typedef struct {
    MPI_Datatype handle;
    int valid;
    int dense;   /* one element's bytes lie in increasing order, without holes */
    int packed;  /* dense, and consecutive elements touch (extent == size) */
    int derived; /* not predefined (hmpi_layout_t.derived) */
    size_t size;
    MPI_Aint lb, extent, textent; /* true lower bound, extent, true extent */
} hmpi_type_entry_t;

enum { HMPI_TYPE_CACHE_SIZE = 128 };
extern HMPI_HIDDEN hmpi_type_entry_t hmpi_type_cache[HMPI_TYPE_CACHE_SIZE];

static inline hmpi_type_entry_t *hmpi_type_slot(MPI_Datatype type)
{
    uintptr_t v = (uintptr_t)type;
    return &hmpi_type_cache[(v ^ (v >> 7) ^ (v >> 13)) % HMPI_TYPE_CACHE_SIZE];
}

/* The non-contiguous case of hmpi_layout_fill (datatype.c), out of the inline path. */
void hmpi_layout_spread(hmpi_layout_t *l, const hmpi_type_entry_t *e, int count);

/* The layout of count elements (count >= 0) of the type of cache entry e. No MPI call.
 * Contiguous elements are one run (several are strided by their size: packed; one
 * alone may have a larger extent, a resized type: displacements need it); others
 * spread over [lo, lo + span) from the true extent, their extent possibly negative. */
static inline void hmpi_layout_fill(hmpi_layout_t *l, const hmpi_type_entry_t *e, int count)
{
    l->size = e->size * (size_t)count;
    l->lo = e->lb;
    l->extent = e->extent;
    l->span = l->size;
    l->contig = count <= 1 ? e->dense : e->packed;
    l->derived = e->derived;
    if (__builtin_expect(!l->contig, 0))
        hmpi_layout_spread(l, e, count);
}

/* hmpi_layout_get for a type not in the cache (any type under MPI_THREAD_MULTIPLE) or a
 * negative count. */
int hmpi_layout_learn(MPI_Datatype type, int count, hmpi_layout_t *l);

/* Fills *l for count elements of type. Returns MPI_SUCCESS or an MPI error class
 * (MPI_ERR_COUNT for a negative count, MPI_ERR_TYPE). A cache hit is a few inline
 * loads: the short ways of MPI_Send and MPI_Recv take it. */
static inline int hmpi_layout_get(MPI_Datatype type, int count, hmpi_layout_t *l)
{
    const hmpi_type_entry_t *e = hmpi_type_slot(type);
    /* never MPI_DATATYPE_NULL */
    if (__builtin_expect(count < 0 || e->handle != type || !e->valid, 0))
        return hmpi_layout_learn(type, count, l);
    hmpi_layout_fill(l, e, count);
    return MPI_SUCCESS;
}

/* The short ways' question (MPI_Send, MPI_Recv, MPI_Isend): are count >= 0 elements of
 * type one run of bytes, by the cache (a packed type)? Then the run starts at buf + *lo
 * and holds *bytes, and the answer is 1; else 0, and hmpi_layout_get tells the rest. A
 * few loads, no layout to fill. */
static inline int hmpi_layout_run(MPI_Datatype type, int count, size_t *bytes, MPI_Aint *lo)
{
    const hmpi_type_entry_t *e = hmpi_type_slot(type);
    if (__builtin_expect(e->handle != type || !e->packed || count < 0, 0))
        return 0; /* packed only while valid (hmpi_type_forget) */
    *bytes = e->size * (size_t)count;
    *lo = e->lb;
    return 1;
}

/* The layout of m elements, from the layout of one. */
hmpi_layout_t hmpi_layout_n(const hmpi_layout_t *one, int m);

/* MPI_Pack and MPI_Unpack (on HMPI's self, node.h) of count elements of type at buf, also where
 * buf is MPI_BOTTOM and the type holds absolute addresses: MPICH refuses a NULL buffer
 * whatever the type, so such data moves through the type shifted back by a non-NULL
 * base (the packed buffer's address) and that base. Every part packing or unpacking a
 * program's buffer goes through these. */
int hmpi_type_pack(const void *buf, int count, MPI_Datatype type, void *packed, int size, int *pos);
int hmpi_type_unpack(const void *packed, int size, int *pos, void *buf, int count,
                     MPI_Datatype type);

/* Holds on derived datatypes (MPI-4.1 §5.1.9: a type freed while operations use it
 * stays usable by them). An operation that keeps using its type after its call returns
 * (a pending or persistent request of HMPI's, a pending nonblocking take) holds the
 * type; MPI_Type_free of a held type only marks it, and the last release frees it in
 * the MPI below. Thread-safe (a lock of their own); no MPI call but that last free. */
void hmpi_type_hold(MPI_Datatype type);
void hmpi_type_release(MPI_Datatype type);
/* MPI_Type_free of type: 0 when no operation holds it (the caller
 * then drops it with hmpi_type_forget and frees it below); 1 when held, now marked so
 * that the last release frees it; -1 when the program freed it already. */
int hmpi_type_free_held(MPI_Datatype type);
/* Drops the cache entry of a type the MPI below frees now. */
void hmpi_type_forget(MPI_Datatype type);

/* Under MPI_THREAD_MULTIPLE (MPI_Init, mpi/init.c): empties the cache and keeps it
 * empty; hmpi_layout_get then asks the MPI below every time. */
void hmpi_type_cache_off(void);
/* HMPI's end (mpi/init.c): the MPI below forgets every derived type once it is wholly
 * finalized and may hand their handles out again after a new MPI_Session_init, so the
 * cache and the holds start empty, the cache on. */
void hmpi_type_cache_reset(void);

#endif
