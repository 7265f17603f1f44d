/* halo.c: mpptest-style halo exchange in plain MPI, after "MPI-3 shared memory"
 * (mpi3-shared-memory.txt): every rank exchanges one message of SIZE bytes with each of
 * its partners in a 1-D or 2-D process grid, either with Isend/Irecv/Waitall or by
 * copying straight out of the partners' segments of an MPI-3 shared window
 * (MPI_Win_allocate_shared) under lock, lock_all or fence synchronization. Built
 * against the MPI below only; bench/run starts it under hmpirun with and without
 * HMPI_DISABLE=1. Rank 0 prints CSV "test,size,value,unit": the median over
 * repetitions of the slowest rank's time per exchange in microseconds. Every point is
 * checked byte for byte before and after timing: a wrong byte aborts the job. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include "bench_util.h"

enum {
    MAX_PARTNERS = 12,
    MAX_REPS = 101,
    MAX_SIZES = 40,
    TAG_HALO = 7,
};

/* Partner offsets in the order they are taken: --partners N uses the first N. They
 * come in pairs (k, k^1) that are each other's negation, so the partner relation is
 * symmetric and a reader finds its slot in the owner's segment as k^1. 1-D: the
 * nearest ranks on both sides, then the next nearest (mpptest's "deeper density"); 2-D:
 * the 4 axis neighbours, the 4 diagonals, then distance 2 along the axes. */
static const int offsets_1d[MAX_PARTNERS][2] = {
    {-1, 0}, {1, 0}, {-2, 0}, {2, 0}, {-3, 0}, {3, 0},
    {-4, 0}, {4, 0}, {-5, 0}, {5, 0}, {-6, 0}, {6, 0},
};
static const int offsets_2d[MAX_PARTNERS][2] = {
    {-1, 0}, {1, 0},  {0, -1}, {0, 1}, {-1, -1}, {1, 1},
    {-1, 1}, {1, -1}, {-2, 0}, {2, 0}, {0, -2},  {0, 2},
};

typedef enum { V_WAITALL, V_LOCK, V_LOCKALL, V_FENCE, NVARIANTS } variant_t;
static const char *const variant_name[NVARIANTS] = {"waitall", "mpi3shm_lock", "mpi3shm_lockall",
                                                    "mpi3shm_fence"};

typedef struct {
    unsigned variants; /* bit v: variant v runs */
    unsigned dims;     /* bit 1: 1-D, bit 2: 2-D */
    int partners, iters, reps, quick, help;
    size_t min, max;
} opts_t;

/* One rank's view of one decomposition. slot[k] is the partner at offset k, or -1
 * where the offset falls off the (non-periodic) grid, as in mpptest. */
typedef struct {
    const opts_t *o;
    int rank, nranks, dim;
    int slot[MAX_PARTNERS];
    int count;                        /* partners that exist */
    unsigned char *send, *recv;       /* waitall: MAX_PARTNERS slots of stride(max) each */
    MPI_Comm shm;                     /* the ranks sharing memory with this one */
    MPI_Win win;                      /* mpi3shm_*: 2 halves x MAX_PARTNERS slots per rank */
    unsigned char *mine;              /* this rank's segment */
    unsigned char *seg[MAX_PARTNERS]; /* the partners' segments (this process's address) */
    int shm_rank[MAX_PARTNERS];       /* the partners' ranks in shm (lock targets) */
    long iter;                        /* exchanges done: selects the half of the window */
    int round;                        /* which pattern is checked: 0 before timing, 1 after */
    size_t slot_bytes;
} halo_t;

static size_t stride(size_t size) { return (size + 63) & ~(size_t)63; }

/* ---- decomposition ---------------------------------------------------------------- */

static void decompose(halo_t *h, int dim)
{
    int dims[2] = {0, 0};
    const int(*off)[2] = dim == 1 ? offsets_1d : offsets_2d;
    if (dim == 1) {
        dims[0] = h->nranks;
        dims[1] = 1;
    } else {
        MPI_Dims_create(h->nranks, 2, dims);
    }
    int x = h->rank % dims[0], y = h->rank / dims[0];
    h->dim = dim;
    h->count = 0;
    for (int k = 0; k < MAX_PARTNERS; k++) {
        int px = x + off[k][0], py = y + off[k][1];
        h->slot[k] = -1;
        if (k < h->o->partners && px >= 0 && px < dims[0] && py >= 0 && py < dims[1]) {
            h->slot[k] = py * dims[0] + px;
            h->count++;
        }
    }
}

/* ---- data patterns ---------------------------------------------------------------- */

/* The contents of the message of `size` bytes from rank `from` to `to` in a round. */
static uint64_t seed_of(size_t size, int from, int to, int round)
{
    return bench_mix(((uint64_t)size << 32) ^ ((uint64_t)from << 16) ^ ((uint64_t)to << 1) ^
                     (uint64_t)round);
}

static void verify(const halo_t *h, const char *test, const unsigned char *p, size_t n, int from)
{
    uint64_t seed = seed_of(n, from, h->rank, h->round);
    size_t first;
    if (bench_wrong_bytes(p, n, seed, &first) == 0)
        return;
    fprintf(stderr,
            "halo: rank %d, %s, %zu B, %s check, message from rank %d: wrong "
            "byte at %zu: 0x%02x, expected 0x%02x\n",
            h->rank, test, n, h->round ? "second" : "first", from, first, p[first],
            bench_pattern_byte(seed, first));
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Where the data to partner k lies: the send slot, or this rank's window slot in the
 * half the next exchange uses. */
static unsigned char *out_slot(const halo_t *h, variant_t v, int k)
{
    if (v == V_WAITALL)
        return h->send + k * h->slot_bytes;
    return h->mine + ((size_t)(h->iter & 1) * MAX_PARTNERS + (size_t)k) * h->slot_bytes;
}

/* Fresh patterns out, their complement in the receive slots: a receive that completes
 * without data is caught. */
static void prepare(halo_t *h, variant_t v, size_t size)
{
    for (int k = 0; k < MAX_PARTNERS; k++) {
        if (h->slot[k] < 0)
            continue;
        bench_fill(out_slot(h, v, k), size, seed_of(size, h->rank, h->slot[k], h->round), 0);
        bench_fill(h->recv + k * h->slot_bytes, size, seed_of(size, h->slot[k], h->rank, h->round),
                   ~0ull);
    }
}

/* ---- the variants ------------------------------------------------------------------- */

/* Unchanged MPI code: post every receive, then every send, then wait for all. */
static void exchange_waitall(halo_t *h, size_t size)
{
    MPI_Request req[2 * MAX_PARTNERS];
    MPI_Status st[2 * MAX_PARTNERS];
    int n = 0;
    for (int k = 0; k < MAX_PARTNERS; k++) {
        if (h->slot[k] >= 0)
            MPI_Irecv(h->recv + k * h->slot_bytes, (int)size, MPI_BYTE, h->slot[k], TAG_HALO,
                      MPI_COMM_WORLD, &req[n++]);
    }
    for (int k = 0; k < MAX_PARTNERS; k++) {
        if (h->slot[k] >= 0)
            MPI_Isend(h->send + k * h->slot_bytes, (int)size, MPI_BYTE, h->slot[k], TAG_HALO,
                      MPI_COMM_WORLD, &req[n++]);
    }
    MPI_Waitall(n, req, st);
}

/* Copies partner k's data for this rank out of the partner's segment: the slot of the
 * opposite offset (k ^ 1) in the half this exchange uses. */
static void copy_in(halo_t *h, size_t size)
{
    size_t half = (size_t)(h->iter & 1) * MAX_PARTNERS;
    for (int k = 0; k < MAX_PARTNERS; k++) {
        if (h->slot[k] >= 0)
            memcpy(h->recv + k * h->slot_bytes,
                   h->seg[k] + (half + (size_t)(k ^ 1)) * h->slot_bytes, size);
    }
}

/* Inside a passive-target epoch (lock or lock_all, opened per timed repetition as in the
 * paper): make this rank's stores visible, wait for everyone, see theirs, then copy.
 * The two halves alternate, so an owner never rewrites a half a slow reader may still
 * be reading: one barrier per exchange is enough. */
static void exchange_passive(halo_t *h, size_t size)
{
    MPI_Win_sync(h->win);
    MPI_Barrier(h->shm);
    MPI_Win_sync(h->win);
    copy_in(h, size);
    h->iter++;
}

/* Active target: the fence completes the stores before it and separates the halves. */
static void exchange_fence(halo_t *h, size_t size)
{
    MPI_Win_fence(0, h->win);
    copy_in(h, size);
    h->iter++;
}

static void epoch_open(halo_t *h, variant_t v)
{
    if (v == V_LOCKALL) {
        MPI_Win_lock_all(MPI_MODE_NOCHECK, h->win);
    } else if (v == V_LOCK) {
        int me = 0;
        MPI_Comm_rank(h->shm, &me);
        MPI_Win_lock(MPI_LOCK_SHARED, me, MPI_MODE_NOCHECK, h->win);
        for (int k = 0; k < MAX_PARTNERS; k++) {
            if (h->slot[k] >= 0)
                MPI_Win_lock(MPI_LOCK_SHARED, h->shm_rank[k], MPI_MODE_NOCHECK, h->win);
        }
    } else if (v == V_FENCE) {
        MPI_Win_fence(MPI_MODE_NOPRECEDE, h->win);
    }
}

static void epoch_close(halo_t *h, variant_t v)
{
    if (v == V_LOCKALL) {
        MPI_Win_unlock_all(h->win);
    } else if (v == V_LOCK) {
        int me = 0;
        MPI_Comm_rank(h->shm, &me);
        for (int k = 0; k < MAX_PARTNERS; k++) {
            if (h->slot[k] >= 0)
                MPI_Win_unlock(h->shm_rank[k], h->win);
        }
        MPI_Win_unlock(me, h->win);
    } else if (v == V_FENCE) {
        MPI_Win_fence(MPI_MODE_NOSUCCEED, h->win);
    }
    if (v != V_WAITALL)
        MPI_Barrier(h->shm); /* no half is rewritten before every reader left the epoch */
}

static void exchange(halo_t *h, variant_t v, size_t size)
{
    if (v == V_WAITALL)
        exchange_waitall(h, size);
    else if (v == V_FENCE)
        exchange_fence(h, size);
    else
        exchange_passive(h, size);
}

/* One checked exchange on fresh patterns, in an epoch of its own, outside the timing. */
static void checked_exchange(halo_t *h, variant_t v, size_t size, int round, const char *test)
{
    h->round = round;
    prepare(h, v, size);
    MPI_Barrier(MPI_COMM_WORLD);
    epoch_open(h, v);
    exchange(h, v, size);
    epoch_close(h, v);
    for (int k = 0; k < MAX_PARTNERS; k++) {
        if (h->slot[k] >= 0)
            verify(h, test, h->recv + k * h->slot_bytes, size, h->slot[k]);
    }
}

/* ---- measuring ---------------------------------------------------------------------- */

/* Exchanges per repetition: --iters while an exchange moves at most 64 KiB per rank,
 * proportionally fewer above, at least 5. */
static long iterations(const halo_t *h, size_t size)
{
    double bytes = (double)size * (h->count > 0 ? h->count : 1), n = h->o->iters;
    if (bytes > 64.0 * KiB)
        n = n * 64.0 * KiB / bytes;
    return n < 5 ? 5 : (long)n;
}

/* The median over --reps of the slowest rank's microseconds per exchange (rank 0). */
static double measure(halo_t *h, variant_t v, size_t size, const char *test)
{
    long iters = 0, warm;
    double vals[MAX_REPS];
    /* every rank must do the same number of exchanges: agree on the largest count */
    long mine = iterations(h, size);
    MPI_Allreduce(&mine, &iters, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    warm = iters / 10 > 0 ? iters / 10 : 1;

    checked_exchange(h, v, size, 0, test);
    epoch_open(h, v);
    for (long i = 0; i < warm; i++)
        exchange(h, v, size);
    epoch_close(h, v);
    for (int r = 0; r < h->o->reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        epoch_open(h, v);
        for (long i = 0; i < iters; i++)
            exchange(h, v, size);
        epoch_close(h, v);
        double secs = MPI_Wtime() - t0, slowest = 0;
        MPI_Reduce(&secs, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        vals[r] = slowest / (double)iters * 1e6;
    }
    checked_exchange(h, v, size, 1, test);
    return bench_median(vals, h->o->reps);
}

/* The shared window: one segment per rank, its partners' segments looked up. Returns 0,
 * or -1 (with a comment on stdout from rank 0) when some rank's partners are not all
 * in its shared-memory domain, so the mpi3shm variants cannot run. */
static int window_setup(halo_t *h)
{
    int shm_size = 0, all = 0, ok;
    MPI_Group world_group, shm_group;
    int partners[MAX_PARTNERS], map[MAX_PARTNERS];
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &h->shm);
    MPI_Comm_size(h->shm, &shm_size);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(h->shm, &shm_group);
    for (int k = 0; k < MAX_PARTNERS; k++)
        partners[k] = h->slot[k] >= 0 ? h->slot[k] : h->rank;
    MPI_Group_translate_ranks(world_group, MAX_PARTNERS, partners, shm_group, map);
    MPI_Group_free(&world_group);
    MPI_Group_free(&shm_group);
    ok = 1;
    for (int k = 0; k < MAX_PARTNERS; k++)
        ok &= map[k] != MPI_UNDEFINED;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        if (h->rank == 0)
            printf("# note: some partners are on other nodes: mpi3shm variants skipped\n");
        MPI_Comm_free(&h->shm);
        return -1;
    }
    MPI_Aint bytes = (MPI_Aint)(2 * MAX_PARTNERS * h->slot_bytes);
    MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, h->shm, &h->mine, &h->win);
    for (int k = 0; k < MAX_PARTNERS; k++) {
        MPI_Aint seg_bytes;
        int unit;
        h->shm_rank[k] = map[k];
        h->seg[k] = NULL;
        if (h->slot[k] >= 0)
            MPI_Win_shared_query(h->win, map[k], &seg_bytes, &unit, &h->seg[k]);
    }
    return 0;
}

static void window_free(halo_t *h)
{
    MPI_Win_free(&h->win);
    MPI_Comm_free(&h->shm);
}

/* ---- command line ------------------------------------------------------------------- */

static const char usage[] =
    "usage: halo [options]      (any rank count: hmpirun -n 4 ./halo)\n"
    "mpptest-style halo exchange; rank 0 prints CSV test,size,value,unit with test\n"
    "VARIANT_1d or VARIANT_2d and value the slowest rank's microseconds per exchange.\n"
    "  -v, --variants=LIST  comma-separated, default all:\n"
    "        waitall          Irecv from and Isend to every partner, MPI_Waitall\n"
    "        mpi3shm_lock     MPI_Win_allocate_shared; each rank copies its halo out of\n"
    "                         its partners' segments; a shared MPI_Win_lock on self and\n"
    "                         each partner per repetition, MPI_Win_sync + MPI_Barrier +\n"
    "                         MPI_Win_sync per exchange\n"
    "        mpi3shm_lockall  the same under MPI_Win_lock_all\n"
    "        mpi3shm_fence    the same with one MPI_Win_fence per exchange\n"
    "  -d, --dim=LIST       decompositions: 1, 2 or 1,2 (default 1,2); 2-D grids come\n"
    "                       from MPI_Dims_create, neither is periodic (as in mpptest)\n"
    "  -p, --partners=N     partners per rank, even, 2..12 (default 4): 1-D takes the\n"
    "                       nearest N/2 ranks on each side; 2-D the 4 axis neighbours,\n"
    "                       then the 4 diagonals, then distance 2 along the axes;\n"
    "                       partners off the grid are dropped\n"
    "      --min=SIZE       smallest message (default 4); K suffix\n"
    "      --max=SIZE       largest message (default 128K); sizes are powers of two\n"
    "  -i, --iters=N        exchanges per repetition while a rank moves <= 64 KiB per\n"
    "                       exchange, fewer above, at least 5 (default 1000)\n"
    "  -r, --reps=N         timed repetitions, the median is printed (default 5)\n"
    "  -q, --quick          smoke test: 4 B and 1 KiB, 10 exchanges, 1 repetition\n"
    "  -h, --help           this text\n"
    "The two halves of each window segment alternate between exchanges, so one\n"
    "synchronization per exchange suffices; the epoch (lock, lock_all, first and last\n"
    "fence) is opened and closed inside each timed repetition, as in the paper.\n";

static int parse_size(const char *s, size_t *out_p)
{
    return bench_parse_size(s, "K", 16 * MiB, out_p);
}

static int parse_variants(const char *s, unsigned *out_p)
{
    return bench_parse_list(s, variant_name, NVARIANTS, out_p);
}

static int parse_dims(const char *s, unsigned *out_p)
{
    unsigned set = 0;
    for (; *s; s++) {
        if (*s == '1' || *s == '2')
            set |= 1u << (*s - '0');
        else if (*s != ',')
            return -1;
    }
    if (!set)
        return -1;
    *out_p = set;
    return 0;
}

static int parse(int argc, char **argv, opts_t *o, char *err, size_t errlen)
{
    enum { OPT_MIN = 256, OPT_MAX };
    static const struct option longopts[] = {
        {"variants", required_argument, NULL, 'v'}, {"dim", required_argument, NULL, 'd'},
        {"partners", required_argument, NULL, 'p'}, {"min", required_argument, NULL, OPT_MIN},
        {"max", required_argument, NULL, OPT_MAX},  {"iters", required_argument, NULL, 'i'},
        {"reps", required_argument, NULL, 'r'},     {"quick", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int opt, bad = 0;
    *o = (opts_t){.variants = (1u << NVARIANTS) - 1, .dims = 6, .partners = 4};
    opterr = 0;
    while (!bad && (opt = getopt_long(argc, argv, "v:d:p:i:r:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'v': bad = parse_variants(optarg, &o->variants); break;
        case 'd': bad = parse_dims(optarg, &o->dims); break;
        case 'p':
            bad = bench_parse_int(optarg, 2, MAX_PARTNERS, &o->partners) || o->partners % 2;
            break;
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
    o->min = o->min ? o->min : 4;
    o->max = o->max ? o->max : o->quick ? KiB : 128 * KiB;
    o->iters = o->iters ? o->iters : o->quick ? 10 : 1000;
    o->reps = o->reps ? o->reps : o->quick ? 1 : 5;
    if (o->min > o->max) {
        snprintf(err, errlen, "--min (%zu) is above --max (%zu)", o->min, o->max);
        return -1;
    }
    return 0;
}

/* Sizes: min, the powers of two between, max; --quick only the two ends. */
static int make_sizes(const opts_t *o, size_t *sizes)
{
    int n = 0;
    sizes[n++] = o->min;
    for (size_t p = 1; !o->quick && p < o->max; p *= 2) {
        if (p > o->min)
            sizes[n++] = p;
    }
    if (o->max > o->min)
        sizes[n++] = o->max;
    return n;
}

int main(int argc, char **argv)
{
    opts_t o;
    char err[160] = "", version[256], hmpi[96];
    int bad = parse(argc, argv, &o, err, sizeof err);
    halo_t h = {.o = &o};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &h.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &h.nranks);
    if (!bad && h.nranks < 2) {
        snprintf(err, sizeof err, "needs at least 2 ranks");
        bad = -1;
    }
    if (bad || o.help) {
        bench_usage_or_error(h.rank, "halo", bad ? err : NULL, usage);
        MPI_Finalize();
        return bad ? 2 : 0;
    }

    size_t sizes[MAX_SIZES];
    int nsizes = make_sizes(&o, sizes);
    h.slot_bytes = stride(o.max);
    h.send = malloc(MAX_PARTNERS * h.slot_bytes);
    h.recv = malloc(MAX_PARTNERS * h.slot_bytes);
    if (!h.send || !h.recv) {
        fprintf(stderr, "halo: rank %d: out of memory\n", h.rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (h.rank == 0) {
        char vars[96] = "";
        for (int v = 0; v < NVARIANTS; v++) {
            if (o.variants & 1u << v)
                snprintf(vars + strlen(vars), sizeof vars - strlen(vars), "%s%s",
                         vars[0] ? "," : "", variant_name[v]);
        }
        bench_mpi_version(version, sizeof version);
        bench_hmpi_state(h.send, NULL, hmpi, sizeof hmpi);
        printf("# halo: variants=%s dims=%s partners=%d sizes=%zu..%zu (%d) iters=%d reps=%d "
               "ranks=%d\n",
               vars,
               o.dims == 6   ? "1,2"
               : o.dims == 2 ? "1"
                             : "2",
               o.partners, sizes[0], sizes[nsizes - 1], nsizes, o.iters, o.reps, h.nranks);
        printf("# mpi: %s\n# hmpi: %s\n", version, hmpi);
    }
    int header = 0;
    for (int dim = 1; dim <= 2; dim++) {
        if (!(o.dims & 1u << dim))
            continue;
        decompose(&h, dim);
        int cnt[2] = {h.count, -h.count}, got[2];
        MPI_Reduce(cnt, got, 2, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
        int shm_ok = (o.variants & ~1u) ? window_setup(&h) == 0 : 0;
        if (h.rank == 0) {
            printf("# partners %dd: %d to %d per rank (of %d asked)\n", dim, -got[1], got[0],
                   o.partners);
            if (!header)
                printf("test,size,value,unit\n");
            header = 1;
            fflush(stdout);
        }
        for (int v = 0; v < NVARIANTS; v++) {
            char test[48];
            if (!(o.variants & 1u << v) || (v != V_WAITALL && !shm_ok))
                continue;
            snprintf(test, sizeof test, "%s_%dd", variant_name[v], dim);
            for (int s = 0; s < nsizes; s++) {
                double us = measure(&h, (variant_t)v, sizes[s], test);
                if (h.rank == 0) {
                    printf("%s,%zu,%.6g,us\n", test, sizes[s], us);
                    fflush(stdout);
                }
            }
        }
        if (shm_ok)
            window_free(&h);
    }
    free(h.send);
    free(h.recv);
    MPI_Finalize();
    return 0;
}
