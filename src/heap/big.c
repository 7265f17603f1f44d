/* big.c: an extent allocator over one reserved address range (big.h). It plays the part
 * mmap plays for mimalloc's own huge blocks: the shared heap's big blocks come from the upper
 * half of each rank's slice, where mimalloc 3 cannot serve them from an exclusive arena.
 * Address-ordered first fit over a sorted list of free extents, neighbours merged on free;
 * a freed extent's pages go back to the system (punched out of the shared file, or dropped
 * from private memory), so it reads zero when handed out again, as a fresh mapping does.
 * Big blocks are few and large: one mutex per range; the lists live in private anonymous
 * memory (never malloc, which may be what called us). A shared block's whole 2 MiB ranges
 * get huge pages where HMPI_HUGEPAGES does that per block (hugepage.h). No MPI in here. */
#include "big.h"
#include "hugepage.h"
#include "../common/assert.h"
#include "../common/log.h"

#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

/* ---- sorted lists ------------------------------------------------------------------- */

/* Room for want entries; false when no memory can be had (the list is unchanged). */
static bool list_reserve(hmpi_extent_list_t *l, size_t want)
{
    if (want <= l->cap)
        return true;
    size_t cap = l->cap ? l->cap * 2 : 256;
    while (cap < want)
        cap *= 2;
    hmpi_extent_t *v =
        mmap(NULL, cap * sizeof *v, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (v == MAP_FAILED)
        return false;
    if (l->n)
        memcpy(v, l->v, l->n * sizeof *v);
    if (l->v)
        munmap(l->v, l->cap * sizeof *v);
    l->v = v;
    l->cap = cap;
    return true;
}

/* Index of the first extent starting at or after a. */
static size_t list_lower(const hmpi_extent_list_t *l, uintptr_t a)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->v[mid].start < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The lists' invariant (big.h): sorted by start, no extent empty, none overlapping the
 * next. For HMPI_ASSERT_EXPENSIVE after each change. */
static bool list_sound(const hmpi_extent_list_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].len == 0 || (i && l->v[i - 1].start + l->v[i - 1].len > l->v[i].start))
            return false;
    return true;
}

static void list_insert_at(hmpi_extent_list_t *l, size_t i, hmpi_extent_t e)
{
    HMPI_ASSERT(l->n < l->cap && i <= l->n); /* room made by list_reserve */
    memmove(l->v + i + 1, l->v + i, (l->n - i) * sizeof *l->v);
    l->v[i] = e;
    l->n++;
}

static void list_remove_at(hmpi_extent_list_t *l, size_t i)
{
    memmove(l->v + i, l->v + i + 1, (l->n - i - 1) * sizeof *l->v);
    l->n--;
}

/* Index of the used extent starting exactly at p, or -1. */
static long used_find(const hmpi_extents_t *x, uintptr_t p)
{
    size_t i = list_lower(&x->used, p);
    return i < x->used.n && x->used.v[i].start == p ? (long)i : -1;
}

/* Files e among the free extents, merged with its neighbours. Needs room for one more. */
static void free_insert(hmpi_extents_t *x, hmpi_extent_t e)
{
    hmpi_extent_list_t *f = &x->free;
    size_t i = list_lower(f, e.start);
    bool left = i > 0 && f->v[i - 1].start + f->v[i - 1].len == e.start;
    bool right = i < f->n && e.start + e.len == f->v[i].start;
    if (left && right) {
        f->v[i - 1].len += e.len + f->v[i].len;
        list_remove_at(f, i);
    } else if (left) {
        f->v[i - 1].len += e.len;
    } else if (right) {
        f->v[i].start = e.start;
        f->v[i].len += e.len;
    } else {
        list_insert_at(f, i, e);
    }
    HMPI_ASSERT_EXPENSIVE(list_sound(f));
}

/* ---- pages ---------------------------------------------------------------------------- */

/* The pages of e go back to the system and read zero from now on. A file system that cannot
 * punch holes (not a tmpfs) gets them zeroed by hand instead. */
static void give_back(const hmpi_extents_t *x, hmpi_extent_t e)
{
    if (e.len && madvise((void *)e.start, e.len, x->shared ? MADV_REMOVE : MADV_DONTNEED) != 0)
        memset((void *)e.start, 0, e.len);
}

/* e leaves the used list (already done) and joins the free one, its pages given back first
 * and outside the lock: in neither list meanwhile, nobody is handed it half zeroed. */
static void release(hmpi_extents_t *x, hmpi_extent_t e)
{
    give_back(x, e);
    pthread_mutex_lock(&x->lock);
    if (list_reserve(&x->free, x->free.n + 1))
        free_insert(x, e); /* else lost to the range: no memory left even for the list */
    pthread_mutex_unlock(&x->lock);
}

/* ---- fork ----------------------------------------------------------------------------- */

/* A fork while another thread holds a range's lock would leave the child's copy locked. */
enum { MAX_RANGES = 4 };
static hmpi_extents_t *ranges[MAX_RANGES];
static int nranges;
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock_all(void)
{
    for (int i = 0; i < nranges; i++)
        pthread_mutex_lock(&ranges[i]->lock);
}

static void unlock_all(void)
{
    for (int i = nranges - 1; i >= 0; i--)
        pthread_mutex_unlock(&ranges[i]->lock);
}

static void reset_all(void)
{
    for (int i = 0; i < nranges; i++)
        pthread_mutex_init(&ranges[i]->lock, NULL);
}

/* ---- the allocator -------------------------------------------------------------------- */

int hmpi_extents_init(hmpi_extents_t *x, uintptr_t lo, size_t len, int shared)
{
    len &= ~(HMPI_HEAP_BIG_GRAIN - 1);
    pthread_mutex_lock(&ranges_lock);
    int ok = atomic_load(&x->len) == 0 && len > 0 && nranges < MAX_RANGES;
    if (ok) {
        pthread_mutex_init(&x->lock, NULL);
        ok = list_reserve(&x->free, 1) && list_reserve(&x->used, 1);
    }
    if (ok) {
        x->free.v[0] = (hmpi_extent_t){lo, len};
        x->free.n = 1;
        x->shared = shared;
        atomic_store_explicit(&x->lo, lo, memory_order_relaxed);
        atomic_store_explicit(&x->len, len, memory_order_release);
        if (nranges == 0)
            pthread_atfork(lock_all, unlock_all, reset_all);
        ranges[nranges++] = x;
    }
    pthread_mutex_unlock(&ranges_lock);
    return ok ? 0 : -1;
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) & ~(to - 1); }

void *hmpi_extents_alloc(hmpi_extents_t *x, size_t n, size_t align)
{
    if (n == 0 || n > atomic_load_explicit(&x->len, memory_order_acquire))
        return NULL;
    size_t size = round_up(n, HMPI_HEAP_BIG_GRAIN);
    if (align < HMPI_HEAP_BIG_GRAIN)
        align = HMPI_HEAP_BIG_GRAIN;
    void *p = NULL;
    pthread_mutex_lock(&x->lock);
    if (!list_reserve(&x->free, x->free.n + 1) || !list_reserve(&x->used, x->used.n + 1))
        goto out;
    for (size_t i = 0; i < x->free.n; i++) {
        hmpi_extent_t f = x->free.v[i];
        uintptr_t a = (f.start + align - 1) & ~(uintptr_t)(align - 1);
        if (a < f.start || a - f.start > f.len || f.len - (a - f.start) < size)
            continue;
        size_t before = a - f.start, after = f.len - before - size;
        if (before && after) {
            x->free.v[i].len = before;
            list_insert_at(&x->free, i + 1, (hmpi_extent_t){a + size, after});
        } else if (before) {
            x->free.v[i].len = before;
        } else if (after) {
            x->free.v[i] = (hmpi_extent_t){a + size, after};
        } else {
            list_remove_at(&x->free, i);
        }
        list_insert_at(&x->used, list_lower(&x->used, a), (hmpi_extent_t){a, size});
        p = (void *)a;
        break;
    }
    HMPI_ASSERT_EXPENSIVE(list_sound(&x->free) && list_sound(&x->used));
out:
    pthread_mutex_unlock(&x->lock);
    if (p != NULL && x->shared) /* fresh (punched) pages: huge ones, outside the lock */
        hmpi_hugepage_back(p, size);
    return p;
}

void *hmpi_extents_resize(hmpi_extents_t *x, void *p, size_t n)
{
    if (n == 0 || n > atomic_load_explicit(&x->len, memory_order_acquire))
        return NULL;
    size_t size = round_up(n, HMPI_HEAP_BIG_GRAIN);
    hmpi_extent_t tail = {0, 0}, grown = {0, 0};
    void *r = NULL;
    pthread_mutex_lock(&x->lock);
    long u = used_find(x, (uintptr_t)p);
    if (u < 0)
        goto out;
    hmpi_extent_t *b = &x->used.v[u];
    if (size <= b->len) { /* shrink: the tail is given back below, outside the lock */
        tail = (hmpi_extent_t){b->start + size, b->len - size};
        b->len = size;
        r = p;
        goto out;
    }
    size_t i = list_lower(&x->free, b->start + b->len), need = size - b->len;
    hmpi_extent_t *f = i < x->free.n ? &x->free.v[i] : NULL;
    if (f && f->start == b->start + b->len && f->len >= need) {
        f->start += need;
        f->len -= need;
        if (f->len == 0)
            list_remove_at(&x->free, i);
        /* From the 2 MiB boundary at or below the old end: the range it straddled is
         * whole inside the block now (its old part is kept by the collapse). */
        uintptr_t from = (b->start + b->len) & ~(uintptr_t)(HMPI_HEAP_BIG_PAGE - 1);
        from = from > b->start ? from : b->start;
        grown = (hmpi_extent_t){from, b->start + size - from};
        b->len = size;
        r = p;
    }
out:
    pthread_mutex_unlock(&x->lock);
    if (tail.len)
        release(x, tail);
    if (grown.len && x->shared)
        hmpi_hugepage_back((void *)grown.start, grown.len);
    return r;
}

void hmpi_extents_free(hmpi_extents_t *x, void *p)
{
    pthread_mutex_lock(&x->lock);
    long u = used_find(x, (uintptr_t)p);
    hmpi_extent_t e = {0, 0};
    if (u >= 0) {
        e = x->used.v[u];
        list_remove_at(&x->used, (size_t)u);
    }
    pthread_mutex_unlock(&x->lock);
    if (u < 0)
        hmpi_log_error("free(%p): not the start of a big block of the heap", p);
    else
        release(x, e);
}

size_t hmpi_extents_size(hmpi_extents_t *x, const void *p)
{
    pthread_mutex_lock(&x->lock);
    long u = used_find(x, (uintptr_t)p);
    size_t n = u >= 0 ? x->used.v[u].len : 0;
    pthread_mutex_unlock(&x->lock);
    return n;
}

void hmpi_extents_usage(hmpi_extents_t *x, size_t *used_p, size_t *free_p)
{
    size_t used = 0, avail = 0;
    pthread_mutex_lock(&x->lock);
    for (size_t i = 0; i < x->used.n; i++)
        used += x->used.v[i].len;
    for (size_t i = 0; i < x->free.n; i++)
        avail += x->free.v[i].len;
    pthread_mutex_unlock(&x->lock);
    *used_p = used;
    *free_p = avail;
}
