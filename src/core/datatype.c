/* datatype.c: the datatype cache: the layout queries of every part's fast path, cached
 * per handle. A handle's layout never changes while it lives; MPI_Type_free
 * (mpi/datatype.c) drops its entry, since the MPI below may hand the same handle to the
 * next new type. And the holds of pending operations on derived types, which put off
 * the MPI below's free (datatype.h). */
#include "datatype.h"

#include "check.h"
#include "op.h"
#include "../common/log.h"
#include "../node/node.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef hmpi_type_entry_t entry_t;

entry_t hmpi_type_cache[HMPI_TYPE_CACHE_SIZE];
static int threaded; /* MPI_THREAD_MULTIPLE: no cache (hmpi_type_cache_off) */

void hmpi_type_cache_off(void)
{
    threaded = 1;
    memset(hmpi_type_cache, 0, sizeof hmpi_type_cache);
}

/* Frees a type that MPI_Type_get_contents returned, unless it is predefined. */
static void release(MPI_Datatype type)
{
    int ni, na, nd, combiner;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
        combiner != MPI_COMBINER_NAMED)
        PMPI_Type_free(&type);
}

static int dense(MPI_Datatype type);

/* A struct of up to 4 blocks, each a dense packed type from displacement 0 of its own,
 * that follow each other in memory (mpi/large.c folds a large count into one). */
static int dense_struct(MPI_Datatype type, int ni, int na, int nd)
{
    enum { MAX_BLOCKS = 4 };
    if (ni > MAX_BLOCKS + 1 || na > MAX_BLOCKS || nd > MAX_BLOCKS || nd < 1)
        return 0;
    int ints[MAX_BLOCKS + 1];
    MPI_Aint addrs[MAX_BLOCKS];
    MPI_Datatype olds[MAX_BLOCKS];
    if (PMPI_Type_get_contents(type, ni, na, nd, ints, addrs, olds) != MPI_SUCCESS)
        return 0;
    int ok = 1;
    MPI_Aint next = addrs[0];
    for (int i = 0; i < nd; i++) {
        MPI_Count osize = 0;
        MPI_Aint olb = 0, oext = 0;
        PMPI_Type_size_x(olds[i], &osize);
        PMPI_Type_get_extent(olds[i], &olb, &oext);
        ok = ok && addrs[i] == next && olb == 0 && (MPI_Aint)osize == oext && dense(olds[i]);
        next = addrs[i] + (MPI_Aint)ints[1 + i] * oext;
        release(olds[i]);
    }
    return ok;
}

/* Is one element of type its size bytes, in typemap order, without holes? Size equal
 * to true extent is not enough (a reversed indexed type has no holes either), so the
 * type's construction is read back; anything not obviously dense counts as not. */
static int dense(MPI_Datatype type)
{
    int ni, na, nd, combiner;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 0;
    if (combiner == MPI_COMBINER_NAMED)
        return 1; /* holes of pair types show as size < true extent */
    if (combiner == MPI_COMBINER_STRUCT)
        return dense_struct(type, ni, na, nd);
    if (ni > 4 || na > 2 || nd != 1)
        return 0;
    int ints[4];
    MPI_Aint addrs[2];
    MPI_Datatype old;
    if (PMPI_Type_get_contents(type, ni, na, nd, ints, addrs, &old) != MPI_SUCCESS)
        return 0;
    int ok = dense(old);
    MPI_Count osize = 0;
    MPI_Aint olb = 0, oext = 0;
    PMPI_Type_size_x(old, &osize);
    PMPI_Type_get_extent(old, &olb, &oext);
    int packed = (MPI_Aint)osize == oext; /* consecutive old elements touch */
    switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: break;
    case MPI_COMBINER_CONTIGUOUS: ok = ok && (ints[0] <= 1 || packed); break;
    case MPI_COMBINER_VECTOR: ok = ok && packed && (ints[0] <= 1 || ints[2] == ints[1]); break;
    case MPI_COMBINER_HVECTOR:
        ok = ok && packed && (ints[0] <= 1 || addrs[0] == (MPI_Aint)ints[1] * oext);
        break;
    default: ok = 0;
    }
    release(old);
    return ok;
}

/* Out of line, so that the cached case (datatype.h) stays a few inline loads. */
int hmpi_layout_learn(MPI_Datatype type, int count, hmpi_layout_t *l)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    int basic = threaded ? hmpi_op_basic_size(type) : 0;
    if (basic) { /* no question to the MPI below */
        size_t size = (size_t)basic * (size_t)count;
        *l = (hmpi_layout_t){size, 0, basic, size, 1, 0};
        return MPI_SUCCESS;
    }
    if (type == MPI_DATATYPE_NULL)
        return hmpi_err_what(MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
    /* No cache across threads. */
    entry_t fresh, *e = threaded ? &fresh : hmpi_type_slot(type);
    /* Only committed types enter the cache, and a free drops them from it. */
    int err = hmpi_check_type(type, "datatype");
    if (err)
        return err;
    MPI_Count size; /* a type may hold more than 2 GiB */
    MPI_Aint lb, extent, tlb, textent;
    if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0 ||
        PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &tlb, &textent) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    int d = (MPI_Aint)size == textent && dense(type);
    int ni, na, nd, combiner = MPI_COMBINER_NAMED;
    PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    int derived = combiner != MPI_COMBINER_NAMED && combiner != MPI_COMBINER_F90_REAL &&
                  combiner != MPI_COMBINER_F90_COMPLEX && combiner != MPI_COMBINER_F90_INTEGER;
    *e = (entry_t){type, 1,      d,      d && extent == (MPI_Aint)size, derived, (size_t)size,
                   tlb,  extent, textent};
    hmpi_layout_fill(l, e, count);
    return MPI_SUCCESS;
}

/* ---- layouts --------------------------------------------------------------------------- */

void hmpi_layout_spread(hmpi_layout_t *l, const hmpi_type_entry_t *e, int count)
{
    if (count == 0) {
        l->lo = 0;
        l->span = 0;
        return;
    }
    MPI_Aint shift = (MPI_Aint)(count - 1) * e->extent;
    l->lo = shift < 0 ? e->lb + shift : e->lb;
    l->span = (size_t)(e->textent + (shift < 0 ? -shift : shift));
}

hmpi_layout_t hmpi_layout_n(const hmpi_layout_t *one, int m)
{
    hmpi_layout_t l = *one;
    l.size = one->size * (size_t)m;
    if (one->contig && (m <= 1 || one->extent == (MPI_Aint)one->size)) {
        l.span = l.size;
        return l;
    }
    l.contig = 0;
    MPI_Aint shift = (MPI_Aint)(m > 0 ? m - 1 : 0) * one->extent;
    if (shift >= 0) {
        l.span = one->span + (size_t)shift;
    } else {
        l.lo = one->lo + shift;
        l.span = one->span + (size_t)-shift;
    }
    return l;
}

/* ---- MPI_BOTTOM ----------------------------------------------------------------------- */

/* count elements of type at base + (their displacements - base): at their displacements. */
static int shifted(MPI_Datatype type, int count, const void *base, MPI_Datatype *out_p)
{
    MPI_Aint disp = -(MPI_Aint)(uintptr_t)base;
    MPI_Datatype t;
    int err = PMPI_Type_create_struct(1, &count, &disp, &type, &t);
    if (err != MPI_SUCCESS)
        return err;
    if ((err = PMPI_Type_commit(&t)) != MPI_SUCCESS) {
        PMPI_Type_free(&t);
        return err;
    }
    *out_p = t;
    return MPI_SUCCESS;
}

int hmpi_type_pack(const void *buf, int count, MPI_Datatype type, void *packed, int size, int *pos)
{
    if (buf != MPI_BOTTOM || count == 0)
        return PMPI_Pack(buf, count, type, packed, size, pos, hmpi_node.self);
    MPI_Datatype t;
    int err = shifted(type, count, packed, &t);
    if (err == MPI_SUCCESS) {
        err = PMPI_Pack(packed, 1, t, packed, size, pos, hmpi_node.self);
        PMPI_Type_free(&t);
    }
    return err;
}

int hmpi_type_unpack(const void *packed, int size, int *pos, void *buf, int count,
                     MPI_Datatype type)
{
    if (buf != MPI_BOTTOM || count == 0)
        return PMPI_Unpack(packed, size, pos, buf, count, type, hmpi_node.self);
    MPI_Datatype t;
    int err = shifted(type, count, packed, &t);
    if (err == MPI_SUCCESS) {
        err = PMPI_Unpack(packed, size, pos, (void *)packed, 1, t, hmpi_node.self);
        PMPI_Type_free(&t);
    }
    return err;
}

/* ---- holds ------------------------------------------------------------------------- */

/* One record per held type; few types are held at once, so a short array searched in
 * order. freed: the program freed it; the last release frees it below. */
typedef struct {
    MPI_Datatype handle;
    int holds;
    int freed;
} hold_t;

static hold_t *holds;
static int nholds, holds_cap;
/* The holds' own lock: the engine's (p2p/) is a floor above. Only derived types are held. */
static pthread_mutex_t holds_lock = PTHREAD_MUTEX_INITIALIZER;

static hold_t *hold_find(MPI_Datatype type)
{
    for (int i = 0; i < nholds; i++)
        if (holds[i].handle == type)
            return &holds[i];
    return NULL;
}

void hmpi_type_forget(MPI_Datatype type)
{
    if (!threaded) {
        entry_t *e = hmpi_type_slot(type);
        if (e->handle == type)
            e->valid = e->packed = 0;
    }
}

void hmpi_type_hold(MPI_Datatype type)
{
    pthread_mutex_lock(&holds_lock);
    hold_t *h = hold_find(type);
    if (!h && nholds == holds_cap) {
        int cap = holds_cap ? 2 * holds_cap : 16;
        hold_t *bigger = realloc(holds, sizeof *holds * (size_t)cap);
        if (bigger) {
            holds = bigger;
            holds_cap = cap;
        } else { /* no hold: a free while pending is then the MPI below's */
            hmpi_log_error("out of memory for the holds on datatypes");
        }
    }
    if (!h && nholds < holds_cap) {
        h = &holds[nholds++];
        *h = (hold_t){type, 0, 0};
    }
    if (h)
        h->holds++;
    pthread_mutex_unlock(&holds_lock);
}

void hmpi_type_release(MPI_Datatype type)
{
    pthread_mutex_lock(&holds_lock);
    hold_t *h = hold_find(type);
    int last = h && --h->holds == 0, freed = last && h->freed;
    if (last)
        *h = holds[--nholds];
    pthread_mutex_unlock(&holds_lock);
    if (freed) {
        hmpi_type_forget(type);
        hmpi_check_type_freed(type);
        PMPI_Type_free(&type);
    }
}

int hmpi_type_free_held(MPI_Datatype type)
{
    pthread_mutex_lock(&holds_lock);
    hold_t *h = hold_find(type);
    int held = !h ? 0 : h->freed ? -1 : 1;
    if (held > 0)
        h->freed = 1;
    pthread_mutex_unlock(&holds_lock);
    return held;
}

void hmpi_type_cache_reset(void)
{
    threaded = 0;
    memset(hmpi_type_cache, 0, sizeof hmpi_type_cache);
    nholds = 0;
}
