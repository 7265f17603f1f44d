/* alloc.c: the malloc family on mimalloc, served from this rank's slice of the shared
 * region once hmpi_heap_attach has run, and from mimalloc's private heap before that
 * (or when the slice is full). Every thread gets its own mimalloc heap in the shared
 * arena, made on its first allocation; any thread may free any block.
 * Runs on every allocation of the program: no locks, no logging on the fast path. */
#include "heap.h"
#include "../common/log.h"
#include "../common/stats.h"

#include <errno.h>
#include <mimalloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

hmpi_region_t hmpi_region = {.my_slice = -1, .fd = -1};

static atomic_int heap_on;           /* 1 while allocations go to the shared arena */
static atomic_int heap_ever_on;      /* 1 once attached in this process */
static mi_arena_id_t heap_arena;     /* written before heap_on is released */
static __thread mi_heap_t *tl_heap __attribute__((tls_model("initial-exec")));

/* This thread's heap in the shared arena, or NULL when the shared heap is off. */
static inline mi_heap_t *shared_heap(void)
{
    if (__builtin_expect(!atomic_load_explicit(&heap_on, memory_order_acquire), 1))
        return NULL;
    mi_heap_t *h = tl_heap;
    if (__builtin_expect(h == NULL, 0))
        h = tl_heap = mi_heap_new_in_arena(heap_arena);
    return h;
}

static inline void *served(void *p, size_t n)
{
    if (p) {
        hmpi_stat_add(HMPI_STAT_heap_allocs, 1);
        hmpi_stat_add(HMPI_STAT_heap_bytes, n);
    } else {
        hmpi_stat_add(HMPI_STAT_heap_fallbacks, 1);
    }
    return p;
}

#if defined(__SANITIZE_THREAD__)
/* mimalloc is not instrumented: ThreadSanitizer cannot see that a block one thread
 * freed reached another through mimalloc's atomics, and would call the new owner's
 * first writes a race with the old owner's last reads. Every free releases one sync
 * object and every allocation acquires it, which is what the allocator guarantees. */
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static char tsan_heap_sync;
static inline void tsan_freeing(void) { __tsan_release(&tsan_heap_sync); }
static inline void *tsan_got(void *p)
{
    __tsan_acquire(&tsan_heap_sync);
    return p;
}
#else
static inline void tsan_freeing(void) {}
static inline void *tsan_got(void *p) { return p; }
#endif

/* glibc's malloc aligns every block to 16 bytes; mimalloc aligns blocks of up to 8 bytes
 * to 8 only (which C17 allows). Programs and the MPI below come to depend on glibc's
 * rule: MPICH 4.0.2 over UCX takes the base of a window from UCX's registration, 16-byte
 * aligned, so a window over an 8-byte block has every operation land 8 bytes before it
 * (docs/design.md). Requests under 16 bytes therefore take 16, and alignments under 16
 * become 16: every block is aligned as glibc's would be. */
enum { GLIBC_ALIGN = 16 };

static inline size_t glibc_size(size_t n) { return n < GLIBC_ALIGN ? GLIBC_ALIGN : n; }

void *hmpi_heap_malloc(size_t n)
{
    n = glibc_size(n);
    mi_heap_t *h = shared_heap();
    void *p = h ? served(mi_heap_malloc(h, n), n) : NULL;
    return tsan_got(p ? p : mi_malloc(n));
}

void *hmpi_heap_calloc(size_t count, size_t size)
{
    size_t n;
    if (!__builtin_mul_overflow(count, size, &n) && n < GLIBC_ALIGN) {
        count = 1;
        size = GLIBC_ALIGN;
    }
    mi_heap_t *h = shared_heap();
    void *p = h ? served(mi_heap_calloc(h, count, size), count * size) : NULL;
    return tsan_got(p ? p : mi_calloc(count, size));
}

void *hmpi_heap_realloc(void *old, size_t n)
{
    n = glibc_size(n);
    mi_heap_t *h = shared_heap();
    tsan_freeing();
    if (h == NULL)
        return tsan_got(mi_realloc(old, n));
    void *p = served(mi_heap_realloc(h, old, n), n);
    return tsan_got(p ? p : mi_realloc(old, n));
}

void *hmpi_heap_aligned(size_t align, size_t n)
{
    /* The _at variants: mimalloc 2.0.9's mi_(heap_)malloc_aligned misalign power-of-two
     * sizes of 256..1024 B (microsoft/mimalloc#700); tests/unit/malloc_stress checks. */
    n = glibc_size(n);
    align = align < GLIBC_ALIGN ? GLIBC_ALIGN : align;
    mi_heap_t *h = shared_heap();
    void *p = h ? served(mi_heap_malloc_aligned_at(h, n, align, 0), n) : NULL;
    return tsan_got(p ? p : mi_malloc_aligned_at(n, align, 0));
}

void *hmpi_heap_shared_alloc(size_t n)
{
    mi_heap_t *h = shared_heap();
    void *p = h ? mi_heap_malloc_aligned(h, n, 64) : NULL;
    return tsan_got(p && hmpi_heap_is_shared_range(p, n) ? p : (mi_free(p), NULL));
}

void hmpi_heap_free(void *p)
{
    tsan_freeing();
    mi_free(p);
}

/* A fork()ed child must not write the parent's heap: it gets a private copy-on-write
 * view of the region at the same address and allocates privately from then on. */
static void child_after_fork(void)
{
    if (!atomic_load(&heap_ever_on))
        return;
    atomic_store(&heap_on, 0);
    void *p = mmap((void *)hmpi_region.base, hmpi_region.ctrl_size + hmpi_region.slices_len,
                   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE,
                   hmpi_region.fd, 0);
    if (p == MAP_FAILED)
        _exit(127); /* cannot isolate the child from the parent's heap */
}

static void register_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

int hmpi_heap_attach(uintptr_t base, size_t ctrl_size, unsigned slice_shift, int nslices,
                     int my_slice, int fd)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (atomic_load(&heap_ever_on)) {
        hmpi_log_error("the shared heap is already attached in this process");
        return -1;
    }
    size_t slice = (size_t)1 << slice_shift;
    void *start = (void *)(base + ctrl_size + (size_t)my_slice * slice);
    mi_arena_id_t arena;
    /* Committed (the file's pages appear on first touch), zeroed (a new sparse file),
     * exclusive (only heaps made for it allocate there). Being committed, mimalloc
     * never decommits it, so no madvise can drop shared pages under a peer. */
    if (!mi_manage_os_memory_ex(start, slice, true, false, true, -1, true, &arena)) {
        hmpi_log_error("mimalloc refused the shared slice at %p (%zu bytes)", start, slice);
        return -1;
    }
    hmpi_region = (hmpi_region_t){
        .base = base,
        .ctrl_size = ctrl_size,
        .slices = base + ctrl_size,
        .slices_len = (size_t)nslices << slice_shift,
        .slice_shift = slice_shift,
        .nslices = nslices,
        .my_slice = my_slice,
        .fd = fd,
    };
    heap_arena = arena;
    pthread_once(&once, register_atfork);
    atomic_store(&heap_ever_on, 1);
    atomic_store_explicit(&heap_on, 1, memory_order_release);
    return 0;
}

void hmpi_heap_go_private(void)
{
    atomic_store_explicit(&heap_on, 0, memory_order_relaxed);
}

int hmpi_heap_active(void)
{
    return atomic_load_explicit(&heap_on, memory_order_relaxed);
}

#ifndef HMPI_NO_MALLOC_INTERPOSE
/* ---- the malloc family, as the C library and C++ runtime name it ---------------- */
#define HMPI_EXPORT __attribute__((visibility("default")))

HMPI_EXPORT void *malloc(size_t n) { return hmpi_heap_malloc(n); }
HMPI_EXPORT void free(void *p) { mi_free(p); }
HMPI_EXPORT void *calloc(size_t c, size_t s) { return hmpi_heap_calloc(c, s); }
HMPI_EXPORT void *realloc(void *p, size_t n) { return hmpi_heap_realloc(p, n); }
HMPI_EXPORT size_t malloc_usable_size(void *p) { return mi_usable_size(p); }

HMPI_EXPORT void *reallocarray(void *p, size_t c, size_t s)
{
    size_t n;
    if (__builtin_mul_overflow(c, s, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return hmpi_heap_realloc(p, n);
}

static bool valid_alignment(size_t a) { return a != 0 && (a & (a - 1)) == 0; }

HMPI_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (!valid_alignment(align) || align % sizeof(void *) != 0)
        return EINVAL;
    void *p = hmpi_heap_aligned(align, n);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

HMPI_EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (!valid_alignment(align)) {
        errno = EINVAL;
        return NULL;
    }
    return hmpi_heap_aligned(align, n);
}

HMPI_EXPORT void *memalign(size_t align, size_t n)
{
    if (!valid_alignment(align)) {
        errno = EINVAL;
        return NULL;
    }
    return hmpi_heap_aligned(align, n);
}

HMPI_EXPORT void *valloc(size_t n) { return hmpi_heap_aligned((size_t)getpagesize(), n); }

HMPI_EXPORT void *pvalloc(size_t n)
{
    size_t page = (size_t)getpagesize();
    return hmpi_heap_aligned(page, (n + page - 1) & ~(page - 1));
}

/* C++ operator new and delete (Itanium ABI names). libmimalloc exports these too; ours
 * come first in symbol order, so new'ed objects land in the shared heap. On failure
 * mimalloc's own operator new runs the new-handler or throws/aborts as C++ requires. */
typedef struct hmpi_nothrow_s hmpi_nothrow_t;
HMPI_EXPORT void *_Znwm(size_t n)
{
    void *p = hmpi_heap_malloc(n ? n : 1);
    return p ? p : mi_new(n);
}
HMPI_EXPORT void *_Znam(size_t n) { return _Znwm(n); }
HMPI_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const hmpi_nothrow_t *t)
{
    (void)t;
    void *p = hmpi_heap_malloc(n ? n : 1);
    return p ? p : mi_new_nothrow(n);
}
HMPI_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const hmpi_nothrow_t *t)
{
    return _ZnwmRKSt9nothrow_t(n, t);
}
HMPI_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t al)
{
    void *p = hmpi_heap_aligned(al, n ? n : 1);
    return p ? p : mi_new_aligned(n, al);
}
HMPI_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t al) { return _ZnwmSt11align_val_t(n, al); }
HMPI_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const hmpi_nothrow_t *t)
{
    (void)t;
    void *p = hmpi_heap_aligned(al, n ? n : 1);
    return p ? p : mi_new_aligned_nothrow(n, al);
}
HMPI_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const hmpi_nothrow_t *t)
{
    return _ZnwmSt11align_val_tRKSt9nothrow_t(n, al, t);
}
HMPI_EXPORT void _ZdlPv(void *p) { mi_free(p); }
HMPI_EXPORT void _ZdaPv(void *p) { mi_free(p); }
HMPI_EXPORT void _ZdlPvm(void *p, size_t n) { (void)n; mi_free(p); }
HMPI_EXPORT void _ZdaPvm(void *p, size_t n) { (void)n; mi_free(p); }
HMPI_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al) { (void)al; mi_free(p); }
HMPI_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al) { (void)al; mi_free(p); }
HMPI_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al) { (void)n; (void)al; mi_free(p); }
HMPI_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al) { (void)n; (void)al; mi_free(p); }
HMPI_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const hmpi_nothrow_t *t) { (void)t; mi_free(p); }
HMPI_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const hmpi_nothrow_t *t) { (void)t; mi_free(p); }
#endif
