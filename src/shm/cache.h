/* cache.h: taking cache lines back for writing. A buffer another core has just read
 * (a receiver copying a send buffer in place) is left shared between the two caches;
 * the first store to each of its lines must then invalidate the other core's copy.
 * A program's own store loop pays that a few lines at a time (presumably what its store
 * buffer holds, at eight 8-byte stores a line), ten times slower than into lines it owns;
 * one store per line, all lines in flight, takes them back about as fast as the program
 * would fill them (figures: docs/performance-history.md, "The program's own compute").
 * hmpi_cache_own does that with a byte read and written back unchanged, inside
 * [p, p + len) only, so no byte outside the buffer is touched and no byte inside it
 * changes value. Only where it was measured (x86-64); elsewhere nothing. No MPI. */
#ifndef HMPI_SHM_CACHE_H
#define HMPI_SHM_CACHE_H

#include "ctrl.h"

#include <stddef.h>
#include <stdint.h>

/* p must be writable memory (the caller's own: the shared heap), and nobody may write
 * it meanwhile (a send buffer before its send completes); readers see the same bytes.
 * In asm, so the compiler keeps the store and sanitizers see no access to the user's
 * buffer (none changes a byte). */
static inline void hmpi_cache_own(const void *p, size_t len)
{
#if defined(__x86_64__)
    uintptr_t q = (uintptr_t)p, end = q + len;
    while (q < end) {
        __asm__ __volatile__("movb (%0), %%al\n\tmovb %%al, (%0)" : : "r"(q) : "rax", "memory");
        q = (q | (HMPI_CACHE_LINE - 1)) + 1; /* the next line's first byte */
    }
#else
    (void)p;
    (void)len;
#endif
}

#endif
