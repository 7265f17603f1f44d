/* knobs.c: strict parsing of the HMPI_* knob table (knobs.def).
 * A bad value is an error naming the knob and its range, never a silent default.
 * No MPI calls in here: the unit tests and the fuzzer use it alone. */
#include "knobs.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const hmpi_knob_info_t hmpi_knob_table[] = {
#define X(name, type, def, min, max, doc) {#name, HMPI_KNOB_##type, def, min, max, doc},
#include "knobs.def"
#undef X
};
const int hmpi_knob_count = (int)(sizeof(hmpi_knob_table) / sizeof(hmpi_knob_table[0]));

hmpi_knobs_t hmpi_knobs;

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
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        case 't': case 'T': shift = 40; break;
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
    if (knob->type == HMPI_KNOB_STR)
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
    case HMPI_KNOB_BOOL:
        snprintf(buf, len, "0 or 1");
        break;
    case HMPI_KNOB_INT:
        snprintf(buf, len, "an integer from %lld to %lld", knob->min, knob->max);
        break;
    case HMPI_KNOB_SIZE:
        snprintf(buf, len, "a size in bytes from %lld to %lld (suffixes K, M, G, T)",
                 knob->min, knob->max);
        break;
    case HMPI_KNOB_STR:
        snprintf(buf, len, "a non-empty string");
        break;
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
    if (hmpi_knob_parse(knob, text, (long long *)field) != 0)
        goto bad;
    return 0;
bad: {
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
#define X(name, type, def, min, max, doc) \
    if (load_one(&hmpi_knob_table[i++], &hmpi_knobs.name) != 0) rc = -1;
#include "knobs.def"
#undef X
    return rc;
}
