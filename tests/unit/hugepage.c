/* hugepage.c: a large block of the shared region gets huge pages when the chosen method
 * (HMPI_HUGEPAGES, auto when unset) says it can, its contents survive, and another
 * process sees them at the same address, mapped by 2 MiB entries too:
 *  - a block that starts 1 MiB past a 2 MiB boundary, its first half written before it
 *    is backed and its second half never touched (a fresh range of the file);
 *  - hmpi_hugepage_back covers exactly the whole 2 MiB ranges inside it (the VMA's
 *    ShmemPmdMapped grows by exactly those), and returns their bytes;
 *  - the written half reads back byte for byte, the rest reads zero, also the partial
 *    2 MiB at each end that stays in 4 KiB pages;
 *  - a peer that mapped and read the block in 4 KiB pages before the collapse, and one
 *    that maps the file afresh after it, both read the same bytes and get PMD entries;
 *    a peer's writes afterwards are seen here;
 *  - then through the allocator (slice 1 attached): a big block from hmpi_heap_malloc, and
 *    its growth in place by hmpi_heap_realloc, come in huge pages, exactly their whole
 *    2 MiB ranges, reading zero and keeping what was written; freed, the pages go.
 * Exits 77 (skipped, the reason printed) when the kernel refuses every method. No MPI. */
#include "test_util.h"
#include "heap/big.h"
#include "heap/hugepage.h"

#include <signal.h>
#include <sys/wait.h>

#define HP HMPI_HUGEPAGE_SIZE
#define MiB ((size_t)1 << 20)
enum { SKIP = 77 };

static region_fixture_t fx;

/* A field of /proc/self/smaps ("ShmemPmdMapped"), in bytes, for the mapping holding p. */
static long long smaps_bytes(const void *p, const char *field)
{
    FILE *f = fopen("/proc/self/smaps", "re");
    CHECK(f != NULL, "/proc/self/smaps: %s", strerror(errno));
    char line[512];
    int in = 0;
    long long v = -1;
    size_t flen = strlen(field);
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char c;
        if (sscanf(line, "%lx-%lx %c", &lo, &hi, &c) == 3 &&
            strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (in && strncmp(line, field, flen) == 0 && line[flen] == ':')
            v = atoll(line + flen + 1) * 1024;
    }
    fclose(f);
    CHECK(v >= 0, "no %s for %p in /proc/self/smaps", field, p);
    return v;
}

/* Reads one byte of every 4 KiB page of [p, p+n): maps the pages in this process. */
static void read_pages(const char *p, size_t n)
{
    volatile unsigned sum = 0;
    for (size_t i = 0; i < n; i += 4096)
        sum += (unsigned char)p[i];
    (void)sum;
}

typedef struct {
    char *block;         /* the block: [block, block+len) */
    size_t len, written; /* its first `written` bytes hold the pattern, the rest zero */
    uint32_t seed;
    char *inner; /* its whole 2 MiB ranges: [inner, inner+inner_len) */
    size_t inner_len;
} block_t;

static void check_contents(const block_t *b, const char *who)
{
    size_t at = pat_check(b->block, b->written, b->seed);
    CHECK(at == (size_t)-1, "%s: written byte %zu of the block differs", who, at);
    at = zero_check(b->block + b->written, b->len - b->written);
    CHECK(at == (size_t)-1, "%s: never-written byte %zu of the block is not zero", who,
          b->written + at);
}

/* A peer: has its own mapping of the file at the same address, made afresh when remap,
 * else the one fork gave it, read in 4 KiB pages before this process backs the block.
 * Reads the block, checks its PMD-mapped bytes when told to, then writes bytes
 * [len/2, len) of the pattern seed+1. Talks over two pipes: "done" when it has read,
 * and "go" (one byte: whether to expect PMD entries) from the parent. */
typedef struct {
    pid_t pid;
    int go[2], done[2];
    int remap;
} peer_t;

static void peer_main(const block_t *b, const peer_t *pr)
{
    const char *who = pr->remap ? "fresh peer" : "peer mapped before";
    char expect_pmd = 0;
    fixture_live = NULL; /* the parent owns the file: a failing peer must not remove it */
    close(pr->go[1]);    /* so a parent that fails and exits ends this read with EOF */
    close(pr->done[0]);
    if (pr->remap) {
        CHECK(munmap((void *)fx.base, fx.len) == 0, "%s: munmap: %s", who, strerror(errno));
        int err = hmpi_region_map(fx.fd, fx.base, fx.len);
        CHECK(err == 0, "%s: mapping the file again at %#lx: %s", who, (unsigned long)fx.base,
              strerror(err));
    } else {
        read_pages(b->block, b->len); /* 4 KiB entries before the collapse */
    }
    CHECK(write(pr->done[1], &expect_pmd, 1) == 1, "%s: pipe", who);
    CHECK(read(pr->go[0], &expect_pmd, 1) == 1, "%s: pipe", who);
    check_contents(b, who);
    long long pmd = smaps_bytes(b->block, "ShmemPmdMapped");
    CHECK(!expect_pmd || pmd >= (long long)b->inner_len, "%s: %lld bytes PMD-mapped of %zu backed",
          who, pmd, b->inner_len);
    pat_fill_range(b->block, b->len / 2, b->len, b->seed + 1);
    _exit(0);
}

static void peer_start(peer_t *pr, const block_t *b, int remap)
{
    pr->remap = remap;
    CHECK(pipe(pr->go) == 0 && pipe(pr->done) == 0, "pipe: %s", strerror(errno));
    fflush(NULL);
    pr->pid = fork();
    CHECK(pr->pid >= 0, "fork: %s", strerror(errno));
    if (pr->pid == 0)
        peer_main(b, pr);
    close(pr->go[0]);
    close(pr->done[1]);
    char x;
    CHECK(read(pr->done[0], &x, 1) == 1, "the peer died before reading the block");
}

/* Lets the peer check and write; waits for it and checks its writes here. */
static void peer_finish(peer_t *pr, block_t *b, int expect_pmd)
{
    char x = (char)expect_pmd;
    CHECK(write(pr->go[1], &x, 1) == 1, "pipe to the peer");
    int st = 0;
    CHECK(waitpid(pr->pid, &st, 0) == pr->pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "peer (%s) failed: status %#x", pr->remap ? "mapped afresh" : "mapped before", st);
    close(pr->go[1]);
    close(pr->done[0]);
    b->seed += 1; /* the peer's half; this process writes the other half the same */
    pat_fill_range(b->block, 0, b->len / 2, b->seed);
    b->written = b->len;
    check_contents(b, "after a peer wrote");
}

/* Big blocks of the heap (attached on slice 1 here) under the method: the allocator backs
 * them as hmpi_hugepage_back does (exactly their whole 2 MiB ranges) and their pages go
 * when they are freed. */
static void test_heap(int collapse)
{
    CHECK(hmpi_heap_attach(fx.base, HMPI_REGION_ALIGN, fx.shift, 2, 1, fx.fd) == 0, "attach");
    long long pmd0 = smaps_bytes((void *)fx.base, "ShmemPmdMapped");
    size_t n = HMPI_HEAP_BIG_MIN + 8 * HP + 12345; /* 48 MiB and a bit: 24 whole ranges */
    char *p = hmpi_heap_malloc(n);
    CHECK(p != NULL && hmpi_heap_owner(p) == 1, "big block %p not in slice 1", (void *)p);
    CHECK((uintptr_t)p % HP == 0, "big block %p not 2 MiB-aligned", (void *)p);
    long long got = smaps_bytes(p, "ShmemPmdMapped") - pmd0;
    size_t want = collapse ? n / HP * HP : 0;
    CHECK(got == (long long)want, "a %zu-byte big block: %lld bytes PMD-mapped, want %zu", n, got,
          want);
    CHECK(zero_check(p, n) == (size_t)-1, "a fresh big block does not read zero");
    pat_fill(p, n, 41);
    /* Grown in place (nothing after it in the big area yet): the new part too, and the
     * 2 MiB range the old end straddled. */
    size_t n2 = 2 * n;
    char *q = hmpi_heap_realloc(p, n2);
    CHECK(q == p, "realloc of the only big block moved it (%p -> %p)", (void *)p, (void *)q);
    got = smaps_bytes(p, "ShmemPmdMapped") - pmd0;
    want = collapse ? n2 / HP * HP : 0;
    CHECK(got == (long long)want, "grown to %zu bytes: %lld bytes PMD-mapped, want %zu", n2, got,
          want);
    CHECK(pat_check(p, n, 41) == (size_t)-1, "the grown block lost its old bytes");
    CHECK(zero_check(p + n, n2 - n) == (size_t)-1, "the grown part does not read zero");
    hmpi_heap_free(p);
    got = smaps_bytes((void *)fx.base, "ShmemPmdMapped") - pmd0;
    CHECK(got == 0, "%lld bytes still PMD-mapped after the free", got);
    printf("hugepage: heap: a %zu-byte big block and its growth to %zu: %s\n", n, n2,
           collapse ? "huge pages, exactly" : "no huge pages by hand (as the method says)");
}

int main(void)
{
    const char *word = getenv("HMPI_HUGEPAGES") ? getenv("HMPI_HUGEPAGES") : "auto";
    fixture_make(&fx, 2, (size_t)1 << 30);
    char why[512];
    int rc = hmpi_hugepage_setup(word, fx.dir, why, sizeof why);
    CHECK(rc >= 0, "hmpi_hugepage_setup('%s') refused the word", word);
    hmpi_hugepage_method_t m = hmpi_hugepage_method();
    printf("hugepage: HMPI_HUGEPAGES=%s: %s (%s)\n", word, hmpi_hugepage_name(m), why);
    CHECK(hmpi_hugepage_region((void *)fx.base, fx.len) == 0 ||
              hmpi_hugepage_method() == HMPI_HUGEPAGE_OFF,
          "a refused region-wide method did not turn itself off");

    /* The block: 1 MiB past a 2 MiB boundary in slice 0, 64 MiB + 3 KiB long. */
    block_t b;
    b.block = (char *)(fx.base + HMPI_REGION_ALIGN + 5 * HP + MiB);
    b.len = 64 * MiB + 3 * 1024;
    b.written = b.len / 2 + 12345;
    b.seed = 27;
    b.inner = (char *)(fx.base + HMPI_REGION_ALIGN + 6 * HP);
    b.inner_len =
        (size_t)(((uintptr_t)b.block + b.len) & ~(uintptr_t)(HP - 1)) - (size_t)(uintptr_t)b.inner;
    CHECK(b.inner_len == 64 * MiB - HP, "inner range %zu", b.inner_len);
    CHECK(smaps_bytes(b.block, "ShmemPmdMapped") == 0, "PMD entries before anything");

    pat_fill(b.block, b.written, b.seed);
    peer_t before;
    peer_start(&before, &b, 0); /* maps it in 4 KiB pages first */
    double t0 = now_s();
    size_t got = hmpi_hugepage_back(b.block, b.len);
    double t1 = now_s();
    long long pmd = smaps_bytes(b.block, "ShmemPmdMapped");
    check_contents(&b, "after hmpi_hugepage_back");

    int expect_pmd = 0;
    switch (hmpi_hugepage_method()) {
    case HMPI_HUGEPAGE_COLLAPSE:
        CHECK(got <= b.inner_len && got % HP == 0,
              "backed %zu bytes: not whole 2 MiB pages inside the block's %zu", got, b.inner_len);
        if (got == 0) {
            printf("hugepage: skipped: the kernel refused every collapse (%s)\n", why);
            peer_finish(&before, &b, 0);
            fixture_unlink(&fx);
            return SKIP;
        }
        /* The collapsed ranges, and nothing else (the partial ones at the ends). */
        CHECK(pmd == (long long)got, "ShmemPmdMapped %lld after backing %zu bytes", pmd, got);
        if (got < b.inner_len)
            printf("hugepage: note: %zu of %zu bytes backed (no free huge page for the rest)\n",
                   got, b.inner_len);
        expect_pmd = got == b.inner_len;
        printf("hugepage: collapse: %zu x 2 MiB in %.1f ms (%.0f us each, half of them "
               "written first, half fresh)\n",
               got / HP, (t1 - t0) * 1e3, (t1 - t0) * 1e6 / (double)(got / HP));
        break;
    case HMPI_HUGEPAGE_ADVISE:
    case HMPI_HUGEPAGE_FS:
        /* Pages come huge at first touch: nothing for hmpi_hugepage_back to do. */
        CHECK(got == 0, "backed %zu bytes by hand under %s", got,
              hmpi_hugepage_name(hmpi_hugepage_method()));
        read_pages(b.block, b.len);
        pmd = smaps_bytes(b.block, "ShmemPmdMapped");
        if (pmd < (long long)b.inner_len) {
            printf("hugepage: skipped: %s, yet %lld of %zu bytes came in huge pages (%s)\n",
                   hmpi_hugepage_name(hmpi_hugepage_method()), pmd, b.inner_len, why);
            peer_finish(&before, &b, 0);
            fixture_unlink(&fx);
            return SKIP;
        }
        expect_pmd = 1;
        break;
    case HMPI_HUGEPAGE_OFF:
        CHECK(got == 0, "backed %zu bytes with huge pages off", got);
        if (strcmp(word, "off") != 0) {
            printf("hugepage: skipped: the kernel refuses every method (%s)\n", why);
            peer_finish(&before, &b, 0);
            fixture_unlink(&fx);
            return SKIP;
        }
        /* Off as asked: the tmpfs of the fixture is huge=never unless its mount says. */
        break;
    }

    /* The peer with 4 KiB entries from before, then one mapping the file afresh. */
    peer_finish(&before, &b, expect_pmd);
    peer_t fresh;
    peer_start(&fresh, &b, 1);
    peer_finish(&fresh, &b, expect_pmd);

    /* Last: attaching makes a later fork's child private, and it is never undone. Exact
     * counts where every collapse above succeeded, or where the method makes none. */
    hmpi_hugepage_method_t now = hmpi_hugepage_method();
    if ((now == HMPI_HUGEPAGE_COLLAPSE && expect_pmd) || now == HMPI_HUGEPAGE_OFF)
        test_heap(now == HMPI_HUGEPAGE_COLLAPSE);
    else
        printf("hugepage: heap part left out (%s%s)\n", hmpi_hugepage_name(now),
               now == HMPI_HUGEPAGE_COLLAPSE ? ", some collapses were refused above" : "");

    fixture_unlink(&fx);
    printf("hugepage: ok (%s)\n", hmpi_hugepage_name(hmpi_hugepage_method()));
    return 0;
}
