/* exchange.c: IMB-style Sendrecv and Exchange in plain MPI. The ranks form a periodic
 * chain: in `sendrecv` each rank sends to its right neighbour and receives from its
 * left one with MPI_Sendrecv; in `exchange` each sends to and receives from both
 * neighbours (Isend/Irecv/Waitall). Built against the MPI below only; bench/run starts
 * it under hmpirun with and without HMPI_DISABLE=1. Rank 0 prints CSV
 * "test,size,value,unit": the slowest rank's time per iteration (us) and, as IMB does,
 * the bytes each rank moves per iteration over that time (sendrecv 2 x size, exchange
 * 4 x size; GB/s = 1e9 B/s); medians over repetitions. Data is checked before and after
 * timing: a wrong byte aborts the job. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include "bench_util.h"

enum { MAX_REPS = 101, MAX_SIZES = 40, TAG_RIGHT = 11, TAG_LEFT = 12 };
enum { T_SENDRECV, T_EXCHANGE, NTESTS };
static const char *const test_name[NTESTS] = {"sendrecv", "exchange"};
static const int bytes_factor[NTESTS] = {2, 4}; /* IMB: bytes a rank moves per iteration */

typedef struct {
    unsigned tests;
    size_t min, max;
    int iters, reps, quick, help;
} opts_t;

/* One rank's buffers: out[0] goes right (and left in exchange from out[1]); in[0]
 * comes from the left, in[1] from the right. */
typedef struct {
    const opts_t *o;
    int rank, nranks, left, right, round;
    unsigned char *out[2], *in[2];
} ring_t;

/* ---- data patterns ------------------------------------------------------------------ */

/* The message of `size` bytes rank `from` sends in direction `dir` (0 right, 1 left). */
static uint64_t seed_of(size_t size, int from, int dir, int round)
{
    return bench_mix(((uint64_t)size << 24) ^ ((uint64_t)from << 4) ^ ((uint64_t)dir << 1) ^
                     (uint64_t)round);
}

static void verify(const ring_t *r, int t, const unsigned char *p, size_t n, int from, int dir)
{
    uint64_t seed = seed_of(n, from, dir, r->round);
    size_t first;
    if (bench_wrong_bytes(p, n, seed, &first) == 0)
        return;
    fprintf(stderr,
            "exchange: rank %d, %s, %zu B, %s check, message from rank %d: "
            "wrong byte at %zu: 0x%02x, expected 0x%02x\n",
            r->rank, test_name[t], n, r->round ? "second" : "first", from, first, p[first],
            bench_pattern_byte(seed, first));
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* ---- the tests ---------------------------------------------------------------------- */

static void step(const ring_t *r, int t, size_t size)
{
    int n = (int)size;
    if (t == T_SENDRECV) {
        MPI_Sendrecv(r->out[0], n, MPI_BYTE, r->right, TAG_RIGHT, r->in[0], n, MPI_BYTE, r->left,
                     TAG_RIGHT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Request req[4];
    MPI_Status st[4];
    MPI_Irecv(r->in[0], n, MPI_BYTE, r->left, TAG_RIGHT, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(r->in[1], n, MPI_BYTE, r->right, TAG_LEFT, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(r->out[0], n, MPI_BYTE, r->right, TAG_RIGHT, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(r->out[1], n, MPI_BYTE, r->left, TAG_LEFT, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, st);
}

/* One iteration on fresh patterns, outside the timing; receive buffers hold the
 * complement first, so a receive that completes without data is caught. */
static void checked_step(ring_t *r, int t, size_t size, int round)
{
    r->round = round;
    for (int d = 0; d < 2; d++) {
        int from = d == 0 ? r->left : r->right;
        bench_fill(r->out[d], size, seed_of(size, r->rank, d, round), 0);
        bench_fill(r->in[d], size, seed_of(size, from, d, round), ~0ull);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    step(r, t, size);
    verify(r, t, r->in[0], size, r->left, 0);
    if (t == T_EXCHANGE)
        verify(r, t, r->in[1], size, r->right, 1);
}

/* The median over --reps of the slowest rank's seconds per iteration (rank 0). */
static double measure(ring_t *r, int t, size_t size)
{
    double n = r->o->iters, bytes = (double)size * bytes_factor[t], vals[MAX_REPS];
    if (bytes > 64.0 * KiB)
        n = n * 64.0 * KiB / bytes;
    long iters = n < 4 ? 4 : (long)n, warm = iters / 10 > 0 ? iters / 10 : 1;
    checked_step(r, t, size, 0);
    for (long i = 0; i < warm; i++)
        step(r, t, size);
    for (int k = 0; k < r->o->reps; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++)
            step(r, t, size);
        double secs = MPI_Wtime() - t0, slowest = 0;
        MPI_Reduce(&secs, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        vals[k] = slowest / (double)iters;
    }
    checked_step(r, t, size, 1);
    return bench_median(vals, r->o->reps);
}

/* ---- command line ------------------------------------------------------------------- */

static const char usage[] =
    "usage: exchange [options]      (2 or more ranks: hmpirun -n 4 ./exchange)\n"
    "IMB-style Sendrecv and Exchange on a periodic chain; rank 0 prints CSV\n"
    "test,size,value,unit: TEST (slowest rank's us per iteration) and TEST_bw (GB/s,\n"
    "the bytes a rank sends and receives per iteration over that time, as in IMB).\n"
    "  -t, --tests=LIST  sendrecv,exchange (default both)\n"
    "        sendrecv    MPI_Sendrecv: send to the right, receive from the left\n"
    "        exchange    Isend to and Irecv from both neighbours, MPI_Waitall\n"
    "      --min=SIZE    smallest message (default 1); K and M suffixes\n"
    "      --max=SIZE    largest message (default 4M); sizes are powers of two\n"
    "  -i, --iters=N     iterations per repetition while a rank moves <= 64 KiB per\n"
    "                    iteration, fewer above, at least 4 (default 1000)\n"
    "  -r, --reps=N      timed repetitions, the median is printed (default 5)\n"
    "  -q, --quick       smoke test: 1 B and 4 KiB, 10 iterations, 1 repetition\n"
    "  -h, --help        this text\n";

static int parse_size(const char *s, size_t *out_p)
{
    return bench_parse_size(s, "KM", 256 * MiB, out_p);
}

static int parse(int argc, char **argv, opts_t *o, char *err, size_t errlen)
{
    enum { OPT_MIN = 256, OPT_MAX };
    static const struct option longopts[] = {
        {"tests", required_argument, NULL, 't'},   {"min", required_argument, NULL, OPT_MIN},
        {"max", required_argument, NULL, OPT_MAX}, {"iters", required_argument, NULL, 'i'},
        {"reps", required_argument, NULL, 'r'},    {"quick", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    int opt, bad = 0;
    *o = (opts_t){.tests = (1u << NTESTS) - 1};
    opterr = 0;
    while (!bad && (opt = getopt_long(argc, argv, "t:i:r:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 't': bad = bench_parse_list(optarg, test_name, NTESTS, &o->tests); break;
        case OPT_MIN: bad = parse_size(optarg, &o->min); break;
        case OPT_MAX: bad = parse_size(optarg, &o->max); break;
        case 'i': bad = bench_parse_int(optarg, 1, 1 << 30, &o->iters); break;
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
    o->min = o->min ? o->min : 1;
    o->max = o->max ? o->max : o->quick ? 4 * KiB : 4 * MiB;
    o->iters = o->iters ? o->iters : o->quick ? 10 : 1000;
    o->reps = o->reps ? o->reps : o->quick ? 1 : 5;
    if (o->min > o->max) {
        snprintf(err, errlen, "--min (%zu) is above --max (%zu)", o->min, o->max);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o;
    char err[160] = "", version[256], hmpi[96];
    int bad = parse(argc, argv, &o, err, sizeof err);
    ring_t r = {.o = &o};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.nranks);
    if (!bad && r.nranks < 2) {
        snprintf(err, sizeof err, "needs at least 2 ranks");
        bad = -1;
    }
    if (bad || o.help) {
        bench_usage_or_error(r.rank, "exchange", bad ? err : NULL, usage);
        MPI_Finalize();
        return bad ? 2 : 0;
    }
    r.left = (r.rank + r.nranks - 1) % r.nranks;
    r.right = (r.rank + 1) % r.nranks;
    for (int d = 0; d < 2; d++) {
        r.out[d] = malloc(o.max);
        r.in[d] = malloc(o.max);
        if (!r.out[d] || !r.in[d]) {
            fprintf(stderr, "exchange: rank %d: cannot allocate 4 x %zu bytes\n", r.rank, o.max);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }

    size_t sizes[MAX_SIZES];
    int n = 0;
    sizes[n++] = o.min;
    for (size_t p = 1; p < o.max; p *= 2) {
        if (p > o.min && (!o.quick || p == KiB))
            sizes[n++] = p;
    }
    if (o.max > o.min)
        sizes[n++] = o.max;
    if (r.rank == 0) {
        bench_mpi_version(version, sizeof version);
        bench_hmpi_state(r.out[0], NULL, hmpi, sizeof hmpi);
        printf("# exchange: tests=%s%s%s sizes=%zu..%zu (%d) iters=%d reps=%d ranks=%d\n",
               o.tests & 1 ? "sendrecv" : "", o.tests == 3 ? "," : "",
               o.tests & 2 ? "exchange" : "", sizes[0], sizes[n - 1], n, o.iters, o.reps, r.nranks);
        printf("# mpi: %s\n# hmpi: %s\n", version, hmpi);
        if (r.nranks == 2)
            printf("# note: with 2 ranks the left and the right neighbour are the same rank\n");
        printf("test,size,value,unit\n");
        fflush(stdout);
    }
    for (int t = 0; t < NTESTS; t++) {
        if (!(o.tests & 1u << t))
            continue;
        for (int s = 0; s < n; s++) {
            double secs = measure(&r, t, sizes[s]);
            if (r.rank == 0) {
                printf("%s,%zu,%.6g,us\n", test_name[t], sizes[s], secs * 1e6);
                printf("%s_bw,%zu,%.6g,GB/s\n", test_name[t], sizes[s],
                       (double)sizes[s] * bytes_factor[t] / secs / 1e9);
                fflush(stdout);
            }
        }
    }
    for (int d = 0; d < 2; d++) {
        free(r.out[d]);
        free(r.in[d]);
    }
    MPI_Finalize();
    return 0;
}
