/* bench_util.h: helpers the benchmark programs in bench/ share: the header lines that
 * name the MPI below and HMPI's state, strict option parsing, medians and the
 * splitmix64 data patterns that check received bytes. Header-only (static inline), so a
 * benchmark stays one .c file and an unused helper costs nothing. Never calls HMPI
 * directly: HMPI is found with dlsym, so the programs run on the MPI below alone.
 * Define _GNU_SOURCE before the first #include (RTLD_DEFAULT). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <mpi.h>

#include <ctype.h>
#include <dlfcn.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* ---- the header lines: "# mpi: ..." and "# hmpi: ..." ------------------------------ */

/* The first line of MPI_Get_library_version as it stands. */
static inline void bench_mpi_first_line(char *out, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(v, &n);
    snprintf(out, len, "%.*s", (int)strcspn(v, "\n"), v);
}

/* The MPI below in one line, e.g. "MPICH Version: 4.0.2 (ch4:ucx)": the first line of
 * the version string, the device in parentheses, one space for each run of blanks. */
static inline void bench_mpi_version(char *out, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(v, &n);
    const char *dev = strstr(v, "Device:");
    int first = (int)strcspn(v, "\n");
    if (dev) {
        dev += strlen("Device:");
        dev += strspn(dev, " \t");
        snprintf(out, len, "%.*s (%.*s)", first, v, (int)strcspn(dev, "\n"), dev);
    } else {
        snprintf(out, len, "%.*s", first, v);
    }
    size_t k = 0;
    for (const char *p = out; *p; p++) { /* one space for each run of blanks */
        int blank = *p == ' ' || *p == '\t';
        if (!blank || (k > 0 && out[k - 1] != ' '))
            out[k++] = blank ? ' ' : *p;
    }
    while (k > 0 && out[k - 1] == ' ')
        k--;
    out[k] = '\0';
}

/* Whether HMPI is preloaded and active, and where the buffers a and b (b may be NULL)
 * are: "in the shared heap", "private" or, of two, "half shared". */
static inline void bench_hmpi_state(const void *a, const void *b, char *out, size_t len)
{
    int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "HMPI_Active");
    int (*shared)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "HMPI_Is_shared");
    if (!active || !shared) {
        snprintf(out, len, "not loaded");
        return;
    }
    int n = b ? 2 : 1, s = shared(a) + (b ? shared(b) : 0);
    snprintf(out, len, "%s, buffers %s", active() ? "active" : "pass-through",
             s == n   ? "in the shared heap"
             : s == 0 ? "private"
                      : "half shared");
}

/* ---- the command line: no output here (MPI may not be up); -1 on a bad value --------- */

/* A size in bytes: decimal digits, then at most one of the suffixes in units ("K",
 * "KM" or "KMG", powers of 1024, either case); 1 to max bytes. */
static inline int bench_parse_size(const char *s, const char *units, size_t max, size_t *out_p)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    size_t unit = 1;
    if (end == s || *s == '-')
        return -1;
    char u = (char)toupper((unsigned char)*end);
    if (u != '\0' && strchr(units, u)) {
        switch (u) {
        case 'K': unit = KiB; break;
        case 'M': unit = MiB; break;
        case 'G': unit = 1024 * MiB; break;
        }
        end++;
    }
    if (*end != '\0' || v == 0 || v > max / unit)
        return -1;
    *out_p = (size_t)v * unit;
    return 0;
}

/* An int from lo to hi, decimal. */
static inline int bench_parse_int(const char *s, int lo, int hi, int *out_p)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out_p = (int)v;
    return 0;
}

/* A comma-separated list of names out of names[0..count-1], at least one: bit i of
 * *out_p says names[i] was given. */
static inline int bench_parse_list(const char *s, const char *const *names, int count,
                                   unsigned *out_p)
{
    unsigned set = 0;
    while (*s) {
        size_t len = strcspn(s, ",");
        int i = 0;
        while (i < count && !(strlen(names[i]) == len && strncmp(s, names[i], len) == 0))
            i++;
        if (i == count)
            return -1;
        set |= 1u << i;
        s += len + (s[len] == ',');
    }
    if (!set)
        return -1;
    *out_p = set;
    return 0;
}

/* The reason for a bad value of option opt: "bad value 'ARG' for --NAME" and hint. */
static inline void bench_bad_value(const struct option *longopts, int opt, const char *arg,
                                   const char *hint, char *err, size_t errlen)
{
    for (int i = 0; longopts[i].name; i++) {
        if (longopts[i].val == opt)
            snprintf(err, errlen, "bad value '%s' for --%s%s", arg, longopts[i].name, hint);
    }
}

/* The end of an option loop: getopt_long's unknown option (opt '?' or ':'), a bad value
 * (bad set, err written by bench_bad_value) or an argument left over is an error:
 * -1 with err written; else 0. */
static inline int bench_opts_done(int argc, char **argv, int bad, char *err, size_t errlen)
{
    if (bad)
        return -1;
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument: %s", argv[optind]);
        return -1;
    }
    return 0;
}

static inline int bench_unknown_option(char **argv, char *err, size_t errlen)
{
    snprintf(err, errlen, "unknown option or missing value: %s", argv[optind - 1]);
    return -1;
}

/* Rank 0 prints usage on stdout, or with err "PROG: ERR (see --help)" on stderr. */
static inline void bench_usage_or_error(int rank, const char *prog, const char *err,
                                        const char *usage)
{
    if (rank != 0)
        return;
    if (err)
        fprintf(stderr, "%s: %s (see --help)\n", prog, err);
    else
        fputs(usage, stdout);
}

/* ---- the communicators a benchmark runs on: --comm=world|group|both ------------------ */

/* MPI 4's sessions: MPICH 4, and Open MPI 5, whose mpi.h says MPI_VERSION 3. */
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define BENCH_SESSIONS 1
#endif

/* Which: MPI_COMM_WORLD, a communicator of the same ranks from MPI_Comm_create_from_group
 * (MPI 4's sessions: the group of the pset mpi://WORLD), or both, measured in turns. */
enum { BENCH_COMM_WORLD = 1, BENCH_COMM_GROUP = 2, BENCH_COMM_BOTH = 3 };

static inline int bench_parse_comm(const char *s, int *out_p)
{
    static const char *const names[] = {"world", "group", "both"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out_p = i + 1;
            return 0;
        }
    }
    return -1;
}

#ifdef BENCH_SESSIONS
static MPI_Session bench_session = MPI_SESSION_NULL; /* bench_group_comm's */
#endif

/* After MPI_Init: the communicator from a group, made from a session opened for it, or
 * MPI_COMM_NULL where the MPI below has no sessions (Open MPI 4.1). The session
 * asks for MPI_THREAD_SINGLE, as MPI_Init does: MPICH's sessions default to
 * MPI_THREAD_MULTIPLE, under which HMPI takes its locks. */
static inline MPI_Comm bench_group_comm(void)
{
    MPI_Comm c = MPI_COMM_NULL;
#ifdef BENCH_SESSIONS
    MPI_Info info;
    MPI_Group g;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_SINGLE");
    if (MPI_Session_init(info, MPI_ERRORS_RETURN, &bench_session) == MPI_SUCCESS &&
        MPI_Group_from_session_pset(bench_session, "mpi://WORLD", &g) == MPI_SUCCESS) {
        if (MPI_Comm_create_from_group(g, "org.hmpi.bench", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL,
                                       &c) != MPI_SUCCESS)
            c = MPI_COMM_NULL;
        MPI_Group_free(&g);
    }
    MPI_Info_free(&info);
#endif
    return c;
}

/* Before MPI_Finalize: frees c and the session it came from. */
static inline void bench_group_comm_free(MPI_Comm *c)
{
    if (*c != MPI_COMM_NULL)
        MPI_Comm_free(c);
#ifdef BENCH_SESSIONS
    if (bench_session != MPI_SESSION_NULL)
        MPI_Session_finalize(&bench_session);
#endif
}

/* ---- statistics --------------------------------------------------------------------- */

/* qsort order of doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n-1], n >= 1 (the mean of the middle two for even n); sorts v. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- data patterns: a received byte that is not the sent one is found -------------- */

static inline uint64_t bench_mix(uint64_t x) /* splitmix64 */
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Byte i of the pattern of seed: word i / 8 is bench_mix(seed + i / 8). */
static inline unsigned char bench_pattern_byte(uint64_t seed, size_t i)
{
    uint64_t w = bench_mix(seed + i / 8);
    unsigned char b[8];
    memcpy(b, &w, 8);
    return b[i % 8];
}

/* p[0..n-1] = the pattern of seed, every word xor flip (~0: its complement). */
static inline void bench_fill(unsigned char *p, size_t n, uint64_t seed, uint64_t flip)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = bench_mix(seed + i / 8) ^ flip;
        memcpy(p + i, &w, n - i < 8 ? n - i : 8);
    }
}

/* How many bytes of p[0..n-1] differ from the pattern of seed; *first_p = the first of
 * them (n when none). */
static inline size_t bench_wrong_bytes(const unsigned char *p, size_t n, uint64_t seed,
                                       size_t *first_p)
{
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = bench_mix(seed + i / 8);
        size_t k = n - i < 8 ? n - i : 8;
        if (memcmp(p + i, &w, k) == 0)
            continue;
        for (size_t j = 0; j < k; j++) {
            if (p[i + j] != ((const unsigned char *)&w)[j]) {
                bad++;
                first = first < n ? first : i + j;
            }
        }
    }
    *first_p = first;
    return bad;
}

#endif /* BENCH_UTIL_H */
