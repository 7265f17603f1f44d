/* heap_single.c: the shared heap in one process. The region file's properties, the
 * mapping at one address, attach, blocks of 8 B to 64 MiB inside the slice, big blocks, calloc
 * staying zeroed over thousands of cycles that re-use dirtied blocks (shared file pages
 * are not zeroed by madvise), a fork()ed child isolated from the heap, and no file left.
 * The explicit hmpi_heap_* API is tested always, the interposed malloc when built. */
#include "test_util.h"
#include "heap/big.h"

#include <fcntl.h>
#include <mimalloc.h>
#include <sys/wait.h>

#ifndef HMPI_NO_MALLOC_INTERPOSE
#define INTERPOSED 1
#else
#define INTERPOSED 0
#endif

static region_fixture_t fx;

static void check_in_slice(const void *p, size_t n, const char *what)
{
    CHECK(p != NULL, "%s(%zu) returned NULL", what, n);
    CHECK(hmpi_heap_is_shared(p), "%s(%zu) = %p is outside the shared slice", what, n, p);
    CHECK(hmpi_heap_is_shared_range(p, n), "%s(%zu) = %p runs past the slice", what, n, p);
    CHECK(hmpi_heap_owner(p) == 0, "%s(%zu) = %p: owner %d, not 0", what, n, p, hmpi_heap_owner(p));
}

/* The file as hmpi_region_create leaves it, and hmpi_region_open's refusals. */
static void test_region_file(void)
{
    char prefix[200];
    snprintf(prefix, sizeof prefix, "%s/hmpi-", fx.dir);
    CHECK(strncmp(fx.path, prefix, strlen(prefix)) == 0, "region path '%s'", fx.path);
    const char *name = fx.path + strlen(prefix);
    CHECK(strlen(name) == 24 && strspn(name, "0123456789abcdef") == 24,
          "region name '%s' is not 24 random hex digits", name);

    struct stat st;
    CHECK(fstat(fx.fd, &st) == 0, "fstat: %s", strerror(errno));
    CHECK(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600, "mode %o, not 0600",
          (unsigned)st.st_mode);
    CHECK(st.st_uid == geteuid(), "owner %u", (unsigned)st.st_uid);
    CHECK((size_t)st.st_size == fx.len, "size %lld, not %zu", (long long)st.st_size, fx.len);
    CHECK(st.st_blocks == 0, "a fresh region must be sparse: %lld blocks", (long long)st.st_blocks);
    CHECK(fcntl(fx.fd, F_GETFD) & FD_CLOEXEC, "region fd without FD_CLOEXEC");

    /* Mapped once: the same address is refused, not replaced. */
    CHECK(hmpi_region_map(fx.fd, fx.base, fx.len) == EEXIST, "mapping twice at %#lx",
          (unsigned long)fx.base);
    CHECK(hmpi_region_map(fx.fd, fx.base + HMPI_REGION_ALIGN, fx.len) == EEXIST,
          "an overlapping mapping was not refused");

    /* A second region in the same dir gets another name; O_EXCL is per name. */
    char path2[256];
    int fd2 = -1;
    CHECK(hmpi_region_create(fx.dir, 4096, path2, sizeof path2, &fd2) == 0, "second create");
    CHECK(strcmp(path2, fx.path) != 0, "two regions got the same name %s", path2);
    int fd3 = -1;
    CHECK(hmpi_region_open(path2, &fd3) == 0, "opening a region of this user");
    close(fd3);
    close(fd2);
    CHECK(unlink(path2) == 0, "unlink %s", path2);

    /* Refused: readable by others, a symlink, a missing file. */
    char bad[256];
    snprintf(bad, sizeof bad, "%s/hmpi-public", fx.dir);
    int fd = open(bad, O_RDWR | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0 && fchmod(fd, 0644) == 0, "making %s", bad);
    close(fd);
    fd3 = -1;
    CHECK(hmpi_region_open(bad, &fd3) == -1 && fd3 == -1, "a 0644 region was accepted");
    char link[256];
    snprintf(link, sizeof link, "%s/hmpi-link", fx.dir);
    CHECK(symlink(fx.path, link) == 0, "symlink: %s", strerror(errno));
    CHECK(hmpi_region_open(link, &fd3) == -1 && fd3 == -1, "a symlinked region was accepted");
    CHECK(unlink(link) == 0 && unlink(bad) == 0, "cleaning up");
    CHECK(hmpi_region_open(link, &fd3) == -1, "a missing region was opened");

    /* Creation in a missing dir fails cleanly. */
    CHECK(hmpi_region_create("/nonexistent-hmpi-dir", 4096, path2, sizeof path2, &fd2) == -1,
          "created a region in a missing dir");
    CHECK(hmpi_region_space("/nonexistent-hmpi-dir") == 0, "space of a missing dir");
    CHECK(hmpi_region_space(fx.dir) > 0, "no space reported for %s", fx.dir);
    CHECK(dir_entries(fx.dir) == 1, "%s holds %d files, want only the region", fx.dir,
          dir_entries(fx.dir));
}

static void test_attach(void)
{
    void *before = hmpi_heap_malloc(100);
    CHECK(before != NULL && !hmpi_heap_is_shared(before) && hmpi_heap_owner(before) == -1,
          "a block before attach claims to be shared");
    CHECK(!hmpi_heap_active(), "heap active before attach");

    CHECK(hmpi_heap_attach(fx.base, HMPI_REGION_ALIGN, fx.shift, 1, 0, fx.fd) == 0, "attach");
    CHECK(hmpi_heap_active(), "heap not active after attach");
    CHECK(hmpi_region.base == fx.base && hmpi_region.slices == fx.base + HMPI_REGION_ALIGN &&
              hmpi_region.nslices == 1 && hmpi_region.my_slice == 0 &&
              hmpi_region.slices_len == ((size_t)1 << fx.shift),
          "hmpi_region does not describe the attached region");
    CHECK(hmpi_heap_attach(fx.base, HMPI_REGION_ALIGN, fx.shift, 1, 0, fx.fd) == -1,
          "a second attach was accepted");

    /* The boundaries of the slice. */
    uintptr_t s = hmpi_region.slices, e = s + hmpi_region.slices_len;
    CHECK(!hmpi_heap_is_shared((void *)fx.base) && hmpi_heap_owner((void *)fx.base) == -1,
          "the control area counts as heap");
    CHECK(!hmpi_heap_is_shared((void *)(s - 1)), "byte before the slice");
    CHECK(hmpi_heap_is_shared((void *)s) && hmpi_heap_owner((void *)s) == 0, "slice start");
    CHECK(hmpi_heap_is_shared((void *)(e - 1)) && hmpi_heap_owner((void *)(e - 1)) == 0,
          "slice end");
    CHECK(!hmpi_heap_is_shared((void *)e) && hmpi_heap_owner((void *)e) == -1, "past the end");
    CHECK(hmpi_heap_is_shared_range((void *)(e - 8), 8), "range ending at the end");
    CHECK(!hmpi_heap_is_shared_range((void *)(e - 8), 9), "range crossing the end");
    CHECK(!hmpi_heap_is_shared_range((void *)(s - 1), 2), "range crossing the start");
    CHECK(!hmpi_heap_is_shared_range((void *)s, SIZE_MAX), "huge range");
    CHECK(!hmpi_heap_is_shared(NULL) && hmpi_heap_owner(NULL) == -1, "NULL is shared");

    /* A block from before attach is still usable and freeable. */
    pat_fill(before, 100, 5);
    CHECK(pat_check(before, 100, 5) == (size_t)-1, "pre-attach block");
    hmpi_heap_free(before);
}

/* Every size from 8 B to 64 MiB (powers of two and their neighbours) lands in the
 * slice, all live at once, each keeps its own content. */
enum { NSIZES = 3 * 24 };
static void test_sizes(int interposed)
{
    static void *blk[NSIZES];
    static size_t len[NSIZES];
    int n = 0;
    for (size_t sz = 8; sz <= ((size_t)64 << 20); sz <<= 1) {
        size_t variants[3] = {sz - 1, sz, sz + 1};
        for (int v = 0; v < 3; v++) {
            size_t want = variants[v];
            if (want > ((size_t)64 << 20))
                continue;
            void *p = interposed ? malloc(want) : hmpi_heap_malloc(want);
            check_in_slice(p, want, interposed ? "malloc" : "hmpi_heap_malloc");
            CHECK(hmpi_heap_usable_size(p) >= want, "usable size %zu < %zu",
                  hmpi_heap_usable_size(p), want);
            pat_fill(p, want, (uint32_t)n);
            blk[n] = p;
            len[n++] = want;
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            CHECK((uintptr_t)blk[i] + len[i] <= (uintptr_t)blk[j] ||
                      (uintptr_t)blk[j] + len[j] <= (uintptr_t)blk[i],
                  "blocks %p+%zu and %p+%zu overlap", blk[i], len[i], blk[j], len[j]);
    for (int i = 0; i < n; i++) {
        size_t bad = pat_check(blk[i], len[i], (uint32_t)i);
        CHECK(bad == (size_t)-1, "block %d (%zu B) differs at %zu", i, len[i], bad);
        if (interposed)
            free(blk[i]);
        else
            hmpi_heap_free(blk[i]);
    }

    /* realloc growing from 8 B to 64 MiB and back, content kept. */
    size_t cur = 8;
    uint8_t *p = interposed ? malloc(cur) : hmpi_heap_malloc(cur);
    pat_fill(p, cur, 77);
    for (size_t next = 24; next <= ((size_t)64 << 20); next = next * 3 - 5) {
        p = interposed ? realloc(p, next) : hmpi_heap_realloc(p, next);
        check_in_slice(p, next, "realloc up");
        CHECK(pat_check(p, cur, 77) == (size_t)-1, "realloc %zu -> %zu lost content", cur, next);
        pat_fill_range(p, cur, next, 77);
        cur = next;
    }
    for (size_t next = cur / 7; next >= 8; next /= 7) {
        p = interposed ? realloc(p, next) : hmpi_heap_realloc(p, next);
        check_in_slice(p, next, "realloc down");
        CHECK(pat_check(p, next, 77) == (size_t)-1, "realloc %zu -> %zu lost content", cur, next);
        cur = next;
    }
    if (interposed)
        free(p);
    else
        hmpi_heap_free(p);

    /* Aligned blocks, 8 B to 1 MiB alignment. */
    for (int k = 0; k < 2 * 18; k++) {
        size_t al = (size_t)8 << (k / 2);
        size_t want = k & 1 ? al * 3 + 1 : al; /* size == alignment: mimalloc#700 */
        void *q = NULL;
        if (!interposed)
            q = hmpi_heap_aligned(al, want);
#if INTERPOSED
        else
            CHECK(posix_memalign(&q, al, want) == 0, "posix_memalign(%zu)", al);
#endif
        check_in_slice(q, want, "aligned");
        CHECK((uintptr_t)q % al == 0, "%p is not aligned to %zu", q, al);
        pat_fill(q, want, (uint32_t)al);
        CHECK(pat_check(q, want, (uint32_t)al) == (size_t)-1, "aligned block content");
        if (interposed)
            free(q);
        else
            hmpi_heap_free(q);
    }
}

/* calloc must return zeroes even where a freed block was dirtied: the arena's pages
 * are a shared file mapping, which madvise does not zero. */
static size_t calloc_size(int cycle, unsigned *rng)
{
    *rng = *rng * 1103515245u + 12345u;
    unsigned r = *rng >> 8;
    if (cycle % 1000 == 999)
        return (size_t)64 << 20;
    if (cycle % 200 == 17)
        return ((size_t)1 << 20) + (r % (15u << 20)); /* 1..16 MiB */
    if (cycle % 10 == 3)
        return 4096 + r % (252u << 10); /* 4 KiB..256 KiB */
    return 1 + r % 4096;
}

static void test_calloc_cycles(int cycles)
{
    enum { LIVE = 8 };
    void *live[LIVE] = {0};
    int live_interposed[LIVE] = {0};
    unsigned rng = 12345;
    for (int c = 0; c < cycles; c++) {
        int slot = c % LIVE;
        if (live[slot]) {
            memset(live[slot], 0xA5, hmpi_heap_usable_size(live[slot])); /* dirty it all */
            if (live_interposed[slot])
                free(live[slot]);
            else
                hmpi_heap_free(live[slot]);
        }
        size_t n = calloc_size(c, &rng);
        int use_interposed = INTERPOSED && (c & 1);
        void *p;
        if (use_interposed) {
            p = calloc(1, n);
        } else {
            /* Split n as count * size where it divides, to vary the arguments. */
            p = (n % 8 == 0) ? hmpi_heap_calloc(n / 8, 8) : hmpi_heap_calloc(n, 1);
        }
        check_in_slice(p, n, use_interposed ? "calloc" : "hmpi_heap_calloc");
        size_t bad = zero_check(p, n);
        CHECK(bad == (size_t)-1, "cycle %d: calloc(%zu) = %p has byte %zu = %#x", c, n, p, bad,
              ((uint8_t *)p)[bad]);
        live[slot] = p;
        live_interposed[slot] = use_interposed;
        if (c % 1000 == 999)
            mi_collect(true);
    }
    for (int i = 0; i < LIVE; i++) {
        if (live_interposed[i])
            free(live[i]);
        else
            hmpi_heap_free(live[i]);
    }
}

/* Big blocks (HMPI_HEAP_BIG_MIN and more, and alignments past mimalloc's arena limit) come
 * from the slice's big area in 2 MiB extents: freed ones read zero when handed out again,
 * realloc grows them in place when the next extent is free, neighbours merge, and a full
 * area falls back to private memory (never to someone else's). */
static void test_big(void)
{
    const size_t MiB = (size_t)1 << 20, KiB64 = HMPI_HEAP_BIG_GRAIN, big = HMPI_HEAP_BIG_MIN;
    size_t used0, free0, used, avail;
    hmpi_extents_usage(&hmpi_heap_big, &used0, &free0);
    CHECK(used0 == 0 && free0 == ((size_t)1 << fx.shift) / 2,
          "big area: %zu used, %zu free at the start", used0, free0);

    /* calloc, dirty, free, calloc again: the same extent, zero. */
    uint8_t *a = hmpi_heap_calloc(100 * MiB / 8, 8);
    check_in_slice(a, 100 * MiB, "big calloc");
    CHECK((uintptr_t)a % (2 * MiB) == 0, "big block %p not 2 MiB-aligned", (void *)a);
    CHECK(hmpi_heap_usable_size(a) == 100 * MiB, "usable %zu", hmpi_heap_usable_size(a));
    CHECK(zero_check(a, 100 * MiB) == (size_t)-1, "fresh big calloc not zero");
    memset(a, 0x5A, 100 * MiB);
    hmpi_heap_free(a);
    uint8_t *b = hmpi_heap_calloc(1, 100 * MiB + 1);
    CHECK(b == a, "first fit: %p, not the freed %p", (void *)b, (void *)a);
    CHECK(hmpi_heap_usable_size(b) == 100 * MiB + KiB64, "usable %zu", hmpi_heap_usable_size(b));
    size_t bad = zero_check(b, 100 * MiB + 1);
    CHECK(bad == (size_t)-1, "a freed, dirtied big block came back non-zero at %zu", bad);

    /* Grown in place (the area after it is free), content kept, the new part zero; then
     * shrunk in place. */
    pat_fill(b, 100 * MiB + 1, 31);
    uint8_t *c = hmpi_heap_realloc(b, 180 * MiB);
    CHECK(c == b, "realloc did not grow in place: %p -> %p", (void *)b, (void *)c);
    CHECK(pat_check(c, 100 * MiB + 1, 31) == (size_t)-1, "realloc in place lost content");
    CHECK(zero_check(c + 100 * MiB + KiB64, 80 * MiB - KiB64) == (size_t)-1, "grown part not zero");
    c = hmpi_heap_realloc(c, 40 * MiB);
    CHECK(c == b && hmpi_heap_usable_size(c) == 40 * MiB, "shrink in place: %p, %zu B", (void *)c,
          hmpi_heap_usable_size(c));
    CHECK(pat_check(c, 40 * MiB, 31) == (size_t)-1, "shrink lost content");

    /* A block right after it stops the growth in place: realloc moves, content kept. */
    void *wall = hmpi_heap_malloc(big);
    check_in_slice(wall, big, "big malloc");
    CHECK((uintptr_t)wall == (uintptr_t)c + 40 * MiB, "first fit put the wall at %p", wall);
    uint8_t *d = hmpi_heap_realloc(c, 60 * MiB);
    check_in_slice(d, 60 * MiB, "big realloc (moved)");
    CHECK(d != c && pat_check(d, 40 * MiB, 31) == (size_t)-1, "moving realloc lost content");
    /* Down below the big size: back to a mimalloc block, content kept. */
    uint8_t *e = hmpi_heap_realloc(d, 3 * MiB);
    check_in_slice(e, 3 * MiB, "realloc big -> small");
    /* (mimalloc 3.0.0/3.0.1: blocks past 512 KiB stay big, see alloc.c) */
    int mi_singleton_bug = mi_version() >= 300 && mi_version() < 302;
    CHECK(mi_singleton_bug || hmpi_extents_size(&hmpi_heap_big, e) == 0,
          "a 3 MiB realloc stayed a big block");
    CHECK(pat_check(e, 3 * MiB, 31) == (size_t)-1, "realloc big -> small lost content");
    hmpi_heap_free(e);

    /* Alignments past mimalloc's arena limit, small and big sizes. */
    size_t aligns[] = {128 << 10, 2 * MiB, 16 * MiB, 64 * MiB};
    for (int i = 0; i < 4; i++) {
        size_t n = i & 1 ? 40 * MiB : 4096;
        void *q = hmpi_heap_aligned(aligns[i], n);
        check_in_slice(q, n, "big aligned");
        CHECK((uintptr_t)q % aligns[i] == 0, "%p not aligned to %zu", q, aligns[i]);
        pat_fill(q, n, (uint32_t)i);
        CHECK(pat_check(q, n, (uint32_t)i) == (size_t)-1, "aligned big content");
        hmpi_heap_free(q);
    }

    /* Filling the area: the next big block is private memory, never shared by mistake. */
    enum { MAXB = 64 };
    void *all[MAXB];
    int n = 0;
    while (n < MAXB && (all[n] = hmpi_heap_shared_alloc(64 * MiB)) != NULL)
        n++;
    CHECK(n > 0 && n < MAXB, "filled the big area with %d blocks of 64 MiB", n);
    void *priv = hmpi_heap_malloc(64 * MiB);
    CHECK(priv != NULL && !hmpi_heap_is_shared(priv), "a full big area gave %p", priv);
    hmpi_heap_free(priv);
    for (int i = 0; i < n; i++)
        hmpi_heap_free(all[i]);
    hmpi_heap_free(wall);
    hmpi_extents_usage(&hmpi_heap_big, &used, &avail);
    CHECK(used == 0 && avail == free0, "big area after every free: %zu used, %zu of %zu free", used,
          avail, free0);
}

/* A fork()ed child gets a private copy of the region: its writes and allocations do
 * not reach the parent's heap. */
static void test_fork_isolation(void)
{
    size_t n = 200000;
    uint8_t *blk = hmpi_heap_malloc(n);
    check_in_slice(blk, n, "hmpi_heap_malloc");
    pat_fill(blk, n, 4242);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        if (hmpi_heap_active())
            _exit(10);
        if (pat_check(blk, n, 4242) != (size_t)-1)
            _exit(11); /* the child sees the parent's data at the same address */
        memset(blk, 0, n);
        void *q = hmpi_heap_malloc(4096);
        if (q == NULL || hmpi_heap_is_shared(q))
            _exit(12);
#if INTERPOSED
        void *r = malloc(1 << 20);
        if (r == NULL || hmpi_heap_is_shared(r))
            _exit(13);
        free(r);
#endif
        hmpi_heap_free(q);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forked child failed: status %#x", status);
    size_t bad = pat_check(blk, n, 4242);
    CHECK(bad == (size_t)-1, "the child's writes reached the parent's heap (byte %zu)", bad);
    hmpi_heap_free(blk);
}

int main(void)
{
    double t0 = now_s();
    fixture_make(&fx, 1, (size_t)1 << 30);
    test_region_file();
    test_attach();
    /* Like MPI_Init: the file goes as soon as it is mapped; the heap goes on working. */
    fixture_unlink(&fx);
    test_sizes(0);
    if (INTERPOSED)
        test_sizes(1);
    test_calloc_cycles(6000);
    /* Then with mimalloc purging as eagerly as it can. */
#if MI_MALLOC_VERSION >= 300
    mi_option_set(mi_option_purge_delay, 0);
    mi_option_set(mi_option_arena_purge_mult, 0);
#else
    mi_option_set(mi_option_decommit_delay, 0);
    mi_option_set(mi_option_segment_decommit_delay, 0);
    mi_option_set(mi_option_decommit_extend_delay, 0);
#endif
    test_calloc_cycles(6000);
    test_big();
    test_fork_isolation();
    printf("heap_single: ok (%s interposed malloc) in %.1f s\n", INTERPOSED ? "with" : "without",
           now_s() - t0);
    return 0;
}
