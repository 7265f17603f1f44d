/* part.c: partitioned point-to-point (MPI-4.1 §4) between ranks 0 (sender) and 1
 * (receiver), in plain MPI 4; bench/run starts it under hmpirun, with and without
 * HMPI_DISABLE=1. Rank 0 prints CSV "test,size,value,unit" (size: bytes of one
 * partition; lines starting with '#' are comments). Tests:
 *   round         a whole round: MPI_Start on both sides, the sender's MPI_Pready of every
 *                 partition, back to back, MPI_Wait on both sides (us a round, the sender's
 *                 clock over --iters rounds)
 *   last          from the sender's last MPI_Pready to the return of the receiver's
 *                 MPI_Wait (us): the sender marks every partition but the last, works
 *                 --gap us (the time it takes to produce the last partition), writes the
 *                 last one and marks it; both ranks read one clock (CLOCK_MONOTONIC)
 *   memcpy        one memcpy of a partition's bytes by rank 1 out of a shared window that
 *                 rank 0 has just written (the copy a receiver makes of a partition the
 *                 sender produced), into a private buffer (us)
 *   memcpy_local  the same memcpy between two private buffers of rank 1, both in its
 *                 cache (us)
 * Each value is the median of --reps x --iters samples (round: of --reps repetitions).
 * The data is checked byte for byte after the timed rounds of round and last: a wrong
 * byte aborts. Send buffers are malloc'ed after MPI_Init (HMPI's shared heap) or, with
 * --buffer=global, static arrays (HMPI copies or reads them by CMA). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include "bench_util.h"

#include <time.h>

enum { TAG_ROUND = 1, TAG_LAST = 2, MAX_PARTS = 64 };

#define GLOBAL_CAP (64 * MiB)
static unsigned char global_area[2][GLOBAL_CAP];

typedef struct {
    int parts, reps, iters, gap_us, global, touch, quick, help;
    size_t size; /* bytes of one partition */
} opts_t;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void spin_us(double us)
{
    double end = now_us() + us;
    while (now_us() < end)
        ;
}

/* Partition i of round r as rank 0 writes it. */
static void fill(unsigned char *p, size_t n, int i, int r)
{
    uint64_t s = bench_mix(((uint64_t)r << 20) ^ (uint64_t)i);
    for (size_t k = 0; k < n; k += 8) {
        uint64_t w = bench_mix(s + k);
        memcpy(p + k, &w, n - k < 8 ? n - k : 8);
    }
}

static void check(const unsigned char *p, size_t n, int i, int r, const char *test)
{
    unsigned char *want = malloc(n);
    fill(want, n, i, r);
    for (size_t k = 0; k < n; k++) {
        if (p[k] != want[k]) {
            fprintf(stderr, "part: %s: partition %d, round %d: byte %zu is %d, want %d\n", test, i,
                    r, k, p[k], want[k]);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    free(want);
}

static double median_of(double *v, int n) { return bench_median(v, n); }

/* ---- round ------------------------------------------------------------------------- */

static double test_round(const opts_t *o, int rank, unsigned char *sbuf, unsigned char *rbuf)
{
    MPI_Request q;
    size_t sz = o->size;
    if (rank == 0)
        MPI_Psend_init(sbuf, o->parts, (MPI_Count)sz, MPI_BYTE, 1, TAG_ROUND, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &q);
    else
        MPI_Precv_init(rbuf, o->parts, (MPI_Count)sz, MPI_BYTE, 0, TAG_ROUND, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &q);
    double *v = malloc((size_t)o->reps * sizeof *v);
    int round = 0;
    for (int rep = -1; rep < o->reps; rep++) { /* rep -1: warm-up, not counted */
        if (rank == 0)
            for (int i = 0; i < o->parts; i++)
                fill(sbuf + (size_t)i * sz, sz, i, rep + 1);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_us();
        for (int it = 0; it < o->iters; it++, round++) {
            MPI_Start(&q);
            if (rank == 0) {
                for (int i = 0; i < o->parts; i++) {
                    if (o->touch)
                        sbuf[(size_t)i * sz] = (unsigned char)round; /* one line written */
                    MPI_Pready(i, q);
                }
            }
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        if (rep >= 0)
            v[rep] = (now_us() - t0) / o->iters;
        if (rank == 0 && o->touch) /* the data again, for the check */
            for (int i = 0; i < o->parts; i++)
                fill(sbuf + (size_t)i * sz, sz, i, rep + 1);
        MPI_Start(&q);
        if (rank == 0)
            MPI_Pready_range(0, o->parts - 1, q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        if (rank == 1)
            for (int i = 0; i < o->parts; i++)
                check(rbuf + (size_t)i * sz, sz, i, rep + 1, "round");
    }
    MPI_Request_free(&q);
    double m = median_of(v, o->reps);
    free(v);
    return m;
}

/* ---- last ---------------------------------------------------------------------------- */

static double test_last(const opts_t *o, int rank, unsigned char *sbuf, unsigned char *rbuf)
{
    MPI_Request q;
    size_t sz = o->size;
    int n = o->reps * o->iters, last = o->parts - 1;
    if (rank == 0)
        MPI_Psend_init(sbuf, o->parts, (MPI_Count)sz, MPI_BYTE, 1, TAG_LAST, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &q);
    else
        MPI_Precv_init(rbuf, o->parts, (MPI_Count)sz, MPI_BYTE, 0, TAG_LAST, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &q);
    double *v = malloc((size_t)n * sizeof *v);
    for (int s = -3; s < n; s++) { /* three rounds of warm-up */
        int round = s + 3;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Start(&q);
        double t = 0;
        if (rank == 0) {
            for (int i = 0; i < last; i++) {
                fill(sbuf + (size_t)i * sz, sz, i, round);
                MPI_Pready(i, q);
            }
            spin_us(o->gap_us); /* producing the last partition */
            fill(sbuf + (size_t)last * sz, sz, last, round);
            t = now_us();
            MPI_Pready(last, q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            double done;
            MPI_Recv(&done, 1, MPI_DOUBLE, 1, TAG_LAST, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (s >= 0)
                v[s] = done - t;
        } else {
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            t = now_us();
            MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG_LAST, MPI_COMM_WORLD);
            if (s == n - 1 || s < 0)
                for (int i = 0; i < o->parts; i++)
                    check(rbuf + (size_t)i * sz, sz, i, round, "last");
        }
    }
    MPI_Request_free(&q);
    double m = rank == 0 ? median_of(v, n) : 0;
    free(v);
    return m;
}

/* ---- memcpy ------------------------------------------------------------------------- */

/* The receiver's copy of a partition that the sender has just written (a shared window
 * of rank 0), and of one in its own cache. */
static void test_memcpy(const opts_t *o, int rank, double *remote_p, double *local_p)
{
    size_t sz = o->size;
    int n = o->reps * o->iters;
    unsigned char *shared = NULL;
    MPI_Win win;
    MPI_Win_allocate_shared(rank == 0 ? (MPI_Aint)sz : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &shared,
                            &win);
    MPI_Aint wsize;
    int disp;
    MPI_Win_shared_query(win, 0, &wsize, &disp, &shared);
    unsigned char *priv = malloc(sz), *mine = malloc(sz);
    double *vr = malloc((size_t)n * sizeof *vr), *vl = malloc((size_t)n * sizeof *vl);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    for (int s = -3; s < n; s++) {
        if (rank == 0)
            fill(shared, sz, 0, s + 3);
        MPI_Win_sync(win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(win);
        if (rank == 1) {
            double t0 = now_us();
            memcpy(priv, shared, sz);
            double t1 = now_us();
            fill(mine, sz, 1, s); /* in rank 1's cache, as its own data */
            double t2 = now_us();
            memcpy(priv, mine, sz);
            double t3 = now_us();
            if (s >= 0) {
                vr[s] = t1 - t0;
                vl[s] = t3 - t2;
            }
            if (s == n - 1)
                check(priv, sz, 1, s, "memcpy_local");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_unlock_all(win);
    double m[2] = {0, 0};
    if (rank == 1) {
        m[0] = median_of(vr, n);
        m[1] = median_of(vl, n);
    }
    MPI_Bcast(m, 2, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    *remote_p = m[0];
    *local_p = m[1];
    free(priv), free(mine), free(vr), free(vl);
    MPI_Win_free(&win);
}

/* ---- main ----------------------------------------------------------------------------- */

static const char usage[] =
    "usage: part [options]     (2 ranks; rank 0 sends, rank 1 receives)\n"
    "  --parts N     partitions on both sides (default 4, at most 64)\n"
    "  --size B      bytes of one partition (default 256K; K, M suffixes)\n"
    "  --reps N      repetitions (default 21)\n"
    "  --iters N     rounds per repetition (default 40)\n"
    "  --gap US      the sender's work before its last MPI_Pready in `last' (default 300)\n"
    "  --buffer B    heap (malloc after MPI_Init, default) or global (static arrays)\n"
    "  --touch       in `round', the sender writes a line of each partition before marking it\n"
    "  --quick       tiny: 16 KiB partitions, 3 repetitions of 4 rounds\n";

static int parse(int argc, char **argv, opts_t *o, char *err, size_t errlen)
{
    static const struct option longopts[] = {
        {"parts", required_argument, 0, 'p'}, {"size", required_argument, 0, 's'},
        {"reps", required_argument, 0, 'r'},  {"iters", required_argument, 0, 'i'},
        {"gap", required_argument, 0, 'g'},   {"buffer", required_argument, 0, 'b'},
        {"touch", no_argument, 0, 't'},       {"quick", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    *o = (opts_t){4, 21, 40, 300, 0, 0, 0, 0, 256 * KiB};
    int opt, bad = 0;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'p': bad |= bench_parse_int(optarg, 1, MAX_PARTS, &o->parts) != 0; break;
        case 's': bad |= bench_parse_size(optarg, "KM", 64 * MiB, &o->size) != 0; break;
        case 'r': bad |= bench_parse_int(optarg, 1, 1000, &o->reps) != 0; break;
        case 'i': bad |= bench_parse_int(optarg, 1, 100000, &o->iters) != 0; break;
        case 'g': bad |= bench_parse_int(optarg, 0, 1000000, &o->gap_us) != 0; break;
        case 'b':
            if (strcmp(optarg, "heap") == 0 || strcmp(optarg, "global") == 0)
                o->global = strcmp(optarg, "global") == 0;
            else
                bad = 1;
            break;
        case 't': o->touch = 1; break;
        case 'q': o->quick = 1; break;
        case 'h': o->help = 1; break;
        default: return bench_unknown_option(argv, err, errlen);
        }
        if (bad) {
            bench_bad_value(longopts, opt, optarg, "", err, errlen);
            return -1;
        }
    }
    if (o->quick) {
        o->size = 16 * KiB;
        o->reps = 3;
        o->iters = 4;
        o->gap_us = 50;
    }
    if (o->global && (size_t)o->parts * o->size > GLOBAL_CAP) {
        snprintf(err, errlen, "--buffer=global holds at most %zu MiB", GLOBAL_CAP / MiB);
        return -1;
    }
    return bench_opts_done(argc, argv, 0, err, errlen);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    opts_t o;
    char err[256];
    int rc = parse(argc, argv, &o, err, sizeof err);
    if (rc != 0 || o.help || nranks != 2) {
        bench_usage_or_error(rank, "part",
                             rc != 0  ? err
                             : o.help ? NULL
                                      : "needs exactly 2 ranks",
                             usage);
        MPI_Finalize();
        return rc != 0 || nranks != 2 ? 2 : 0;
    }
    size_t total = (size_t)o.parts * o.size;
    unsigned char *sbuf = o.global ? global_area[0] : malloc(total);
    unsigned char *rbuf = o.global ? global_area[1] : malloc(total);
    memset(sbuf, 0, total);
    memset(rbuf, 0, total);
    if (rank == 0) {
        char version[256], hmpi[128];
        bench_mpi_version(version, sizeof version);
        bench_hmpi_state(sbuf, rbuf, hmpi, sizeof hmpi);
        printf("# part: parts=%d size=%zu reps=%d iters=%d gap=%dus buffer=%s%s\n", o.parts, o.size,
               o.reps, o.iters, o.gap_us, o.global ? "global" : "heap", o.touch ? " touch" : "");
        printf("# mpi: %s\n# hmpi: %s\n", version, hmpi);
        printf("test,size,value,unit\n");
        fflush(stdout);
    }
    double round = test_round(&o, rank, sbuf, rbuf);
    if (rank == 0)
        printf("round,%zu,%.3f,us\n", o.size, round), fflush(stdout);
    double last = test_last(&o, rank, sbuf, rbuf);
    if (rank == 0)
        printf("last,%zu,%.3f,us\n", o.size, last), fflush(stdout);
    double remote, local;
    test_memcpy(&o, rank, &remote, &local);
    if (rank == 0) {
        printf("memcpy,%zu,%.3f,us\n", o.size, remote);
        printf("memcpy_local,%zu,%.3f,us\n", o.size, local);
    }
    if (!o.global) {
        free(sbuf);
        free(rbuf);
    }
    MPI_Finalize();
    return 0;
}
