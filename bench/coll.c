/* coll.c: latency of collectives in plain MPI: barrier, bcast, allreduce, reduce,
 * alltoall, allgather, from 8 B to 4 MiB; the nonblocking ibarrier, ibcast and
 * iallreduce (started, then waited for at once) and MPI 4's persistent allreduce_init
 * (MPI_Start, then the wait; the request made once per size); and iallreduce_overlap,
 * the overlap of an MPI_Iallreduce with compute, OSU-style: value = 100 * (1 - (overall
 * - compute) / pure) in percent, with pure the start-then-wait time, compute a busy loop
 * as long as pure, overall start + compute + wait, each the mean over the ranks. Built against the MPI below only; bench/run
 * starts it under hmpirun, with and without HMPI_DISABLE=1. Rank 0 prints CSV
 * "test,size,value,unit": value = the median over repetitions of the slowest rank's
 * mean time per call, in microseconds. Every size is run once and checked first: a
 * wrong result aborts. Sizes: bytes per rank (bcast, allreduce, reduce: the vector;
 * alltoall: each block; allgather: each rank's block); reductions are MPI_SUM on doubles.
 * alltoall_copy is no MPI collective but the copying any all-to-all of one node must
 * do, by plain memcpy: after a barrier every rank copies its own block and reads the
 * block meant for it from every other rank's send buffer, which lies in an MPI-3
 * shared-memory window (one copy per byte, all ranks at once, no other sync): the
 * memory's bound on what an all-to-all can take here. neighbor_alltoall is
 * MPI_Neighbor_alltoall on a periodic 2-D Cartesian communicator of every rank
 * (MPI_Dims_create; 4 neighbours, some of them the same rank on a grid of 2 x 2), size
 * the bytes of each block. allreduce_char and allreduce_float are allreduce's MPI_SUM on
 * MPI_CHAR and MPI_FLOAT. --comm runs the collectives on MPI_COMM_WORLD, on a
 * communicator of the same ranks from MPI_Comm_create_from_group, or on both in turns
 * (tests TEST_group; neighbor_alltoall's grid is made from MPI_COMM_WORLD). meet is no
 * MPI call but the floor of every small collective of one node: each rank stores a
 * counter in its own cache line of a shared-memory window and waits until every other
 * rank's line holds the same count (a meeting, as an 8-byte allreduce or a barrier must
 * make: at least one cache line from each rank to every other per call). */
#define _GNU_SOURCE
#include "bench_util.h"

#include <sched.h>
#include <stdatomic.h>

enum {
    T_BARRIER,
    T_BCAST,
    T_ALLREDUCE,
    T_REDUCE,
    T_ALLTOALL,
    T_ALLGATHER,
    T_ALLTOALL_COPY,
    T_IBARRIER,
    T_IBCAST,
    T_IALLREDUCE,
    T_ALLREDUCE_INIT,
    T_IALLREDUCE_OVERLAP,
    T_NEIGHBOR_ALLTOALL,
    T_ALLREDUCE_CHAR,
    T_ALLREDUCE_FLOAT,
    T_MEET,
    T_IALLGATHER,
    NTESTS
};
static const char *const test_name[NTESTS] = {"barrier",
                                              "bcast",
                                              "allreduce",
                                              "reduce",
                                              "alltoall",
                                              "allgather",
                                              "alltoall_copy",
                                              "ibarrier",
                                              "ibcast",
                                              "iallreduce",
                                              "allreduce_init",
                                              "iallreduce_overlap",
                                              "neighbor_alltoall",
                                              "allreduce_char",
                                              "allreduce_float",
                                              "meet",
                                              "iallgather"};
/* The tests run when none is named: the blocking ones HMPI has always been judged by. */
#define DEFAULT_TESTS ((1u << T_ALLTOALL_COPY) - 1)
enum { MAX_SIZES = 64, MAX_REPS = 101 };

typedef struct {
    unsigned tests;
    size_t min, max;
    int factor, reps, iters, quick, help, preinit;
    int comm; /* BENCH_COMM_WORLD, _GROUP or _BOTH (bench_util.h) */
} opts_t;

static const char usage[] =
    "usage: coll [options]\n"
    "  -t, --tests LIST   barrier,bcast,allreduce,reduce,alltoall,allgather,alltoall_copy,\n"
    "                     ibarrier,ibcast,iallreduce,allreduce_init,iallreduce_overlap,\n"
    "                     neighbor_alltoall,allreduce_char,allreduce_float,meet,\n"
    "                     iallgather\n"
    "                     (default: barrier to allgather)\n"
    "  -m, --min BYTES    smallest size (default 8)\n"
    "  -M, --max BYTES    largest size (default 4M; K and M suffixes)\n"
    "  -f, --factor N     size step (default 2)\n"
    "  -r, --reps N       repetitions, the median is reported (default 11)\n"
    "  -i, --iters N      calls per repetition at 8 B (fewer for large sizes; default 200)\n"
    "  -b, --buffer KIND  heap (malloc'ed after MPI_Init, default) or preinit (before)\n"
    "  -c, --comm WHICH   world (MPI_COMM_WORLD, default), group (a communicator of the\n"
    "                     same ranks from MPI_Comm_create_from_group, MPI 4) or both,\n"
    "                     alternating repetitions; the group's tests are named TEST_group\n"
    "  -q, --quick        8 B, 4 KiB, 64 KiB; one repetition of a few calls\n";

static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    else if (*end == 'm' || *end == 'M')
        v <<= 20;
    return (size_t)v;
}

static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){DEFAULT_TESTS, 8, 4 << 20, 2, 11, 200, 0, 0, 0, BENCH_COMM_WORLD};
    static const struct option longopts[] = {
        {"tests", 1, 0, 't'}, {"min", 1, 0, 'm'},   {"max", 1, 0, 'M'},    {"factor", 1, 0, 'f'},
        {"reps", 1, 0, 'r'},  {"iters", 1, 0, 'i'}, {"buffer", 1, 0, 'b'}, {"quick", 0, 0, 'q'},
        {"help", 0, 0, 'h'},  {"comm", 1, 0, 'c'},  {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "t:m:M:f:r:i:b:c:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            o->tests = 0;
            for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
                int k = 0;
                while (k < NTESTS && strcmp(tok, test_name[k]) != 0)
                    k++;
                if (k == NTESTS)
                    return -1;
                o->tests |= 1u << k;
            }
            break;
        case 'm': o->min = parse_size(optarg); break;
        case 'M': o->max = parse_size(optarg); break;
        case 'f': o->factor = atoi(optarg); break;
        case 'r': o->reps = atoi(optarg); break;
        case 'i': o->iters = atoi(optarg); break;
        case 'b':
            if (strcmp(optarg, "heap") && strcmp(optarg, "preinit"))
                return -1;
            o->preinit = strcmp(optarg, "preinit") == 0;
            break;
        case 'q': o->quick = 1; break;
        case 'h': o->help = 1; break;
        case 'c':
            if (bench_parse_comm(optarg, &o->comm) != 0)
                return -1;
            break;
        default: return -1;
        }
    }
    if (optind < argc || o->factor < 2 || o->reps < 1 || o->reps > MAX_REPS || o->iters < 1 ||
        o->min < 1 || o->min > o->max || o->max > ((size_t)1 << 30))
        return -1;
    if (o->quick)
        o->reps = 1, o->iters = 5;
    return 0;
}

/* ---- one measurement -------------------------------------------------------------------- */

typedef struct {
    const opts_t *o;
    int rank, n;
    unsigned char *a, *b; /* send and receive: max * n bytes each */
    unsigned char *w;     /* alltoall_copy: the send buffer, in a shared-memory window */
    unsigned char **peer; /* [rank]: its w, as this rank sees it */
    MPI_Request pers[2];  /* allreduce_init: the persistent request of the size measured,
                             one per communicator */
    MPI_Comm comm;        /* the one the calls run on now: comms[k] */
    MPI_Comm comms[2];
    int k, ncomms; /* MPI_COMM_WORLD and/or the communicator from a group */
    MPI_Comm cart; /* neighbor_alltoall: the periodic 2-D grid */
    int nbr[4];    /* its neighbours in the standard's order */
} ctx_t;

static int reduces(int t)
{
    return t == T_ALLREDUCE || t == T_REDUCE || t == T_IALLREDUCE || t == T_ALLREDUCE_INIT ||
           t == T_IALLREDUCE_OVERLAP || t == T_ALLREDUCE_CHAR || t == T_ALLREDUCE_FLOAT;
}

/* The send buffer of test t. */
static unsigned char *send_of(const ctx_t *c, int t) { return t == T_ALLTOALL_COPY ? c->w : c->a; }

/* meet: rank j's counter, at the first cache line of its part of the shared window. */
static _Atomic uint64_t *meet_word(const ctx_t *c, int j)
{
    return (_Atomic uint64_t *)(void *)(((uintptr_t)c->peer[j] + 63) & ~(uintptr_t)63);
}

/* meet: one meeting of every rank (no MPI call); meet_count, kept across calls alike on
 * every rank, is zeroed with the counters before the test (alltoall_copy writes over
 * them). Spinning yields now and then: ranks may share a core. */
static uint64_t meet_count;
static void meet(const ctx_t *c)
{
    uint64_t count = ++meet_count;
    atomic_store_explicit(meet_word(c, c->rank), count, memory_order_release);
    for (int j = 0; j < c->n; j++)
        for (int spins = 0;
             j != c->rank && atomic_load_explicit(meet_word(c, j), memory_order_acquire) < count;
             spins++)
            if (spins % 256 == 255)
                sched_yield();
}

static double fill_value(int rank, size_t i) { return (double)((rank * 7 + (int)(i % 1000)) % 64); }

/* One call of test t at size bytes. */
static void call(const ctx_t *c, int t, size_t size)
{
    int count = (int)size;
    switch (t) {
    case T_BARRIER: MPI_Barrier(c->comm); break;
    case T_BCAST: MPI_Bcast(c->a, count, MPI_BYTE, 0, c->comm); break;
    case T_ALLREDUCE: MPI_Allreduce(c->a, c->b, count / 8, MPI_DOUBLE, MPI_SUM, c->comm); break;
    case T_REDUCE: MPI_Reduce(c->a, c->b, count / 8, MPI_DOUBLE, MPI_SUM, 0, c->comm); break;
    case T_ALLTOALL: MPI_Alltoall(c->a, count, MPI_BYTE, c->b, count, MPI_BYTE, c->comm); break;
    case T_ALLGATHER: MPI_Allgather(c->a, count, MPI_BYTE, c->b, count, MPI_BYTE, c->comm); break;
    case T_IALLGATHER: {
        MPI_Request q;
        MPI_Iallgather(c->a, count, MPI_BYTE, c->b, count, MPI_BYTE, c->comm, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        break;
    }
    case T_ALLTOALL_COPY:
        MPI_Barrier(c->comm);
        for (int k = 0; k < c->n; k++) { /* each rank starts with its own block */
            int j = (c->rank + k) % c->n;
            memcpy(c->b + (size_t)j * size, c->peer[j] + (size_t)c->rank * size, size);
        }
        break;
    case T_IBARRIER: {
        MPI_Request q;
        MPI_Ibarrier(c->comm, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        break;
    }
    case T_IBCAST: {
        MPI_Request q;
        MPI_Ibcast(c->a, count, MPI_BYTE, 0, c->comm, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        break;
    }
    case T_IALLREDUCE:
    case T_IALLREDUCE_OVERLAP: {
        MPI_Request q;
        MPI_Iallreduce(c->a, c->b, count / 8, MPI_DOUBLE, MPI_SUM, c->comm, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        break;
    }
    case T_ALLREDUCE_INIT: {
        MPI_Request q = c->pers[c->k];
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        break;
    }
    case T_NEIGHBOR_ALLTOALL:
        MPI_Neighbor_alltoall(c->a, count, MPI_BYTE, c->b, count, MPI_BYTE, c->cart);
        break;
    case T_ALLREDUCE_CHAR: MPI_Allreduce(c->a, c->b, count, MPI_CHAR, MPI_SUM, c->comm); break;
    case T_ALLREDUCE_FLOAT:
        MPI_Allreduce(c->a, c->b, count / 4, MPI_FLOAT, MPI_SUM, c->comm);
        break;
    case T_MEET: meet(c); break;
    }
}

/* Makes the persistent request of allreduce_init for size (freed by unprepare). */
static void prepare(ctx_t *c, int t, size_t size)
{
    c->pers[c->k] = MPI_REQUEST_NULL;
#if MPI_VERSION >= 4
    if (t == T_ALLREDUCE_INIT)
        MPI_Allreduce_init(c->a, c->b, (int)(size / 8), MPI_DOUBLE, MPI_SUM, c->comm, MPI_INFO_NULL,
                           &c->pers[c->k]);
#else
    (void)t, (void)size;
#endif
}

static void unprepare(ctx_t *c)
{
    if (c->pers[c->k] != MPI_REQUEST_NULL)
        MPI_Request_free(&c->pers[c->k]);
}

/* Runs test t at size once with known data and checks the result; aborts when wrong. */
static void verify(const ctx_t *c, int t, size_t size)
{
    int n = c->n, me = c->rank, bad = 0;
    double *da = (double *)c->a, *db = (double *)c->b;
    size_t nd = size / 8;
    switch (t) {
    case T_BCAST:
    case T_IBCAST:
        for (size_t i = 0; i < size; i++)
            c->a[i] = me == 0 ? (unsigned char)(i * 13 + 1) : 0;
        break;
    case T_ALLREDUCE:
    case T_REDUCE:
    case T_IALLREDUCE:
    case T_ALLREDUCE_INIT:
    case T_IALLREDUCE_OVERLAP:
        for (size_t i = 0; i < nd; i++)
            da[i] = fill_value(me, i), db[i] = -1;
        break;
    case T_IBARRIER:
    case T_MEET: break;
    case T_ALLREDUCE_CHAR:
        for (size_t i = 0; i < size; i++)
            c->a[i] = (unsigned char)(me + (int)(i % 5)), c->b[i] = 0;
        break;
    case T_ALLREDUCE_FLOAT:
        for (size_t i = 0; i < size / 4; i++)
            ((float *)c->a)[i] = (float)fill_value(me, i), ((float *)c->b)[i] = -1;
        break;
    default:
        for (size_t i = 0; i < size * (size_t)(t == T_NEIGHBOR_ALLTOALL ? 4 : n); i++)
            send_of(c, t)[i] = (unsigned char)(me * 31 + i * 7), c->b[i] = 0;
        break;
    }
    call(c, t, size);
    switch (t) {
    case T_BCAST:
    case T_IBCAST:
        for (size_t i = 0; i < size; i++)
            bad += c->a[i] != (unsigned char)(i * 13 + 1);
        break;
    case T_ALLREDUCE:
    case T_REDUCE:
    case T_IALLREDUCE:
    case T_ALLREDUCE_INIT:
    case T_IALLREDUCE_OVERLAP:
        for (size_t i = 0; i < nd && (t != T_REDUCE || me == 0); i++) {
            double want = 0;
            for (int r = 0; r < n; r++)
                want += fill_value(r, i);
            bad += db[i] != want;
        }
        break;
    case T_ALLTOALL: /* block j of mine is block me of rank j's */
    case T_ALLTOALL_COPY:
        for (int j = 0; j < n; j++)
            for (size_t i = 0; i < size; i++)
                bad += c->b[j * size + i] != (unsigned char)(j * 31 + (me * size + i) * 7);
        break;
    case T_ALLGATHER:
    case T_IALLGATHER:
        for (int j = 0; j < n; j++)
            for (size_t i = 0; i < size; i++)
                bad += c->b[j * size + i] != (unsigned char)(j * 31 + i * 7);
        break;
    case T_ALLREDUCE_CHAR:
        for (size_t i = 0; i < size; i++)
            bad += c->b[i] != (unsigned char)(n * (n - 1) / 2 + n * (int)(i % 5));
        break;
    case T_ALLREDUCE_FLOAT:
        for (size_t i = 0; i < size / 4; i++) {
            double want = 0;
            for (int r = 0; r < n; r++)
                want += fill_value(r, i);
            bad += ((float *)c->b)[i] != (float)want;
        }
        break;
    case T_NEIGHBOR_ALLTOALL: /* block j comes from neighbour j's block j ^ 1 */
        for (int j = 0; j < 4; j++)
            for (size_t i = 0; i < size; i++)
                bad += c->b[j * size + i] !=
                       (unsigned char)(c->nbr[j] * 31 + ((size_t)(j ^ 1) * size + i) * 7);
        break;
    }
    if (bad) {
        fprintf(stderr, "coll: rank %d: %s at %zu B: %d wrong values\n", me, test_name[t], size,
                bad);
        MPI_Abort(c->comm, 3);
    }
}

/* Busy for about us microseconds, touching no memory (the compute of an overlap test). */
static void compute_for(double us)
{
    double t0 = MPI_Wtime(), until = t0 + us * 1e-6;
    volatile unsigned long spin = 0;
    while (MPI_Wtime() < until)
        for (int i = 0; i < 64; i++)
            spin++;
}

/* iallreduce_overlap at size: the median over repetitions of OSU's overlap (percent). */
static double measure_overlap(const ctx_t *c, size_t size)
{
    const opts_t *o = c->o;
    long iters = o->quick ? 5 : size > 65536 ? 20 : 200;
    double v[MAX_REPS];
    for (int r = 0; r < o->reps; r++) {
        double t[3] = {0, 0, 0}, sum[3]; /* pure, overall, compute: means per call */
        MPI_Barrier(c->comm);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++)
            call(c, T_IALLREDUCE, size);
        t[0] = (MPI_Wtime() - t0) / (double)iters * 1e6;
        MPI_Allreduce(MPI_IN_PLACE, &t[0], 1, MPI_DOUBLE, MPI_MAX, c->comm);
        MPI_Barrier(c->comm);
        for (long i = 0; i < iters; i++) {
            MPI_Request q;
            double a = MPI_Wtime();
            MPI_Iallreduce(c->a, c->b, (int)(size / 8), MPI_DOUBLE, MPI_SUM, c->comm, &q);
            double b = MPI_Wtime();
            compute_for(t[0]);
            double d = MPI_Wtime();
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            t[1] += (MPI_Wtime() - a) * 1e6;
            t[2] += (d - b) * 1e6;
        }
        t[1] /= (double)iters, t[2] /= (double)iters;
        MPI_Allreduce(t, sum, 3, MPI_DOUBLE, MPI_SUM, c->comm);
        double overlap = 100.0 * (1.0 - (sum[1] - sum[2]) / sum[0]);
        v[r] = overlap < 0 ? 0 : overlap;
    }
    qsort(v, (size_t)o->reps, sizeof v[0], bench_cmp_double);
    return v[o->reps / 2];
}

/* Median over repetitions of the slowest rank's mean time per call (microseconds), on
 * each communicator, into out[k] for c->comms[k]: with two, the repetitions alternate
 * between them (ABBA), so drift cancels in their ratio (the overlap test runs on each
 * in turn). */
static void measure(ctx_t *c, int t, size_t size, double *out)
{
    if (t == T_IALLREDUCE_OVERLAP) {
        for (c->k = 0; c->k < c->ncomms; c->k++) {
            c->comm = c->comms[c->k];
            out[c->k] = measure_overlap(c, size);
        }
        return;
    }
    const opts_t *o = c->o;
    int per_peer = t == T_ALLTOALL || t == T_ALLGATHER || t == T_IALLGATHER || t == T_ALLTOALL_COPY;
    size_t work = size * (per_peer ? (size_t)c->n : t == T_NEIGHBOR_ALLTOALL ? 4 : 1);
    long iters = o->iters;
    if (work > 4096)
        iters = (long)((double)o->iters * 4096.0 / (double)work * 8.0);
    iters = iters < 3 ? 3 : iters > o->iters ? o->iters : iters;
    if (o->quick)
        iters = 5;
    double v[2][MAX_REPS];
    for (c->k = 0; c->k < c->ncomms; c->k++) {
        c->comm = c->comms[c->k];
        for (int w = 0; w < 2; w++) /* warm up */
            call(c, t, size);
    }
    for (int r = 0; r < o->reps; r++) {
        for (int j = 0; j < c->ncomms; j++) {
            c->k = r % 2 ? c->ncomms - 1 - j : j;
            c->comm = c->comms[c->k];
            MPI_Barrier(c->comm);
            double t0 = MPI_Wtime();
            for (long i = 0; i < iters; i++)
                call(c, t, size);
            double mine = (MPI_Wtime() - t0) / (double)iters * 1e6, slowest = 0;
            MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, c->comm);
            v[c->k][r] = slowest;
        }
    }
    for (int k = 0; k < c->ncomms; k++) {
        qsort(v[k], (size_t)o->reps, sizeof v[k][0], bench_cmp_double);
        out[k] = v[k][o->reps / 2];
    }
}

/* alltoall_copy's send buffers and meet's lines: one shared-memory window over all
 * ranks, which must then be on one node (else the tests are left out, with a line saying
 * so); at least two cache lines a rank, meet's counters zero. */
static void share_send_buffers(ctx_t *c, opts_t *o, size_t bytes, MPI_Win *win)
{
    bytes = bytes < 128 ? 128 : bytes;
    MPI_Comm node;
    int nnode;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nnode);
    if (nnode == c->n) {
        c->peer = malloc(sizeof *c->peer * (size_t)c->n);
        if (!c->peer) {
            fprintf(stderr, "coll: rank %d: out of memory\n", c->rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Win_allocate_shared((MPI_Aint)bytes, 1, MPI_INFO_NULL, node, &c->w, win);
        for (int j = 0; j < c->n; j++) {
            MPI_Aint len;
            int unit;
            MPI_Win_shared_query(*win, j, &len, &unit, &c->peer[j]);
        }
        memset(c->w, 1, bytes);
    } else {
        if (c->rank == 0)
            printf("# alltoall_copy and meet: left out, the ranks are not on one node\n");
        o->tests &= ~(1u << T_ALLTOALL_COPY | 1u << T_MEET);
    }
    MPI_Comm_free(&node);
}

int main(int argc, char **argv)
{
    opts_t o;
    int bad = parse(argc, argv, &o);
    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    if (o.quick) {
        sizes[0] = 8, sizes[1] = 4096, sizes[2] = 65536, nsizes = 3;
    } else {
        for (size_t s = o.min; s <= o.max && nsizes < MAX_SIZES; s *= (size_t)o.factor)
            sizes[nsizes++] = s;
    }
    size_t maxsize = sizes[nsizes - 1] < 8 ? 8 : sizes[nsizes - 1];
    unsigned char *early[2] = {NULL, NULL};
    int early_ranks = 64; /* preinit buffers are sized before we know the job: up to 64 ranks */
    if (!bad && o.preinit) {
        early[0] = malloc(maxsize * (size_t)early_ranks);
        early[1] = malloc(maxsize * (size_t)early_ranks);
    }
    MPI_Init(&argc, &argv);
    ctx_t c = {.o = &o};
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.n);
    if (!bad && o.preinit && c.n > early_ranks)
        bad = 1;
    MPI_Comm group = MPI_COMM_NULL;
    if (!bad && !o.help && o.comm & BENCH_COMM_GROUP) {
        int grank = -1;
        group = bench_group_comm();
        if (group != MPI_COMM_NULL)
            MPI_Comm_rank(group, &grank);
        if (grank != c.rank) {
            if (c.rank == 0)
                fprintf(stderr, "coll: --comm: no communicator from a group with the world's "
                                "ranks (MPI 4 sessions)\n");
            bad = 1;
        }
    }
    if (o.comm & BENCH_COMM_WORLD)
        c.comms[c.ncomms++] = MPI_COMM_WORLD;
    if (o.comm & BENCH_COMM_GROUP)
        c.comms[c.ncomms++] = group;
    c.comm = c.comms[0];
    if (bad || o.help) {
        if (c.rank == 0)
            fputs(usage, bad ? stderr : stdout);
        bench_group_comm_free(&group);
        MPI_Finalize();
        return bad ? 2 : 0;
    }
    size_t blocks = c.n < 4 ? 4 : (size_t)c.n; /* (neighbor_alltoall: 4 blocks) */
    if (o.preinit && c.n < 4)
        blocks = (size_t)c.n, o.tests &= ~(1u << T_NEIGHBOR_ALLTOALL);
    c.a = o.preinit ? early[0] : malloc(maxsize * blocks);
    c.b = o.preinit ? early[1] : malloc(maxsize * blocks);
    if (!c.a || !c.b) {
        fprintf(stderr, "coll: rank %d: cannot allocate 2 x %zu bytes\n", c.rank, maxsize * blocks);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(c.a, 1, maxsize * blocks);
    memset(c.b, 2, maxsize * blocks);
    c.cart = MPI_COMM_NULL;
    if (o.tests & 1u << T_NEIGHBOR_ALLTOALL) {
        int dims[2] = {0, 0}, periods[2] = {1, 1};
        MPI_Dims_create(c.n, 2, dims);
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c.cart);
        for (int d = 0; d < 2; d++)
            MPI_Cart_shift(c.cart, d, 1, &c.nbr[2 * d], &c.nbr[2 * d + 1]);
    }
    MPI_Win win = MPI_WIN_NULL;
    if (o.tests & (1u << T_ALLTOALL_COPY | 1u << T_MEET))
        share_send_buffers(&c, &o, maxsize * (size_t)c.n, &win);
    if (c.rank == 0) {
        char version[256], hmpi[96], tests[128] = "";
        for (int t = 0; t < NTESTS; t++)
            if (o.tests & 1u << t)
                snprintf(tests + strlen(tests), sizeof tests - strlen(tests), "%s%s",
                         tests[0] ? "," : "", test_name[t]);
        bench_mpi_first_line(version, sizeof version);
        bench_hmpi_state(c.a, c.b, hmpi, sizeof hmpi);
        static const char *const comm_names[] = {"", "world", "group", "both"};
        printf("# coll: tests=%s sizes=%zu..%zu (%d) reps=%d iters=%d buffer=%s ranks=%d "
               "comm=%s\n",
               tests, sizes[0], sizes[nsizes - 1], nsizes, o.reps, o.iters,
               o.preinit ? "preinit" : "heap", c.n, comm_names[o.comm]);
        printf("# mpi: %s\n# hmpi: %s\n", version, hmpi);
        printf("test,size,value,unit\n");
        fflush(stdout);
    }
    for (int t = 0; t < NTESTS; t++) {
        if (!(o.tests & 1u << t))
            continue;
#if MPI_VERSION < 4
        if (t == T_ALLREDUCE_INIT) {
            if (c.rank == 0)
                printf("# allreduce_init: left out, the MPI below has no MPI_Allreduce_init\n");
            continue;
        }
#endif
        int once = t == T_BARRIER || t == T_IBARRIER || t == T_MEET;
        if (t == T_MEET) {
            meet_count = 0;
            atomic_store(meet_word(&c, c.rank), 0);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        for (int k = 0; k < (once ? 1 : nsizes); k++) {
            size_t size = once ? 0 : sizes[k];
            if (reduces(t) && size < 8)
                continue;
            double v[2];
            for (c.k = 0; c.k < c.ncomms; c.k++) {
                c.comm = c.comms[c.k];
                prepare(&c, t, size);
                verify(&c, t, size);
            }
            measure(&c, t, size, v);
            for (c.k = 0; c.k < c.ncomms; c.k++)
                unprepare(&c);
            for (int k = 0; c.rank == 0 && k < c.ncomms; k++) {
                printf("%s%s,%zu,%.6g,%s\n", test_name[t],
                       c.comms[k] == MPI_COMM_WORLD ? "" : "_group", size, v[k],
                       t == T_IALLREDUCE_OVERLAP ? "%" : "us");
                fflush(stdout);
            }
        }
    }
    if (win != MPI_WIN_NULL)
        MPI_Win_free(&win);
    if (c.cart != MPI_COMM_NULL)
        MPI_Comm_free(&c.cart);
    free(c.peer);
    free(c.a);
    free(c.b);
    bench_group_comm_free(&group);
    MPI_Finalize();
    return 0;
}
