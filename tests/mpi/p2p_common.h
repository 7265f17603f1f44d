/* p2p_common.h: what the point-to-point tests (tests/mpi/p2p/; also part/, storm/ and
 * the large-count tests of coll/ and rma/) share: payload patterns derived from (sender,
 * tag, index, seed), checks that name the first byte that differs, error-class helpers, a
 * seed from argv/env. Standard MPI only: these programs also run unmodified under hmpirun
 * (PLAIN), so no HMPI call is required. */
#ifndef HMPI_TEST_P2P_COMMON_H
#define HMPI_TEST_P2P_COMMON_H

#define CHECK_WITH_MPI
#include "../check.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* MPICH declares MPI_STATUSES_IGNORE as (MPI_Status *)1 and annotates MPI_Waitall &
 * co. with access sizes: GCC 12 then reports a bogus overflow at every use. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

/* HMPI's extensions, when linked or preloaded; NULL under a plain MPI. Used only to
 * report which buffers the engine would see as shared, never to decide a result. */
int HMPI_Active(void) __attribute__((weak));
int HMPI_Is_shared(const void *ptr) __attribute__((weak));

static inline int p2p_shared(const void *p)
{
    return HMPI_Active && HMPI_Is_shared && HMPI_Active() ? HMPI_Is_shared(p) : -1;
}

/* splitmix64's finalizer: every input bit reaches every output bit. */
static inline uint64_t p2p_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The key of one message's payload. */
static inline uint64_t p2p_key(int sender, int tag, uint64_t index, uint64_t seed)
{
    uint64_t k = p2p_mix(((uint64_t)(uint32_t)sender << 32) | (uint32_t)tag);
    return p2p_mix(k ^ p2p_mix(index ^ p2p_mix(seed)));
}

/* Byte i of the payload of key: not periodic, differs between neighbouring keys. */
static inline unsigned char p2p_byte(uint64_t key, size_t i)
{
    return (unsigned char)(p2p_mix(key + (i >> 3)) >> ((i & 7) * 8));
}

/* The payload's word w as stored in memory (p2p_byte's byte order). */
static inline uint64_t p2p_word(uint64_t key, size_t w)
{
    uint64_t v = p2p_mix(key + w);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline void p2p_fill(void *buf, size_t n, uint64_t key)
{
    unsigned char *b = (unsigned char *)buf;
    size_t words = n >> 3;
    for (size_t w = 0; w < words; w++) {
        uint64_t v = p2p_word(key, w);
        memcpy(b + w * 8, &v, 8);
    }
    for (size_t i = words << 3; i < n; i++)
        b[i] = p2p_byte(key, i);
}

/* Index of the first byte of buf[0..n) that is not the payload of key, or -1. */
static inline ptrdiff_t p2p_diff(const void *buf, size_t n, uint64_t key)
{
    const unsigned char *b = (const unsigned char *)buf;
    size_t words = n >> 3;
    for (size_t w = 0; w < words; w++) {
        uint64_t v = p2p_word(key, w), got;
        memcpy(&got, b + w * 8, 8);
        if (got != v)
            for (size_t i = w * 8;; i++)
                if (b[i] != p2p_byte(key, i))
                    return (ptrdiff_t)i;
    }
    for (size_t i = words << 3; i < n; i++)
        if (b[i] != p2p_byte(key, i))
            return (ptrdiff_t)i;
    return -1;
}

/* Fails with "<what>: byte i of n: expected x, got y" when buf is not key's payload.
 * what is a printf format with its arguments. */
#define P2P_CHECK_DATA(buf, n, key, ...)                                                         \
    do {                                                                                         \
        ptrdiff_t d_ = p2p_diff((buf), (n), (key));                                              \
        if (d_ >= 0) {                                                                           \
            char what_[256];                                                                     \
            snprintf(what_, sizeof what_, __VA_ARGS__);                                          \
            CHECK(d_ < 0, "%s: byte %td of %zu differs: expected 0x%02x, got 0x%02x", what_, d_, \
                  (size_t)(n), p2p_byte((key), (size_t)d_), ((const unsigned char *)(buf))[d_]); \
        }                                                                                        \
    } while (0)

/* A cheap 64-bit checksum of bytes (FNV-1a over words); order-sensitive. */
static inline uint64_t p2p_sum(const void *buf, size_t n)
{
    const unsigned char *b = (const unsigned char *)buf;
    uint64_t h = 0xCBF29CE484222325ull ^ n;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

/* The MPI error class of rc, and a readable name for messages. */
static inline int p2p_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static inline const char *p2p_errstr(int rc)
{
    static char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "error %d", rc);
    return s;
}

/* Call must succeed (useful on communicators with MPI_ERRORS_RETURN). */
#define P2P_OK(call)                                                                  \
    do {                                                                              \
        int rc_ = (call);                                                             \
        CHECK(rc_ == MPI_SUCCESS, "%s returned %d: %s", #call, rc_, p2p_errstr(rc_)); \
    } while (0)

/* Call must fail with error class cls. */
#define P2P_FAILS(cls, call)                                                          \
    do {                                                                              \
        int rc_ = (call);                                                             \
        CHECK(rc_ != MPI_SUCCESS && p2p_class(rc_) == (cls),                          \
              "%s returned %d (class %d: %s), expected class %s (%d)", #call, rc_,    \
              rc_ == MPI_SUCCESS ? 0 : p2p_class(rc_), p2p_errstr(rc_), #cls, (cls)); \
    } while (0)

static inline int p2p_count(const MPI_Status *st, MPI_Datatype t)
{
    int c = -2;
    MPI_Get_count(st, t, &c);
    return c;
}

/* The run's seed: --seed=N or -s N on the command line, else P2P_SEED, else dflt. */
static inline uint64_t p2p_seed(int argc, char **argv, uint64_t dflt)
{
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--seed=", 7) == 0)
            return strtoull(argv[i] + 7, NULL, 0);
        if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
            return strtoull(argv[i + 1], NULL, 0);
    }
    const char *e = getenv("P2P_SEED");
    return e && *e ? strtoull(e, NULL, 0) : dflt;
}

/* A small deterministic generator (xorshift64*), one per stream of decisions. */
typedef struct {
    uint64_t s;
} p2p_rng_t;

static inline void p2p_rng_init(p2p_rng_t *r, uint64_t seed, uint64_t stream)
{
    r->s = p2p_mix(seed ^ p2p_mix(stream)) | 1;
}

static inline uint64_t p2p_rng_next(p2p_rng_t *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n). */
static inline uint64_t p2p_rng_below(p2p_rng_t *r, uint64_t n)
{
    return n ? p2p_rng_next(r) % n : 0;
}

/* Seconds on CLOCK_MONOTONIC: one clock for every process of the machine, so times
 * taken by different ranks compare (the tests run on one host, nodes are simulated). */
static inline double p2p_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Gives the core away for a moment (the tests run oversubscribed). */
static inline void p2p_nap(void)
{
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

/* Sleeps ms milliseconds without calling MPI. */
static inline void p2p_sleep_ms(int ms)
{
    double t = p2p_mono() + ms / 1000.0;
    while (p2p_mono() < t) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* Waits for rq without spinning: ranks that idle give their core to the busy ones
 * (the tests run oversubscribed). */
static inline void p2p_wait_polite(MPI_Request *rq, MPI_Status *st)
{
    int done = 0;
    for (;;) {
        MPI_Test(rq, &done, st);
        if (done)
            return;
        p2p_nap();
    }
}

static inline void p2p_barrier_polite(MPI_Comm comm)
{
    MPI_Request rq;
    MPI_Ibarrier(comm, &rq);
    p2p_wait_polite(&rq, MPI_STATUS_IGNORE);
}

/* Ranks 0 and 1 of MPI_COMM_WORLD as a communicator of their own (the large-message
 * tests run between them); MPI_COMM_NULL on the other ranks. */
static inline MPI_Comm p2p_first_pair(void)
{
    int me;
    MPI_Comm pair;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, me, &pair);
    return pair;
}

/* malloc that fails the test when the memory is not there. */
static inline void *p2p_malloc(size_t n)
{
    void *p = malloc(n);
    CHECK(p, "cannot allocate %zu bytes", n);
    return p;
}

#endif
