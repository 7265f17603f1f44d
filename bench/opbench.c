/* opbench.c: OPBench (the OPI paper, §5.1), a nearest-neighbour stencil step.
 * Every iteration computes once on the application's array, then four times (four
 * neighbours) packs a boundary region into a message buffer, exchanges it with the
 * partner rank and unpacks the received one into a ghost region. Reported: the
 * bandwidth of pack + communicate + unpack (message bytes per second of those steps,
 * at each rank's median iteration, mean over the ranks), for
 *   copy        MPI_Irecv/MPI_Isend of malloc'ed buffers: HMPI's copy protocols under
 *               HMPI, the MPI below with HMPI_DISABLE=1;
 *   opi         OPI_Alloc, pack, OPI_Itake/OPI_Igive, unpack, OPI_Free (ownership
 *               passing under HMPI; the contents through the MPI below without it);
 * and alloc_free, the time of OPI_Free(OPI_Alloc(8)) (ns, best of 200 batches of 10^4).
 * Not in the default set: direct, the bound of any exchange that hands the packed data
 * over without copying it (ownership passing at no cost): each rank packs into one of
 * two buffers of an MPI-3 shared-memory window, raises a counter there and unpacks
 * straight from its partner's buffer once the partner's counter says it is packed
 * (no library in the exchange; left out when the ranks are not on one node).
 * Ranks pair up (0,1), (2,3)...
 * Rank 0 prints CSV "test,size,value,unit"; received data is checked every iteration.
 *   opbench [--quick] [--min BYTES] [--max BYTES] [--time SECONDS] [--tests copy,opi,...]
 * Needs libhmpi linked (OPI calls); bench/run starts it under hmpirun as usual. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT, in bench_util.h */
#endif
#include "hmpi.h"

#include "bench_util.h"

#include <sched.h>
#include <stdatomic.h>

enum { NEIGHBOURS = 4, REGIONS = 2 * NEIGHBOURS, TAG = 7 };

typedef struct {
    size_t min, max;
    double time; /* seconds of timed iterations per point */
    int quick;
    int copy, opi, alloc_free, direct;
} opts_t;

typedef struct {
    int rank, nranks, partner;
    size_t bytes;          /* one message */
    double *app;           /* REGIONS regions: NEIGHBOURS boundaries, then NEIGHBOURS ghosts */
    double *sbuf, *rbuf;   /* copy: the program's message buffers */
    double *mine, *theirs; /* direct: two buffers each, in a shared window */
    _Atomic uint64_t *my_count, *their_count; /* direct: exchanges packed so far */
    uint64_t count;
} ctx_t;

static double now(void) { return MPI_Wtime(); }

static double *boundary(ctx_t *c, int k) { return c->app + (size_t)k * c->bytes / 8; }
static double *ghost(ctx_t *c, int k) { return c->app + (size_t)(NEIGHBOURS + k) * c->bytes / 8; }

/* The application's work: one pass over its whole array. */
static void compute(ctx_t *c)
{
    size_t n = REGIONS * c->bytes / 8;
    for (size_t i = 0; i < n; i++)
        c->app[i] = c->app[i] * 0.999999 + 1e-6;
}

static void pack(ctx_t *c, int k, double *buf)
{
    const double *src = boundary(c, k);
    for (size_t i = 0; i < c->bytes / 8; i++)
        buf[i] = src[i];
    buf[0] = c->rank * 1000 + k; /* a stamp the receiver checks */
}

static void unpack(ctx_t *c, int k, const double *buf)
{
    double *dst = ghost(c, k);
    if (buf[0] != c->partner * 1000 + k) {
        fprintf(stderr, "opbench: rank %d, exchange %d: message stamped %g\n", c->rank, k, buf[0]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < c->bytes / 8; i++)
        dst[i] = buf[i];
}

/* One iteration; returns the seconds of its pack + communicate + unpack steps. */
static double step_copy(ctx_t *c)
{
    compute(c);
    double t0 = now();
    for (int k = 0; k < NEIGHBOURS; k++) {
        MPI_Request r[2];
        MPI_Status st[2];
        pack(c, k, c->sbuf);
        MPI_Irecv(c->rbuf, (int)(c->bytes / 8), MPI_DOUBLE, c->partner, TAG, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(c->sbuf, (int)(c->bytes / 8), MPI_DOUBLE, c->partner, TAG, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, st);
        unpack(c, k, c->rbuf);
    }
    return now() - t0;
}

static double step_opi(ctx_t *c)
{
    compute(c);
    double t0 = now();
    for (int k = 0; k < NEIGHBOURS; k++) {
        MPI_Request r[2];
        MPI_Status st[2];
        double *out, *in;
        OPI_Alloc((void **)&out, c->bytes);
        pack(c, k, out);
        OPI_Itake((void **)&in, (int)(c->bytes / 8), MPI_DOUBLE, c->partner, TAG, MPI_COMM_WORLD,
                  &r[0]);
        OPI_Igive((void **)&out, (int)(c->bytes / 8), MPI_DOUBLE, c->partner, TAG, MPI_COMM_WORLD,
                  &r[1]);
        MPI_Waitall(2, r, st);
        unpack(c, k, in);
        OPI_Free((void **)&in);
    }
    return now() - t0;
}

/* Exchange n packs into buffer n & 1. Before that the partner must be done reading
 * that buffer from exchange n-2: it was, when it announced exchange n-1 (which this
 * rank waited for). */
static double step_direct(ctx_t *c)
{
    compute(c);
    double t0 = now();
    size_t words = c->bytes / 8;
    for (int k = 0; k < NEIGHBOURS; k++) {
        uint64_t n = ++c->count;
        pack(c, k, c->mine + (n & 1) * words);
        atomic_store_explicit(c->my_count, n, memory_order_release);
        for (unsigned spins = 0; atomic_load_explicit(c->their_count, memory_order_acquire) < n;)
            if (++spins % 1024 == 0)
                sched_yield(); /* more ranks than cores */
        unpack(c, k, c->theirs + (n & 1) * words);
    }
    return now() - t0;
}

/* direct's window over this size's buffers; 0 when the ranks are not on one node. */
static int direct_setup(ctx_t *c, MPI_Win *win)
{
    MPI_Comm node;
    int nnode;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nnode);
    int ok = nnode == c->nranks; /* then node ranks are world ranks (key 0: same order) */
    if (ok) {
        void *base, *peer;
        MPI_Aint len;
        int unit;
        MPI_Win_allocate_shared((MPI_Aint)(64 + 2 * c->bytes), 1, MPI_INFO_NULL, node, &base, win);
        MPI_Win_shared_query(*win, c->partner, &len, &unit, &peer);
        c->my_count = base;
        c->their_count = peer;
        atomic_store(c->my_count, 0);
        c->mine = (double *)((char *)base + 64);
        c->theirs = (double *)((char *)peer + 64);
        c->count = 0;
        memset(c->mine, 0, 2 * c->bytes);
        MPI_Barrier(node);
    }
    MPI_Comm_free(&node);
    return ok;
}

/* Times one test at one size: warm up, pick an iteration count that fills o->time
 * (rank 0 decides for all), run it. Each rank takes the median of its iterations'
 * times (robust to other jobs taking the cores now and then); returns the mean over
 * ranks of the bandwidth at that median (GB/s). */
static double run_point(ctx_t *c, const opts_t *o, double (*step)(ctx_t *))
{
    for (int i = 0; i < 3; i++)
        step(c);
    MPI_Barrier(MPI_COMM_WORLD);
    double probe = now();
    for (int i = 0; i < 3; i++)
        step(c);
    probe = (now() - probe) / 3;
    long iters = (long)(o->time / (probe > 1e-7 ? probe : 1e-7));
    iters = iters < 7 ? 7 : iters > 20000 ? 20000 : iters;
    MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    double *t = malloc(sizeof(double) * (size_t)iters);
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < iters; i++)
        t[i] = step(c);
    qsort(t, (size_t)iters, sizeof *t, bench_cmp_double);
    double bw = (double)c->bytes * NEIGHBOURS / t[iters / 2] / 1e9, sum = 0;
    free(t);
    MPI_Allreduce(&bw, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sum / c->nranks;
}

/* OPI_Free(OPI_Alloc(8)), nanoseconds per pair (rank 0's): the best of many short
 * batches, so that other jobs on the cores do not count. */
static double alloc_free_ns(void)
{
    enum { BATCHES = 200, N = 10000 };
    void *p;
    double best = 1e30;
    for (int b = 0; b < BATCHES; b++) {
        double t0 = now();
        for (int i = 0; i < N; i++) {
            OPI_Alloc(&p, 8);
            OPI_Free(&p);
        }
        double t = now() - t0;
        best = t < best ? t : best;
    }
    return best / N * 1e9;
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k':
    case 'K': v *= 1024; break;
    case 'm':
    case 'M': v *= 1024 * 1024; break;
    case 'g':
    case 'G': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (size_t)v;
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option longs[] = {{"quick", no_argument, 0, 'q'},
                                          {"min", required_argument, 0, 'm'},
                                          {"max", required_argument, 0, 'M'},
                                          {"time", required_argument, 0, 't'},
                                          {"tests", required_argument, 0, 'T'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    *o = (opts_t){.min = 1024,
                  .max = 4u << 20,
                  .time = 0.5,
                  .copy = 1,
                  .opi = 1,
                  .alloc_free = 1,
                  .direct = 0};
    int ch;
    while ((ch = getopt_long(argc, argv, "qm:M:t:T:h", longs, NULL)) != -1) {
        switch (ch) {
        case 'q':
            o->quick = 1;
            o->min = 1024;
            o->max = 64 * 1024;
            o->time = 0.02;
            break;
        case 'm': o->min = parse_size(optarg); break;
        case 'M': o->max = parse_size(optarg); break;
        case 't': o->time = atof(optarg); break;
        case 'T':
            o->copy = strstr(optarg, "copy") != NULL;
            o->opi = strstr(optarg, "opi") != NULL;
            o->alloc_free = strstr(optarg, "alloc_free") != NULL;
            o->direct = strstr(optarg, "direct") != NULL;
            break;
        default: return -1;
        }
    }
    if (o->min < 64)
        o->min = 64;
    return o->max >= o->min ? 0 : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ctx_t c = {0};
    opts_t o;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    if (parse(argc, argv, &o) != 0 || c.nranks % 2) {
        if (c.rank == 0)
            fprintf(stderr, "usage: opbench [--quick] [--min B] [--max B] [--time S] "
                            "[--tests copy,opi,alloc_free,direct]   (an even number of ranks)\n");
        MPI_Finalize();
        return 2;
    }
    c.partner = c.rank ^ 1;
    if (c.rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        bench_mpi_first_line(lib, sizeof lib);
        printf("# mpi: %s\n", lib);
        printf("# hmpi: %s, %d ranks in pairs\n", HMPI_Active() ? "active" : "pass-through",
               c.nranks);
        printf("test,size,value,unit\n");
        fflush(stdout);
    }
    if (o.alloc_free) {
        double ns = alloc_free_ns();
        if (c.rank == 0)
            printf("alloc_free,8,%.1f,ns\n", ns);
    }
    for (size_t b = o.min; b <= o.max; b *= 4) {
        c.bytes = (b + 7) / 8 * 8;
        c.app = malloc(REGIONS * c.bytes);
        c.sbuf = malloc(c.bytes);
        c.rbuf = malloc(c.bytes);
        for (size_t i = 0; i < REGIONS * c.bytes / 8; i++)
            c.app[i] = (double)i;
        memset(c.sbuf, 0, c.bytes);
        memset(c.rbuf, 0, c.bytes);
        if (o.copy) {
            double bw = run_point(&c, &o, step_copy);
            if (c.rank == 0)
                printf("copy,%zu,%.4g,GB/s\n", c.bytes, bw);
        }
        if (o.opi) {
            double bw = run_point(&c, &o, step_opi);
            if (c.rank == 0)
                printf("opi,%zu,%.4g,GB/s\n", c.bytes, bw);
        }
        MPI_Win win;
        if (o.direct && direct_setup(&c, &win)) {
            double bw = run_point(&c, &o, step_direct);
            if (c.rank == 0)
                printf("direct,%zu,%.4g,GB/s\n", c.bytes, bw);
            MPI_Win_free(&win);
        } else if (o.direct && c.rank == 0) {
            printf("# direct: left out, the ranks are not on one node\n");
        }
        if (c.rank == 0)
            fflush(stdout);
        free(c.app);
        free(c.sbuf);
        free(c.rbuf);
    }
    MPI_Finalize();
    return 0;
}
