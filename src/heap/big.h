/* big.h: an extent allocator over one reserved address range, for the blocks mimalloc does
 * not serve well from HMPI's arenas (big.c). The shared heap's big area (the upper half of a
 * rank's slice) is one; a private range is another where the installed mimalloc needs it.
 * Private to the heap floor: the rest of HMPI reaches big blocks through heap.h. */
#ifndef HMPI_HEAP_BIG_H
#define HMPI_HEAP_BIG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* From this size on a shared block is a big block. mimalloc 3 serves nothing of 32 MiB from
 * an exclusive arena (such blocks go to the OS, which an exclusive arena forbids); mimalloc 2
 * would, but one rule on both keeps one code path tested. */
#define HMPI_HEAP_BIG_MIN ((size_t)32 << 20)
/* Extents are multiples of this; blocks of HMPI_HEAP_BIG_PAGE and more start on a multiple
 * of it, so their insides can be huge-page backed. */
#define HMPI_HEAP_BIG_GRAIN ((size_t)64 << 10)
#define HMPI_HEAP_BIG_PAGE ((size_t)2 << 20)

typedef struct {
    uintptr_t start;
    size_t len;
} hmpi_extent_t;

/* A list sorted by start; the extents of one list never overlap. */
typedef struct {
    hmpi_extent_t *v;
    size_t n, cap;
} hmpi_extent_list_t;

/* One range [lo, lo+len). lo and len are written once by init (lo first, len last with
 * release) and read without the lock by any thread (len first, with acquire: a plain load on
 * x86); the lists only under the lock. An extent is free (and reads zero) or used, never
 * both. */
typedef struct {
    _Atomic uintptr_t lo;
    _Atomic size_t len;
    int shared; /* a shared file mapping (pages punched out of the file), else
                                 private anonymous memory (pages dropped) */
    pthread_mutex_t lock;
    hmpi_extent_list_t free; /* adjacent free extents are merged */
    hmpi_extent_list_t used; /* start is the block's address */
} hmpi_extents_t;

/* True when p lies in the range of x: one subtraction and a compare. */
static inline int hmpi_extents_owns(const hmpi_extents_t *x, const void *p)
{
    size_t len = atomic_load_explicit(&x->len, memory_order_acquire);
    return (uintptr_t)p - atomic_load_explicit(&x->lo, memory_order_relaxed) < len;
}

/* Takes [lo, lo+len) (HMPI_HEAP_BIG_GRAIN-aligned, reading zero) for x. Once per x; x must
 * be zero-initialized static storage. Returns 0, or -1 when no memory can be had for the
 * lists. */
int hmpi_extents_init(hmpi_extents_t *x, uintptr_t lo, size_t len, int shared);

/* A block of at least n bytes at a multiple of align (a power of two), reading zero; NULL
 * when no free extent fits. */
void *hmpi_extents_alloc(hmpi_extents_t *x, size_t n, size_t align);

/* Grows or shrinks block p in place to at least n bytes: p, or NULL when the extent after
 * it is taken (p is then unchanged). Bytes past the old size read zero. */
void *hmpi_extents_resize(hmpi_extents_t *x, void *p, size_t n);

/* Gives block p back; its pages go back to the system. A p that starts no block of x is
 * logged and left alone. */
void hmpi_extents_free(hmpi_extents_t *x, void *p);

/* The usable bytes of block p, 0 when p starts no block of x. */
size_t hmpi_extents_size(hmpi_extents_t *x, const void *p);

/* Bytes in used and in free extents (tests, statistics). */
void hmpi_extents_usage(hmpi_extents_t *x, size_t *used_p, size_t *free_p);

/* The shared heap's big area, for tests and statistics (alloc.c). */
extern hmpi_extents_t hmpi_heap_big;

#endif
