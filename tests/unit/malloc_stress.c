/* malloc_stress.c: the malloc family from 4 threads, before and after the shared heap
 * is attached. Random sizes up to 6 MiB; realloc growing and shrinking keeps the
 * content; calloc is zeroed; the aligned variants align; usable size covers the
 * request; blocks travel through a mailbox and are checked and freed by another thread
 * (also after the thread that made them has exited). After attach every block of the
 * explicit hmpi_heap_* API, and of malloc when it is interposed, is in the slice. */
#include "test_util.h"

#include <malloc.h>
#include <mimalloc.h>
#include <pthread.h>
#include <stdatomic.h>

#ifndef HMPI_NO_MALLOC_INTERPOSE
#define INTERPOSED 1
#else
#define INTERPOSED 0
#endif

enum { NTHREADS = 4, SLOTS = 48, MAILBOX = 64, OPS = 6000 };

/* How a block was made, hence how it is freed and resized. */
enum { FAM_LIBC, FAM_HMPI };

typedef struct {
    void *p;
    size_t n;
    uint32_t seed;
    int fam;
} blk_t;

/* A one-block mailbox cell. state: 0 empty, 1 being written or read, 2 full.
 * A writer claims 0->1, fills b, releases 2; a reader claims 2->1, takes b, releases 0. */
typedef struct {
    _Atomic int state;
    blk_t b;
} cell_t;

static cell_t mailbox[MAILBOX];
static int phase_shared; /* written by main between phases only */
static _Atomic uint32_t next_seed = 1;
static _Atomic long posted, taken;

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t rnd(rng_t *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

static size_t rnd_size(rng_t *r)
{
    unsigned k = (unsigned)(rnd(r) % 1000);
    uint64_t v = rnd(r);
    if (k < 800)
        return 1 + v % 256;
    if (k < 970)
        return 257 + v % (16 << 10);
    if (k < 997)
        return (16 << 10) + v % (496 << 10);
    if (k < 999)
        return (512 << 10) + v % ((size_t)5 << 20);    /* up to 5.5 MiB */
    return ((size_t)32 << 20) + v % ((size_t)8 << 20); /* a big block (heap/big.h) */
}

static size_t usable(const blk_t *b)
{
    return b->fam == FAM_LIBC ? malloc_usable_size(b->p) : hmpi_heap_usable_size(b->p);
}

/* Where a block must lie in the current phase. */
static void check_place(const blk_t *b, const char *what)
{
    CHECK(b->p != NULL, "%s(%zu) returned NULL", what, b->n);
    CHECK(usable(b) >= b->n, "%s(%zu): usable size %zu", what, b->n, usable(b));
    int must_share = phase_shared && (b->fam == FAM_HMPI || INTERPOSED);
    if (must_share)
        CHECK(hmpi_heap_is_shared_range(b->p, b->n) && hmpi_heap_owner(b->p) == 0,
              "%s(%zu) = %p is not in the shared slice", what, b->n, b->p);
    if (!phase_shared)
        CHECK(!hmpi_heap_is_shared(b->p), "%s(%zu) = %p is shared before attach", what, b->n, b->p);
}

static void verify(const blk_t *b, const char *when)
{
    size_t bad = pat_check(b->p, b->n, b->seed);
    CHECK(bad == (size_t)-1, "%s: block %p (%zu B, seed %u) differs at byte %zu", when, b->p, b->n,
          b->seed, bad);
}

/* A cheap look at a block kept for later: both ends and one random window. */
static void spot_check(const blk_t *b, rng_t *r)
{
    size_t w = 64, off = b->n > w ? rnd(r) % (b->n - w) : 0;
    size_t spans[3][2] = {{0, w}, {off, off + w}, {b->n > w ? b->n - w : 0, b->n}};
    for (int i = 0; i < 3; i++)
        for (size_t j = spans[i][0]; j < spans[i][1] && j < b->n; j++)
            CHECK(((const uint8_t *)b->p)[j] == pat_byte(b->seed, j),
                  "kept block %p (%zu B) differs at byte %zu", b->p, b->n, j);
}

static void release(blk_t *b)
{
    verify(b, "before free");
    if (b->fam == FAM_LIBC)
        free(b->p);
    else
        hmpi_heap_free(b->p);
    b->p = NULL;
}

static void make(blk_t *b, rng_t *r)
{
    size_t n = rnd_size(r);
    unsigned how = (unsigned)(rnd(r) % 9);
    size_t align = (size_t)8 << (rnd(r) % 10); /* 8 B .. 4 KiB */
    const char *what = "?";
    b->n = n;
    b->fam = how < 6 ? FAM_LIBC : FAM_HMPI;
    b->seed = atomic_fetch_add(&next_seed, 1);
    int zeroed = 0;
    /* HMPI's malloc aligns to 16 B for every size, as glibc's (src/heap/alloc.c); a
     * sanitizer's malloc to max_align_t (16) from 16 B up, the pointer size below. */
    size_t natural = 16, libc = INTERPOSED || n >= 16 ? 16 : 8;
    switch (how) {
    case 0:
        what = "malloc";
        b->p = malloc(n);
        align = libc;
        break;
    case 1:
        what = "calloc";
        b->p = calloc(n, 1);
        zeroed = 1;
        align = libc;
        break;
    case 2:
        what = "posix_memalign";
        b->p = NULL;
        CHECK(posix_memalign(&b->p, align, n) == 0, "posix_memalign(%zu, %zu)", align, n);
        break;
    case 3:
        what = "aligned_alloc";
        b->p = aligned_alloc(align, (n + align - 1) & ~(align - 1));
        break;
    case 4:
        what = "memalign";
        b->p = memalign(align, n);
        break;
    case 5:
        what = "valloc";
        b->p = valloc(n);
        align = (size_t)getpagesize();
        break;
    case 6:
        what = "hmpi_heap_malloc";
        b->p = hmpi_heap_malloc(n);
        align = natural;
        break;
    case 7:
        what = "hmpi_heap_calloc";
        b->p = hmpi_heap_calloc(1, n);
        zeroed = 1;
        align = natural;
        break;
    default:
        what = "hmpi_heap_aligned";
        b->p = hmpi_heap_aligned(align, n);
        break;
    }
    check_place(b, what);
    CHECK((uintptr_t)b->p % align == 0, "%s(%zu): %p is not aligned to %zu", what, n, b->p, align);
    if (zeroed) {
        size_t bad = zero_check(b->p, n);
        CHECK(bad == (size_t)-1, "%s(%zu) = %p: byte %zu not zero", what, n, b->p, bad);
    }
    pat_fill(b->p, n, b->seed);
}

static void resize(blk_t *b, rng_t *r)
{
    size_t old = b->n;
    size_t n = (rnd(r) & 1) ? old + rnd_size(r) : 1 + rnd(r) % old; /* grow or shrink */
    if (n > ((size_t)6 << 20))
        n = 1 + rnd(r) % old;
    verify(b, "before realloc");
    void *q = b->fam == FAM_LIBC ? realloc(b->p, n) : hmpi_heap_realloc(b->p, n);
    CHECK(q != NULL, "realloc(%zu -> %zu) failed", old, n);
    size_t align = b->fam == FAM_HMPI || INTERPOSED || n >= 16 ? 16 : 8;
    CHECK((uintptr_t)q % align == 0, "realloc(%zu -> %zu): %p is not aligned to %zu", old, n, q,
          align);
    int moved = q != b->p;
    b->p = q;
    b->n = n;
    /* A block resized in place keeps its place (a private one made before attach
     * stays private); one that moved was allocated anew, in the slice after attach. */
    if (moved)
        check_place(b, b->fam == FAM_LIBC ? "realloc" : "hmpi_heap_realloc");
    else
        CHECK(usable(b) >= n, "realloc in place to %zu: usable size %zu", n, usable(b));
    size_t keep = old < n ? old : n;
    size_t bad = pat_check(q, keep, b->seed);
    CHECK(bad == (size_t)-1, "realloc(%zu -> %zu) lost byte %zu", old, n, bad);
    pat_fill_range(q, keep, n, b->seed);
}

static int post(blk_t *b, rng_t *r)
{
    cell_t *c = &mailbox[rnd(r) % MAILBOX];
    int expect = 0;
    if (!atomic_compare_exchange_strong_explicit(&c->state, &expect, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return 0;
    c->b = *b;
    atomic_store_explicit(&c->state, 2, memory_order_release);
    b->p = NULL;
    atomic_fetch_add(&posted, 1);
    return 1;
}

static int take(blk_t *b, rng_t *r)
{
    cell_t *c = &mailbox[rnd(r) % MAILBOX];
    int expect = 2;
    if (!atomic_compare_exchange_strong_explicit(&c->state, &expect, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return 0;
    *b = c->b;
    atomic_store_explicit(&c->state, 0, memory_order_release);
    verify(b, "taken from another thread");
    atomic_fetch_add(&taken, 1);
    return 1;
}

static void *worker(void *arg)
{
    rng_t r = {.s = 0x9E3779B97F4A7C15ULL * (uint64_t)(uintptr_t)arg + 1};
    blk_t slot[SLOTS];
    memset(slot, 0, sizeof slot);
    for (int op = 0; op < OPS; op++) {
        blk_t *b = &slot[rnd(&r) % SLOTS];
        unsigned k = (unsigned)(rnd(&r) % 10);
        if (b->p == NULL) {
            if (k < 2 && take(b, &r))
                continue;
            make(b, &r);
        } else if (k < 3) {
            release(b);
        } else if (k < 6) {
            resize(b, &r);
        } else if (k < 8) {
            if (!post(b, &r))
                spot_check(b, &r);
        } else {
            spot_check(b, &r);
        }
    }
    /* Half the leftovers go to the mailbox for another thread (or main) to free. */
    for (int i = 0; i < SLOTS; i++)
        if (slot[i].p && !(i & 1 && post(&slot[i], &r)))
            release(&slot[i]);
    return NULL;
}

static void run_phase(const char *name)
{
    double t0 = now_s();
    long p0 = atomic_load(&posted);
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1 + 10 * phase_shared)) ==
                  0,
              "pthread_create");
    for (int i = 0; i < NTHREADS; i++)
        CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
    CHECK(atomic_load(&posted) - p0 > 100, "%s: only %ld blocks went between threads", name,
          atomic_load(&posted) - p0);
    printf("%s: %d threads x %d ops, %ld blocks passed on, %.2f s\n", name, NTHREADS, OPS,
           atomic_load(&posted) - p0, now_s() - t0);
}

/* Frees what the (now exited) threads left in the mailbox. */
static void drain_mailbox(void)
{
    for (int i = 0; i < MAILBOX; i++) {
        if (atomic_load(&mailbox[i].state) == 2) {
            blk_t b = mailbox[i].b;
            atomic_store(&mailbox[i].state, 0);
            release(&b);
        }
    }
}

/* The corner cases of the interposed functions' contracts. */
static void test_contracts(void)
{
#if INTERPOSED
    volatile size_t huge = SIZE_MAX, half = SIZE_MAX / 2;
    void *p = (void *)1;
    CHECK(posix_memalign(&p, 24, 64) == EINVAL && p == (void *)1, "alignment 24 accepted");
    CHECK(posix_memalign(&p, 4, 64) == EINVAL, "alignment below sizeof(void *) accepted");
    errno = 0;
    CHECK(aligned_alloc(48, 96) == NULL && errno == EINVAL, "aligned_alloc(48) accepted");
    errno = 0;
    CHECK(memalign(3, 96) == NULL && errno == EINVAL, "memalign(3) accepted");
    CHECK(malloc(huge) == NULL, "malloc(SIZE_MAX) succeeded");
    CHECK(calloc(half, 3) == NULL, "calloc overflow succeeded");
    errno = 0;
    CHECK(reallocarray(NULL, half, 3) == NULL && errno == ENOMEM,
          "reallocarray overflow succeeded");
    void *a = malloc(0), *b = malloc(0);
    CHECK(a && b && a != b, "malloc(0) must give distinct blocks");
    free(a);
    free(b);
    free(NULL);
    uint8_t *q = realloc(NULL, 100);
    CHECK(q != NULL, "realloc(NULL, 100)");
    pat_fill(q, 100, 9);
    q = reallocarray(q, 50, 4);
    CHECK(q && pat_check(q, 100, 9) == (size_t)-1, "reallocarray lost content");
    free(q);
    void *v = pvalloc(1);
    CHECK(v && (uintptr_t)v % (uintptr_t)getpagesize() == 0 &&
              malloc_usable_size(v) >= (size_t)getpagesize(),
          "pvalloc(1) must give a whole page");
    if (phase_shared)
        CHECK(hmpi_heap_is_shared(v), "pvalloc after attach is not shared");
    free(v);
#endif
    volatile size_t half2 = SIZE_MAX / 2;
    hmpi_heap_free(NULL);
    uint8_t *h = hmpi_heap_realloc(NULL, 64);
    CHECK(h != NULL, "hmpi_heap_realloc(NULL, 64)");
    if (phase_shared)
        CHECK(hmpi_heap_is_shared(h), "hmpi_heap_realloc(NULL) after attach is not shared");
    hmpi_heap_free(h);
    CHECK(hmpi_heap_calloc(half2, 3) == NULL, "hmpi_heap_calloc overflow succeeded");
}

int main(void)
{
    double t0 = now_s();
    static region_fixture_t fx;
    fixture_make(&fx, 1, (size_t)1 << 30);

    /* Private: nothing attached yet. Some blocks are kept across the attach. */
    test_contracts();
    run_phase("private");
    enum { KEEP = 16 };
    blk_t keep[KEEP];
    rng_t r = {.s = 77};
    for (int i = 0; i < KEEP; i++)
        make(&keep[i], &r);

    CHECK(hmpi_heap_attach(fx.base, HMPI_REGION_ALIGN, fx.shift, 1, 0, fx.fd) == 0, "attach");
    fixture_unlink(&fx);
    phase_shared = 1;
    drain_mailbox(); /* private blocks of exited threads, freed after attach */
    for (int i = 0; i < KEEP; i++) {
        verify(&keep[i], "kept across attach");
        if (i & 1)
            release(&keep[i]);
        else
            resize(&keep[i], &r);
    }
    test_contracts();
    run_phase("shared");
    drain_mailbox();
    for (int i = 0; i < KEEP; i += 2)
        release(&keep[i]);
    CHECK(atomic_load(&taken) > 100, "only %ld blocks were freed by another thread",
          atomic_load(&taken));
    printf("malloc_stress: ok (%s interposed malloc) in %.1f s\n", INTERPOSED ? "with" : "without",
           now_s() - t0);
    return 0;
}
