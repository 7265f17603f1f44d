/* rma.c: one-sided communication benchmark in plain MPI. Built against the MPI below only;
 * bench/run starts it under hmpirun with and without HMPI_DISABLE=1. Rank 0 prints CSV
 * "test,size,value,unit" (lines starting with '#' are comments); each value is the median
 * of --reps repetitions. Test names start with their metric (lat, bw, skew, overlap,
 * sync), which the runner uses to know which way is better.
 *   lat_{put,get}_{allocate,create}_{lock,fence}   latency (us): one operation then
 *        MPI_Win_flush (lock: inside one MPI_Win_lock epoch), or then MPI_Win_fence
 *   bw_{put,get}_{allocate,create}_{lock,fence}    bandwidth (GB/s): 64 operations per
 *        flush or fence
 *        (allocate: MPI_Win_allocate; create: MPI_Win_create over malloc'ed memory)
 *   skew_put_{pscw,lock}   16 puts of 256 KiB while the target multiplies two NxN
 *        matrices (size = N): the origin's time (us) from start (lock) to complete
 *        (unlock). A truly one-sided design keeps it flat.
 *   overlap_{origin,target}   (Tcomm + Tcomp - Ttotal) / Tcomm with Tcomp = 1.2 Tcomm,
 *        computation at the origin (lock, put, compute, unlock) or at the target (post,
 *        compute, wait while the origin does start, put, complete); 1 = fully hidden
 *   sync_{pscw,fence,lock}   time (us) of one epoch with every other rank as an origin
 *        of one 8-byte put to rank 0 (size = number of origins)
 * The pair tests use ranks 0 and 1; other ranks sleep meanwhile (they do not compete
 * for cores). */
#define _GNU_SOURCE
#include "bench_util.h"

#include <limits.h>
#include <time.h>

enum { WINDOW = 64, MAX_REPS = 51, SKEW_PUTS = 16 };
static const size_t SKEW_SIZE = 256 * KiB;

static struct {
    int quick, reps;
    size_t min, max; /* lat_* and bw_* sizes: min, min*8, ..., max */
    char only[64];   /* run tests whose name starts with this */
} opt = {0, 5, 8, 1 * MiB, ""};

static int wrank, wsize;
static MPI_Comm pair = MPI_COMM_NULL; /* ranks 0 and 1 */

/* ---- helpers ----------------------------------------------------------------------- */

static void emit(const char *test, size_t size, double value, const char *unit)
{
    if (wrank == 0) {
        printf("%s,%zu,%.6g,%s\n", test, size, value, unit);
        fflush(stdout);
    }
}

static int wanted(const char *test) { return strncmp(test, opt.only, strlen(opt.only)) == 0; }

/* Ranks outside the pair wait here without using a core; the pair joins when done. */
static void idle_barrier(void)
{
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    int done = 0;
    struct timespec ms = {0, 1000000};
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    while (!done) {
        if (wrank > 1)
            nanosleep(&ms, NULL);
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    }
}

static volatile double sink;

/* Busy computation for about secs seconds. */
static void compute_for(double secs)
{
    double t0 = MPI_Wtime(), x = 1.0;
    while (MPI_Wtime() - t0 < secs)
        for (int i = 0; i < 200; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

/* A naive n x n matrix multiplication (the skew test's target work). */
static void matmul(int n)
{
    if (n == 0)
        return;
    double *a = malloc(sizeof(double) * (size_t)n * (size_t)n),
           *b = malloc(sizeof(double) * (size_t)n * (size_t)n);
    double *c = calloc((size_t)n * (size_t)n, sizeof(double));
    for (int i = 0; i < n * n; i++)
        a[i] = i % 7, b[i] = i % 5;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                c[i * n + j] += a[i * n + k] * b[k * n + j];
    sink = c[n * n - 1];
    free(a);
    free(b);
    free(c);
}

/* ---- pair windows ------------------------------------------------------------------ */

typedef struct {
    MPI_Win win;
    char *base, *heap;
} pwin_t;

static void pwin_make(pwin_t *p, int create, size_t bytes)
{
    p->heap = NULL;
    if (create) {
        p->base = p->heap = malloc(bytes);
        memset(p->base, 1, bytes);
        MPI_Win_create(p->base, (MPI_Aint)bytes, 1, MPI_INFO_NULL, pair, &p->win);
    } else {
        MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, pair, &p->base, &p->win);
        memset(p->base, 1, bytes);
    }
    MPI_Barrier(pair);
}

static void pwin_free(pwin_t *p)
{
    MPI_Win_free(&p->win);
    free(p->heap);
}

static void rma_op(int get, char *buf, size_t size, MPI_Win win)
{
    if (get)
        MPI_Get(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
    else
        MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
}

/* Seconds for iters rounds of `per` operations of size bytes, at rank 0 of the pair. */
static double pair_loop(int get, int fence, char *buf, size_t size, int per, long iters,
                        MPI_Win win)
{
    int r;
    MPI_Comm_rank(pair, &r);
    double t0 = MPI_Wtime();
    if (fence) {
        for (long i = 0; i < iters; i++) {
            for (int k = 0; r == 0 && k < per; k++)
                rma_op(get, buf, size, win);
            MPI_Win_fence(0, win);
        }
    } else if (r == 0) {
        for (long i = 0; i < iters; i++) {
            for (int k = 0; k < per; k++)
                rma_op(get, buf, size, win);
            MPI_Win_flush(1, win);
        }
    }
    return MPI_Wtime() - t0;
}

static long iters_for(size_t bytes_per_iter, long lo, long hi)
{
    if (opt.quick)
        return 5;
    long n = (long)((256 * MiB) / (bytes_per_iter ? bytes_per_iter : 1));
    return n < lo ? lo : n > hi ? hi : n;
}

/* lat_* and bw_*: every combination, over sizes 8 B .. max. */
static void latency_bandwidth(void)
{
    static const char *const ops[] = {"put", "get"}, *const mems[] = {"allocate", "create"},
                             *const syncs[] = {"lock", "fence"};
    char *buf = malloc(opt.max);
    memset(buf, 2, opt.max);
    for (int bw = 0; bw < 2; bw++)
        for (int mem = 0; mem < 2; mem++)
            for (int sync = 0; sync < 2; sync++)
                for (int op = 0; op < 2; op++) {
                    char test[64];
                    snprintf(test, sizeof test, "%s_%s_%s_%s", bw ? "bw" : "lat", ops[op],
                             mems[mem], syncs[sync]);
                    if (!wanted(test))
                        continue;
                    if (pair == MPI_COMM_NULL) {
                        idle_barrier();
                        continue;
                    }
                    pwin_t p;
                    pwin_make(&p, mem, opt.max);
                    if (sync)
                        MPI_Win_fence(MPI_MODE_NOPRECEDE, p.win);
                    else if (wrank == 0)
                        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, p.win);
                    size_t sizes[24];
                    int nsizes = 0;
                    for (size_t size = opt.min; size < opt.max; size *= opt.quick ? 64 : 8)
                        sizes[nsizes++] = size;
                    sizes[nsizes++] = opt.max;
                    for (int i = 0; i < nsizes; i++) {
                        size_t size = sizes[i];
                        int per = bw ? WINDOW : 1;
                        long iters =
                            bw ? iters_for(size * WINDOW, 3, 200) : iters_for(size * 64, 20, 2000);
                        double v[MAX_REPS];
                        pair_loop(op, sync, buf, size, per, iters / 4 + 1, p.win); /* warm */
                        for (int k = 0; k < opt.reps; k++) {
                            double s = pair_loop(op, sync, buf, size, per, iters, p.win);
                            v[k] = bw ? (double)size * per * iters / s / 1e9 : s / iters * 1e6;
                        }
                        emit(test, size, bench_median(v, opt.reps), bw ? "GB/s" : "us");
                    }
                    if (sync)
                        MPI_Win_fence(MPI_MODE_NOSUCCEED, p.win);
                    else if (wrank == 0)
                        MPI_Win_unlock(1, p.win);
                    pwin_free(&p);
                    idle_barrier();
                }
    free(buf);
}

/* skew_put_*: the origin's time for 16 puts of 256 KiB while the target computes. */
static void skew(void)
{
    static const int ns[] = {0, 32, 64, 128, 256};
    for (int lock = 0; lock < 2; lock++) {
        const char *test = lock ? "skew_put_lock" : "skew_put_pscw";
        if (!wanted(test))
            continue;
        if (pair == MPI_COMM_NULL) {
            idle_barrier();
            continue;
        }
        int r;
        MPI_Comm_rank(pair, &r);
        pwin_t p;
        pwin_make(&p, 0, SKEW_PUTS * SKEW_SIZE);
        char *buf = malloc(SKEW_SIZE);
        memset(buf, 3, SKEW_SIZE);
        MPI_Group g, other;
        MPI_Win_get_group(p.win, &g);
        int peer = 1 - r;
        MPI_Group_incl(g, 1, &peer, &other);
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
            int n = opt.quick ? ns[i] / 8 : ns[i];
            double v[MAX_REPS];
            for (int k = 0; k < opt.reps; k++) {
                MPI_Barrier(pair);
                double t0 = MPI_Wtime();
                if (r == 0) {
                    if (lock)
                        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, p.win);
                    else
                        MPI_Win_start(other, 0, p.win);
                    for (int j = 0; j < SKEW_PUTS; j++)
                        MPI_Put(buf, (int)SKEW_SIZE, MPI_BYTE, 1, (MPI_Aint)(j * SKEW_SIZE),
                                (int)SKEW_SIZE, MPI_BYTE, p.win);
                    if (lock)
                        MPI_Win_unlock(1, p.win);
                    else
                        MPI_Win_complete(p.win);
                    v[k] = (MPI_Wtime() - t0) * 1e6;
                } else {
                    if (!lock)
                        MPI_Win_post(other, 0, p.win);
                    matmul(n);
                    if (!lock)
                        MPI_Win_wait(p.win);
                }
                MPI_Barrier(pair);
            }
            emit(test, (size_t)n, bench_median(v, opt.reps), "us");
        }
        MPI_Group_free(&other);
        MPI_Group_free(&g);
        free(buf);
        pwin_free(&p);
        idle_barrier();
    }
}

/* One origin-overlap measurement: lock, put, compute, unlock (seconds at rank 0). */
static double origin_epoch(pwin_t *p, char *buf, size_t size, double comp)
{
    int r;
    MPI_Comm_rank(pair, &r);
    MPI_Barrier(pair);
    double t0 = MPI_Wtime();
    if (r == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, p->win);
        MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, p->win);
        if (comp > 0)
            compute_for(comp);
        MPI_Win_unlock(1, p->win);
    }
    double t = MPI_Wtime() - t0;
    MPI_Barrier(pair);
    return t;
}

/* One target-overlap measurement: post, compute, wait at rank 1 while rank 0 does
 * start, put, complete (seconds at rank 1, sent to rank 0). */
static double target_epoch(pwin_t *p, MPI_Group other, char *buf, size_t size, double comp)
{
    int r;
    MPI_Comm_rank(pair, &r);
    MPI_Barrier(pair);
    double t0 = MPI_Wtime(), t = 0;
    if (r == 1) {
        MPI_Win_post(other, 0, p->win);
        if (comp > 0)
            compute_for(comp);
        MPI_Win_wait(p->win);
        t = MPI_Wtime() - t0;
    } else {
        MPI_Win_start(other, 0, p->win);
        MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, p->win);
        MPI_Win_complete(p->win);
    }
    MPI_Bcast(&t, 1, MPI_DOUBLE, 1, pair);
    return t;
}

static void overlap(void)
{
    for (int side = 0; side < 2; side++) {
        const char *test = side ? "overlap_target" : "overlap_origin";
        if (!wanted(test))
            continue;
        if (pair == MPI_COMM_NULL) {
            idle_barrier();
            continue;
        }
        int r;
        MPI_Comm_rank(pair, &r);
        size_t max = opt.max * 4;
        pwin_t p;
        pwin_make(&p, 0, max);
        char *buf = malloc(max);
        memset(buf, 4, max);
        MPI_Group g, other;
        MPI_Win_get_group(p.win, &g);
        int peer = 1 - r;
        MPI_Group_incl(g, 1, &peer, &other);
        for (size_t size = 64 * KiB; size <= max; size *= 4) {
            double comm[MAX_REPS], total[MAX_REPS], ov[MAX_REPS];
            for (int k = 0; k < opt.reps; k++)
                comm[k] =
                    side ? target_epoch(&p, other, buf, size, 0) : origin_epoch(&p, buf, size, 0);
            double tcomm = bench_median(comm, opt.reps), tcomp = 1.2 * tcomm;
            MPI_Bcast(&tcomp, 1, MPI_DOUBLE, 0, pair);
            for (int k = 0; k < opt.reps; k++) {
                total[k] = side ? target_epoch(&p, other, buf, size, tcomp)
                                : origin_epoch(&p, buf, size, tcomp);
                ov[k] = (tcomm + tcomp - total[k]) / tcomm;
            }
            double o = bench_median(ov, opt.reps);
            emit(test, size, o < 0 ? 0 : o > 1 ? 1 : o, "fraction");
        }
        MPI_Group_free(&other);
        MPI_Group_free(&g);
        free(buf);
        pwin_free(&p);
        idle_barrier();
    }
}

/* sync_*: one epoch with every other rank putting 8 bytes into rank 0. */
static void sync_time(void)
{
    if (wsize < 2)
        return;
    int64_t *base;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int64_t) * (size_t)wsize, sizeof(int64_t), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &win);
    MPI_Group g, origins, target;
    MPI_Win_get_group(win, &g);
    int zero = 0;
    MPI_Group_incl(g, 1, &zero, &target);
    MPI_Group_excl(g, 1, &zero, &origins);
    int64_t v = wrank;
    long iters = opt.quick ? 10 : 2000;
    for (int mode = 0; mode < 3; mode++) {
        static const char *const names[] = {"sync_pscw", "sync_fence", "sync_lock"};
        if (!wanted(names[mode]))
            continue;
        double t[MAX_REPS];
        if (mode == 1)
            MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        for (int k = 0; k < opt.reps; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (long i = 0; i < iters; i++) {
                if (mode == 0 && wrank == 0) {
                    MPI_Win_post(origins, 0, win);
                    MPI_Win_wait(win);
                } else if (mode == 0) {
                    MPI_Win_start(target, 0, win);
                    MPI_Put(&v, 1, MPI_INT64_T, 0, wrank, 1, MPI_INT64_T, win);
                    MPI_Win_complete(win);
                } else if (mode == 1) {
                    if (wrank)
                        MPI_Put(&v, 1, MPI_INT64_T, 0, wrank, 1, MPI_INT64_T, win);
                    MPI_Win_fence(0, win);
                } else if (wrank) {
                    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
                    MPI_Put(&v, 1, MPI_INT64_T, 0, wrank, 1, MPI_INT64_T, win);
                    MPI_Win_unlock(0, win);
                }
            }
            /* lock: the origins' mean time per epoch; the others: rank 0's */
            double mine = (MPI_Wtime() - t0) / iters * 1e6, sum = 0;
            double part = mode == 2 && wrank == 0 ? 0 : mine;
            MPI_Reduce(&part, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            t[k] = mode == 2 ? sum / (wsize - 1) : mine;
        }
        if (mode == 1)
            MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        emit(names[mode], (size_t)(wsize - 1), bench_median(t, opt.reps), "us");
    }
    MPI_Group_free(&origins);
    MPI_Group_free(&target);
    MPI_Group_free(&g);
    MPI_Win_free(&win);
}

/* ---- main --------------------------------------------------------------------------- */

static void header(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len;
    MPI_Get_library_version(version, &len);
    for (char *c = version; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "HMPI_Active");
    if (wrank == 0) {
        printf("# rma: reps=%d min=%zu max=%zu ranks=%d%s%s\n", opt.reps, opt.min, opt.max, wsize,
               opt.quick ? " quick" : "", opt.only[0] ? " only=" : "");
        if (opt.only[0])
            printf("# only tests starting with %s\n", opt.only);
        printf("# mpi: %.200s\n# hmpi: %s\n", version,
               !active    ? "not loaded"
               : active() ? "active"
                          : "pass-through");
        printf("test,size,value,unit\n");
        fflush(stdout);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: rma [--quick] [--reps N] [--min BYTES] [--max BYTES] "
                    "[--only PREFIX]\n");
}

int main(int argc, char **argv)
{
    static const struct option longs[] = {{"quick", no_argument, 0, 'q'},
                                          {"reps", required_argument, 0, 'r'},
                                          {"min", required_argument, 0, 'n'},
                                          {"max", required_argument, 0, 'm'},
                                          {"only", required_argument, 0, 'o'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c, bad = 0;
    while ((c = getopt_long(argc, argv, "qr:n:m:o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'q': opt.quick = 1; break;
        case 'r': opt.reps = atoi(optarg); break;
        case 'n': opt.min = strtoull(optarg, NULL, 0); break;
        case 'm': opt.max = strtoull(optarg, NULL, 0); break;
        case 'o': snprintf(opt.only, sizeof opt.only, "%s", optarg); break;
        default: bad = 1;
        }
    }
    if (opt.quick) {
        opt.reps = 1;
        opt.max = 64 * KiB;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (bad || opt.reps < 1 || opt.reps > MAX_REPS || opt.min < 1 || opt.max < opt.min ||
        opt.max > INT_MAX || wsize < 2) {
        if (wrank == 0) {
            usage();
            fprintf(stderr, "rma: needs 2 ranks or more, 1..%d reps, 1 <= min <= max < 2 GiB\n",
                    MAX_REPS);
        }
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_split(MPI_COMM_WORLD, wrank < 2 ? 0 : MPI_UNDEFINED, wrank, &pair);
    header();
    latency_bandwidth();
    skew();
    overlap();
    sync_time();
    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
    MPI_Finalize();
    return 0;
}
