/* knobs.c: strict parsing of the HMPI_* knob table (knobs.def).
 * A bad value is an error naming the knob and its range, never a silent default; an
 * HMPI_* variable that is no knob is a warning naming the closest one.
 * No MPI calls in here: the unit tests and the fuzzer use it alone. */
#include "knobs.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

const hmpi_knob_info_t hmpi_knob_table[] = {
#define X(name, type, def, min, max, doc) {#name, HMPI_KNOB_##type, def, min, max, doc},
#include "knobs.def"
#undef X
};
const int hmpi_knob_count = (int)(sizeof(hmpi_knob_table) / sizeof(hmpi_knob_table[0]));

/* HMPI_* variables that are not knobs of the library but of HMPI's tools, never warned
 * about: hmpirun reads LIB and LAUNCHER, hmpicc CC, INCDIR and LIBDIR, hmpi-opify
 * OPIFY_LIBCLANG; the docs' examples export PREFIX (docs/launchers.md). */
const char *const hmpi_knob_tool_vars[] = {"LIB",    "LAUNCHER",       "CC",    "INCDIR",
                                           "LIBDIR", "OPIFY_LIBCLANG", "PREFIX"};
const int hmpi_knob_tool_var_count =
    (int)(sizeof(hmpi_knob_tool_vars) / sizeof(hmpi_knob_tool_vars[0]));

hmpi_knobs_t hmpi_knobs;

/* The words of each WORD knob, by name (knobs.def lists them with WORDS below the knob). */
static const struct {
    const char *name, *words;
} word_table[] = {
#define X(name, type, def, min, max, doc)
#define WORDS(name, words) {#name, words},
#include "knobs.def"
#undef WORDS
#undef X
};

const char *hmpi_knob_words(const hmpi_knob_info_t *knob)
{
    if (knob->type != HMPI_KNOB_WORD)
        return NULL;
    for (size_t i = 0; i < sizeof word_table / sizeof word_table[0]; i++)
        if (strcmp(word_table[i].name, knob->name) == 0)
            return word_table[i].words;
    return NULL;
}

int hmpi_knob_word_ok(const hmpi_knob_info_t *knob, const char *text)
{
    const char *w = hmpi_knob_words(knob);
    size_t n = strlen(text);
    while (w != NULL && *w != '\0') {
        size_t len = strcspn(w, "|");
        if (n > 0 && len == n && strncmp(w, text, n) == 0)
            return 1;
        /* "json:FILE": the word up to its ':' and any non-empty value after it. */
        size_t head = strcspn(w, ":|") + 1;
        if (head < len && n > head && strncmp(w, text, head) == 0)
            return 1;
        w += len + (w[len] == '|');
    }
    return 0;
}

static int parse_integer(const char *text, int allow_suffix, long long *out_p)
{
    char *end;
    errno = 0;
    /* A digit first: strtoull would also skip any white space (tab, form feed, ...)
     * and take a sign, none of which a knob's value may start with. */
    if (text[0] < '0' || text[0] > '9')
        return -1;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || end == text)
        return -1;
    unsigned shift = 0;
    if (allow_suffix && *end != '\0') {
        switch (*end) {
        case 'k':
        case 'K': shift = 10; break;
        case 'm':
        case 'M': shift = 20; break;
        case 'g':
        case 'G': shift = 30; break;
        case 't':
        case 'T': shift = 40; break;
        default: return -1;
        }
        end++;
        if (*end == 'i' || *end == 'B') /* accept 4Ki, 4KiB, 4KB */
            end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
    }
    if (*end != '\0')
        return -1;
    if (shift && v > (~0ULL >> 1) >> shift)
        return -1;
    v <<= shift;
    if (v > (unsigned long long)(~0ULL >> 1))
        return -1;
    *out_p = (long long)v;
    return 0;
}

int hmpi_knob_parse(const hmpi_knob_info_t *knob, const char *text, long long *out_p)
{
    long long v;
    if (knob->type == HMPI_KNOB_STR || knob->type == HMPI_KNOB_WORD)
        return -1;
    if (parse_integer(text, knob->type == HMPI_KNOB_SIZE, &v) != 0)
        return -1;
    if (v < knob->min || v > knob->max)
        return -1;
    *out_p = v;
    return 0;
}

static void describe_range(const hmpi_knob_info_t *knob, char *buf, size_t len)
{
    switch (knob->type) {
    case HMPI_KNOB_BOOL: snprintf(buf, len, "0 or 1"); break;
    case HMPI_KNOB_INT:
        snprintf(buf, len, "an integer from %lld to %lld", knob->min, knob->max);
        break;
    case HMPI_KNOB_SIZE:
        snprintf(buf, len, "a size in bytes from %lld to %lld (suffixes K, M, G, T)", knob->min,
                 knob->max);
        break;
    case HMPI_KNOB_STR: snprintf(buf, len, "a non-empty string"); break;
    case HMPI_KNOB_WORD: {
        const char *w = hmpi_knob_words(knob);
        size_t n = (size_t)snprintf(buf, len, "one of ");
        for (; w != NULL && *w != '\0' && n + 3 < len; w++) { /* "a|b" as "a, b" */
            if (*w == '|')
                buf[n++] = ',';
            buf[n++] = *w == '|' ? ' ' : *w;
        }
        buf[n < len ? n : len - 1] = '\0';
        break;
    }
    }
}

static int load_one(const hmpi_knob_info_t *knob, void *field)
{
    char env[64];
    snprintf(env, sizeof env, "HMPI_%s", knob->name);
    const char *text = getenv(env);
    int from_env = text != NULL;
    if (!from_env)
        text = knob->def;
    if (knob->type == HMPI_KNOB_STR) {
        if (text[0] == '\0')
            goto bad;
        *(const char **)field = text;
        return 0;
    }
    if (knob->type == HMPI_KNOB_WORD) {
        if (!hmpi_knob_word_ok(knob, text))
            goto bad;
        *(const char **)field = text;
        return 0;
    }
    if (hmpi_knob_parse(knob, text, (long long *)field) != 0)
        goto bad;
    return 0;
bad : {
    char range[160];
    describe_range(knob, range, sizeof range);
    hmpi_log_error("%s='%s' is not valid: expected %s", env, text, range);
    (void)from_env;
    return -1;
}
}

int hmpi_knobs_load(void)
{
    int rc = 0;
    int i = 0;
#define X(name, type, def, min, max, doc)                       \
    if (load_one(&hmpi_knob_table[i++], &hmpi_knobs.name) != 0) \
        rc = -1;
#include "knobs.def"
#undef X
    return rc;
}

/* Edit distance between a and b, case aside, with a swap of two neighbours counting as
 * one edit (HMPI_STAST); names longer than NAME_MAX_EDIT are not compared (-1). */
enum { NAME_MAX_EDIT = 47 };
static int distance(const char *a, const char *b)
{
    size_t m = strlen(a), n = strlen(b);
    if (m > NAME_MAX_EDIT || n > NAME_MAX_EDIT)
        return -1;
    int d[NAME_MAX_EDIT + 1][NAME_MAX_EDIT + 1];
    for (size_t i = 0; i <= m; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= n; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= m; i++) {
        for (size_t j = 1; j <= n; j++) {
            int same = toupper((unsigned char)a[i - 1]) == toupper((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + !same;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            int swapped = i > 1 && j > 1 &&
                          toupper((unsigned char)a[i - 1]) == toupper((unsigned char)b[j - 2]) &&
                          toupper((unsigned char)a[i - 2]) == toupper((unsigned char)b[j - 1]);
            if (swapped && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[m][n];
}

const char *hmpi_knob_closest(const char *name)
{
    const char *best = NULL;
    int best_d = 0;
    for (int i = 0; i < hmpi_knob_count; i++) {
        const char *k = hmpi_knob_table[i].name;
        int d = distance(name, k);
        /* Close enough to be a slip: two edits, or a third of the knob's name. */
        if (d < 0 || (d > 2 && 3 * d > (int)strlen(k)))
            continue;
        if (!best || d < best_d) {
            best = k;
            best_d = d;
        }
    }
    return best;
}

static int known_name(const char *name, size_t len)
{
    for (int i = 0; i < hmpi_knob_count; i++)
        if (strlen(hmpi_knob_table[i].name) == len &&
            memcmp(hmpi_knob_table[i].name, name, len) == 0)
            return 1;
    for (int i = 0; i < hmpi_knob_tool_var_count; i++)
        if (strlen(hmpi_knob_tool_vars[i]) == len && memcmp(hmpi_knob_tool_vars[i], name, len) == 0)
            return 1;
    return 0;
}

int hmpi_knobs_check_names(void)
{
    int unknown = 0;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "HMPI_", 5) != 0)
            continue;
        const char *name = *e + 5, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        if (known_name(name, len))
            continue;
        char copy[NAME_MAX_EDIT + 2];
        const char *near = NULL;
        if (len <= NAME_MAX_EDIT) {
            memcpy(copy, name, len);
            copy[len] = '\0';
            near = hmpi_knob_closest(copy);
        }
        if (near)
            hmpi_log_warning("HMPI_%.*s is not an HMPI setting, ignored: did you mean HMPI_%s?",
                             (int)(len > 200 ? 200 : len), name, near);
        else
            hmpi_log_warning("HMPI_%.*s is not an HMPI setting, ignored ('hmpi_info' lists them)",
                             (int)(len > 200 ? 200 : len), name);
        unknown++;
    }
    return unknown;
}
