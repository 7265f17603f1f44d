/* alloc.c: the malloc family on mimalloc, served from this rank's slice of the shared
 * region once hmpi_heap_attach has run, and from mimalloc's private heap before that
 * (or when the slice is full). The slice's lower half is given to mimalloc as exclusive
 * arenas (several where one arena cannot be that large: mimalloc 3 takes at most 16 GiB);
 * its upper half holds the big blocks (big.c), which mimalloc 3 cannot serve from an
 * exclusive arena. Every thread gets its own mimalloc heap in an arena, made on its first
 * allocation, and moves to the next arena when that one is full; any thread may free any
 * block. Runs on every allocation of the program: no locks, no logging on the fast path. */
#include "heap.h"
#include "big.h"
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

/* mimalloc serves an aligned block from an arena up to this alignment (mimalloc 3: one
 * 64 KiB slice; larger alignments go to the OS, which an exclusive arena forbids). Larger
 * ones are big blocks. */
#define ARENA_ALIGN_MAX ((size_t)64 << 10)

/* A block of this size or more that the arenas do not serve (full, or just under
 * HMPI_HEAP_BIG_MIN yet too large for mimalloc 3 once its page header is added) is tried
 * in the big area before private memory. */
#define ARENA_RESCUE_MIN ((size_t)1 << 20)

enum { MAX_ARENAS = 64 };

static atomic_int heap_on;                    /* 1 while allocations go to the shared arena */
static atomic_int heap_ever_on;               /* 1 once attached in this process */
static mi_arena_id_t heap_arenas[MAX_ARENAS]; /* written before heap_on is released */
static int heap_narenas;
/* This thread's heap, in arena tl_arena; the heaps it has in every arena once it moved. */
static __thread mi_heap_t *tl_heap __attribute__((tls_model("initial-exec")));
static __thread int tl_arena __attribute__((tls_model("initial-exec")));
static __thread mi_heap_t **tl_heaps __attribute__((tls_model("initial-exec")));

/* This thread's heap in the shared arena, or NULL when the shared heap is off. */
static inline mi_heap_t *shared_heap(void)
{
    if (__builtin_expect(!atomic_load_explicit(&heap_on, memory_order_acquire), 1))
        return NULL;
    mi_heap_t *h = tl_heap;
    if (__builtin_expect(h == NULL, 0))
        h = tl_heap = mi_heap_new_in_arena(heap_arenas[0]);
    return h;
}

/* This thread's arena is full: it moves to the next one (its heap there made on the first
 * visit). NULL when there is no other arena. Called at most narenas - 1 times in a row. */
static mi_heap_t *next_heap(void)
{
    if (heap_narenas < 2)
        return NULL;
    if (tl_heaps == NULL) { /* private memory: a few pointers per thread that ever moved */
        tl_heaps = mi_calloc((size_t)heap_narenas, sizeof *tl_heaps);
        if (tl_heaps == NULL)
            return NULL;
        tl_heaps[tl_arena] = tl_heap;
    }
    int a = (tl_arena + 1) % heap_narenas;
    if (tl_heaps[a] == NULL)
        tl_heaps[a] = mi_heap_new_in_arena(heap_arenas[a]);
    if (tl_heaps[a] == NULL)
        return NULL;
    tl_arena = a;
    return tl_heap = tl_heaps[a];
}

/* op(h, ...) in this thread's arena, then in each other arena until one serves it. */
#define IN_ARENAS(h, call)                                                                     \
    ({                                                                                         \
        void *p_ = (call);                                                                     \
        for (int k_ = 1; p_ == NULL && k_ < heap_narenas && ((h) = next_heap()) != NULL; k_++) \
            p_ = (call);                                                                       \
        p_;                                                                                    \
    })

/* call in the arenas; a large block they refuse, from the big area. */
#define ARENA_OR_BIG(h, n, align, call)                                            \
    ({                                                                             \
        void *q_ = IN_ARENAS(h, call);                                             \
        if (__builtin_expect(q_ == NULL && (n) >= ARENA_RESCUE_MIN, 0))            \
            q_ = hmpi_extents_alloc(&hmpi_heap_big, (n), big_align((n), (align))); \
        q_;                                                                        \
    })

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

/* ---- big blocks ----------------------------------------------------------------------- */

/* mimalloc 3.0.0 and 3.0.1 corrupt a heap when a thread exits and another thread later frees
 * one of its blocks that was (a) more than 512 KiB (a page of its own, left off the full
 * queue; fixed in 3.0.2 by upstream commit a4159406) or (b) made by an aligned allocation
 * that had to shift the block (seen here with 16 B..4 KiB alignments, gone in 3.0.2);
 * tests/unit/malloc_stress crashes 3.0.1 without what follows. Under those versions HMPI
 * keeps mimalloc away from both: an aligned block of up to 1 KiB is asked for as the next
 * power of two, which mimalloc 3 places at a multiple of its size; larger aligned blocks and
 * blocks above 512 KiB are served by HMPI's extents, shared ones from the big area, private
 * ones from a private range reserved when first needed (docs/limitations.md). */
#define MI3_SINGLETON_MIN (((size_t)512 << 10) + 1)
#define MI3_NATURAL_MAX ((size_t)1 << 10)
#define PRIVATE_RANGE ((size_t)64 << 30)

hmpi_extents_t hmpi_heap_big;      /* the upper half of this rank's slice */
static hmpi_extents_t big_private; /* private memory; used only under mimalloc 3.0.0/1 */
/* Blocks of these sizes and more come from the big area when the shared heap is on, and
 * from big_private when it is off (SIZE_MAX: never). Set before main, never changed after. */
static _Atomic size_t big_min = HMPI_HEAP_BIG_MIN; /* lowered by hmpi_heap_big_from */
static size_t private_big_min = SIZE_MAX;
static bool mi_aligned_broken; /* (b) above */

void hmpi_heap_big_from(size_t n)
{
    if (n < atomic_load(&big_min))
        atomic_store(&big_min, n);
}

__attribute__((constructor)) static void check_mimalloc(void)
{
    int v = mi_version();
    if (v >= 300 && v < 302) {
        atomic_store(&big_min, MI3_SINGLETON_MIN);
        private_big_min = MI3_SINGLETON_MIN;
        mi_aligned_broken = true;
    }
}

static void reserve_private(void)
{
    void *p = mmap(NULL, PRIVATE_RANGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED && hmpi_extents_init(&big_private, (uintptr_t)p, PRIVATE_RANGE, 0) != 0)
        munmap(p, PRIVATE_RANGE);
}

/* A block from the private range, or NULL (mimalloc then serves it). */
static void *private_big(size_t n, size_t align)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, reserve_private);
    return hmpi_extents_alloc(&big_private, n, align);
}

/* Shared blocks of this size and more are big blocks (a plain load on x86). */
static inline size_t shared_big_min(void)
{
    return atomic_load_explicit(&big_min, memory_order_relaxed);
}

/* Where big blocks start: huge-page aligned from HMPI_HEAP_BIG_PAGE on. */
static inline size_t big_align(size_t n, size_t align)
{
    size_t a = n >= HMPI_HEAP_BIG_PAGE ? HMPI_HEAP_BIG_PAGE : 0;
    return align > a ? align : a;
}

/* The range that holds p, or NULL for a block of mimalloc. */
static inline hmpi_extents_t *big_owner(const void *p)
{
    if (__builtin_expect(hmpi_extents_owns(&hmpi_heap_big, p), 0))
        return &hmpi_heap_big;
    if (__builtin_expect(hmpi_extents_owns(&big_private, p), 0))
        return &big_private;
    return NULL;
}

/* Frees a block of any kind. A shared big block freed by a forked child (which sees a
 * private copy of the region) or by a process that went private is left alone. */
static inline void heap_free(void *p)
{
    hmpi_extents_t *x = big_owner(p);
    if (__builtin_expect(x == NULL, 1))
        mi_free(p);
    else if (x != &hmpi_heap_big || atomic_load_explicit(&heap_on, memory_order_relaxed))
        hmpi_extents_free(x, p);
}

/* A block that no mimalloc heap serves: from the big area when h (the shared heap is on),
 * else from the private range; NULL when none has room (mimalloc's private heap then). */
static void *big_alloc(mi_heap_t *h, size_t n, size_t align)
{
    if (h != NULL)
        return hmpi_extents_alloc(&hmpi_heap_big, n ? n : 1, big_align(n, align));
    return private_big(n ? n : 1, big_align(n, align));
}

/* ---- the allocation functions ----------------------------------------------------------- */

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
    void *p = NULL;
    if (__builtin_expect(n >= (h ? shared_big_min() : private_big_min), 0))
        p = big_alloc(h, n, 0);
    else if (h != NULL)
        p = ARENA_OR_BIG(h, n, 0, mi_heap_malloc(h, n));
    if (h != NULL)
        served(p, n);
    return tsan_got(p ? p : mi_malloc(n));
}

void *hmpi_heap_calloc(size_t count, size_t size)
{
    mi_heap_t *h = shared_heap();
    void *p = NULL;
    size_t n;
    if (__builtin_mul_overflow(count, size, &n))
        return mi_calloc(count, size); /* NULL, ENOMEM */
    if (n < GLIBC_ALIGN) {
        count = 1;
        size = n = GLIBC_ALIGN;
    }
    if (__builtin_expect(n >= (h ? shared_big_min() : private_big_min), 0))
        p = big_alloc(h, n, 0); /* reads zero */
    else if (h != NULL)
        p = ARENA_OR_BIG(h, n, 0, mi_heap_calloc(h, count, size));
    if (h != NULL)
        served(p, n);
    return tsan_got(p ? p : mi_calloc(count, size));
}

/* realloc where the old or the new block is big: in place when both are big blocks of the
 * range the new one belongs to, else a move. */
static void *realloc_big(mi_heap_t *h, void *old, size_t n)
{
    if (old == NULL)
        return hmpi_heap_malloc(n);
    hmpi_extents_t *x = big_owner(old);
    size_t have = x ? hmpi_extents_size(x, old) : mi_usable_size(old);
    hmpi_extents_t *want = h ? &hmpi_heap_big : &big_private;
    if (x == want && n >= (h ? shared_big_min() : private_big_min) &&
        hmpi_extents_resize(x, old, n) != NULL)
        return old;
    void *p = hmpi_heap_malloc(n);
    if (p == NULL)
        return NULL; /* the old block stays */
    memcpy(p, old, have < n ? have : n);
    heap_free(old);
    return p;
}

void *hmpi_heap_realloc(void *old, size_t n)
{
    n = glibc_size(n);
    mi_heap_t *h = shared_heap();
    tsan_freeing();
    if (__builtin_expect(n >= (h ? shared_big_min() : private_big_min) || big_owner(old) != NULL,
                         0))
        return tsan_got(realloc_big(h, old, n));
    if (h == NULL)
        return tsan_got(mi_realloc(old, n));
    void *p = IN_ARENAS(h, mi_heap_realloc(h, old, n));
    if (__builtin_expect(p == NULL && n >= ARENA_RESCUE_MIN, 0))
        p = realloc_big(h, old, n);
    return tsan_got(served(p, n) ? p : mi_realloc(old, n));
}

/* An aligned block for mimalloc 3.0.0/3.0.1 (check_mimalloc): a power of two up to 1 KiB,
 * else an extent; NULL when neither has room. */
static void *aligned_around_mimalloc(mi_heap_t *h, size_t align, size_t n)
{
    size_t want = n > align ? n : align;
    if (want > MI3_NATURAL_MAX)
        return big_alloc(h, n, align);
    size_t b = 16;
    while (b < want)
        b <<= 1;
    void *p = h ? IN_ARENAS(h, mi_heap_malloc(h, b)) : mi_malloc(b);
    if (p != NULL && (uintptr_t)p % align != 0) { /* not what mimalloc 3 promises */
        mi_free(p);
        p = NULL;
    }
    return p;
}

void *hmpi_heap_aligned(size_t align, size_t n)
{
    /* The _at variants: mimalloc 2.0.9's mi_(heap_)malloc_aligned misalign power-of-two
     * sizes of 256..1024 B (microsoft/mimalloc#700); tests/unit/malloc_stress checks.
     * mimalloc over-allocates by the alignment, which counts towards its block size. */
    n = glibc_size(n);
    align = align < GLIBC_ALIGN ? GLIBC_ALIGN : align;
    mi_heap_t *h = shared_heap();
    void *p = NULL;
    size_t span = n + (align > 16 ? align : 0);
    if (__builtin_expect(mi_aligned_broken && align > 16, 0))
        p = aligned_around_mimalloc(h, align, n);
    else if (__builtin_expect(span >= (h ? shared_big_min() : private_big_min) ||
                                  (h != NULL && align > ARENA_ALIGN_MAX),
                              0))
        p = big_alloc(h, n, align);
    else if (h != NULL)
        p = ARENA_OR_BIG(h, n, align, mi_heap_malloc_aligned_at(h, n, align, 0));
    if (h != NULL)
        served(p, n);
    return tsan_got(p ? p : mi_malloc_aligned_at(n, align, 0));
}

void *hmpi_heap_shared_alloc(size_t n)
{
    mi_heap_t *h = shared_heap();
    void *p = NULL;
    if (h != NULL)
        p = n + 64 >= shared_big_min() ? big_alloc(h, n, 64)
                                       : ARENA_OR_BIG(h, n, 64, mi_heap_malloc_aligned(h, n, 64));
    return tsan_got(p && hmpi_heap_is_shared_range(p, n) ? p : (heap_free(p), NULL));
}

void hmpi_heap_free(void *p)
{
    tsan_freeing();
    heap_free(p);
}

size_t hmpi_heap_usable_size(const void *p)
{
    hmpi_extents_t *x = big_owner(p);
    return x ? hmpi_extents_size(x, p) : mi_usable_size(p);
}

/* A fork()ed child must not write the parent's heap: it gets a private copy-on-write
 * view of the region at the same address and allocates privately from then on. */
static void child_after_fork(void)
{
    if (!atomic_load(&heap_ever_on))
        return;
    atomic_store(&heap_on, 0);
    void *p =
        mmap((void *)hmpi_region.base, hmpi_region.ctrl_size + hmpi_region.slices_len,
             PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, hmpi_region.fd, 0);
    if (p == MAP_FAILED)
        _exit(127); /* cannot isolate the child from the parent's heap */
}

static void register_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

/* Gives [start, start+len) to mimalloc as exclusive arenas, as few as it takes: committed
 * (the file's pages appear on first touch), zeroed (a new sparse file), exclusive (only
 * heaps made for them allocate there). mimalloc 2 never decommits committed arena memory;
 * mimalloc 3 would purge it (madvise, pointless on a shared file) unless it is pinned.
 * mimalloc 3 takes at most 16 GiB an arena; should a later version take less, the size is
 * halved until it is accepted. Returns the number of arenas (0: refused). */
static int add_arenas(uintptr_t start, size_t len)
{
    const bool pinned = MI_MALLOC_VERSION >= 300;
    size_t each = len;
#if MI_MALLOC_VERSION >= 300
    if (each > ((size_t)16 << 30))
        each = (size_t)16 << 30;
#endif
    int n = 0;
    uintptr_t a = start;
    while (a < start + len && n < MAX_ARENAS) {
        size_t sz = start + len - a < each ? start + len - a : each;
        if (mi_manage_os_memory_ex((void *)a, sz, true, pinned, true, -1, true, &heap_arenas[n])) {
            n++;
            a += sz;
        } else if (n == 0 && each > ((size_t)256 << 20)) {
            each /= 2;
        } else {
            break;
        }
    }
    return n;
}

int hmpi_heap_attach(uintptr_t base, size_t ctrl_size, unsigned slice_shift, int nslices,
                     int my_slice, int fd)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (atomic_load(&heap_ever_on)) {
        hmpi_log_error("the shared heap is already attached in this process");
        return -1;
    }
    size_t slice = (size_t)1 << slice_shift;
    uintptr_t start = base + ctrl_size + (size_t)my_slice * slice;
    /* Lower half: mimalloc's arenas; upper half: the big blocks. */
    size_t arena_len = slice / 2;
    int narenas = add_arenas(start, arena_len);
    if (narenas == 0) {
        hmpi_log_error("mimalloc %d.%d refused the shared slice at %p (%zu bytes)",
                       MI_MALLOC_VERSION / 100, MI_MALLOC_VERSION % 100, (void *)start, arena_len);
        return -1;
    }
    if (hmpi_extents_init(&hmpi_heap_big, start + arena_len, slice - arena_len, 1) != 0) {
        hmpi_log_error("no memory for the shared heap's list of big blocks");
        return -1;
    }
    heap_narenas = narenas;
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
    pthread_once(&once, register_atfork);
    atomic_store(&heap_ever_on, 1);
    atomic_store_explicit(&heap_on, 1, memory_order_release);
    return 0;
}

void hmpi_heap_go_private(void) { atomic_store_explicit(&heap_on, 0, memory_order_relaxed); }

int hmpi_heap_active(void) { return atomic_load_explicit(&heap_on, memory_order_relaxed); }

#ifndef HMPI_NO_MALLOC_INTERPOSE
/* ---- the malloc family, as the C library and C++ runtime name it ---------------- */
#define HMPI_EXPORT __attribute__((visibility("default")))

HMPI_EXPORT void *malloc(size_t n) { return hmpi_heap_malloc(n); }
HMPI_EXPORT void free(void *p) { hmpi_heap_free(p); }
HMPI_EXPORT void *calloc(size_t c, size_t s) { return hmpi_heap_calloc(c, s); }
HMPI_EXPORT void *realloc(void *p, size_t n) { return hmpi_heap_realloc(p, n); }
HMPI_EXPORT size_t malloc_usable_size(void *p) { return hmpi_heap_usable_size(p); }

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
HMPI_EXPORT void _ZdlPv(void *p) { hmpi_heap_free(p); }
HMPI_EXPORT void _ZdaPv(void *p) { hmpi_heap_free(p); }
HMPI_EXPORT void _ZdlPvm(void *p, size_t n)
{
    (void)n;
    hmpi_heap_free(p);
}
HMPI_EXPORT void _ZdaPvm(void *p, size_t n)
{
    (void)n;
    hmpi_heap_free(p);
}
HMPI_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al)
{
    (void)al;
    hmpi_heap_free(p);
}
HMPI_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al)
{
    (void)al;
    hmpi_heap_free(p);
}
HMPI_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al)
{
    (void)n;
    (void)al;
    hmpi_heap_free(p);
}
HMPI_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al)
{
    (void)n;
    (void)al;
    hmpi_heap_free(p);
}
HMPI_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const hmpi_nothrow_t *t)
{
    (void)t;
    hmpi_heap_free(p);
}
HMPI_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const hmpi_nothrow_t *t)
{
    (void)t;
    hmpi_heap_free(p);
}
#endif
