/* heap_fork.c: the shared heap across processes without MPI. The parent makes and
 * maps a region of 3 slices and forks 3 children; child i attaches slice i, allocates
 * blocks there, stamps them and publishes their addresses in the control area; every
 * other child and the parent read them at the same address, byte for byte.
 * Block 4 is a big block (heap/big.h). With the argument "default" the slices have the
 * default size of HMPI_HEAP_SIZE. The heap is attached only in the children (a child forked from an attached process
 * gets a private copy of the region) and the children do not fork. */
#include "test_util.h"
#include "common/knobs.h"

#include <mimalloc.h>

#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#ifndef HMPI_NO_MALLOC_INTERPOSE
#define INTERPOSED 1
#else
#define INTERPOSED 0
#endif

enum { NCHILD = 3, NBLK = 5, WAIT_S = 30 };

/* Lives at the region's base, in the control area (shared by all the processes at
 * the same address). Each child writes only its own row; readers bump verified. */
typedef struct {
    _Atomic uintptr_t ptr[NCHILD][NBLK]; /* published last, with release */
    _Atomic size_t len[NCHILD][NBLK];
    _Atomic int verified[NCHILD][NBLK]; /* readers that checked the block */
    _Atomic int failed;                 /* set by any process that fails */
} ctrl_t;

static region_fixture_t fx;
static ctrl_t *ctrl;

static void mark_failed(void) { atomic_store(&ctrl->failed, 1); }

static uint32_t seed_of(int child, int b) { return (uint32_t)(1000 + 16 * child + b); }

/* Spins (yielding) until *v >= want; 0 on timeout or when another process failed. */
static int wait_at_least(_Atomic uintptr_t *v, uintptr_t want)
{
    double deadline = now_s() + WAIT_S;
    while (atomic_load_explicit(v, memory_order_acquire) < want) {
        if (atomic_load(&ctrl->failed) || now_s() > deadline)
            return 0;
        sched_yield();
    }
    return 1;
}

static int wait_count(_Atomic int *v, int want)
{
    double deadline = now_s() + WAIT_S;
    while (atomic_load_explicit(v, memory_order_acquire) < want) {
        if (atomic_load(&ctrl->failed) || now_s() > deadline)
            return 0;
        sched_yield();
    }
    return 1;
}

/* The owner as computed from the geometry alone (the parent never attaches). */
static int owner_by_geometry(uintptr_t p)
{
    uintptr_t slices = fx.base + HMPI_REGION_ALIGN;
    if (p < slices || p >= slices + ((uintptr_t)NCHILD << fx.shift))
        return -1;
    return (int)((p - slices) >> fx.shift);
}

/* Reads every block of child c and counts itself as one more reader. */
static void verify_row(int c, const char *who)
{
    for (int b = 0; b < NBLK; b++) {
        CHECK(wait_at_least(&ctrl->ptr[c][b], 1), "%s: child %d never published block %d", who, c,
              b);
        uintptr_t p = atomic_load_explicit(&ctrl->ptr[c][b], memory_order_acquire);
        size_t n = atomic_load_explicit(&ctrl->len[c][b], memory_order_relaxed);
        CHECK(owner_by_geometry(p) == c && owner_by_geometry(p + n - 1) == c,
              "%s: block %d of child %d at %#lx+%zu is not in slice %d", who, b, c,
              (unsigned long)p, n, c);
        size_t bad = pat_check((const void *)p, n, seed_of(c, b));
        CHECK(bad == (size_t)-1, "%s: block %d of child %d (%zu B at %#lx) differs at %zu", who, b,
              c, n, (unsigned long)p, bad);
        atomic_fetch_add_explicit(&ctrl->verified[c][b], 1, memory_order_release);
    }
}

static void child(int me)
{
    CHECK(!hmpi_heap_active(), "child %d: heap active before attach", me);
    CHECK(hmpi_heap_attach(fx.base, HMPI_REGION_ALIGN, fx.shift, NCHILD, me, fx.fd) == 0,
          "child %d: attach", me);
    CHECK(hmpi_region.my_slice == me && hmpi_region.nslices == NCHILD, "child %d: geometry", me);
    for (int k = 0; k < NCHILD; k++) {
        uintptr_t s = hmpi_region.slices + ((uintptr_t)k << fx.shift);
        CHECK(hmpi_heap_owner((void *)s) == k && hmpi_heap_owner((void *)(s - 1)) == k - 1,
              "child %d: owner at the start of slice %d", me, k);
    }
    CHECK(hmpi_heap_owner((void *)(hmpi_region.slices + ((uintptr_t)NCHILD << fx.shift))) == -1,
          "child %d: owner past the last slice", me);

    size_t sizes[NBLK] = {24, 100000 + (size_t)me, ((size_t)16 << 20) + (size_t)me * 4097, 4096 * 3,
                          ((size_t)40 << 20) + (size_t)me * 12345};
    void *blk[NBLK];
    blk[0] = hmpi_heap_malloc(sizes[0]);
    blk[1] = INTERPOSED ? malloc(sizes[1]) : hmpi_heap_calloc(sizes[1], 1);
    blk[2] = INTERPOSED ? calloc(sizes[2], 1) : hmpi_heap_malloc(sizes[2]);
    blk[3] = hmpi_heap_aligned(4096, sizes[3]);
    blk[4] = INTERPOSED ? malloc(sizes[4]) : hmpi_heap_malloc(sizes[4]); /* a big block */
    for (int b = 0; b < NBLK; b++) {
        CHECK(blk[b] && hmpi_heap_owner(blk[b]) == me &&
                  hmpi_heap_is_shared_range(blk[b], sizes[b]),
              "child %d: block %d (%zu B) = %p not in its slice (owner %d)", me, b, sizes[b],
              blk[b], hmpi_heap_owner(blk[b]));
        pat_fill(blk[b], sizes[b], seed_of(me, b));
        atomic_store_explicit(&ctrl->len[me][b], sizes[b], memory_order_relaxed);
        atomic_store_explicit(&ctrl->ptr[me][b], (uintptr_t)blk[b], memory_order_release);
    }
    char who[16];
    snprintf(who, sizeof who, "child %d", me);
    for (int k = 1; k < NCHILD; k++)
        verify_row((me + k) % NCHILD, who);

    /* Keep the blocks until the other children and the parent have read them. */
    for (int b = 0; b < NBLK; b++)
        CHECK(wait_count(&ctrl->verified[me][b], NCHILD), "child %d: block %d read by %d only", me,
              b, atomic_load(&ctrl->verified[me][b]));
    for (int b = 0; b < NBLK; b++) {
        if (b == 1 && INTERPOSED)
            free(blk[b]);
        else if ((b == 2 || b == 4) && INTERPOSED)
            free(blk[b]);
        else
            hmpi_heap_free(blk[b]);
    }
    /* Freed memory is reused from the same slice. */
    void *again = hmpi_heap_malloc(sizes[2]);
    CHECK(hmpi_heap_owner(again) == me, "child %d: reallocation left the slice", me);
    hmpi_heap_free(again);
    fflush(NULL);
    _exit(0);
}

/* The slice: 1 GiB, or with "default" what HMPI_HEAP_SIZE reserves by default, so the
 * installed mimalloc is seen to take a whole default slice (mimalloc 3 takes at most
 * 16 GiB an arena). */
static size_t slice_arg(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "default") != 0)
        return (size_t)1 << 30;
    for (int i = 0; i < hmpi_knob_count; i++) {
        long long v = 0;
        if (strcmp(hmpi_knob_table[i].name, "HEAP_SIZE") == 0 &&
            hmpi_knob_parse(&hmpi_knob_table[i], hmpi_knob_table[i].def, &v) == 0)
            return (size_t)v;
    }
    CHECK(0, "no default for HMPI_HEAP_SIZE in the knob table");
    return 0;
}

int main(int argc, char **argv)
{
    double t0 = now_s();
    size_t slice = slice_arg(argc, argv);
    fixture_make(&fx, NCHILD, slice);
    fixture_unlink(&fx); /* every process has the mapping through fork */
    ctrl = (ctrl_t *)fx.base;
    _Static_assert(sizeof(ctrl_t) <= HMPI_REGION_ALIGN, "control block fits the control area");
    memset(ctrl, 0, sizeof *ctrl);

    /* CHECK exits with 1 and so tells the others to stop waiting; a child that
     * succeeds leaves with _exit(0). */
    atexit(mark_failed);
    pid_t pids[NCHILD];
    fflush(NULL);
    for (int i = 0; i < NCHILD; i++) {
        pids[i] = fork();
        CHECK(pids[i] >= 0, "fork: %s", strerror(errno));
        if (pids[i] == 0)
            child(i);
    }
    for (int c = 0; c < NCHILD; c++) {
        if (!wait_at_least(&ctrl->ptr[c][NBLK - 1], 1))
            break; /* reported below from the children's status */
        verify_row(c, "parent");
    }
    int ok = 1;
    for (int i = 0; i < NCHILD; i++) {
        int status = 0;
        CHECK(waitpid(pids[i], &status, 0) == pids[i], "waitpid");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "child %d failed: status %#x\n", i, status);
            ok = 0;
            mark_failed();
        }
    }
    CHECK(ok, "a child failed");
    CHECK(!hmpi_heap_active(), "the parent never attached");
    printf("heap_fork: ok (%s interposed malloc, mimalloc %d, slices of %zu GiB) in %.1f s\n",
           INTERPOSED ? "with" : "without", MI_MALLOC_VERSION, ((size_t)1 << fx.shift) >> 30,
           now_s() - t0);
    return 0;
}
