/* fuzz_knobs.c: libFuzzer harness of the knob parser (src/common/knobs.c). The first
 * byte picks a knob of the table, the rest is its value. Checked on every input:
 *  - the parser agrees with a reference written here from the documented grammar
 *    (decimal digits, for SIZE one of K M G T, either case, then nothing, i, B or iB;
 *    no sign, no space, no overflow of a signed 64-bit value), value included;
 *  - an accepted value lies in the knob's [min, max], a BOOL is 0 or 1;
 *  - a rejected value leaves the output untouched;
 *  - round trip: an accepted value printed in decimal, and for a SIZE with the largest
 *    suffix that divides it, parses back to itself;
 *  - a WORD knob accepts exactly its listed words, whole, and for a word "head:VALUE" any
 *    text that is head: and at least one character more.
 * No MPI. */
#include "common/knobs.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...)                                    \
    do {                                             \
        fprintf(stderr, "fuzz_knobs: " __VA_ARGS__); \
        fputc('\n', stderr);                         \
        abort();                                     \
    } while (0)

/* The grammar, spelt out without strtoull. */
static int reference(const hmpi_knob_info_t *k, const char *s, long long *out_p)
{
    if (k->type == HMPI_KNOB_STR || k->type == HMPI_KNOB_WORD)
        return -1;
    const char *p = s;
    unsigned long long v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++)
        if (__builtin_mul_overflow(v, 10ULL, &v) ||
            __builtin_add_overflow(v, (unsigned)(*p - '0'), &v))
            return -1;
    unsigned shift = 0;
    if (k->type == HMPI_KNOB_SIZE && *p) {
        static const char lower[] = "kmgt", upper[] = "KMGT";
        const char *u = strchr(lower, *p), *U = strchr(upper, *p);
        if (!u && !U)
            return -1;
        shift = 10u * (unsigned)(u ? u - lower + 1 : U - upper + 1);
        p++;
        if (strcmp(p, "i") == 0 || strcmp(p, "B") == 0 || strcmp(p, "iB") == 0)
            p += strlen(p);
    }
    if (*p)
        return -1;
    if (shift && v > (~0ULL >> 1) >> shift)
        return -1;
    v <<= shift;
    if (v > (unsigned long long)(~0ULL >> 1))
        return -1;
    if ((long long)v < k->min || (long long)v > k->max)
        return -1;
    *out_p = (long long)v;
    return 0;
}

static void round_trip(const hmpi_knob_info_t *k, long long v)
{
    char text[64];
    long long back = 0;
    snprintf(text, sizeof text, "%lld", v);
    if (hmpi_knob_parse(k, text, &back) != 0 || back != v)
        FAIL("HMPI_%s: %lld printed as '%s' does not parse back", k->name, v, text);
    if (k->type != HMPI_KNOB_SIZE || v == 0)
        return;
    int s = 0;
    while (s < 4 && (v & ((1LL << (10 * (s + 1))) - 1)) == 0)
        s++;
    if (s == 0)
        return;
    snprintf(text, sizeof text, "%lld%c", v >> (10 * s), "KMGT"[s - 1]);
    if (hmpi_knob_parse(k, text, &back) != 0 || back != v)
        FAIL("HMPI_%s: %lld printed as '%s' does not parse back", k->name, v, text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 64)
        return 0;
    const hmpi_knob_info_t *k = &hmpi_knob_table[data[0] % (unsigned)hmpi_knob_count];
    char text[64];
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';

    if (k->type == HMPI_KNOB_WORD) { /* one of its words, compared whole, or head:VALUE */
        const char *w = hmpi_knob_words(k);
        int want_ok = 0;
        for (size_t len; w && *w; w += len + (w[len] == '|')) {
            len = strcspn(w, "|");
            want_ok |= len > 0 && strlen(text) == len && memcmp(text, w, len) == 0;
            const char *colon = memchr(w, ':', len);
            size_t head = colon ? (size_t)(colon - w) + 1 : 0;
            want_ok |= colon && head < len && strlen(text) > head && memcmp(text, w, head) == 0;
        }
        if (hmpi_knob_word_ok(k, text) != want_ok)
            FAIL("HMPI_%s='%s': word check says %d, reference %d", k->name, text,
                 hmpi_knob_word_ok(k, text), want_ok);
    }

    const long long untouched = -0x5eed;
    long long got = untouched, want = untouched;
    int rc = hmpi_knob_parse(k, text, &got);
    int ref = reference(k, text, &want);
    if (rc != ref || got != want)
        FAIL("HMPI_%s='%s': parser says %d (%lld), reference %d (%lld)", k->name, text, rc, got,
             ref, want);
    if (rc != 0)
        return 0;
    if (got < k->min || got > k->max || (k->type == HMPI_KNOB_BOOL && got != 0 && got != 1))
        FAIL("HMPI_%s='%s' gave %lld outside [%lld, %lld]", k->name, text, got, k->min, k->max);
    round_trip(k, got);
    return 0;
}
