/* known.c: the set of OPI buffers that live in private memory (under pass-through,
 * where there is no shared heap whose bounds tell an OPI buffer from other memory).
 * OPI_Free and OPI_Give look a pointer up here before they read the 64 bytes in front
 * of it, so a pointer from malloc, the stack or a mapping is refused without touching
 * memory that may not be there. Open addressing with linear probing and tombstones;
 * grows at half full. Guarded by hmpi_opi_lock; no MPI calls. */
#include "opi.h"

#include <stdlib.h>

enum { EMPTY = 0, GONE = 1 }; /* headers are 64-byte aligned, so never 0 or 1 */

static struct {
    uintptr_t *slot;
    size_t mask; /* capacity - 1 (a power of two), or 0 before the first insert */
    size_t used; /* live entries and tombstones */
    size_t live;
} set;

static size_t home(uintptr_t h)
{
    return (size_t)(((uint64_t)h >> 6) * 0x9E3779B97F4A7C15ull >> 17) & set.mask;
}

/* The slot holding h, or the first empty one on its probe path. */
static uintptr_t *probe(uintptr_t h)
{
    size_t i = home(h);
    while (set.slot[i] != EMPTY && set.slot[i] != h)
        i = (i + 1) & set.mask;
    return &set.slot[i];
}

/* Rehashes into a table twice as big, or as big when tombstones made it full. */
static int grow(void)
{
    size_t cap = !set.mask ? 1024 : 4 * set.live < set.mask + 1 ? set.mask + 1 : 2 * (set.mask + 1);
    uintptr_t *old = set.slot;
    size_t old_cap = set.mask ? set.mask + 1 : 0;
    uintptr_t *fresh = calloc(cap, sizeof *fresh);
    if (!fresh)
        return -1;
    set.slot = fresh;
    set.mask = cap - 1;
    set.used = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i] > GONE) {
            *probe(old[i]) = old[i];
            set.used++;
        }
    free(old);
    return 0;
}

int hmpi_opi_known_add_locked(const hmpi_opi_hdr_t *h)
{
    if (2 * (set.used + 1) > set.mask + 1 && grow() != 0)
        return -1;
    uintptr_t *s = probe((uintptr_t)h);
    if (*s == EMPTY) {
        set.used++;
        set.live++;
    }
    *s = (uintptr_t)h;
    return 0;
}

void hmpi_opi_known_remove_locked(const hmpi_opi_hdr_t *h)
{
    if (!set.mask)
        return;
    uintptr_t *s = probe((uintptr_t)h);
    if (*s == (uintptr_t)h) {
        *s = GONE; /* still counted in used: probe paths through it stay intact */
        set.live--;
    }
}

int hmpi_opi_known_has_locked(const hmpi_opi_hdr_t *h)
{
    return set.mask && *probe((uintptr_t)h) == (uintptr_t)h;
}
