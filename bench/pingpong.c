/* pingpong.c: NetPIPE-style point-to-point benchmark in plain MPI: latency,
 * unidirectional and bidirectional bandwidth, message rate; on MPI_COMM_WORLD, on a
 * communicator from MPI_Comm_create_from_group, or on both in turns (--comm). Built
 * against the MPI below only; bench/run starts it under hmpirun, with and without
 * HMPI_DISABLE=1.
 * Rank 0 prints CSV "test,size,value,unit" (lines starting with '#' are comments).
 * Every size is checked byte for byte before and after timing: a wrong byte aborts. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include "bench_util.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>

enum {
    WINDOW = 64,     /* messages in flight per window (bw, bibw, rate) */
    RATE_SIZE = 8,   /* message size of the rate test */
    LINE_SIZE = 64,  /* the floor test's "message": one cache line */
    MAX_SIZES = 128, /* 31 powers of two, each with two perturbations, plus min and max */
    MAX_REPS = 100,
    TAG_DATA = 1,
    TAG_ACK = 2,
};

static const size_t WINDOW_BYTES = 16 * MiB; /* a window holds at most this (or 1 message) */
static const size_t ITER_KNEE = 64 * KiB;    /* more bytes per iteration: fewer iterations */
static const size_t MAX_SIZE = 1024 * MiB;
static const size_t STACK_CAP = 1 * MiB; /* per buffer with --buffer=stack */
#define GLOBAL_CAP (64 * MiB)            /* per buffer with --buffer=global */

static unsigned char global_area[2][GLOBAL_CAP];

typedef enum { BUF_HEAP, BUF_PREINIT, BUF_GLOBAL, BUF_STACK } buf_mode_t;
static const char *const buf_names[] = {"heap", "preinit", "global", "stack"};

typedef struct {
    unsigned tests;  /* bit i: test_table[i] runs */
    size_t min, max; /* message sizes in bytes, after the caps of --buffer */
    int perturb, touch, quick, help;
    int iters, reps, pairs;
    int comm; /* BENCH_COMM_WORLD, _GROUP or _BOTH (bench_util.h) */
    buf_mode_t buffer;
    char note[128]; /* what parsing adjusted, said by rank 0 once MPI is up */
} opts_t;

/* What every test step sees. send and recv hold `bytes` each; a window of messages
 * uses consecutive slots of stride(size) bytes, so no two pending receives overlap. */
typedef struct {
    const opts_t *o;
    const char *test;
    int rank, nranks, pairs;
    int round;     /* which pattern the buffers hold: 0 before timing, 1 after */
    MPI_Comm comm; /* the one the steps run on now: one of comms */
    MPI_Comm comms[2];
    int ncomms; /* MPI_COMM_WORLD and/or the communicator from a group */
    unsigned char *send, *recv;
    size_t bytes;
} ctx_t;

/* One iteration of a test; check = compare what arrived with the pattern. */
typedef void step_fn(const ctx_t *c, size_t size, int window, int check);
/* The reported value of one repetition of `iters` iterations that took `secs`. */
typedef double value_fn(size_t size, int window, int pairs, long iters, double secs);

/* ---- buffers and data patterns ------------------------------------------------ */

static size_t stride(size_t size) { return (size + 63) & ~(size_t)63; }

static int window_for(const ctx_t *c, size_t size)
{
    size_t cap = c->bytes < WINDOW_BYTES ? c->bytes : WINDOW_BYTES;
    size_t w = cap / stride(size);
    return w < 1 ? 1 : w > WINDOW ? WINDOW : (int)w;
}

/* The contents of message `slot` of `size` bytes sent by rank `from` in check `round`. */
static uint64_t seed_of(size_t size, int slot, int from, int round)
{
    return bench_mix(((uint64_t)size << 24) ^ ((uint64_t)slot << 16) ^ ((uint64_t)round << 12) ^
                     (uint64_t)from);
}

static void verify(const ctx_t *c, const unsigned char *p, size_t n, int slot, int from)
{
    uint64_t seed = seed_of(n, slot, from, c->round);
    size_t first, bad = bench_wrong_bytes(p, n, seed, &first);
    if (bad == 0)
        return;
    unsigned char want = bench_pattern_byte(seed, first);
    fprintf(stderr,
            "pingpong: rank %d, %s, %zu B, %s check, message %d from rank %d: %zu "
            "wrong bytes, first at %zu: 0x%02x, expected 0x%02x%s\n",
            c->rank, c->test, n, c->round ? "second" : "first", slot, from, bad, first, p[first],
            want, p[first] == (unsigned char)~want ? " (nothing arrived there)" : "");
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static volatile uint64_t touch_sink; /* keeps --touch reads from being optimized away */

static void touch(const unsigned char *p, size_t n)
{
    uint64_t sum = 0, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        sum += w;
    }
    for (; i < n; i++)
        sum += p[i];
    touch_sink += sum;
}

/* Sends carry the pattern of this round; receive slots hold its complement until data
 * arrives, so a receive that completes without data is caught. */
static void prepare(const ctx_t *c, size_t size, int window)
{
    int peer = c->rank ^ 1;
    for (int k = 0; k < window; k++) {
        bench_fill(c->send + k * stride(size), size, seed_of(size, k, c->rank, c->round), 0);
        bench_fill(c->recv + k * stride(size), size, seed_of(size, k, peer, c->round), ~0ull);
    }
}

/* One checked iteration on fresh patterns, outside the timing. */
static void checked_step(ctx_t *c, step_fn *step, size_t size, int window, int round)
{
    c->round = round;
    prepare(c, size, window);
    MPI_Barrier(c->comm);
    step(c, size, window, 1);
}

static void received(const ctx_t *c, size_t size, int slot, int from, int check)
{
    const unsigned char *p = c->recv + slot * stride(size);
    if (check)
        verify(c, p, size, slot, from);
    else if (c->o->touch)
        touch(p, size);
}

/* ---- the tests ----------------------------------------------------------------- */

/* Ranks 0 and 1 bounce one message. */
static void step_latency(const ctx_t *c, size_t size, int window, int check)
{
    (void)window;
    int peer = c->rank ^ 1, n = (int)size;
    if (c->rank == 0) {
        MPI_Send(c->send, n, MPI_BYTE, peer, TAG_DATA, c->comm);
        MPI_Recv(c->recv, n, MPI_BYTE, peer, TAG_DATA, c->comm, MPI_STATUS_IGNORE);
        received(c, size, 0, peer, check);
    } else if (c->rank == 1) {
        MPI_Recv(c->recv, n, MPI_BYTE, peer, TAG_DATA, c->comm, MPI_STATUS_IGNORE);
        received(c, size, 0, peer, check);
        MPI_Send(c->send, n, MPI_BYTE, peer, TAG_DATA, c->comm);
    }
}

/* Ranks 0 and 1 exchange one message each way in one call: MPI_Sendrecv (isend 0) or MPI
 * 4's MPI_Isendrecv and a wait (1). */
static void exchange(const ctx_t *c, size_t size, int check, int nonblocking)
{
    int peer = c->rank ^ 1, n = (int)size;
    if (c->rank > 1)
        return;
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
    if (nonblocking) {
        MPI_Request q;
        MPI_Isendrecv(c->send, n, MPI_BYTE, peer, TAG_DATA, c->recv, n, MPI_BYTE, peer, TAG_DATA,
                      MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else
#else
    (void)nonblocking;
#endif
        MPI_Sendrecv(c->send, n, MPI_BYTE, peer, TAG_DATA, c->recv, n, MPI_BYTE, peer, TAG_DATA,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    received(c, size, 0, peer, check);
}

static void step_sendrecv(const ctx_t *c, size_t size, int window, int check)
{
    (void)window;
    exchange(c, size, check, 0);
}

static void step_isendrecv(const ctx_t *c, size_t size, int window, int check)
{
    (void)window;
    exchange(c, size, check, 1);
}

/* The floor test: no MPI call, one cache line each way through memory both ranks map
 * (an MPI-3 shared window, set up by run): rank 0 writes a number into its line and
 * waits for rank 1 to write it back into the other. What any message between the two
 * ranks must at least take; a wrong number aborts. */
static _Atomic uint64_t *floor_line; /* [0]: rank 0 writes, [FLOOR_BACK]: rank 1 writes */
enum { FLOOR_BACK = LINE_SIZE / sizeof(uint64_t) }; /* the word of the next line */

static uint64_t floor_wait(_Atomic uint64_t *w, uint64_t want)
{
    uint64_t v;
    for (unsigned spins = 0; (v = atomic_load_explicit(w, memory_order_acquire)) < want;) {
        if (++spins > 1000) /* more ranks than cores: let the other one run */
            sched_yield();
#if defined(__x86_64__) || defined(__i386__)
        else
            __builtin_ia32_pause();
#endif
    }
    return v;
}

static void step_floor(const ctx_t *c, size_t size, int window, int check)
{
    (void)size, (void)window, (void)check;
    static uint64_t n; /* bounces so far: both ranks count the same steps */
    n++;
    uint64_t got = n;
    if (c->rank == 0) {
        atomic_store_explicit(&floor_line[0], n, memory_order_release);
        got = floor_wait(&floor_line[FLOOR_BACK], n);
    } else if (c->rank == 1) {
        got = floor_wait(&floor_line[0], n);
        atomic_store_explicit(&floor_line[FLOOR_BACK], n, memory_order_release);
    }
    if (got != n) {
        fprintf(stderr, "pingpong: rank %d, floor: read %llu, expected %llu\n", c->rank,
                (unsigned long long)got, (unsigned long long)n);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* Rank 2i sends a window to rank 2i+1, which answers with an empty ack. */
static void step_stream(const ctx_t *c, size_t size, int window, int check)
{
    MPI_Request req[WINDOW];
    MPI_Status st[WINDOW]; /* not MPI_STATUSES_IGNORE: GCC 12 misreads MPICH's (void *)1 */
    int peer = c->rank ^ 1, n = (int)size, ack = 0;
    if (c->rank >= 2 * c->pairs)
        return;
    if (c->rank % 2 == 0) {
        for (int k = 0; k < window; k++)
            MPI_Isend(c->send + k * stride(size), n, MPI_BYTE, peer, TAG_DATA, c->comm, &req[k]);
        MPI_Waitall(window, req, st);
        MPI_Recv(&ack, 0, MPI_INT, peer, TAG_ACK, c->comm, MPI_STATUS_IGNORE);
    } else {
        for (int k = 0; k < window; k++)
            MPI_Irecv(c->recv + k * stride(size), n, MPI_BYTE, peer, TAG_DATA, c->comm, &req[k]);
        MPI_Waitall(window, req, st);
        for (int k = 0; k < window; k++)
            received(c, size, k, peer, check);
        MPI_Send(&ack, 0, MPI_INT, peer, TAG_ACK, c->comm);
    }
}

/* Ranks 0 and 1 send a window to each other at the same time. */
static void step_bidir(const ctx_t *c, size_t size, int window, int check)
{
    MPI_Request req[2 * WINDOW];
    MPI_Status st[2 * WINDOW];
    int peer = c->rank ^ 1, n = (int)size;
    if (c->rank > 1)
        return;
    for (int k = 0; k < window; k++)
        MPI_Irecv(c->recv + k * stride(size), n, MPI_BYTE, peer, TAG_DATA, c->comm, &req[k]);
    for (int k = 0; k < window; k++)
        MPI_Isend(c->send + k * stride(size), n, MPI_BYTE, peer, TAG_DATA, c->comm,
                  &req[window + k]);
    MPI_Waitall(2 * window, req, st);
    for (int k = 0; k < window; k++)
        received(c, size, k, peer, check);
}

static double per_iteration_us(size_t size, int window, int pairs, long iters, double secs)
{
    (void)size, (void)window, (void)pairs;
    return secs / (double)iters * 1e6;
}

static double half_round_trip_us(size_t size, int window, int pairs, long iters, double secs)
{
    (void)size, (void)window, (void)pairs;
    return secs / (2.0 * (double)iters) * 1e6;
}

static double one_way_gbs(size_t size, int window, int pairs, long iters, double secs)
{
    (void)pairs;
    return (double)size * window * iters / secs / 1e9;
}

static double both_ways_gbs(size_t size, int window, int pairs, long iters, double secs)
{
    (void)pairs;
    return 2.0 * (double)size * window * iters / secs / 1e9;
}

static double million_msgs(size_t size, int window, int pairs, long iters, double secs)
{
    (void)size;
    return (double)pairs * window * iters / secs / 1e6;
}

typedef struct {
    const char *name, *unit;
    step_fn *step;
    value_fn *value;
    int windowed;  /* a window of messages per iteration, else one */
    int all_pairs; /* runs on --pairs pairs, else on ranks 0 and 1 */
    size_t fixed;  /* runs at this size only, else at every size */
} test_t;

static const test_t test_table[] = {
    {"latency", "us", step_latency, half_round_trip_us, 0, 0, 0},
    {"bw", "GB/s", step_stream, one_way_gbs, 1, 0, 0},
    {"bibw", "GB/s", step_bidir, both_ways_gbs, 1, 0, 0},
    {"rate", "Mmsg/s", step_stream, million_msgs, 1, 1, RATE_SIZE},
    /* one exchange each way per iteration, the time of an iteration */
    {"sendrecv", "us", step_sendrecv, per_iteration_us, 0, 0, 0},
    {"isendrecv", "us", step_isendrecv, per_iteration_us, 0, 0, 0},
    {"floor", "us", step_floor, half_round_trip_us, 0, 0, LINE_SIZE},
};
enum { NTESTS = sizeof test_table / sizeof test_table[0], TEST_FLOOR = NTESTS - 1 };
enum { TEST_SENDRECV = 4 };
/* latency, bw, bibw, rate; the exchanges and the floor run when asked for */
enum { DEFAULT_TESTS = (1u << TEST_SENDRECV) - 1 };

/* ---- measuring ------------------------------------------------------------------ */

static long iterations(const opts_t *o, size_t bytes_per_iter)
{
    double n = o->iters;
    if (bytes_per_iter > ITER_KNEE)
        n = n * (double)ITER_KNEE / (double)bytes_per_iter;
    return n < 2 ? 2 : (long)n;
}

/* The median over --reps repetitions of one test at one size on each communicator
 * (meaningful on rank 0), into out[k] for c->comms[k]. With two, the repetitions
 * alternate between them (ABBA), so drift during the point cancels in their ratio.
 * The data is checked before warmup and again after the timed repetitions, with a new
 * pattern: timed iterations resend the same bytes, so a copy skipped there would show
 * only as an impossible number. */
static void measure(ctx_t *c, const test_t *t, size_t size, double *out)
{
    int window = t->windowed ? window_for(c, size) : 1;
    long iters = iterations(c->o, size * window), warm = iters / 10 > 0 ? iters / 10 : 1;
    double vals[2][MAX_REPS];

    c->test = t->name;
    c->pairs = t->all_pairs ? c->o->pairs : 1;
    for (int k = 0; k < c->ncomms; k++) {
        c->comm = c->comms[k];
        checked_step(c, t->step, size, window, 0);
        for (long i = 0; i < warm; i++)
            t->step(c, size, window, 0);
    }
    for (int r = 0; r < c->o->reps; r++) {
        for (int j = 0; j < c->ncomms; j++) {
            int k = r % 2 ? c->ncomms - 1 - j : j;
            c->comm = c->comms[k];
            MPI_Barrier(c->comm);
            double t0 = MPI_Wtime();
            for (long i = 0; i < iters; i++)
                t->step(c, size, window, 0);
            double secs = MPI_Wtime() - t0, slowest = 0;
            MPI_Reduce(&secs, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
            vals[k][r] = t->value(size, window, c->pairs, iters, slowest);
        }
    }
    for (int k = 0; k < c->ncomms; k++) {
        c->comm = c->comms[k];
        checked_step(c, t->step, size, window, 1);
        out[k] = bench_median(vals[k], c->o->reps);
    }
}

static int make_sizes(const opts_t *o, size_t *sizes)
{
    int n = 0;
    sizes[n++] = o->min;
    for (size_t p = 1; p <= o->max; p *= 2) {
        for (int d = -3; d <= 3; d += 3) {
            size_t s = p + (size_t)d;
            if ((d == 0 || (o->perturb && p > 4)) && s > o->min && s < o->max)
                sizes[n++] = s;
        }
    }
    if (o->max > o->min)
        sizes[n++] = o->max;
    return n; /* ascending, no duplicates: min < every other size < max */
}

/* ---- output --------------------------------------------------------------------- */

static void print_header(const ctx_t *c, const size_t *sizes, int n)
{
    const opts_t *o = c->o;
    char tests[64] = "", version[256], hmpi[96];
    for (int t = 0; t < NTESTS; t++) {
        if (o->tests & 1u << t)
            snprintf(tests + strlen(tests), sizeof tests - strlen(tests), "%s%s",
                     tests[0] ? "," : "", test_table[t].name);
    }
    bench_mpi_version(version, sizeof version);
    bench_hmpi_state(c->send, c->recv, hmpi, sizeof hmpi);
    static const char *const comm_names[] = {"", "world", "group", "both"};
    printf("# pingpong: tests=%s sizes=%zu..%zu (%d) perturb=%d touch=%d iters=%d reps=%d "
           "buffer=%s pairs=%d ranks=%d comm=%s\n",
           tests, sizes[0], sizes[n - 1], n, o->perturb, o->touch, o->iters, o->reps,
           buf_names[o->buffer], o->pairs, c->nranks, comm_names[o->comm]);
    printf("# mpi: %s\n# hmpi: %s\n", version, hmpi);
    if (o->note[0])
        printf("# note: %s\n", o->note);
    printf("test,size,value,unit\n");
    fflush(stdout);
}

/* The floor test's two lines: in a shared window of the node of ranks 0 and 1, zeroed.
 * Returns the window, or MPI_WIN_NULL when ranks 0 and 1 are on different nodes. */
static MPI_Win floor_setup(void)
{
    MPI_Comm node;
    MPI_Win win = MPI_WIN_NULL;
    int nrank, first; /* first: the world rank of the node's first rank */
    MPI_Comm_rank(MPI_COMM_WORLD, &first);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Bcast(&first, 1, MPI_INT, 0, node);
    int of0 = first, of1 = first; /* rank 0's node and rank 1's, as every rank learns */
    MPI_Bcast(&of0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&of1, 1, MPI_INT, 1, MPI_COMM_WORLD);
    if (of0 == of1) {
        char *base;
        MPI_Aint bytes;
        int unit;
        MPI_Win_allocate_shared(nrank == 0 ? 3 * LINE_SIZE : 0, 1, MPI_INFO_NULL, node, &base,
                                &win);
        MPI_Win_shared_query(win, 0, &bytes, &unit, &base);
        floor_line = (_Atomic uint64_t *)(void *)(((uintptr_t)base + LINE_SIZE - 1) &
                                                  ~(uintptr_t)(LINE_SIZE - 1));
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        if (nrank == 0) {
            atomic_store(&floor_line[0], 0);
            atomic_store(&floor_line[FLOOR_BACK], 0);
        }
        MPI_Win_sync(win);
        MPI_Barrier(node);
        MPI_Win_sync(win);
    }
    MPI_Comm_free(&node);
    return win;
}

static void run(ctx_t *c)
{
    const opts_t *o = c->o;
    size_t sizes[MAX_SIZES];
    int n = make_sizes(o, sizes);
    MPI_Win floor_win = o->tests & 1u << TEST_FLOOR ? floor_setup() : MPI_WIN_NULL;
    if (c->rank == 0)
        print_header(c, sizes, n);
    for (int i = 0; i < NTESTS; i++) {
        const test_t *t = &test_table[i];
        char name[32];
        if (!(o->tests & 1u << i))
            continue;
        if (i == TEST_FLOOR && floor_win == MPI_WIN_NULL) {
            if (c->rank == 0)
                printf("# floor: ranks 0 and 1 are on different nodes, not run\n");
            continue;
        }
        snprintf(name, sizeof name, t->all_pairs && o->pairs > 1 ? "%s_%dp" : "%s", t->name,
                 o->pairs);
        for (int k = 0; k < (t->fixed ? 1 : n); k++) {
            size_t size = t->fixed ? t->fixed : sizes[k];
            double v[2];
            if (i == TEST_FLOOR) { /* no communicator: once */
                ctx_t one = *c;
                one.ncomms = 1;
                measure(&one, t, size, v);
            } else {
                measure(c, t, size, v);
            }
            for (int m = 0; c->rank == 0 && m < (i == TEST_FLOOR ? 1 : c->ncomms); m++) {
                printf("%s%s,%zu,%.6g,%s\n", name,
                       c->comms[m] == MPI_COMM_WORLD || i == TEST_FLOOR ? "" : "_group", size, v[m],
                       t->unit);
                fflush(stdout);
            }
        }
    }
    if (floor_win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(floor_win);
        MPI_Win_free(&floor_win);
    }
}

/* Buffers on the stack: the whole run happens inside this frame. */
static void run_on_stack(ctx_t *c)
{
    unsigned char area[2 * c->bytes];
    c->send = area;
    c->recv = area + c->bytes;
    run(c);
}

/* ---- command line --------------------------------------------------------------- */

static const char usage[] =
    "usage: pingpong [options]    (2 ranks, or 2*pairs: hmpirun -n 2 ./pingpong)\n"
    "NetPIPE-style point-to-point benchmark; rank 0 prints CSV test,size,value,unit.\n"
    "  -t, --tests=LIST    comma-separated tests to run (default: the first four)\n"
    "        latency       ranks 0 and 1 bounce a message: half round trip in us\n"
    "        bw            rank 0 sends windows of 64 messages to rank 1, which acks each\n"
    "                      window with an empty message: GB/s (1e9 bytes/s)\n"
    "        bibw          ranks 0 and 1 send windows to each other at once: GB/s, sum of\n"
    "                      both directions\n"
    "        rate          8 B messages in windows of 64 from rank 2i to 2i+1 for every\n"
    "                      pair: million messages/s over all pairs\n"
    "        floor         ranks 0 and 1 bounce one cache line through a shared window,\n"
    "                      no MPI call: half round trip in us, the floor of latency\n"
    "  -p, --pairs=N       pairs of the rate test (default 1, needs 2N ranks); with N > 1\n"
    "                      the test is named rate_Np\n"
    "      --min=SIZE      smallest message (default 1); SIZE takes K, M, G (powers of 2)\n"
    "      --max=SIZE      largest message (default 64M, at most 1G); sizes are min, the\n"
    "                      powers of two between, and max\n"
    "      --perturb       also 2^k-3 and 2^k+3 bytes, like NetPIPE (2^k >= 8)\n"
    "      --touch         the receiver reads (sums) every received byte each iteration\n"
    "  -i, --iters=N       timed iterations per repetition while an iteration moves at most\n"
    "                      64 KiB one way; bigger ones run N*64KiB/bytes, at least 2\n"
    "                      (default 1000); a tenth as many warm up first, untimed\n"
    "  -r, --reps=N        timed repetitions per point; the median is printed (default 3)\n"
    "      --buffer=WHERE  where the message buffers live:\n"
    "        heap          malloc after MPI_Init, in HMPI's shared heap (default)\n"
    "        preinit       malloc before MPI_Init: private memory\n"
    "        global        static arrays: --max is capped at 64 MiB\n"
    "        stack         the main stack: --max is capped at 1 MiB, windows at 1 MiB,\n"
    "                      and ulimit -s must allow 3 MiB\n"
    "      --comm=WHICH    where the tests run: world (MPI_COMM_WORLD, default), group\n"
    "                      (a communicator of the same ranks from MPI_Comm_create_from_group,\n"
    "                      MPI 4), or both, alternating repetitions; the group's tests are\n"
    "                      named TEST_group\n"
    "  -q, --quick         smoke test: sizes up to 1 KiB, 20 iterations, 1 repetition\n"
    "  -h, --help          this text\n"
    "Each message of a window has its own buffer slot (so no two pending receives\n"
    "overlap); windows shrink above 256 KiB to stay within 16 MiB. Before timing a size,\n"
    "one iteration is checked byte for byte, and another with new data after it; a wrong\n"
    "byte aborts the job.\n";

static int parse_size(const char *s, size_t *out_p)
{
    return bench_parse_size(s, "KMG", MAX_SIZE, out_p);
}

static int parse_tests(const char *s, unsigned *out_p)
{
    const char *names[NTESTS];
    for (int i = 0; i < NTESTS; i++)
        names[i] = test_table[i].name;
    return bench_parse_list(s, names, NTESTS, out_p);
}

/* Reads the command line into o (no output: MPI is not up yet); returns 0 or -1 with
 * the reason in err. */
static int parse(int argc, char **argv, opts_t *o, char *err, size_t errlen)
{
    enum { OPT_MIN = 256, OPT_MAX, OPT_PERTURB, OPT_TOUCH, OPT_BUFFER, OPT_COMM };
    static const struct option longopts[] = {
        {"tests", required_argument, NULL, 't'},
        {"pairs", required_argument, NULL, 'p'},
        {"min", required_argument, NULL, OPT_MIN},
        {"max", required_argument, NULL, OPT_MAX},
        {"perturb", no_argument, NULL, OPT_PERTURB},
        {"touch", no_argument, NULL, OPT_TOUCH},
        {"iters", required_argument, NULL, 'i'},
        {"reps", required_argument, NULL, 'r'},
        {"buffer", required_argument, NULL, OPT_BUFFER},
        {"quick", no_argument, NULL, 'q'},
        {"comm", required_argument, NULL, OPT_COMM},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt, bad = 0;
    *o = (opts_t){.tests = DEFAULT_TESTS, .pairs = 1, .comm = BENCH_COMM_WORLD, .buffer = BUF_HEAP};
    opterr = 0;
    while (!bad && (opt = getopt_long(argc, argv, "t:p:i:r:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 't': bad = parse_tests(optarg, &o->tests); break;
        case 'p': bad = bench_parse_int(optarg, 1, 1 << 20, &o->pairs); break;
        case OPT_MIN: bad = parse_size(optarg, &o->min); break;
        case OPT_MAX: bad = parse_size(optarg, &o->max); break;
        case OPT_PERTURB: o->perturb = 1; break;
        case OPT_TOUCH: o->touch = 1; break;
        case 'i': bad = bench_parse_int(optarg, 1, 1 << 30, &o->iters); break;
        case 'r': bad = bench_parse_int(optarg, 1, MAX_REPS, &o->reps); break;
        case 'q': o->quick = 1; break;
        case 'h': o->help = 1; break;
        case OPT_COMM: bad = bench_parse_comm(optarg, &o->comm); break;
        case OPT_BUFFER:
            bad = -1;
            for (int b = 0; b < 4; b++) {
                if (strcmp(optarg, buf_names[b]) == 0) {
                    o->buffer = (buf_mode_t)b;
                    bad = 0;
                }
            }
            break;
        default: return bench_unknown_option(argv, err, errlen);
        }
        if (bad)
            bench_bad_value(longopts, opt, optarg, "", err, errlen);
    }
    if (bench_opts_done(argc, argv, bad, err, errlen))
        return -1;
    o->min = o->min ? o->min : 1;
    o->max = o->max ? o->max : o->quick ? KiB : 64 * MiB;
    o->iters = o->iters ? o->iters : o->quick ? 20 : 1000;
    o->reps = o->reps ? o->reps : o->quick ? 1 : 3;
    size_t cap = o->buffer == BUF_STACK ? STACK_CAP : o->buffer == BUF_GLOBAL ? GLOBAL_CAP : 0;
    if (cap && o->max > cap) {
        snprintf(o->note, sizeof o->note, "--buffer=%s: --max capped at %zu MiB",
                 buf_names[o->buffer], cap / MiB);
        o->max = cap;
    }
    if (o->min > o->max) {
        snprintf(err, errlen, "--min (%zu) is above --max (%zu)", o->min, o->max);
        return -1;
    }
    return 0;
}

/* Bytes of each of the send and receive buffers: a full window of the biggest message
 * (and of the rate test's), within WINDOW_BYTES but at least one message. */
static size_t buffer_bytes(const opts_t *o)
{
    size_t one = stride(o->max > RATE_SIZE ? o->max : RATE_SIZE);
    size_t window = WINDOW * one < WINDOW_BYTES ? WINDOW * one : WINDOW_BYTES;
    size_t bytes = one > window ? one : window;
    if (o->buffer == BUF_STACK && bytes > STACK_CAP)
        bytes = STACK_CAP;
    if (o->buffer == BUF_GLOBAL && bytes > GLOBAL_CAP)
        bytes = GLOBAL_CAP;
    return bytes;
}

/* What can only be checked once MPI is up: rank count and stack room. */
static int check_job(const opts_t *o, int nranks, size_t bytes, char *err, size_t errlen)
{
    struct rlimit rl;
    int need = 2;
    for (int i = 0; i < NTESTS; i++) {
        if (o->tests & 1u << i && test_table[i].all_pairs && 2 * o->pairs > need)
            need = 2 * o->pairs;
    }
    if (nranks < need) {
        snprintf(err, errlen, "needs at least %d ranks, has %d", need, nranks);
        return -1;
    }
    if (o->buffer == BUF_STACK && getrlimit(RLIMIT_STACK, &rl) == 0 &&
        rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 2 * bytes + MiB) {
        snprintf(err, errlen, "--buffer=stack needs a stack of %zu KiB (ulimit -s), has %zu KiB",
                 (2 * bytes + MiB) / KiB, (size_t)rl.rlim_cur / KiB);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o;
    char err[160] = "";
    int bad = parse(argc, argv, &o, err, sizeof err);
    ctx_t c = {.o = &o, .bytes = bad ? 0 : buffer_bytes(&o)};
    unsigned char *early[2] = {NULL, NULL};
    if (!bad && !o.help && o.buffer == BUF_PREINIT) {
        early[0] = malloc(c.bytes);
        early[1] = malloc(c.bytes);
    }

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    if (!bad && !o.help)
        bad = check_job(&o, c.nranks, c.bytes, err, sizeof err);
    MPI_Comm group = MPI_COMM_NULL;
    if (!bad && !o.help && o.comm & BENCH_COMM_GROUP) {
        int grank = -1;
        group = bench_group_comm();
        if (group != MPI_COMM_NULL)
            MPI_Comm_rank(group, &grank);
        if (grank != c.rank) {
            snprintf(err, sizeof err,
                     "--comm=%s: no communicator from a group with the world's "
                     "ranks (MPI 4 sessions)",
                     o.comm == BENCH_COMM_GROUP ? "group" : "both");
            bad = -1;
        }
    }
    if (o.comm & BENCH_COMM_WORLD)
        c.comms[c.ncomms++] = MPI_COMM_WORLD;
    if (o.comm & BENCH_COMM_GROUP)
        c.comms[c.ncomms++] = group;
    c.comm = c.comms[0];
    if (bad || o.help) {
        bench_usage_or_error(c.rank, "pingpong", bad ? err : NULL, usage);
        bench_group_comm_free(&group);
        MPI_Finalize();
        return bad ? 2 : 0;
    }
    if (c.rank == 0 && o.note[0])
        fprintf(stderr, "pingpong: %s\n", o.note);

    switch (o.buffer) {
    case BUF_HEAP:
        c.send = malloc(c.bytes);
        c.recv = malloc(c.bytes);
        break;
    case BUF_PREINIT:
        c.send = early[0];
        c.recv = early[1];
        break;
    case BUF_GLOBAL:
        c.send = global_area[0];
        c.recv = global_area[1];
        break;
    case BUF_STACK: run_on_stack(&c); break;
    }
    if (o.buffer != BUF_STACK) {
        if (!c.send || !c.recv) {
            fprintf(stderr, "pingpong: rank %d: cannot allocate 2 x %zu bytes\n", c.rank, c.bytes);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        run(&c);
    }
    if (o.buffer == BUF_HEAP || o.buffer == BUF_PREINIT) {
        free(c.send);
        free(c.recv);
    }
    bench_group_comm_free(&group);
    MPI_Finalize();
    return 0;
}
