/* cache.c: the cache effect of communication, after Friedley et al., "Hybrid MPI"
 * (the Hybrid MPI paper, section 5, Figure 15): rank 0 reads a data buffer of D bytes (one
 * word per cache line, sequential or random order), does a ping-pong of M bytes with
 * rank 1 on that buffer (common) or on a separate one, and reads the data buffer again
 * while counting L1 data-cache read misses with perf_event_open. Where the counters are
 * not available it says so ("# counters: unavailable (...)") and reports the time of
 * the second read instead. Built against the MPI below only; bench/run starts it under
 * hmpirun with and without HMPI_DISABLE=1. Rank 0 prints CSV "test,size,value,unit" with
 * test ORDER_MODE_dD and size M; value: misses x line size / D (the paper's miss
 * fraction), or ns per cache line of the second read (median over cycles). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT, syscall */
#endif
#include "bench_util.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { MAX_CYCLES = 10000, TAG_PING = 21, TAG_PONG = 22 };
enum { ORDER_SEQ, ORDER_RAND, NORDERS };
enum { MODE_SEPARATE, MODE_COMMON, NMODES };
static const char *const order_name[NORDERS] = {"seq", "rand"};
static const char *const mode_name[NMODES] = {"separate", "common"};

typedef struct {
    unsigned orders, modes;
    size_t dmin, dmax, mmin, mmax;
    int cycles, quick, help, no_counters;
} opts_t;

typedef struct {
    const opts_t *o;
    int rank;
    size_t line;                /* cache line size */
    unsigned char *data, *comm; /* data: dmax bytes; comm: mmax bytes (rank 1: its buffer) */
    uint32_t *index;            /* byte offsets of the lines of the data buffer, read order */
    int fd;                     /* the perf event, or -1 */
    char why[160];              /* why there are no counters */
    double timer_ns;            /* cost of an empty timed interval */
} cache_t;

static volatile uint64_t sink; /* keeps the read loops */

/* ---- counters and clocks ------------------------------------------------------------- */

static void counters_open(cache_t *c)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_HW_CACHE;
    a.size = sizeof a;
    a.config = PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
               (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    c->fd = -1;
    if (c->o->no_counters) {
        snprintf(c->why, sizeof c->why, "--no-counters");
        return;
    }
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0) {
        int e = errno;
        snprintf(c->why, sizeof c->why, "perf_event_open of L1D read misses: %s%s", strerror(e),
                 e == EACCES || e == EPERM ? "; see /proc/sys/kernel/perf_event_paranoid" : "");
        return;
    }
    c->fd = (int)fd;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ---- the benchmark -------------------------------------------------------------------- */

static uint64_t read_lines(const cache_t *c, size_t lines)
{
    uint64_t sum = 0, w;
    for (size_t i = 0; i < lines; i++) {
        memcpy(&w, c->data + c->index[i], sizeof w);
        sum += w;
    }
    return sum;
}

/* The read order: lines 0..n-1, or a fixed random permutation of them. */
static void make_index(cache_t *c, int order, size_t lines)
{
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (size_t i = 0; i < lines; i++)
        c->index[i] = (uint32_t)(i * c->line);
    for (size_t i = lines; order == ORDER_RAND && i > 1; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        size_t j = (size_t)(x % i);
        uint32_t t = c->index[i - 1];
        c->index[i - 1] = c->index[j];
        c->index[j] = t;
    }
}

static void check(const cache_t *c, const unsigned char *p, size_t n, unsigned char base,
                  const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != (unsigned char)(base + i * 7)) {
            fprintf(stderr,
                    "cache: rank %d, %s of %zu B: wrong byte at %zu: 0x%02x, "
                    "expected 0x%02x\n",
                    c->rank, what, n, i, p[i], (unsigned char)(base + i * 7));
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
}

static void pattern(unsigned char *p, size_t n, unsigned char base)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(base + i * 7);
}

/* One point: --cycles of read, ping-pong, measured read; the value of rank 0. The
 * first cycle's messages are checked on both sides. */
static double point(cache_t *c, int order, int mode, size_t d, size_t m)
{
    size_t lines = d / c->line;
    double vals[MAX_CYCLES];
    int n = c->o->cycles;
    unsigned char *buf = c->rank == 1 ? c->comm : mode == MODE_COMMON ? c->data : c->comm;
    if (c->rank == 0)
        make_index(c, order, lines);
    for (int k = -1; k < n; k++) { /* cycle -1: checked, untimed */
        if (c->rank == 1) {
            if (k < 0)
                memset(buf, 0, m);
            MPI_Recv(buf, (int)m, MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (k < 0) {
                check(c, buf, m, 0x11, "ping");
                pattern(buf, m, 0x5A);
            }
            MPI_Send(buf, (int)m, MPI_BYTE, 0, TAG_PONG, MPI_COMM_WORLD);
            continue;
        }
        if (k < 0)
            pattern(buf, m, 0x11);
        sink += read_lines(c, lines);
        MPI_Send(buf, (int)m, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD);
        MPI_Recv(buf, (int)m, MPI_BYTE, 1, TAG_PONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (k < 0) {
            check(c, buf, m, 0x5A, "pong");
            continue;
        }
        if (c->fd >= 0) {
            uint64_t misses = 0;
            ioctl(c->fd, PERF_EVENT_IOC_RESET, 0);
            ioctl(c->fd, PERF_EVENT_IOC_ENABLE, 0);
            sink += read_lines(c, lines);
            ioctl(c->fd, PERF_EVENT_IOC_DISABLE, 0);
            if (read(c->fd, &misses, sizeof misses) != (ssize_t)sizeof misses)
                misses = 0;
            vals[k] = (double)misses * (double)c->line / (double)d;
        } else {
            double t0 = now_ns();
            sink += read_lines(c, lines);
            double ns = now_ns() - t0 - c->timer_ns;
            vals[k] = (ns > 0 ? ns : 0) / (double)lines;
        }
    }
    if (c->rank != 0)
        return 0;
    if (c->fd >= 0) { /* the paper's average */
        double sum = 0;
        for (int k = 0; k < n; k++)
            sum += vals[k];
        return sum / n;
    }
    return bench_median(vals, n);
}

/* ---- output --------------------------------------------------------------------------- */

static void size_name(char *out, size_t len, size_t n)
{
    if (n >= KiB && n % KiB == 0)
        snprintf(out, len, "%zuK", n / KiB);
    else
        snprintf(out, len, "%zu", n);
}

/* ---- command line ---------------------------------------------------------------------- */

static const char usage[] =
    "usage: cache [options]      (2 ranks: hmpirun -n 2 ./cache)\n"
    "Cache effect of a ping-pong on the application's data (Hybrid MPI, Figure 15).\n"
    "Rank 0 prints CSV test,size,value,unit: test ORDER_MODE_dD (D = data buffer size,\n"
    "e.g. seq_common_d4K), size = message size M, value = L1D read misses x line size /\n"
    "D in the second read (mean over cycles), or, without counters, ns per cache line of\n"
    "the second read (median over cycles, minus the cost of reading the clock).\n"
    "  -o, --orders=LIST    seq,rand: read order of the lines (default both)\n"
    "  -m, --modes=LIST     separate,common: ping-pong on its own buffer or on the data\n"
    "                       buffer (then only M <= D; default both)\n"
    "      --dmin=SIZE      smallest data buffer (default 128); K suffix\n"
    "      --dmax=SIZE      largest data buffer (default: the L1 data cache, else 32K)\n"
    "      --mmin=SIZE      smallest message (default 128)\n"
    "      --mmax=SIZE      largest message (default: as --dmax); sizes: powers of two\n"
    "  -c, --cycles=N       read, ping-pong, measured read cycles per point (default 100)\n"
    "      --no-counters    report time even where the counters work\n"
    "  -q, --quick          smoke test: D 1K..4K, M 256..2K, 3 cycles\n"
    "  -h, --help           this text\n";

/* Powers of two from 64 B to 64 MiB. */
static int parse_size(const char *s, size_t *out_p)
{
    size_t v;
    if (bench_parse_size(s, "KM", 64 * MiB, &v) || v < 64 || (v & (v - 1)))
        return -1;
    *out_p = v;
    return 0;
}

static int parse(int argc, char **argv, opts_t *o, char *err, size_t errlen)
{
    enum { OPT_DMIN = 256, OPT_DMAX, OPT_MMIN, OPT_MMAX, OPT_NOCOUNT };
    static const struct option longopts[] = {
        {"orders", required_argument, NULL, 'o'},
        {"modes", required_argument, NULL, 'm'},
        {"dmin", required_argument, NULL, OPT_DMIN},
        {"dmax", required_argument, NULL, OPT_DMAX},
        {"mmin", required_argument, NULL, OPT_MMIN},
        {"mmax", required_argument, NULL, OPT_MMAX},
        {"cycles", required_argument, NULL, 'c'},
        {"no-counters", no_argument, NULL, OPT_NOCOUNT},
        {"quick", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt, bad = 0;
    char *end;
    *o = (opts_t){.orders = 3, .modes = 3};
    opterr = 0;
    while (!bad && (opt = getopt_long(argc, argv, "o:m:c:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o': bad = bench_parse_list(optarg, order_name, NORDERS, &o->orders); break;
        case 'm': bad = bench_parse_list(optarg, mode_name, NMODES, &o->modes); break;
        case OPT_DMIN: bad = parse_size(optarg, &o->dmin); break;
        case OPT_DMAX: bad = parse_size(optarg, &o->dmax); break;
        case OPT_MMIN: bad = parse_size(optarg, &o->mmin); break;
        case OPT_MMAX: bad = parse_size(optarg, &o->mmax); break;
        case OPT_NOCOUNT: o->no_counters = 1; break;
        case 'c':
            o->cycles = (int)strtol(optarg, &end, 10);
            bad = *end || o->cycles < 1 || o->cycles > MAX_CYCLES;
            break;
        case 'q': o->quick = 1; break;
        case 'h': o->help = 1; break;
        default: return bench_unknown_option(argv, err, errlen);
        }
        if (bad)
            bench_bad_value(longopts, opt, optarg, " (sizes: powers of two, 64 B to 64M)", err,
                            errlen);
    }
    if (bench_opts_done(argc, argv, bad, err, errlen))
        return -1;
    long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    size_t dflt = l1 >= 1024 && !(l1 & (l1 - 1)) ? (size_t)l1 : 32 * KiB;
    if (o->quick) {
        o->dmin = o->dmin ? o->dmin : KiB;
        o->dmax = o->dmax ? o->dmax : 4 * KiB;
        o->mmin = o->mmin ? o->mmin : 256;
        o->mmax = o->mmax ? o->mmax : 2 * KiB;
    }
    o->dmin = o->dmin ? o->dmin : 128;
    o->dmax = o->dmax ? o->dmax : dflt;
    o->mmin = o->mmin ? o->mmin : 128;
    o->mmax = o->mmax ? o->mmax : o->dmax;
    o->cycles = o->cycles ? o->cycles : o->quick ? 3 : 100;
    if (o->dmin > o->dmax || o->mmin > o->mmax) {
        snprintf(err, errlen, "--dmin/--mmin above --dmax/--mmax");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o;
    char err[200] = "", version[256], hmpi[96];
    int bad = parse(argc, argv, &o, err, sizeof err), nranks = 0;
    cache_t c = {.o = &o, .fd = -1};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (!bad && nranks < 2) {
        snprintf(err, sizeof err, "needs 2 ranks");
        bad = -1;
    }
    if (bad || o.help) {
        bench_usage_or_error(c.rank, "cache", bad ? err : NULL, usage);
        MPI_Finalize();
        return bad ? 2 : 0;
    }
    long ls = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
    c.line = ls >= 16 && ls <= 1024 ? (size_t)ls : 64;
    c.data = malloc(o.dmax);
    c.comm = malloc(o.mmax);
    c.index = malloc(o.dmax / c.line * sizeof *c.index + 1);
    if (!c.data || !c.comm || !c.index) {
        fprintf(stderr, "cache: rank %d: out of memory\n", c.rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(c.data, 1, o.dmax);
    memset(c.comm, 2, o.mmax);
    if (c.rank == 0) {
        double t[101];
        counters_open(&c);
        for (int k = 0; k < 101; k++) {
            double t0 = now_ns();
            t[k] = now_ns() - t0;
        }
        c.timer_ns = bench_median(t, 101);
        bench_mpi_version(version, sizeof version);
        bench_hmpi_state(c.data, NULL, hmpi, sizeof hmpi);
        printf("# cache: orders=%s%s%s modes=%s%s%s D=%zu..%zu M=%zu..%zu cycles=%d "
               "line=%zu ranks=%d\n",
               o.orders & 1 ? "seq" : "", o.orders == 3 ? "," : "", o.orders & 2 ? "rand" : "",
               o.modes & 1 ? "separate" : "", o.modes == 3 ? "," : "", o.modes & 2 ? "common" : "",
               o.dmin, o.dmax, o.mmin, o.mmax, o.cycles, c.line, nranks);
        printf("# mpi: %s\n# hmpi: %s\n", version, hmpi);
        if (c.fd >= 0)
            printf("# counters: L1D read misses (perf_event_open, user space); value = "
                   "misses x %zu / D\n",
                   c.line);
        else
            printf("# counters: unavailable (%s); value = time of the second read in ns per "
                   "cache line, clock cost %.0f ns subtracted\n",
                   c.why, c.timer_ns);
        printf("test,size,value,unit\n");
        fflush(stdout);
    }
    for (int order = 0; order < NORDERS; order++) {
        for (int mode = 0; mode < NMODES; mode++) {
            if (!(o.orders & 1u << order) || !(o.modes & 1u << mode))
                continue;
            for (size_t d = o.dmin; d <= o.dmax; d *= 2) {
                char test[80], dn[24];
                size_name(dn, sizeof dn, d);
                snprintf(test, sizeof test, "%s_%s_d%s", order_name[order], mode_name[mode], dn);
                for (size_t m = o.mmin; m <= o.mmax; m *= 2) {
                    if (mode == MODE_COMMON && m > d)
                        break;
                    double v = c.rank <= 1 ? point(&c, order, mode, d, m) : 0;
                    if (c.rank == 0) {
                        printf("%s,%zu,%.6g,%s\n", test, m, v,
                               c.fd >= 0 ? "miss fraction" : "ns/line");
                        fflush(stdout);
                    }
                }
            }
        }
    }
    if (c.fd >= 0)
        close(c.fd);
    free(c.data);
    free(c.comm);
    free(c.index);
    MPI_Finalize();
    return 0;
}
