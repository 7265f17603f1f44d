/* p2p_boundaries.c: every message size at a protocol threshold (256 B immediate,
 * 8 KiB synergistic, 24 KiB large blocks, 1 MiB+3, 64 MiB) between buffers on the
 * heap, on the stack, in static storage and malloc'ed before MPI_Init, in every
 * sender x receiver combination, blocking and nonblocking, over the pairs
 * i -> i+1 and i -> i+n/2. Guard bytes around each buffer catch overruns. */
#include "../p2p_common.h"

enum kind { K_HEAP, K_STACK, K_STATIC, K_PREINIT, NKINDS };
static const char *kind_name[NKINDS] = {"heap", "stack", "static", "pre-init"};

static const size_t sizes[] = {0,    1,     255,   256,   257,   8191,          8192,
                               8193, 24575, 24576, 24577, 65536, (1u << 20) + 3};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAX_SIZE ((1u << 20) + 3)
#define STACK_MAX (64u << 10) /* stack buffers only up to this size */
#define BIG_SIZE (64u << 20)  /* one pair only */
#define GUARD 64              /* canary bytes before and after each buffer */
#define SLACK (2 * GUARD + 8) /* guards plus a misalignment of 0..7 */
#define CANARY 0xA5
#define POISON 0x5A
#define SEED 0x5EEDB0u

/* One buffer per kind of the other side, so a batch of all combinations fits. */
static unsigned char static_send[NKINDS][MAX_SIZE + SLACK], static_recv[NKINDS][MAX_SIZE + SLACK];
static unsigned char *pre_send[NKINDS], *pre_recv[NKINDS], *pre_big; /* malloc'ed before MPI_Init */
static int rank, nranks, nexchanges;

/* The user pointer inside a buffer of base: guards of CANARY around [p, p+n). */
static unsigned char *frame(unsigned char *base, size_t n, int off, int poison)
{
    unsigned char *p = base + GUARD + off;
    memset(base, CANARY, GUARD + off);
    memset(p + n, CANARY, GUARD);
    if (poison)
        memset(p, POISON, n);
    return p;
}

static void check_guards(const unsigned char *p, size_t n, int off, const char *what)
{
    for (int i = 1; i <= GUARD + off; i++)
        CHECK(p[-i] == CANARY, "%s: byte %d before the buffer overwritten (0x%02x)", what, i,
              p[-i]);
    for (int i = 0; i < GUARD; i++)
        CHECK(p[n + i] == CANARY, "%s: byte %d after the %zu-byte buffer overwritten (0x%02x)",
              what, i, n, p[n + i]);
}

/* Blocking exchanges on a cycle of i -> i+shift must not all send first (a send may
 * wait for its receive): alternate on even cycles, start at the cycle's head on odd. */
static int send_first(int shift)
{
    int g = shift, b = nranks;
    while (b) {
        int t = g % b;
        g = b;
        b = t;
    }
    int len = nranks / g, pos = 0;
    for (int x = rank % g; x != rank; x = (x + shift) % nranks)
        pos++;
    return len % 2 == 0 ? pos % 2 == 0 : pos == 0;
}

/* One message of a batch: this rank sends kind ks to rank+shift and receives kind kr
 * from rank-shift, with the same tag. */
typedef struct {
    int ks, kr, tag, soff, roff;
    unsigned char *sbase, *rbase, *s, *r;
    MPI_Request rq[2];
    MPI_Status st;
} xfer_t;

static unsigned char *base_of(int k, int send, int slot, size_t n, unsigned char *stack)
{
    switch (k) {
    case K_HEAP: return malloc(n + SLACK);
    case K_STACK: return stack + (size_t)slot * (STACK_MAX + SLACK);
    case K_STATIC: return send ? static_send[slot] : static_recv[slot];
    default: return send ? pre_send[slot] : pre_recv[slot];
    }
}

static void verify(size_t si, xfer_t *x, int src, const char *mode)
{
    size_t n = sizes[si];
    char what[200];
    snprintf(what, sizeof what, "%zu B %s -> %s (%s, %d -> %d, tag %d, offsets %d/%d)", n,
             kind_name[x->ks], kind_name[x->kr], mode, src, rank, x->tag, x->soff, x->roff);
    CHECK(x->st.MPI_SOURCE == src && x->st.MPI_TAG == x->tag, "%s: status says source %d tag %d",
          what, x->st.MPI_SOURCE, x->st.MPI_TAG);
    CHECK(p2p_count(&x->st, MPI_BYTE) == (int)n, "%s: count %d", what, p2p_count(&x->st, MPI_BYTE));
    P2P_CHECK_DATA(x->r, n, p2p_key(src, x->tag, si, SEED), "%s: received", what);
    check_guards(x->r, n, x->roff, what);
    P2P_CHECK_DATA(x->s, n, p2p_key(rank, x->tag, si, SEED), "%s: send buffer changed", what);
    check_guards(x->s, n, x->soff, what);
    if (x->ks == K_HEAP)
        free(x->sbase);
    if (x->kr == K_HEAP)
        free(x->rbase);
    nexchanges++;
}

/* Every (send kind, receive kind) pair for one size and shift, as one batch: first
 * nonblocking (half the receives posted before the sends, half after, in reverse
 * order), then blocking with the same buffers (all sends then all receives on the
 * ranks that send first, the reverse on the others). */
static void batch(size_t si, int shift, int *tagbase)
{
    unsigned char stack_s[NKINDS * (STACK_MAX + SLACK)], stack_r[NKINDS * (STACK_MAX + SLACK)];
    size_t n = sizes[si];
    int dst = (rank + shift) % nranks, src = (rank - shift + nranks) % nranks;
    xfer_t xs[NKINDS * NKINDS];
    int nx = 0;
    for (int ks = 0; ks < NKINDS; ks++)
        for (int kr = 0; kr < NKINDS; kr++) {
            if ((ks == K_STACK || kr == K_STACK) && n > STACK_MAX)
                continue;
            xfer_t *x = &xs[nx++];
            x->ks = ks;
            x->kr = kr;
            x->tag = *tagbase + ks * NKINDS + kr;
            x->soff = (x->tag * 3) & 7;
            x->roff = (x->tag * 5 + 1) & 7;
            x->sbase = base_of(ks, 1, kr, n, stack_s);
            x->rbase = base_of(kr, 0, ks, n, stack_r);
            CHECK(x->sbase && x->rbase, "out of memory for %zu bytes", n);
        }
    *tagbase += NKINDS * NKINDS;

    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < nx; i++) {
            xfer_t *x = &xs[i];
            if (pass == 1) {
                x->sbase = base_of(x->ks, 1, x->kr, n, stack_s);
                x->rbase = base_of(x->kr, 0, x->ks, n, stack_r);
                CHECK(x->sbase && x->rbase, "out of memory for %zu bytes", n);
                x->tag += 20000;
            }
            x->s = frame(x->sbase, n, x->soff, 0);
            x->r = frame(x->rbase, n, x->roff, 1);
            p2p_fill(x->s, n, p2p_key(rank, x->tag, si, SEED));
        }
        if (pass == 0) {
            for (int i = nx - 1; i >= 0; i -= 2)
                MPI_Irecv(xs[i].r, (int)n, MPI_BYTE, src, xs[i].tag, MPI_COMM_WORLD, &xs[i].rq[0]);
            for (int i = 0; i < nx; i++)
                MPI_Isend(xs[i].s, (int)n, MPI_BYTE, dst, xs[i].tag, MPI_COMM_WORLD, &xs[i].rq[1]);
            for (int i = nx - 2; i >= 0; i -= 2)
                MPI_Irecv(xs[i].r, (int)n, MPI_BYTE, src, xs[i].tag, MPI_COMM_WORLD, &xs[i].rq[0]);
            for (int i = 0; i < nx; i++) {
                MPI_Status sst;
                MPI_Wait(&xs[i].rq[0], &xs[i].st);
                MPI_Wait(&xs[i].rq[1], &sst);
            }
        } else {
            int first = send_first(shift);
            for (int phase = 0; phase < 2; phase++)
                for (int i = 0; i < nx; i++)
                    if (phase == !first)
                        MPI_Send(xs[i].s, (int)n, MPI_BYTE, dst, xs[i].tag, MPI_COMM_WORLD);
                    else
                        MPI_Recv(xs[i].r, (int)n, MPI_BYTE, src, xs[i].tag, MPI_COMM_WORLD,
                                 &xs[i].st);
        }
        for (int i = 0; i < nx; i++)
            verify(si, &xs[i], src, pass ? "Send/Recv" : "Isend/Irecv");
    }
}

/* 64 MiB between ranks 0 and 1 only: heap -> heap (blocking), pre-init -> heap and
 * heap -> pre-init (nonblocking). */
static void big(void)
{
    if (rank > 1)
        return;
    size_t n = BIG_SIZE;
    unsigned char *heap = malloc(n);
    CHECK(heap, "out of memory for 64 MiB");
    MPI_Status st;
    MPI_Request rq;
    char what[64];
    for (int step = 0; step < 3; step++) {
        int tag = 30000 + step, from = step == 1 ? 1 : 0, to = 1 - from;
        unsigned char *buf = (step == 1 && rank == 1) || (step == 2 && rank == 1) ? pre_big : heap;
        snprintf(what, sizeof what, "64 MiB step %d (%d -> %d)", step, from, to);
        if (rank == from) {
            p2p_fill(buf, n, p2p_key(rank, tag, 99, SEED));
            if (step == 0)
                MPI_Send(buf, (int)n, MPI_BYTE, to, tag, MPI_COMM_WORLD);
            else {
                MPI_Isend(buf, (int)n, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
            }
            P2P_CHECK_DATA(buf, n, p2p_key(rank, tag, 99, SEED), "%s: send buffer changed", what);
        } else {
            memset(buf, POISON, n);
            if (step == 0)
                MPI_Recv(buf, (int)n, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st);
            else {
                MPI_Irecv(buf, (int)n, MPI_BYTE, from, tag, MPI_COMM_WORLD, &rq);
                MPI_Wait(&rq, &st);
            }
            CHECK(p2p_count(&st, MPI_BYTE) == (int)n, "%s: count %d", what,
                  p2p_count(&st, MPI_BYTE));
            P2P_CHECK_DATA(buf, n, p2p_key(from, tag, 99, SEED), "%s: received", what);
        }
        nexchanges++;
    }
    free(heap);
}

int main(int argc, char **argv)
{
    for (int k = 0; k < NKINDS; k++) {
        pre_send[k] = malloc(MAX_SIZE + SLACK);
        pre_recv[k] = malloc(MAX_SIZE + SLACK);
        CHECK(pre_send[k] && pre_recv[k], "malloc before MPI_Init failed");
    }
    pre_big = malloc(BIG_SIZE);
    CHECK(pre_big, "malloc before MPI_Init failed");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double t0 = MPI_Wtime();
    int verbose = getenv("P2P_VERBOSE") != NULL;
    if (rank == 0) {
        void *h = malloc(64);
        char stack[64];
        printf("p2p_boundaries: %d ranks; shared? heap %d stack %d static %d pre-init %d "
               "(-1: no HMPI)\n",
               nranks, p2p_shared(h), p2p_shared(stack), p2p_shared(static_send),
               p2p_shared(pre_send[0]));
        free(h);
    }
    if (nranks < 2) {
        printf("p2p_boundaries: needs 2 ranks, skipped\n");
        MPI_Finalize();
        return 0;
    }

    int shifts[2] = {1, nranks / 2}, nshifts = nranks / 2 == 1 ? 1 : 2;
    int tag = 0;
    for (int sh = 0; sh < nshifts; sh++)
        for (size_t si = 0; si < NSIZES; si++) {
            double tb = MPI_Wtime();
            batch(si, shifts[sh], &tag);
            if (verbose && rank == 0)
                printf("  shift %d size %zu: %.3f s\n", shifts[sh], sizes[si], MPI_Wtime() - tb);
        }
    double tb = MPI_Wtime();
    big();
    if (verbose && rank == 0)
        printf("  64 MiB: %.3f s\n", MPI_Wtime() - tb);

    p2p_barrier_polite(MPI_COMM_WORLD);
    int total = 0;
    MPI_Reduce(&nexchanges, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_boundaries: OK, %d exchanges in %.2f s\n", total, MPI_Wtime() - t0);
    for (int k = 0; k < NKINDS; k++) {
        free(pre_send[k]);
        free(pre_recv[k]);
    }
    free(pre_big);
    MPI_Finalize();
    return 0;
}
