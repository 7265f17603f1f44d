/* stencil.c: an application proxy of our own: explicit heat diffusion on an N^3 grid,
 * 7-point stencil, split over a 3-D process grid (MPI_Dims_create, MPI_Cart_create, not
 * periodic: the global boundary holds 0). Each step: the six faces are packed into
 * malloc'ed buffers and exchanged with Isend/Irecv (MPI_PROC_NULL at the boundary), the
 * stencil sweeps the block, and the squared change is summed with MPI_Allreduce (the
 * residual). Compute (the sweep and the local sum) and communication (packing, the
 * exchange, unpacking, the allreduce) are timed apart. Plain MPI: built against the MPI
 * below only, started under hmpirun (bench/run stencil compares it with HMPI_DISABLE=1).
 * Rank 0 prints CSV "test,size,value,unit" (size: bytes of one global grid, N^3 x 8):
 * total, compute, comm in us per step (the slowest rank's, medians over --reps) and
 * comm_pct. --check makes every rank also run the whole grid serially and compare its
 * block bit for bit and the residuals to 1e-12; a difference aborts the job. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include <mpi.h>

#include <dlfcn.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SIZES = 16, MAX_REPS = 101, MAX_STEPS = 100000 };
#define C_DIFF 0.125 /* explicit step: stable below 1/6 */

typedef struct {
    int sizes[MAX_SIZES], nsizes, steps, reps, check, help;
} opts_t;

/* A block of the grid with one layer of halo: cells (i, j, k), 0 <= i < nx + 2 ... */
typedef struct {
    int nx, ny, nz; /* interior cells */
    int ox, oy, oz; /* global index of interior cell (1, 1, 1) minus 1 */
    size_t sx, sy;  /* strides: j and k */
    double *u, *v;  /* now, next */
} block_t;

#define AT(b, i, j, k) ((size_t)(i) + (size_t)(j) * (b)->sx + (size_t)(k) * (b)->sy)

/* The starting value of global cell (x, y, z), 0-based, of an n^3 grid: a smooth bump
 * plus a little deterministic noise, the same whoever computes it. */
static double initial(int x, int y, int z, int n)
{
    double fx = (x + 0.5) / n, fy = (y + 0.5) / n, fz = (z + 0.5) / n;
    uint64_t h = (uint64_t)x * 73856093u ^ (uint64_t)y * 19349663u ^ (uint64_t)z * 83492791u;
    h ^= h >> 13;
    h *= 0x9E3779B97F4A7C15ull;
    return sin(M_PI * fx) * sin(M_PI * fy) * sin(M_PI * fz) + (double)(h >> 40) * 1e-9;
}

static int block_make(block_t *b, int nx, int ny, int nz, int ox, int oy, int oz, int n)
{
    *b = (block_t){.nx = nx, .ny = ny, .nz = nz, .ox = ox, .oy = oy, .oz = oz};
    b->sx = (size_t)nx + 2;
    b->sy = b->sx * ((size_t)ny + 2);
    size_t cells = b->sy * ((size_t)nz + 2);
    b->u = calloc(cells, sizeof(double)); /* halos start at 0: the global boundary */
    b->v = calloc(cells, sizeof(double));
    if (b->u == NULL || b->v == NULL)
        return -1;
    for (int k = 1; k <= nz; k++)
        for (int j = 1; j <= ny; j++)
            for (int i = 1; i <= nx; i++)
                b->u[AT(b, i, j, k)] = initial(ox + i - 1, oy + j - 1, oz + k - 1, n);
    return 0;
}

static void block_free(block_t *b)
{
    free(b->u);
    free(b->v);
}

/* One sweep: v = u + c (sum of the 6 neighbours - 6u) on the interior; then u and v
 * swap. Returns the local sum of (v - u)^2. The same operations in the same order per
 * cell whatever the decomposition, so blocks match the serial grid bit for bit. */
static double sweep(block_t *b)
{
    double r = 0;
    for (int k = 1; k <= b->nz; k++) {
        for (int j = 1; j <= b->ny; j++) {
            const double *u = b->u + AT(b, 0, j, k);
            double *v = b->v + AT(b, 0, j, k);
            const double *n = u - b->sx, *s = u + b->sx, *d = u - b->sy, *t = u + b->sy;
            for (int i = 1; i <= b->nx; i++) {
                double nb = ((((u[i - 1] + u[i + 1]) + n[i]) + s[i]) + d[i]) + t[i];
                double x = u[i] + C_DIFF * (nb - 6.0 * u[i]);
                double dx = x - u[i];
                v[i] = x;
                r += dx * dx;
            }
        }
    }
    double *tmp = b->u;
    b->u = b->v;
    b->v = tmp;
    return r;
}

/* ---- the halo exchange ------------------------------------------------------------- */

typedef struct {
    MPI_Comm cart;
    int nbr[6];      /* -x +x -y +y -z +z (MPI_PROC_NULL at the boundary) */
    size_t count[6]; /* doubles per face */
    double *out[6], *in[6];
} halo_t;

/* Copies face f of the interior into buf (pack) or the halo layer beyond face f from
 * buf (unpack). */
static void face_copy(block_t *b, int f, double *buf, int pack)
{
    int axis = f / 2, hi = f % 2;
    int n[3] = {b->nx, b->ny, b->nz};
    int layer = pack ? (hi ? n[axis] : 1) : (hi ? n[axis] + 1 : 0);
    size_t q = 0;
    int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2; /* the two other axes */
    for (int c2 = 1; c2 <= n[a2]; c2++) {
        for (int c1 = 1; c1 <= n[a1]; c1++) {
            int idx[3];
            idx[axis] = layer;
            idx[a1] = c1;
            idx[a2] = c2;
            double *cell = &b->u[AT(b, idx[0], idx[1], idx[2])];
            if (pack)
                buf[q++] = *cell;
            else
                *cell = buf[q++];
        }
    }
}

static int halo_make(halo_t *h, MPI_Comm cart, const block_t *b)
{
    h->cart = cart;
    for (int axis = 0; axis < 3; axis++)
        MPI_Cart_shift(cart, axis, 1, &h->nbr[2 * axis], &h->nbr[2 * axis + 1]);
    size_t face[3] = {(size_t)b->ny * b->nz, (size_t)b->nx * b->nz, (size_t)b->nx * b->ny};
    for (int f = 0; f < 6; f++) {
        h->count[f] = face[f / 2];
        h->out[f] = malloc(h->count[f] * sizeof(double));
        h->in[f] = malloc(h->count[f] * sizeof(double));
        if (h->out[f] == NULL || h->in[f] == NULL)
            return -1;
    }
    return 0;
}

static void halo_free(halo_t *h)
{
    for (int f = 0; f < 6; f++) {
        free(h->out[f]);
        free(h->in[f]);
    }
}

/* Face f goes to nbr[f]; what comes from nbr[f] is that rank's opposite face (tag: the
 * face it left by), unpacked into the halo beyond f. */
static void halo_exchange(halo_t *h, block_t *b)
{
    MPI_Request req[12];
    MPI_Status st[12]; /* not MPI_STATUSES_IGNORE: GCC's -Wstringop-overflow takes it for a
                        * 20-byte array of MPICH's annotated prototype */
    for (int f = 0; f < 6; f++)
        MPI_Irecv(h->in[f], (int)h->count[f], MPI_DOUBLE, h->nbr[f], f ^ 1, h->cart, &req[f]);
    for (int f = 0; f < 6; f++) {
        if (h->nbr[f] != MPI_PROC_NULL)
            face_copy(b, f, h->out[f], 1);
        MPI_Isend(h->out[f], (int)h->count[f], MPI_DOUBLE, h->nbr[f], f, h->cart, &req[6 + f]);
    }
    MPI_Waitall(12, req, st);
    for (int f = 0; f < 6; f++)
        if (h->nbr[f] != MPI_PROC_NULL)
            face_copy(b, f, h->in[f], 0);
}

/* ---- one run ------------------------------------------------------------------------ */

typedef struct {
    double total, compute, comm;                      /* seconds per step, this rank */
    double residual[MAX_STEPS > 64 ? 64 : MAX_STEPS]; /* the first steps' residuals */
    double sum;                                       /* global sum of u at the end */
} result_t;

/* This rank's part of an n^3 grid over the process grid dims of cart. */
static void split(int n, int dims, int coord, int *len_p, int *off_p)
{
    int base = n / dims, extra = n % dims;
    *len_p = base + (coord < extra);
    *off_p = coord * base + (coord < extra ? coord : extra);
}

static void run(MPI_Comm cart, int n, int steps, int check, result_t *res)
{
    int dims[3], periods[3], coords[3], rank;
    MPI_Cart_get(cart, 3, dims, periods, coords);
    MPI_Comm_rank(cart, &rank);
    int len[3], off[3];
    for (int a = 0; a < 3; a++)
        split(n, dims[a], coords[a], &len[a], &off[a]);
    block_t b;
    halo_t h;
    if (block_make(&b, len[0], len[1], len[2], off[0], off[1], off[2], n) != 0 ||
        halo_make(&h, cart, &b) != 0) {
        fprintf(stderr, "stencil: rank %d: out of memory for a %dx%dx%d block\n", rank, len[0],
                len[1], len[2]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double t_comp = 0, t_comm = 0;
    MPI_Barrier(cart);
    double t_start = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        double t0 = MPI_Wtime();
        halo_exchange(&h, &b);
        double t1 = MPI_Wtime();
        double local = sweep(&b), global = 0;
        double t2 = MPI_Wtime();
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, cart);
        double t3 = MPI_Wtime();
        t_comm += (t1 - t0) + (t3 - t2);
        t_comp += t2 - t1;
        if (s < (int)(sizeof res->residual / sizeof res->residual[0]))
            res->residual[s] = sqrt(global);
    }
    res->total = (MPI_Wtime() - t_start) / steps;
    res->compute = t_comp / steps;
    res->comm = t_comm / steps;
    double local = 0;
    for (int k = 1; k <= b.nz; k++)
        for (int j = 1; j <= b.ny; j++)
            for (int i = 1; i <= b.nx; i++)
                local += b.u[AT(&b, i, j, k)];
    MPI_Allreduce(&local, &res->sum, 1, MPI_DOUBLE, MPI_SUM, cart);

    if (check) {
        /* The whole grid, serially, by this rank: its block must match bit for bit. */
        block_t g;
        if (block_make(&g, n, n, n, 0, 0, 0, n) != 0) {
            fprintf(stderr, "stencil: rank %d: no memory for the serial check\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int s = 0; s < steps; s++) {
            double r = sqrt(sweep(&g));
            if (s < (int)(sizeof res->residual / sizeof res->residual[0]) &&
                fabs(r - res->residual[s]) > 1e-12 * (r > 1 ? r : 1)) {
                fprintf(stderr, "stencil: rank %d, n %d, step %d: residual %.17g, serial %.17g\n",
                        rank, n, s, res->residual[s], r);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        for (int k = 1; k <= b.nz; k++)
            for (int j = 1; j <= b.ny; j++)
                for (int i = 1; i <= b.nx; i++) {
                    double mine = b.u[AT(&b, i, j, k)];
                    double want = g.u[AT(&g, off[0] + i, off[1] + j, off[2] + k)];
                    if (memcmp(&mine, &want, sizeof mine) != 0) {
                        fprintf(stderr,
                                "stencil: rank %d, n %d, after %d steps: cell (%d,%d,%d) "
                                "is %.17g, serial %.17g\n",
                                rank, n, steps, off[0] + i - 1, off[1] + j - 1, off[2] + k - 1,
                                mine, want);
                        MPI_Abort(MPI_COMM_WORLD, 3);
                    }
                }
        block_free(&g);
    }
    halo_free(&h);
    block_free(&b);
}

/* ---- command line ------------------------------------------------------------------- */

static const char usage[] =
    "usage: stencil [options]      (any rank count: hmpirun -n 4 ./stencil)\n"
    "7-point heat diffusion on an N^3 grid over a 3-D process grid; each step a halo\n"
    "exchange (Isend/Irecv of packed faces) and an allreduce of the residual. Rank 0\n"
    "prints CSV test,size,value,unit (size = N^3 x 8 bytes): total, compute, comm (us\n"
    "per step, the slowest rank, median over repetitions) and comm_pct (comm / total).\n"
    "  -n, --sizes=LIST  grid edges N, comma-separated (default 32,64,128,256)\n"
    "  -s, --steps=N     steps per repetition (default 20)\n"
    "  -r, --reps=N      repetitions, the median is printed (default 3)\n"
    "  -c, --check       also compute the grid serially on every rank and compare\n"
    "  -q, --quick       smoke test: N 16 and 32, 4 steps, 1 repetition, --check\n"
    "  -h, --help        this text\n";

static int parse_int(const char *s, int lo, int hi, int *out_p)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out_p = (int)v;
    return 0;
}

static int parse(int argc, char **argv, opts_t *o, char *err, size_t errlen)
{
    static const struct option longopts[] = {
        {"sizes", required_argument, NULL, 'n'},
        {"steps", required_argument, NULL, 's'},
        {"reps", required_argument, NULL, 'r'},
        {"check", no_argument, NULL, 'c'},
        {"quick", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt, quick = 0;
    *o = (opts_t){0};
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "n:s:r:cqh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'n': {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", optarg);
            o->nsizes = 0;
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                if (o->nsizes == MAX_SIZES || parse_int(tok, 2, 2048, &o->sizes[o->nsizes]) != 0) {
                    snprintf(err, errlen,
                             "bad value '%s' for --sizes (edges 2 to 2048, at "
                             "most %d)",
                             optarg, MAX_SIZES);
                    return -1;
                }
                o->nsizes++;
            }
            break;
        }
        case 's':
            if (parse_int(optarg, 1, MAX_STEPS, &o->steps) != 0) {
                snprintf(err, errlen, "bad value '%s' for --steps", optarg);
                return -1;
            }
            break;
        case 'r':
            if (parse_int(optarg, 1, MAX_REPS, &o->reps) != 0) {
                snprintf(err, errlen, "bad value '%s' for --reps", optarg);
                return -1;
            }
            break;
        case 'c': o->check = 1; break;
        case 'q': quick = 1; break;
        case 'h': o->help = 1; break;
        default:
            snprintf(err, errlen, "unknown option or missing value: %s", argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument: %s", argv[optind]);
        return -1;
    }
    if (o->nsizes == 0) {
        static const int quick_sizes[] = {16, 32}, full[] = {32, 64, 128, 256};
        const int *s = quick ? quick_sizes : full;
        o->nsizes = quick ? 2 : 4;
        memcpy(o->sizes, s, (size_t)o->nsizes * sizeof(int));
    }
    o->steps = o->steps ? o->steps : quick ? 4 : 20;
    o->reps = o->reps ? o->reps : quick ? 1 : 3;
    o->check |= quick;
    return 0;
}

/* "active, buffers in the shared heap" and the like: HMPI found by dlsym (this program
 * is linked with the MPI below only), as bench/run expects on its "# hmpi:" line. */
static void hmpi_state(char *out, size_t len)
{
    int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "HMPI_Active");
    int (*shared)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "HMPI_Is_shared");
    if (!active || !shared) {
        snprintf(out, len, "not loaded");
        return;
    }
    void *p = malloc(1 << 16);
    snprintf(out, len, "%s, buffers %s", active() ? "active" : "pass-through",
             shared(p) ? "in the shared heap" : "private");
    free(p);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    opts_t o;
    char err[200] = "";
    int bad = parse(argc, argv, &o, err, sizeof err);
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (bad || o.help) {
        if (rank == 0) {
            if (bad)
                fprintf(stderr, "stencil: %s (see --help)\n", err);
            else
                fputs(usage, stdout);
        }
        MPI_Finalize();
        return bad ? 2 : 0;
    }
    int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0};
    MPI_Dims_create(nranks, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    if (rank == 0) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(v, &len);
        printf("# stencil: 7-point, %d ranks as %dx%dx%d, steps=%d reps=%d%s\n", nranks, dims[0],
               dims[1], dims[2], o.steps, o.reps, o.check ? ", checked against a serial run" : "");
        char state[96];
        hmpi_state(state, sizeof state);
        printf("# mpi: %.*s\n# hmpi: %s\n", (int)strcspn(v, "\n"), v, state);
        printf("test,size,value,unit\n");
        fflush(stdout);
    }
    for (int s = 0; s < o.nsizes; s++) {
        int n = o.sizes[s];
        if (n < dims[0] || n < dims[1] || n < dims[2]) {
            if (rank == 0)
                fprintf(stderr, "stencil: N=%d is smaller than the process grid\n", n);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        double tot[MAX_REPS], comp[MAX_REPS], comm[MAX_REPS], sum = 0, res0 = 0, resl = 0;
        for (int k = 0; k < o.reps; k++) {
            static result_t r;
            memset(&r, 0, sizeof r);
            run(cart, n, o.steps, o.check && k == 0, &r);
            double mine[3] = {r.total, r.compute, r.comm}, worst[3];
            MPI_Reduce(mine, worst, 3, MPI_DOUBLE, MPI_MAX, 0, cart);
            tot[k] = worst[0];
            comp[k] = worst[1];
            comm[k] = worst[2];
            sum = r.sum;
            res0 = r.residual[0];
            int last = o.steps - 1 < 63 ? o.steps - 1 : 63;
            resl = r.residual[last];
        }
        if (rank == 0) {
            size_t bytes = (size_t)n * n * n * sizeof(double);
            double t = median(tot, o.reps), c = median(comp, o.reps), m = median(comm, o.reps);
            printf("# N=%d: residual %.12g at step 1, %.12g at step %d; sum of u %.15g\n", n, res0,
                   resl, o.steps < 64 ? o.steps : 64, sum);
            printf("total,%zu,%.6g,us\ncompute,%zu,%.6g,us\ncomm,%zu,%.6g,us\n"
                   "comm_pct,%zu,%.4g,%%\n",
                   bytes, t * 1e6, bytes, c * 1e6, bytes, m * 1e6, bytes, 100.0 * m / t);
            fflush(stdout);
        }
    }
    if (rank == 0 && o.check)
        printf("# check: every block matched the serial grid bit for bit\n");
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
