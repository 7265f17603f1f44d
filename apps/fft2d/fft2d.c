/* fft2d.c: the 2-D FFT of the OPI paper, §5.3, with three ways to exchange.
 * An nx x ny complex array, x-major, is distributed by x: each rank holds nx/P rows
 * of ny points. One transform:
 *   1. ny-point FFTs along y of the local rows (FFTW);
 *   2-4. transpose: pack one block per rank, exchange all-to-all, unpack, so each rank
 *        holds ny/P rows of nx points along x;
 *   5. nx-point FFTs along x;
 *   6-8. transpose back to the original layout.
 * Exchanges (-x): alltoall (MPI_Alltoall), p2p (MPI_Isend/MPI_Irecv of the blocks, a
 * copy), opi (a buffer per block, OPI_Igive/OPI_Itake: within a node no block is
 * copied; unpacked as ownership arrives). p2p and opi transpose a rank's own block
 * straight into place instead of sending it to themselves. The first transform is
 * checked against FFTW's single-process 2-D FFT on rank 0 (max error relative to the
 * largest coefficient); then -i transforms are timed. Rank 0 prints CSV "test,size,value,unit":
 * total_<x> and comm_<x> (pack + exchange + unpack, both transposes), median ms.
 *   fft2d [-n N | -s NXxNY] [-x alltoall|p2p|opi] [-i ITERS] [-c 0|1] [-e BOUND] */
#include "hmpi.h"

#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum { X_ALLTOALL, X_P2P, X_OPI, X_COUNT } exchange_t;
static const char *const x_names[X_COUNT] = {"alltoall", "p2p", "opi"};

enum { TAG = 31 };

typedef struct {
    int rank, size;
    int nx, ny; /* global shape */
    int lx, ly; /* local rows in each layout: nx/P and ny/P */
    size_t blk; /* points per block: lx * ly */
    exchange_t x;
    fftw_complex *a;           /* [lx][ny]: rows along y (input and output layout) */
    fftw_complex *b;           /* [ly][nx]: rows along x */
    fftw_complex *sbuf, *rbuf; /* alltoall and p2p: P blocks each */
    fftw_plan fy, fx;
    MPI_Request *reqs; /* 2P */
    fftw_complex **in; /* opi: taken blocks */
    double comm;       /* seconds in exchanges during the last transform */
} fft_t;

/* Transposes go tile by tile (32 x 32 points), the innermost loop writing the packed
 * block in order and reading down a column: rows of a power-of-two length put a
 * column's lines in one cache set, which reads bear better than writes (this order
 * packs 1.9x faster than the other one here, standalone). */
enum { TILE = 32 };

/* The block for rank q in the forward transpose: a[.][q*ly ..] read down the rows, so
 * that the receiver writes whole runs: out[j][i] = a[i][q*ly + j], rows of out `ld`
 * points apart (lx for a packed block; nx to transpose this rank's own block in place). */
static void pack_fwd(const fft_t *f, int q, fftw_complex *out, size_t ld)
{
    const fftw_complex *src = f->a + (size_t)q * f->ly;
    for (int j0 = 0; j0 < f->ly; j0 += TILE)
        for (int i0 = 0; i0 < f->lx; i0 += TILE)
            for (int j = j0; j < j0 + TILE && j < f->ly; j++)
                for (int i = i0; i < i0 + TILE && i < f->lx; i++)
                    out[(size_t)j * ld + i] = src[(size_t)i * f->ny + j];
}

/* The block from rank p: b[j][p*lx + i] = in[j][i]. */
static void unpack_fwd(fft_t *f, int p, const fftw_complex *in)
{
    for (int j = 0; j < f->ly; j++)
        memcpy(&f->b[(size_t)j * f->nx + (size_t)p * f->lx], &in[(size_t)j * f->lx],
               sizeof(fftw_complex) * (size_t)f->lx);
}

/* Backward transpose: out[i][j] = b[j][q*lx + i] (rows `ld` apart: ly, or ny in place);
 * a[i][p*ly + j] = in[i][j]. */
static void pack_bwd(const fft_t *f, int q, fftw_complex *out, size_t ld)
{
    const fftw_complex *src = f->b + (size_t)q * f->lx;
    for (int i0 = 0; i0 < f->lx; i0 += TILE)
        for (int j0 = 0; j0 < f->ly; j0 += TILE)
            for (int i = i0; i < i0 + TILE && i < f->lx; i++)
                for (int j = j0; j < j0 + TILE && j < f->ly; j++)
                    out[(size_t)i * ld + j] = src[(size_t)j * f->nx + i];
}

static void unpack_bwd(fft_t *f, int p, const fftw_complex *in)
{
    for (int i = 0; i < f->lx; i++)
        memcpy(&f->a[(size_t)i * f->ny + (size_t)p * f->ly], &in[(size_t)i * f->ly],
               sizeof(fftw_complex) * (size_t)f->ly);
}

typedef void (*pack_fn)(const fft_t *, int, fftw_complex *, size_t);
typedef void (*unpack_fn)(fft_t *, int, const fftw_complex *);

/* This rank's own block, transposed straight into place (p2p and opi: a message to
 * oneself is only a detour; MPI_Alltoall has no way around it). */
static void transpose_own(fft_t *f, pack_fn pack)
{
    if (pack == pack_fwd)
        pack_fwd(f, f->rank, f->b + (size_t)f->rank * f->lx, (size_t)f->nx);
    else
        pack_bwd(f, f->rank, f->a + (size_t)f->rank * f->ly, (size_t)f->ny);
}

static size_t packed_ld(const fft_t *f, pack_fn pack)
{
    return pack == pack_fwd ? (size_t)f->lx : (size_t)f->ly;
}

/* ---- the three exchanges: pack every block, move them, unpack every block -------------- */

static void exchange_alltoall(fft_t *f, pack_fn pack, unpack_fn unpack)
{
    for (int q = 0; q < f->size; q++)
        pack(f, q, f->sbuf + (size_t)q * f->blk, packed_ld(f, pack));
    MPI_Alltoall(f->sbuf, (int)(2 * f->blk), MPI_DOUBLE, f->rbuf, (int)(2 * f->blk), MPI_DOUBLE,
                 MPI_COMM_WORLD);
    for (int p = 0; p < f->size; p++)
        unpack(f, p, f->rbuf + (size_t)p * f->blk);
}

/* Requests [0, n) receive, [n, 2n) send; this rank's own pair stays MPI_REQUEST_NULL. */
static void exchange_p2p(fft_t *f, pack_fn pack, unpack_fn unpack)
{
    int n = f->size, cnt = (int)(2 * f->blk);
    for (int p = 0; p < n; p++)
        f->reqs[p] = f->reqs[n + p] = MPI_REQUEST_NULL;
    for (int p = 0; p < n; p++)
        if (p != f->rank)
            MPI_Irecv(f->rbuf + (size_t)p * f->blk, cnt, MPI_DOUBLE, p, TAG, MPI_COMM_WORLD,
                      &f->reqs[p]);
    for (int k = 1; k < n; k++) { /* right neighbour first: spread the load */
        int q = (f->rank + k) % n;
        pack(f, q, f->sbuf + (size_t)q * f->blk, packed_ld(f, pack));
        MPI_Isend(f->sbuf + (size_t)q * f->blk, cnt, MPI_DOUBLE, q, TAG, MPI_COMM_WORLD,
                  &f->reqs[n + q]);
    }
    transpose_own(f, pack);
    for (int k = 1; k < n; k++) {
        int p;
        MPI_Waitany(n, f->reqs, &p, MPI_STATUS_IGNORE);
        unpack(f, p, f->rbuf + (size_t)p * f->blk);
    }
    for (int q = 0; q < n; q++)
        MPI_Wait(&f->reqs[n + q], MPI_STATUS_IGNORE);
}

/* The OPI paper, §3.5: one buffer per block from this rank's pool, packed and
 * given away; taken blocks unpacked as they arrive and freed into this rank's pool. */
static void exchange_opi(fft_t *f, pack_fn pack, unpack_fn unpack)
{
    int n = f->size, cnt = (int)(2 * f->blk);
    for (int p = 0; p < n; p++)
        f->reqs[p] = f->reqs[n + p] = MPI_REQUEST_NULL;
    for (int p = 0; p < n; p++)
        if (p != f->rank)
            OPI_Itake((void **)&f->in[p], cnt, MPI_DOUBLE, p, TAG, MPI_COMM_WORLD, &f->reqs[p]);
    for (int k = 1; k < n; k++) {
        int q = (f->rank + k) % n;
        fftw_complex *out;
        OPI_Alloc((void **)&out, sizeof(fftw_complex) * f->blk);
        pack(f, q, out, packed_ld(f, pack));
        OPI_Igive((void **)&out, cnt, MPI_DOUBLE, q, TAG, MPI_COMM_WORLD, &f->reqs[n + q]);
    }
    transpose_own(f, pack);
    for (int k = 1; k < n; k++) {
        int p;
        MPI_Waitany(n, f->reqs, &p, MPI_STATUS_IGNORE);
        unpack(f, p, f->in[p]);
        OPI_Free((void **)&f->in[p]);
    }
    for (int q = 0; q < n; q++)
        MPI_Wait(&f->reqs[n + q], MPI_STATUS_IGNORE);
}

static void exchange(fft_t *f, pack_fn pack, unpack_fn unpack)
{
    double t0 = MPI_Wtime();
    switch (f->x) {
    case X_ALLTOALL: exchange_alltoall(f, pack, unpack); break;
    case X_P2P: exchange_p2p(f, pack, unpack); break;
    default: exchange_opi(f, pack, unpack); break;
    }
    f->comm += MPI_Wtime() - t0;
}

static void transform(fft_t *f)
{
    f->comm = 0;
    fftw_execute(f->fy);
    exchange(f, pack_fwd, unpack_fwd);
    fftw_execute(f->fx);
    exchange(f, pack_bwd, unpack_bwd);
}

/* ---- setup, input, check ----------------------------------------------------------------- */

static fftw_complex input(int x, int y)
{
    unsigned h = (unsigned)x * 2654435761u ^ (unsigned)y * 40503u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (double)(h & 0xffff) / 65536.0 - 0.5 + I * (sin(0.01 * x) * cos(0.02 * y));
}

static void fill(fft_t *f)
{
    for (int i = 0; i < f->lx; i++)
        for (int y = 0; y < f->ny; y++)
            f->a[(size_t)i * f->ny + y] = input(f->rank * f->lx + i, y);
}

/* Rank 0 gathers the result and compares it with FFTW's 2-D transform of the input.
 * Returns the max |difference| / max |coefficient| on every rank. */
static double check(fft_t *f)
{
    size_t local = (size_t)f->lx * f->ny, all = (size_t)f->nx * f->ny;
    fftw_complex *got = NULL, *in = NULL, *want = NULL;
    if (f->rank == 0) {
        got = fftw_malloc(sizeof(fftw_complex) * all);
        in = fftw_malloc(sizeof(fftw_complex) * all);
        want = fftw_malloc(sizeof(fftw_complex) * all);
    }
    MPI_Gather(f->a, (int)(2 * local), MPI_DOUBLE, got, (int)(2 * local), MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    double err = 0;
    if (f->rank == 0) {
        fftw_plan p = fftw_plan_dft_2d(f->nx, f->ny, in, want, FFTW_FORWARD, FFTW_ESTIMATE);
        for (int x = 0; x < f->nx; x++)
            for (int y = 0; y < f->ny; y++)
                in[(size_t)x * f->ny + y] = input(x, y);
        fftw_execute(p);
        double big = 0, diff = 0;
        for (size_t k = 0; k < all; k++) {
            big = fmax(big, cabs(want[k]));
            diff = fmax(diff, cabs(want[k] - got[k]));
        }
        err = big > 0 ? diff / big : diff;
        fftw_destroy_plan(p);
        fftw_free(got);
        fftw_free(in);
        fftw_free(want);
    }
    MPI_Bcast(&err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return err;
}

static int setup(fft_t *f)
{
    if (f->nx % f->size || f->ny % f->size) {
        if (f->rank == 0)
            fprintf(stderr, "fft2d: %d ranks must divide both %d and %d\n", f->size, f->nx, f->ny);
        return -1;
    }
    f->lx = f->nx / f->size;
    f->ly = f->ny / f->size;
    f->blk = (size_t)f->lx * f->ly;
    size_t pts = (size_t)f->lx * f->ny;
    f->a = fftw_malloc(sizeof(fftw_complex) * pts);
    f->b = fftw_malloc(sizeof(fftw_complex) * pts);
    if (f->x != X_OPI) {
        f->sbuf = fftw_malloc(sizeof(fftw_complex) * pts);
        f->rbuf = fftw_malloc(sizeof(fftw_complex) * pts);
    }
    f->reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)f->size);
    f->in = malloc(sizeof(fftw_complex *) * (size_t)f->size);
    f->fy = fftw_plan_many_dft(1, &f->ny, f->lx, f->a, NULL, 1, f->ny, f->a, NULL, 1, f->ny,
                               FFTW_FORWARD, FFTW_ESTIMATE);
    f->fx = fftw_plan_many_dft(1, &f->nx, f->ly, f->b, NULL, 1, f->nx, f->b, NULL, 1, f->nx,
                               FFTW_FORWARD, FFTW_ESTIMATE);
    return f->a && f->b && f->reqs && f->in && f->fy && f->fx ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    fft_t f = {.nx = 1024, .ny = 1024, .x = X_OPI};
    MPI_Comm_rank(MPI_COMM_WORLD, &f.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &f.size);
    int iters = 10, do_check = 1, ch;
    double bound = 1e-10;
    while ((ch = getopt(argc, argv, "n:s:x:i:c:e:h")) != -1) {
        switch (ch) {
        case 'n': f.nx = f.ny = atoi(optarg); break;
        case 's': sscanf(optarg, "%dx%d", &f.nx, &f.ny); break;
        case 'x':
            for (f.x = 0; f.x < X_COUNT && strcmp(optarg, x_names[f.x]); f.x++)
                ;
            break;
        case 'i': iters = atoi(optarg); break;
        case 'c': do_check = atoi(optarg); break;
        case 'e': bound = atof(optarg); break;
        default: f.x = X_COUNT; break;
        }
    }
    if (f.x == X_COUNT || iters < 1 || f.nx < 1 || f.ny < 1 || setup(&f) != 0) {
        if (f.rank == 0)
            fprintf(stderr, "usage: fft2d [-n N | -s NXxNY] [-x alltoall|p2p|opi] [-i iters] "
                            "[-c 0|1] [-e bound]\n");
        MPI_Finalize();
        return 2;
    }
    int rc = 0;
    fill(&f);
    transform(&f);
    if (do_check) {
        double err = check(&f);
        rc = !(err <= bound);
        if (f.rank == 0)
            printf("# fft2d %dx%d on %d ranks, %s exchange: max error %.3g (bound %.3g): %s\n",
                   f.nx, f.ny, f.size, x_names[f.x], err, bound, rc ? "FAILED" : "ok");
    }
    double *tt = malloc(sizeof(double) * (size_t)iters),
           *tc = malloc(sizeof(double) * (size_t)iters);
    for (int it = 0; it < iters; it++) {
        fill(&f);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        transform(&f);
        double t[2] = {MPI_Wtime() - t0, f.comm}, m[2];
        MPI_Allreduce(t, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); /* the slowest rank */
        tt[it] = m[0];
        tc[it] = m[1];
    }
    qsort(tt, (size_t)iters, sizeof *tt, cmp_double);
    qsort(tc, (size_t)iters, sizeof *tc, cmp_double);
    if (f.rank == 0) {
        printf("# hmpi: %s\n", HMPI_Active() ? "active" : "pass-through");
        printf("test,size,value,unit\n");
        printf("total_%s,%d,%.3f,ms\n", x_names[f.x], f.nx, tt[iters / 2] * 1e3);
        printf("comm_%s,%d,%.3f,ms\n", x_names[f.x], f.nx, tc[iters / 2] * 1e3);
    }
    free(tt);
    free(tc);
    fftw_destroy_plan(f.fy);
    fftw_destroy_plan(f.fx);
    fftw_free(f.a);
    fftw_free(f.b);
    fftw_free(f.sbuf);
    fftw_free(f.rbuf);
    free(f.reqs);
    free(f.in);
    MPI_Finalize();
    return rc;
}
