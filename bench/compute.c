/* compute.c: the program's own compute on memory it allocated after MPI_Init, which
 * under HMPI lives in the shared heap (a tmpfs file) and without it in private memory.
 * Per size (the bytes of the test's arrays, powers of two from --min to --max) rank 0
 * prints CSV "test,size,value,unit":
 *   init    ms to malloc the arrays and write them once (first touch: page faults, or
 *           the huge pages HMPI makes for large blocks)
 *   random  ns per 8-byte read at random places of one array (TLB-bound: 4 KiB pages
 *           miss where 2 MiB pages hit)
 *   triad   GB/s of the STREAM triad a = b + s*c over three arrays of a third each
 *           (24 bytes per element, as STREAM counts)
 *   huge    % of the arrays' whole 2 MiB ranges mapped by huge pages (AnonHugePages,
 *           ShmemPmdMapped, FilePmdMapped, *_Hugetlb of the arrays' own mapping)
 * and "# huge:" lines with the process's totals from /proc/self/smaps_rollup. With
 * several ranks each computes alone: the slowest rank's time, the lowest huge %. Values
 * are checked after timing. Built against the MPI below only; bench/run starts it under
 * hmpirun with and without HMPI_DISABLE=1. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include "bench_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef MADV_DONTFORK
#define MADV_DONTFORK 10
#define MADV_DOFORK 11
#endif

enum { MAX_REPS = 101, MAX_SIZES = 40 };
enum { T_INIT, T_RANDOM, T_TRIAD, T_HUGE, NTESTS };
static const char *const test_name[NTESTS] = {"init", "random", "triad", "huge"};
#define HUGE_2M ((size_t)2 << 20)

typedef struct {
    unsigned tests;
    size_t min, max;
    long accesses;
    int reps, quick, help;
} opts_t;

typedef struct {
    const opts_t *o;
    int rank, nranks;
} run_t;

/* ---- what the kernel gave: huge pages -------------------------------------------- */

/* Bytes in huge pages of the smaps entry (one mapping) that starts at lo; its length in
 * *len_p. -1 when there is no such entry. */
static long long smaps_huge_at(uintptr_t lo, size_t *len_p)
{
    static const char *const fields[] = {"AnonHugePages:", "ShmemPmdMapped:", "FilePmdMapped:",
                                         "Shared_Hugetlb:", "Private_Hugetlb:"};
    FILE *f = fopen("/proc/self/smaps", "re");
    if (f == NULL)
        return -1;
    char line[512];
    int in = 0;
    long long kb = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            if (in)
                break;
            in = a == lo;
            if (in) {
                kb = 0;
                *len_p = b - a;
            }
            continue;
        }
        for (size_t i = 0; in && i < sizeof fields / sizeof fields[0]; i++)
            if (strncmp(line, fields[i], strlen(fields[i])) == 0)
                kb += atoll(line + strlen(fields[i]));
    }
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* % of the whole 2 MiB ranges of [p, p+n) mapped by huge pages. The ranges are made a
 * mapping of their own for the look (MADV_DONTFORK splits it off on 2 MiB boundaries,
 * so no huge page is split; MADV_DOFORK merges it back): /proc/self/smaps counts per
 * mapping, and the shared heap is one. -1 when it cannot be told. */
static double huge_percent(const void *p, size_t n)
{
    uintptr_t lo = ((uintptr_t)p + HUGE_2M - 1) & ~(HUGE_2M - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(HUGE_2M - 1);
    if (hi <= lo || madvise((void *)lo, hi - lo, MADV_DONTFORK) != 0)
        return -1;
    size_t len = 0;
    long long bytes = smaps_huge_at(lo, &len);
    madvise((void *)lo, hi - lo, MADV_DOFORK);
    if (bytes < 0 || len == 0)
        return -1;
    return 100.0 * (double)bytes / (double)len;
}

/* "AnonHugePages 2048 kB, ShmemPmdMapped 0 kB, ..." of /proc/self/smaps_rollup. */
static void rollup_huge(char *out, size_t len)
{
    static const char *const fields[] = {"AnonHugePages:", "ShmemPmdMapped:", "FilePmdMapped:",
                                         "Shared_Hugetlb:", "Private_Hugetlb:"};
    size_t k = 0;
    out[0] = '\0';
    FILE *f = fopen("/proc/self/smaps_rollup", "re");
    if (f == NULL) {
        snprintf(out, len, "no /proc/self/smaps_rollup");
        return;
    }
    char line[256];
    while (fgets(line, sizeof line, f)) {
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
            if (strncmp(line, fields[i], strlen(fields[i])) != 0 || k + 1 >= len)
                continue;
            k += (size_t)snprintf(out + k, len - k, "%s%.*s %lld kB", k ? ", " : "",
                                  (int)strlen(fields[i]) - 1, fields[i],
                                  atoll(line + strlen(fields[i])));
        }
    }
    fclose(f);
}

/* The word in brackets of a sysfs THP setting, or "?". */
static void thp_setting(const char *path, char *out, size_t len)
{
    char buf[256] = "";
    snprintf(out, len, "?");
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return;
    if (fgets(buf, sizeof buf, f)) {
        char *a = strchr(buf, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b)
            snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
    }
    fclose(f);
}

/* The huge= option of the tmpfs holding dir ("never" when none), or its file system. */
static void shm_dir_huge(const char *dir, char *out, size_t len)
{
    struct statfs sf;
    struct stat st;
    snprintf(out, len, "?");
    if (statfs(dir, &sf) != 0 || stat(dir, &st) != 0)
        return;
    if ((unsigned long)sf.f_type == 0x958458f6UL) {
        snprintf(out, len, "hugetlbfs");
        return;
    }
    if ((unsigned long)sf.f_type != 0x01021994UL) {
        snprintf(out, len, "not tmpfs");
        return;
    }
    snprintf(out, len, "tmpfs huge=never");
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        unsigned maj, min;
        if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 || makedev(maj, min) != st.st_dev)
            continue;
        const char *sep = strstr(line, " - "), *h = sep ? strstr(sep, "huge=") : NULL;
        if (h)
            snprintf(out, len, "tmpfs %.*s", (int)strcspn(h, ", \n"), h);
        break;
    }
    if (f)
        fclose(f);
}

/* ---- the tests ---------------------------------------------------------------------- */

static void *alloc_or_die(const run_t *r, size_t n)
{
    void *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "compute: rank %d: cannot allocate %zu bytes\n", r->rank, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static double slowest(double secs)
{
    double s = 0;
    MPI_Reduce(&secs, &s, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return s;
}

static double lowest(double v)
{
    double s = 0;
    MPI_Reduce(&v, &s, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    return s;
}

static uint64_t word_at(size_t i) { return bench_mix((uint64_t)i); }

/* Random reads of one array of `size` bytes. Returns the median ns per read; *init_p the
 * seconds to allocate and fill it, *huge_p its huge %. */
static double test_random(const run_t *r, size_t size, double *init_p, double *huge_p, char *roll,
                          size_t rolllen)
{
    size_t n = size / sizeof(uint64_t);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    uint64_t *a = alloc_or_die(r, n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        a[i] = word_at(i);
    *init_p = MPI_Wtime() - t0;
    *huge_p = huge_percent(a, n * sizeof *a);
    rollup_huge(roll, rolllen);
    double vals[MAX_REPS];
    uint64_t x = 88172645463325252ull ^ (uint64_t)r->rank, sum = 0;
    for (int k = 0; k < r->o->reps; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s0 = MPI_Wtime();
        for (long i = 0; i < r->o->accesses; i++) {
            x ^= x << 13; /* xorshift64 */
            x ^= x >> 7;
            x ^= x << 17;
            sum += a[(size_t)(((unsigned __int128)x * n) >> 64)];
        }
        vals[k] = (MPI_Wtime() - s0) / (double)r->o->accesses;
    }
    /* The reads used the values (sum is printed on a mismatch); the array is intact. */
    for (size_t i = 0; i < n; i++) {
        if (a[i] != word_at(i)) {
            fprintf(stderr, "compute: rank %d: random, %zu B: word %zu changed (sum %llx)\n",
                    r->rank, size, i, (unsigned long long)sum);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    free(a);
    return bench_median(vals, r->o->reps);
}

/* STREAM triad over three arrays of size/3 bytes. Returns the median GB/s. */
static double test_triad(const run_t *r, size_t size, double *init_p, double *huge_p, char *roll,
                         size_t rolllen)
{
    size_t n = size / 3 / sizeof(double);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    double *a = alloc_or_die(r, n * sizeof *a), *b = alloc_or_die(r, n * sizeof *b),
           *c = alloc_or_die(r, n * sizeof *c);
    for (size_t i = 0; i < n; i++) {
        a[i] = 0;
        b[i] = (double)i;
        c[i] = 2.0 * (double)i;
    }
    *init_p = MPI_Wtime() - t0;
    double h[3] = {huge_percent(a, n * 8), huge_percent(b, n * 8), huge_percent(c, n * 8)};
    *huge_p = h[0] < 0 || h[1] < 0 || h[2] < 0 ? -1 : (h[0] + h[1] + h[2]) / 3;
    rollup_huge(roll, rolllen);
    /* Each repetition sweeps at least 256 MiB of arrays, so small sizes time long enough. */
    long sweeps = size >= 256 * MiB ? 1 : (long)(256 * MiB / size);
    const double s = 3.0;
    double vals[MAX_REPS];
    for (int k = 0; k < r->o->reps; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s0 = MPI_Wtime();
        for (long w = 0; w < sweeps; w++)
            for (size_t i = 0; i < n; i++)
                a[i] = b[i] + s * c[i];
        double secs = MPI_Wtime() - s0;
        vals[k] = 24.0 * (double)n * (double)sweeps / secs / 1e9;
    }
    for (size_t i = 0; i < n; i++) {
        if (a[i] != 7.0 * (double)i) {
            fprintf(stderr, "compute: rank %d: triad, %zu B: a[%zu] = %g, expected %g\n", r->rank,
                    size, i, a[i], 7.0 * (double)i);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    free(c);
    free(b);
    free(a);
    return bench_median(vals, r->o->reps);
}

/* ---- command line ------------------------------------------------------------------- */

static const char usage[] =
    "usage: compute [options]      (any rank count: hmpirun -n 1 ./compute)\n"
    "The program's own compute on arrays malloc'ed after MPI_Init; rank 0 prints CSV\n"
    "test,size,value,unit; size is the bytes of the test's arrays.\n"
    "  -t, --tests=LIST  random,triad (default both; each also gives init and huge)\n"
    "        random      8-byte reads at random places of one array (ns per read)\n"
    "        triad       STREAM triad a = b + 3c, three arrays of size/3 (GB/s)\n"
    "        init        ms to malloc and first write the arrays\n"
    "        huge        % of the arrays' 2 MiB ranges in huge pages\n"
    "      --min=SIZE    smallest (default 64M); K, M and G suffixes\n"
    "      --max=SIZE    largest (default 2G); sizes are powers of two\n"
    "  -a, --accesses=N  random reads per repetition (default 20000000)\n"
    "  -r, --reps=N      timed repetitions, the median is printed (default 3)\n"
    "  -q, --quick       smoke test: 16 and 32 MiB, 100000 reads, 1 repetition\n"
    "  -h, --help        this text\n";

static int parse(int argc, char **argv, opts_t *o, char *err, size_t errlen)
{
    enum { OPT_MIN = 256, OPT_MAX };
    static const struct option longopts[] = {
        {"tests", required_argument, NULL, 't'},   {"min", required_argument, NULL, OPT_MIN},
        {"max", required_argument, NULL, OPT_MAX}, {"accesses", required_argument, NULL, 'a'},
        {"reps", required_argument, NULL, 'r'},    {"quick", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    static const char *const choosable[] = {"random", "triad"};
    int opt, bad = 0, accesses = 0;
    unsigned chosen = 3;
    *o = (opts_t){0};
    opterr = 0;
    while (!bad && (opt = getopt_long(argc, argv, "t:a:r:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 't': bad = bench_parse_list(optarg, choosable, 2, &chosen); break;
        case OPT_MIN: bad = bench_parse_size(optarg, "KMG", (size_t)64 << 30, &o->min); break;
        case OPT_MAX: bad = bench_parse_size(optarg, "KMG", (size_t)64 << 30, &o->max); break;
        case 'a': bad = bench_parse_int(optarg, 1, 1 << 30, &accesses); break;
        case 'r': bad = bench_parse_int(optarg, 1, MAX_REPS, &o->reps); break;
        case 'q': o->quick = 1; break;
        case 'h': o->help = 1; break;
        default: return bench_unknown_option(argv, err, errlen);
        }
        if (bad)
            bench_bad_value(longopts, opt, optarg, "", err, errlen);
    }
    if (bench_opts_done(argc, argv, bad, err, errlen))
        return -1;
    o->tests = 1u << T_INIT | 1u << T_HUGE | (chosen & 1 ? 1u << T_RANDOM : 0) |
               (chosen & 2 ? 1u << T_TRIAD : 0);
    o->min = o->min ? o->min : o->quick ? 16 * MiB : 64 * MiB;
    o->max = o->max ? o->max : o->quick ? 32 * MiB : (size_t)2 << 30;
    o->accesses = accesses ? accesses : o->quick ? 100000 : 20000000;
    o->reps = o->reps ? o->reps : o->quick ? 1 : 3;
    if (o->min > o->max) {
        snprintf(err, errlen, "--min (%zu) is above --max (%zu)", o->min, o->max);
        return -1;
    }
    if (o->min < 64 * KiB) {
        snprintf(err, errlen, "--min must be at least 64K");
        return -1;
    }
    return 0;
}

static void print_point(const char *test, size_t size, double v, const char *unit)
{
    printf("%s,%zu,%.6g,%s\n", test, size, v, unit);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    opts_t o;
    char err[160] = "";
    int bad = parse(argc, argv, &o, err, sizeof err);
    run_t r = {.o = &o};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.nranks);
    if (bad || o.help) {
        bench_usage_or_error(r.rank, "compute", bad ? err : NULL, usage);
        MPI_Finalize();
        return bad ? 2 : 0;
    }
    size_t sizes[MAX_SIZES];
    int n = 0;
    sizes[n++] = o.min;
    for (size_t p = 1; p < o.max && n < MAX_SIZES - 1; p *= 2)
        if (p > o.min)
            sizes[n++] = p;
    if (o.max > o.min)
        sizes[n++] = o.max;

    if (r.rank == 0) {
        char version[256], hmpi[96], en[32], sh[32], dir[64];
        const char *shm_dir = getenv("HMPI_SHM_DIR") ? getenv("HMPI_SHM_DIR") : "/dev/shm";
        void *probe = malloc(1 << 20); /* where a large block lands */
        bench_mpi_version(version, sizeof version);
        bench_hmpi_state(probe, NULL, hmpi, sizeof hmpi);
        free(probe);
        thp_setting("/sys/kernel/mm/transparent_hugepage/enabled", en, sizeof en);
        thp_setting("/sys/kernel/mm/transparent_hugepage/shmem_enabled", sh, sizeof sh);
        shm_dir_huge(shm_dir, dir, sizeof dir);
        printf("# compute: tests=%s%s sizes=%zu..%zu (%d) accesses=%ld reps=%d ranks=%d\n",
               o.tests & 1u << T_RANDOM ? "random," : "", o.tests & 1u << T_TRIAD ? "triad" : "",
               sizes[0], sizes[n - 1], n, o.accesses, o.reps, r.nranks);
        printf("# mpi: %s\n# hmpi: %s; THP enabled=%s, shmem_enabled=%s, %s %s, "
               "HMPI_HUGEPAGES=%s\n",
               version, hmpi, en, sh, shm_dir, dir,
               getenv("HMPI_HUGEPAGES") ? getenv("HMPI_HUGEPAGES") : "(auto)");
        printf("test,size,value,unit\n");
        fflush(stdout);
    }
    for (int t = T_RANDOM; t <= T_TRIAD; t++) {
        if (!(o.tests & 1u << t))
            continue;
        for (int s = 0; s < n; s++) {
            double init = 0, huge = 0;
            char roll[256];
            double v = t == T_RANDOM ? test_random(&r, sizes[s], &init, &huge, roll, sizeof roll)
                                     : test_triad(&r, sizes[s], &init, &huge, roll, sizeof roll);
            v = t == T_RANDOM ? slowest(v) : lowest(v); /* ns per read up, GB/s down */
            init = slowest(init);
            huge = lowest(huge);
            if (r.rank == 0) {
                char tname[32];
                snprintf(tname, sizeof tname, "%s_%s", test_name[T_INIT], test_name[t]);
                print_point(test_name[t], sizes[s], t == T_RANDOM ? v * 1e9 : v,
                            t == T_RANDOM ? "ns" : "GB/s");
                print_point(tname, sizes[s], init * 1e3, "ms");
                snprintf(tname, sizeof tname, "%s_%s", test_name[T_HUGE], test_name[t]);
                print_point(tname, sizes[s], huge < 0 ? 0 : huge, "%");
                printf("# huge: %s %zu B: rank 0 with the arrays live (smaps_rollup): %s%s\n",
                       test_name[t], sizes[s], roll,
                       huge < 0 ? "; huge % not measurable (no whole 2 MiB range), 0 printed" : "");
            }
        }
    }
    MPI_Finalize();
    return 0;
}
