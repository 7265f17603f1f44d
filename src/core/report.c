/* report.c: what HMPI did, said at MPI_Finalize as HMPI_STATS asks (docs/observability.md):
 *   1          one table for the job: rank 0 gathers every rank's counters through the MPI
 *              below and prints, per path, the messages, bytes, share of all bytes and
 *              min / median / max over the ranks, then the waits;
 *   per-rank   every rank's line of every counter;
 *   json:FILE  the table, and every counter of every rank into FILE (rank 0 writes it),
 *              with the table's rows, so that tools/hmpi-stats prints the same table.
 * The rows (which counters make a path) are defined here only. */
#include "../common/knobs.h"
#include "../common/log.h"
#include "../common/stats.h"
#include "../node/node.h"
#include "../shm/wait.h"
#include "report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MODE_OFF, MODE_TABLE, MODE_PER_RANK, MODE_JSON };
static int mode;
static const char *json_path;

/* ---- the rows ------------------------------------------------------------------------- */

enum { MAX_TERMS = 3, NONE = HMPI_STAT_COUNT };
typedef struct {
    const char *section;
    char name[40];
    int count[MAX_TERMS]; /* summed: messages, calls or operations (NONE ends) */
    int bytes;            /* NONE: the row carries no bytes */
} row_t;

enum { MAX_ROWS = 64 };
static row_t rows[MAX_ROWS];
static int nrows;

static void add_row(const char *section, const char *name, int c0, int c1, int c2, int bytes)
{
    if (nrows == MAX_ROWS)
        return;
    row_t *r = &rows[nrows++];
    r->section = section;
    snprintf(r->name, sizeof r->name, "%s", name);
    r->count[0] = c0;
    r->count[1] = c1;
    r->count[2] = c2;
    r->bytes = bytes;
}

static void make_rows(void)
{
    if (nrows)
        return;
    static const char *p2p = "point-to-point", *coll = "collectives (calls)",
                      *rma = "one-sided (operations)", *opi = "ownership passing";
    add_row(p2p, "immediate", HMPI_STAT_msgs_immediate, NONE, NONE, HMPI_STAT_bytes_immediate);
    add_row(p2p, "lane", HMPI_STAT_msgs_lane, NONE, NONE, NONE);
    add_row(p2p, "copy", HMPI_STAT_msgs_copy, NONE, NONE, HMPI_STAT_bytes_copy);
    add_row(p2p, "synergistic", HMPI_STAT_msgs_synergistic, NONE, NONE,
            HMPI_STAT_bytes_synergistic);
    add_row(p2p, "cma", HMPI_STAT_msgs_cma, NONE, NONE, HMPI_STAT_bytes_cma);
    add_row(p2p, "pipe", HMPI_STAT_msgs_pipe, NONE, NONE, HMPI_STAT_bytes_pipe);
    add_row(p2p, "bounce", HMPI_STAT_bounced, NONE, NONE, NONE);
    add_row(p2p, "remote", HMPI_STAT_msgs_remote, NONE, NONE, HMPI_STAT_bytes_remote);
    add_row(p2p, "partitioned", HMPI_STAT_part_rounds, NONE, NONE, HMPI_STAT_part_bytes);
    /* Each collective of stats.def: done by HMPI, and passed to the MPI below. */
    for (int s = 0; s < HMPI_STAT_COUNT; s++) {
        const char *n = hmpi_stat_name((hmpi_stat_t)s);
        size_t len = strlen(n);
        if (strncmp(n, "coll_", 5) != 0 || strcmp(n, "coll_staged_bytes") == 0)
            continue;
        char name[40];
        if (len > 6 && strcmp(n + len - 6, "_below") == 0)
            snprintf(name, sizeof name, "%.*s (MPI below)", (int)(len - 11), n + 5);
        else
            snprintf(name, sizeof name, "%s", n + 5);
        add_row(coll, name, s, NONE, NONE, NONE);
    }
    add_row(rma, "rma local", HMPI_STAT_rma_puts_local, HMPI_STAT_rma_gets_local,
            HMPI_STAT_rma_accs_local, HMPI_STAT_rma_bytes_local);
    add_row(rma, "rma remote", HMPI_STAT_rma_puts_remote, HMPI_STAT_rma_gets_remote,
            HMPI_STAT_rma_accs_remote, HMPI_STAT_rma_bytes_remote);
    add_row(opi, "opi local", HMPI_STAT_opi_gives_local, NONE, NONE, HMPI_STAT_opi_bytes_local);
    add_row(opi, "opi remote", HMPI_STAT_opi_gives_remote, NONE, NONE, HMPI_STAT_opi_bytes_remote);
}

static const char *const wait_names[HMPI_WAIT_FAMILIES] = {"recv", "send", "coll", "rma", "opi"};

/* 1 when counter s is part of a row or of the waits (the rest are "other counters"). */
static int in_rows(int s)
{
    if (s >= HMPI_STAT_wait_recv && s <= HMPI_STAT_wait_opi_ns)
        return 1;
    for (int i = 0; i < nrows; i++) {
        if (rows[i].bytes == s)
            return 1;
        for (int k = 0; k < MAX_TERMS; k++)
            if (rows[i].count[k] == s)
                return 1;
    }
    return 0;
}

/* ---- setup ---------------------------------------------------------------------------- */

int hmpi_report_wanted(void)
{
    const char *s = hmpi_knobs.STATS;
    return strcmp(s, "0") == 0          ? MODE_OFF
           : strcmp(s, "1") == 0        ? MODE_TABLE
           : strcmp(s, "per-rank") == 0 ? MODE_PER_RANK
                                        : MODE_JSON;
}

int hmpi_report_setup(int provided, int lowest, int highest)
{
    mode = hmpi_report_wanted();
    json_path = mode == MODE_JSON ? hmpi_knobs.STATS + 5 : NULL;
    /* Every rank must ask for the same report: the table and the JSON are collective. */
    if (lowest != highest) {
        if (mode != MODE_OFF && mode != MODE_PER_RANK)
            hmpi_log_warning("HMPI_STATS differs between the ranks: each rank that asked "
                             "prints its own line (per-rank)");
        if (mode != MODE_OFF)
            mode = MODE_PER_RANK;
    }
    hmpi_stats_threads = provided == MPI_THREAD_MULTIPLE;
    hmpi_stats_block((int)hmpi_knobs.DISABLE);
    if (mode != MODE_OFF) {
        hmpi_wait_calibrate();
        hmpi_stats_want(HMPI_STATS_BY_REPORT, 1);
    }
    return 0;
}

/* ---- text ----------------------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t len, cap;
} text_t;

static void put(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text_t *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = t->p ? vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap) : -1;
        va_end(ap);
        if (t->p && n >= 0 && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 8192;
        char *p = realloc(t->p, cap);
        if (!p)
            return;
        t->p = p;
        t->cap = cap;
    }
}

/* 1234567 as "1,234,567" into buf. */
static const char *grouped(uint64_t v, char *buf)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%" PRIu64, v), o = 0;
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

/* Nanoseconds as milliseconds with three decimals, "12.345 ms", into buf[MILLIS_LEN]. */
enum { MILLIS_LEN = 48 };
static const char *millis(uint64_t ns, char *buf)
{
    uint64_t us = (ns + 500) / 1000;
    char g[40];
    snprintf(buf, MILLIS_LEN, "%s.%03" PRIu64 " ms", grouped(us / 1000, g), us % 1000);
    return buf;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* min / median / max of v[n] (the median of an even count is the lower middle one). */
static void spread(uint64_t *v, int n, uint64_t out[3])
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    out[0] = v[0];
    out[1] = v[(n - 1) / 2];
    out[2] = v[n - 1];
}

/* The table, from every rank's counters all[rank * HMPI_STAT_COUNT + s]. */
static void table(text_t *t, const uint64_t *all, int nranks, int nnodes, const char *state)
{
    uint64_t *v = malloc(sizeof *v * (size_t)nranks), sp[3];
    if (!v)
        return;
    char a[40], b[MILLIS_LEN], c[MILLIS_LEN], d[MILLIS_LEN], e[MILLIS_LEN];
    put(t, "stats for the job at MPI_Finalize: %d ranks, %d node%s, HMPI %s\n", nranks, nnodes,
        nnodes == 1 ? "" : "s", state);
    uint64_t total_bytes = 0;
    for (int i = 0; i < nrows; i++)
        for (int r = 0; rows[i].bytes != NONE && r < nranks; r++)
            total_bytes += all[(size_t)r * HMPI_STAT_COUNT + (size_t)rows[i].bytes];
    put(t, "%-24s %14s %18s %7s   %s\n", "path", "messages", "bytes", "share",
        "per rank: min / median / max");
    const char *section = NULL;
    for (int i = 0; i < nrows; i++) {
        const row_t *row = &rows[i];
        uint64_t n = 0, bytes = 0;
        for (int r = 0; r < nranks; r++) {
            const uint64_t *mine = all + (size_t)r * HMPI_STAT_COUNT;
            uint64_t rn = 0;
            for (int k = 0; k < MAX_TERMS && row->count[k] != NONE; k++)
                rn += mine[row->count[k]];
            n += rn;
            uint64_t rb = row->bytes != NONE ? mine[row->bytes] : 0;
            bytes += rb;
            v[r] = row->bytes != NONE ? rb : rn;
        }
        if (n == 0 && bytes == 0)
            continue;
        if (section != row->section)
            put(t, "%s\n", row->section);
        section = row->section;
        spread(v, nranks, sp);
        if (row->bytes == NONE) {
            put(t, "  %-22s %14s %18s %7s   %s / %s / %s\n", row->name, grouped(n, a), "-", "-",
                grouped(sp[0], c), grouped(sp[1], d), grouped(sp[2], e));
            continue;
        }
        unsigned __int128 pm =
            total_bytes ? ((unsigned __int128)bytes * 1000 + total_bytes / 2) / total_bytes : 0;
        char share[16];
        snprintf(share, sizeof share, "%u.%u%%", (unsigned)(pm / 10), (unsigned)(pm % 10));
        put(t, "  %-22s %14s %18s %7s   %s / %s / %s B\n", row->name, grouped(n, a),
            grouped(bytes, b), share, grouped(sp[0], c), grouped(sp[1], d), grouped(sp[2], e));
    }
    int header = 0;
    for (int f = 0; f < HMPI_WAIT_FAMILIES; f++) {
        int cs = HMPI_STAT_wait_recv + 2 * f;
        uint64_t n = 0, ns = 0;
        for (int r = 0; r < nranks; r++) {
            n += all[(size_t)r * HMPI_STAT_COUNT + (size_t)cs];
            ns += v[r] = all[(size_t)r * HMPI_STAT_COUNT + (size_t)cs + 1];
        }
        if (n == 0 && ns == 0)
            continue;
        if (!header++)
            put(t, "%-24s %14s %18s %7s   %s\n", "waits", "waits", "time", "",
                "per rank: min / median / max");
        spread(v, nranks, sp);
        put(t, "  %-22s %14s %18s %7s   %s / %s / %s\n", wait_names[f], grouped(n, a),
            millis(ns, b), "", millis(sp[0], c), millis(sp[1], d), millis(sp[2], e));
    }
    header = 0;
    for (int s = 0; s < HMPI_STAT_COUNT; s++) {
        if (in_rows(s))
            continue;
        uint64_t n = 0;
        for (int r = 0; r < nranks; r++)
            n += v[r] = all[(size_t)r * HMPI_STAT_COUNT + (size_t)s];
        if (n == 0)
            continue;
        if (!header++)
            put(t, "%-24s %14s %18s %7s   %s\n", "other counters", "total", "", "",
                "per rank: min / median / max");
        spread(v, nranks, sp);
        put(t, "  %-22s %14s %18s %7s   %s / %s / %s\n", hmpi_stat_name((hmpi_stat_t)s),
            grouped(n, a), "", "", grouped(sp[0], c), grouped(sp[1], d), grouped(sp[2], e));
    }
    free(v);
}

/* ---- JSON ----------------------------------------------------------------------------- */

static void json_string(text_t *t, const char *s)
{
    put(t, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            put(t, "\\%c", ch);
        else if (ch < 0x20)
            put(t, "\\u%04x", ch);
        else
            put(t, "%c", ch);
    }
    put(t, "\"");
}

static void json_terms(text_t *t, const int *terms, int n)
{
    put(t, "[");
    for (int k = 0, first = 1; k < n; k++) {
        if (terms[k] == NONE)
            continue;
        put(t, first ? "" : ", ");
        json_string(t, hmpi_stat_name((hmpi_stat_t)terms[k]));
        first = 0;
    }
    put(t, "]");
}

enum { META_NODE, META_LOCAL, META_ACTIVE, META_COUNT };

static void json(text_t *t, const uint64_t *all, const int64_t *meta, int nranks, int nnodes,
                 const char *state)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    PMPI_Get_library_version(version, &len);
    char *nl = strchr(version, '\n');
    if (nl)
        *nl = '\0';
    put(t,
        "{\n  \"format\": \"hmpi-stats 1\",\n  \"state\": \"%s\",\n  \"ranks\": %d,\n"
        "  \"nodes\": %d,\n  \"mpi_below\": ",
        state, nranks, nnodes);
    json_string(t, version);
    put(t, ",\n  \"counters\": [\n");
    for (int s = 0; s < HMPI_STAT_COUNT; s++) {
        put(t, "    {\"name\": ");
        json_string(t, hmpi_stat_name((hmpi_stat_t)s));
        put(t, ", \"part\": \"%s\", \"unit\": \"%s\", \"doc\": ",
            hmpi_part_name(hmpi_stat_part((hmpi_stat_t)s)),
            hmpi_stat_is_time((hmpi_stat_t)s) ? "ns" : "count");
        json_string(t, hmpi_stat_doc((hmpi_stat_t)s));
        put(t, "}%s\n", s + 1 < HMPI_STAT_COUNT ? "," : "");
    }
    put(t, "  ],\n  \"rows\": [\n");
    for (int i = 0; i < nrows; i++) {
        put(t, "    {\"section\": ");
        json_string(t, rows[i].section);
        put(t, ", \"name\": ");
        json_string(t, rows[i].name);
        put(t, ", \"count\": ");
        json_terms(t, rows[i].count, MAX_TERMS);
        put(t, ", \"bytes\": ");
        json_terms(t, &rows[i].bytes, 1);
        put(t, "}%s\n", i + 1 < nrows ? "," : "");
    }
    put(t, "  ],\n  \"waits\": [\n");
    for (int f = 0; f < HMPI_WAIT_FAMILIES; f++) {
        int cs = HMPI_STAT_wait_recv + 2 * f;
        put(t, "    {\"name\": \"%s\", \"count\": \"%s\", \"ns\": \"%s\"}%s\n", wait_names[f],
            hmpi_stat_name((hmpi_stat_t)cs), hmpi_stat_name((hmpi_stat_t)(cs + 1)),
            f + 1 < HMPI_WAIT_FAMILIES ? "," : "");
    }
    put(t, "  ],\n  \"per_rank\": [\n");
    for (int r = 0; r < nranks; r++) {
        const int64_t *m = meta + (size_t)r * META_COUNT;
        put(t,
            "    {\"rank\": %d, \"node\": %" PRId64 ", \"local_rank\": %" PRId64
            ", \"active\": %s, \"counters\": {",
            r, m[META_NODE], m[META_LOCAL], m[META_ACTIVE] ? "true" : "false");
        for (int s = 0; s < HMPI_STAT_COUNT; s++)
            put(t, "%s\"%s\": %" PRIu64, s ? ", " : "", hmpi_stat_name((hmpi_stat_t)s),
                all[(size_t)r * HMPI_STAT_COUNT + (size_t)s]);
        put(t, "}}%s\n", r + 1 < nranks ? "," : "");
    }
    put(t, "  ]\n}\n");
}

/* ---- at MPI_Finalize ------------------------------------------------------------------ */

static const char *state_now(void)
{
    return hmpi_knobs.DISABLE ? "disabled" : hmpi_node.active ? "active" : "pass-through";
}

void hmpi_report_finalize(void)
{
    if (mode == MODE_OFF)
        return;
    if (mode == MODE_PER_RANK) {
        char where[96];
        snprintf(where, sizeof where, "node %d local %d/%d %s", hmpi_node.id, hmpi_node.rank,
                 hmpi_node.size, hmpi_node.active ? "active" : "pass-through");
        hmpi_stats_print(where);
        return;
    }
    /* Every rank's counters and where it ran, gathered at rank 0 by the MPI below. */
    int rank = 0, nranks = 1;
    PMPI_Comm_rank(hmpi_node.world, &rank);
    PMPI_Comm_size(hmpi_node.world, &nranks);
    enum { PER = HMPI_STAT_COUNT + META_COUNT };
    uint64_t mine[PER];
    hmpi_stats_read(mine);
    int known = !hmpi_knobs.DISABLE && hmpi_node.nnodes > 0;
    mine[HMPI_STAT_COUNT + META_NODE] = (uint64_t)(int64_t)(known ? hmpi_node.id : -1);
    mine[HMPI_STAT_COUNT + META_LOCAL] = (uint64_t)(int64_t)(known ? hmpi_node.rank : -1);
    mine[HMPI_STAT_COUNT + META_ACTIVE] = (uint64_t)hmpi_node.active;
    uint64_t *got = rank == 0 ? malloc(sizeof *got * PER * (size_t)nranks) : NULL;
    int ok = rank != 0 || got;
    if (nranks > 1) /* (alone: no collective, MPICH 4.0.2 crashes in one under sessions) */
        PMPI_Bcast(&ok, 1, MPI_INT, 0, hmpi_node.world);
    if (!ok) {
        hmpi_log_error("stats: no memory to gather %d ranks' counters", nranks);
        return;
    }
    if (nranks > 1)
        PMPI_Gather(mine, PER, MPI_UINT64_T, got, PER, MPI_UINT64_T, 0, hmpi_node.world);
    else
        memcpy(got, mine, sizeof mine);
    if (rank != 0)
        return;
    uint64_t *all = malloc(sizeof *all * HMPI_STAT_COUNT * (size_t)nranks);
    int64_t *meta = malloc(sizeof *meta * META_COUNT * (size_t)nranks);
    text_t t = {0};
    if (!all || !meta)
        goto out;
    int nnodes = 0;
    for (int r = 0; r < nranks; r++) {
        memcpy(all + (size_t)r * HMPI_STAT_COUNT, got + (size_t)r * PER,
               sizeof *all * HMPI_STAT_COUNT);
        for (int k = 0; k < META_COUNT; k++)
            meta[(size_t)r * META_COUNT + k] = (int64_t)got[(size_t)r * PER + HMPI_STAT_COUNT + k];
        int64_t node = meta[(size_t)r * META_COUNT + META_NODE];
        int first = node >= 0;
        for (int q = 0; q < r && first; q++)
            first = meta[(size_t)q * META_COUNT + META_NODE] != node;
        nnodes += first;
    }
    make_rows();
    const char *state = state_now();
    if (hmpi_knobs.DISABLE)
        put(&t,
            "stats for the job at MPI_Finalize: %d ranks, HMPI disabled "
            "(HMPI_DISABLE=1): pass-through, every call went to the MPI below\n",
            nranks);
    else
        table(&t, all, nranks, nnodes, state);
    if (t.p)
        hmpi_log_long(t.p[t.len - 1] == '\n' ? (t.p[t.len - 1] = '\0', t.p) : t.p);
    if (mode == MODE_JSON) {
        text_t j = {0};
        json(&j, all, meta, nranks, nnodes, state);
        FILE *f = j.p ? fopen(json_path, "w") : NULL;
        int ok = f && fwrite(j.p, 1, j.len, f) == j.len;
        if (f && fclose(f) != 0)
            ok = 0;
        if (!ok)
            hmpi_log_error("stats: cannot write %s (HMPI_STATS=json:%s)", json_path, json_path);
        free(j.p);
    }
out:
    free(t.p);
    free(meta);
    free(all);
    free(got);
}
