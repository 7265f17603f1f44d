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

typedef struct {
    size_t size;     /* bytes of one element's data (MPI_Type_size) */
    MPI_Aint lb;     /* true lower bound: data of element 0 starts at buf + lb */
    MPI_Aint extent; /* distance between consecutive elements */
    MPI_Aint textent; /* true extent: one element's data lies in [buf + lb, + textent) */
    int contig;      /* count elements are size*count bytes at buf + lb */
    int derived;     /* made by the program: it may free it while operations use it */
} hmpi_type_t;

/* The cache behind hmpi_type_get, one entry per handle, committed types only (a free
 * drops the entry: the MPI below may hand the same handle to the next new type). Not
 * filled under MPI_THREAD_MULTIPLE, so a hit needs no other test. */
typedef struct {
    MPI_Datatype handle;
    int valid;
    int dense;          /* one element's bytes lie in increasing order, without holes */
    int packed;         /* dense, and consecutive elements touch (extent == size) */
    int derived;        /* not predefined (hmpi_type_t.derived) */
    size_t size;
    MPI_Aint lb, extent, textent;
} hmpi_type_entry_t;

enum { HMPI_TYPE_CACHE_SIZE = 128 };
extern HMPI_HIDDEN hmpi_type_entry_t hmpi_type_cache[HMPI_TYPE_CACHE_SIZE];

static inline hmpi_type_entry_t *hmpi_type_slot(MPI_Datatype type)
{
    uintptr_t v = (uintptr_t)type;
    return &hmpi_type_cache[(v ^ (v >> 7) ^ (v >> 13)) % HMPI_TYPE_CACHE_SIZE];
}

static inline void hmpi_type_fill(hmpi_type_t *t, const hmpi_type_entry_t *e, int count)
{
    t->size = e->size;
    t->lb = e->lb;
    t->extent = e->extent;
    t->textent = e->textent;
    t->contig = count <= 1 ? e->dense : e->packed;
    t->derived = e->derived;
}

/* hmpi_type_get for a type not in the cache (any type under MPI_THREAD_MULTIPLE). */
int hmpi_type_learn(MPI_Datatype type, int count, hmpi_type_t *t);

/* Fills *t for count elements of type. Returns MPI_SUCCESS or MPI_ERR_TYPE. */
static inline int hmpi_type_get(MPI_Datatype type, int count, hmpi_type_t *t)
{
    const hmpi_type_entry_t *e = hmpi_type_slot(type);
    if (__builtin_expect(e->handle != type || !e->valid, 0)) /* never MPI_DATATYPE_NULL */
        return hmpi_type_learn(type, count, t);
    hmpi_type_fill(t, e, count);
    return MPI_SUCCESS;
}

/* count elements of a datatype at a buffer: where their bytes lie and how they move.
 * The one layout that coll, rma and opi describe their buffers with (the cache's
 * per-element hmpi_type_t is what it is made from). */
typedef struct {
    size_t size;     /* bytes of data (packed), of all count elements */
    MPI_Aint extent; /* stride between elements */
    MPI_Aint lo;     /* the data lies in [buf + lo, buf + lo + span) */
    size_t span;
    int contig; /* the data is exactly that span: memcpy moves it */
} hmpi_layout_t;

/* The layout of count elements (count >= 0) of the type t describes. No MPI call. */
static inline hmpi_layout_t hmpi_layout_of(const hmpi_type_t *t, int count)
{
    hmpi_layout_t l = {t->size * (size_t)count, t->extent, t->lb, 0, t->contig};
    if (t->contig) {
        /* count elements are one run; several are strided by their size (packed), one
         * alone may have a larger extent (a resized type): displacements need it. */
        l.span = l.size;
        if (count > 1)
            l.extent = (MPI_Aint)t->size;
    } else if (count == 0) {
        l.lo = 0;
    } else {
        MPI_Aint shift = (MPI_Aint)(count - 1) * t->extent;
        l.lo = shift < 0 ? t->lb + shift : t->lb;
        l.span = (size_t)(t->textent + (shift < 0 ? -shift : shift));
    }
    return l;
}

/* Fills *l for count elements of type. Returns MPI_SUCCESS or an MPI error class
 * (MPI_ERR_COUNT for a negative count). */
int hmpi_layout_get(MPI_Datatype type, int count, hmpi_layout_t *l);

/* The layout of m elements, from the layout of one. */
hmpi_layout_t hmpi_layout_n(const hmpi_layout_t *one, int m);

/* MPI_Pack and MPI_Unpack (MPI_COMM_SELF) of count elements of type at buf, also where
 * buf is MPI_BOTTOM and the type holds absolute addresses: MPICH refuses a NULL buffer
 * whatever the type, so such data moves through the type shifted back by a non-NULL
 * base (the packed buffer's address) and that base. Every part packing or unpacking a
 * program's buffer goes through these. */
int hmpi_type_pack(const void *buf, int count, MPI_Datatype type, void *packed, int size,
                   int *pos);
int hmpi_type_unpack(const void *packed, int size, int *pos, void *buf, int count,
                     MPI_Datatype type);

/* Holds on derived datatypes (MPI-4.1 §5.1.9: a type freed while operations use it
 * stays usable by them). An operation that keeps using its type after its call returns
 * (a pending or persistent request of HMPI's, a pending nonblocking take) holds the
 * type; MPI_Type_free of a held type only marks it, and the last release frees it in
 * the MPI below. Engine lock held (p2p.h); no MPI call but that last free. */
void hmpi_type_hold(MPI_Datatype type);
void hmpi_type_release(MPI_Datatype type);
/* MPI_Type_free of type (engine lock held): 0 when no operation holds it (the caller
 * then drops it with hmpi_type_forget and frees it below); 1 when held, now marked so
 * that the last release frees it; -1 when the program freed it already. */
int hmpi_type_free_held(MPI_Datatype type);
/* Drops the cache entry of a type the MPI below frees now. */
void hmpi_type_forget(MPI_Datatype type);

/* Under MPI_THREAD_MULTIPLE (MPI_Init, mpi/init.c): empties the cache and keeps it
 * empty; hmpi_type_get then asks the MPI below every time. */
void hmpi_type_cache_off(void);

#endif
