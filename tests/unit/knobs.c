/* knobs.c: the HMPI_* knob table and its strict parser. Sizes with K/M/G/T suffixes,
 * ranges, garbage, signs, empty values; hmpi_knobs_load with a bad environment value
 * fails and says which knob (stderr captured through a pipe); an HMPI_* variable that is
 * no knob is a warning naming the closest knob, the tools' variables are not; lines held
 * by the log are written only when released. No MPI calls. */
#include "../check.h"
#include "common/knobs.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static const hmpi_knob_info_t *knob(const char *name)
{
    for (int i = 0; i < hmpi_knob_count; i++)
        if (strcmp(hmpi_knob_table[i].name, name) == 0)
            return &hmpi_knob_table[i];
    CHECK(0, "knob %s is not in the table", name);
    return NULL;
}

#define SENTINEL (-777LL)

static void accepts(const char *name, const char *text, long long want)
{
    long long v = SENTINEL;
    int rc = hmpi_knob_parse(knob(name), text, &v);
    CHECK(rc == 0 && v == want, "HMPI_%s='%s': rc %d, value %lld, want %lld", name, text, rc, v,
          want);
}

static void rejects(const char *name, const char *text)
{
    long long v = SENTINEL;
    int rc = hmpi_knob_parse(knob(name), text, &v);
    CHECK(rc == -1 && v == SENTINEL, "HMPI_%s='%s' accepted (rc %d, value %lld)", name, text, rc,
          v);
}

static void test_parse(void)
{
    const long long K = 1024, M = K * K, G = M * K, T = G * K;
    /* SIZE, range 64M..1T */
    accepts("HEAP_SIZE", "64M", 64 * M);
    accepts("HEAP_SIZE", "67108864", 64 * M);
    accepts("HEAP_SIZE", "65536K", 64 * M);
    accepts("HEAP_SIZE", "65536k", 64 * M);
    accepts("HEAP_SIZE", "1G", G);
    accepts("HEAP_SIZE", "1g", G);
    accepts("HEAP_SIZE", "32G", 32 * G);
    accepts("HEAP_SIZE", "1T", T);
    accepts("HEAP_SIZE", "1024G", T);
    accepts("HEAP_SIZE", "64MiB", 64 * M);
    accepts("HEAP_SIZE", "64MB", 64 * M);
    accepts("HEAP_SIZE", "64Mi", 64 * M);
    accepts("HEAP_SIZE", "0100M", 100 * M); /* decimal, not octal */
    rejects("HEAP_SIZE", "63M");            /* below the minimum */
    rejects("HEAP_SIZE", "67108863");
    rejects("HEAP_SIZE", "1025G"); /* above the maximum */
    rejects("HEAP_SIZE", "\t64M"); /* white space first (strtoull would skip it) */
    rejects("HEAP_SIZE", "\f64M");
    rejects("HEAP_SIZE", "2T");
    rejects("HEAP_SIZE", "0");
    rejects("HEAP_SIZE", "abc");
    rejects("HEAP_SIZE", "");
    rejects("HEAP_SIZE", "-1");
    rejects("HEAP_SIZE", "-64M");
    rejects("HEAP_SIZE", "+64M");
    rejects("HEAP_SIZE", " 64M");
    rejects("HEAP_SIZE", "64M ");
    rejects("HEAP_SIZE", "64 M");
    rejects("HEAP_SIZE", "64X");
    rejects("HEAP_SIZE", "64MX");
    rejects("HEAP_SIZE", "64MiBB");
    rejects("HEAP_SIZE", "64iB");
    rejects("HEAP_SIZE", "M");
    rejects("HEAP_SIZE", "1.5G");
    rejects("HEAP_SIZE", "0x4000000");
    rejects("HEAP_SIZE", "1e9");
    rejects("HEAP_SIZE", "99999999999999999999"); /* overflows 64 bits */
    rejects("HEAP_SIZE", "18446744073709551615"); /* 2^64-1 */
    rejects("HEAP_SIZE", "9223372036854775807G"); /* overflows with the suffix */
    rejects("HEAP_SIZE", "16777216T");            /* 2^64: overflows exactly */
    /* SIZE, range 0..1T */
    accepts("SHM_MIN_FREE", "0", 0);
    accepts("SHM_MIN_FREE", "0K", 0);
    accepts("SHM_MIN_FREE", "4k", 4 * K);
    accepts("SHM_MIN_FREE", "1t", T);
    accepts("SHM_MIN_FREE", "1", 1);
    rejects("SHM_MIN_FREE", "1T1");
    rejects("SHM_MIN_FREE", "1TT");
    /* INT, range 0..2^20, no suffixes */
    accepts("NODE_SIZE", "0", 0);
    accepts("NODE_SIZE", "4", 4);
    accepts("NODE_SIZE", "1048576", 1 << 20);
    rejects("NODE_SIZE", "1048577");
    rejects("NODE_SIZE", "-1");
    rejects("NODE_SIZE", "4K");
    rejects("NODE_SIZE", "2.0");
    rejects("NODE_SIZE", "");
    rejects("NODE_SIZE", "two");
    /* BOOL */
    accepts("DISABLE", "0", 0);
    accepts("DISABLE", "1", 1);
    rejects("DISABLE", "2");
    rejects("DISABLE", "yes");
    rejects("DISABLE", "true");
    rejects("DISABLE", "-0");
    rejects("DISABLE", "");
    /* INT 0..2 */
    accepts("VERBOSE", "2", 2);
    rejects("VERBOSE", "3");
    /* STR and WORD are not numbers */
    rejects("SHM_DIR", "/dev/shm");
    rejects("HUGEPAGES", "0");
    /* WORD: exactly one of its words, nothing more or less */
    const hmpi_knob_info_t *hp = knob("HUGEPAGES");
    CHECK(hp->type == HMPI_KNOB_WORD && hmpi_knob_words(hp) != NULL, "HUGEPAGES is no WORD knob");
    CHECK(strcmp(hmpi_knob_words(hp), "auto|off|advise|collapse") == 0, "HUGEPAGES words '%s'",
          hmpi_knob_words(hp));
    static const char *const good[] = {"auto", "off", "advise", "collapse"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        CHECK(hmpi_knob_word_ok(hp, good[i]), "HUGEPAGES='%s' refused", good[i]);
    static const char *const bad[] = {"",   "|",    "auto|off", "Auto",    "auto ", " off",
                                      "of", "offf", "collaps",  "advise|", "|auto", "none"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(!hmpi_knob_word_ok(hp, bad[i]), "HUGEPAGES='%s' accepted", bad[i]);
    rejects("STATS", "1");
    /* WORD: exactly one of its words, nothing more or less; json:FILE any json:... */
    const hmpi_knob_info_t *st = knob("STATS");
    CHECK(st->type == HMPI_KNOB_WORD && hmpi_knob_words(st) != NULL, "STATS is no WORD knob");
    CHECK(strcmp(hmpi_knob_words(st), "0|1|per-rank|json:FILE") == 0, "STATS words '%s'",
          hmpi_knob_words(st));
    static const char *const good_s[] = {
        "0", "1", "per-rank", "json:x", "json:/tmp/a b.json", "json::", "json:FILE", "json:|"};
    for (size_t i = 0; i < sizeof good_s / sizeof good_s[0]; i++)
        CHECK(hmpi_knob_word_ok(st, good_s[i]), "STATS='%s' refused", good_s[i]);
    static const char *const bad_s[] = {
        "",   "|",  "0|1",   "2",    "on",     "per-rank ", " 1",  "per",       "per-ranks",
        "1|", "|0", "json:", "json", "JSON:x", "jso:x",     "0:x", "per-rank:x"};
    for (size_t i = 0; i < sizeof bad_s / sizeof bad_s[0]; i++)
        CHECK(!hmpi_knob_word_ok(st, bad_s[i]), "STATS='%s' accepted", bad_s[i]);
    CHECK(hmpi_knob_words(knob("SHM_DIR")) == NULL && !hmpi_knob_word_ok(knob("SHM_DIR"), "x"),
          "a STR knob has words");
}

/* The table itself: names are upper case, every default is valid, ranges are sane. */
static void test_table(void)
{
    CHECK(hmpi_knob_count >= 7, "only %d knobs", hmpi_knob_count);
    for (int i = 0; i < hmpi_knob_count; i++) {
        const hmpi_knob_info_t *k = &hmpi_knob_table[i];
        CHECK(k->name && k->name[0] &&
                  strspn(k->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(k->name),
              "knob %d has a bad name '%s'", i, k->name ? k->name : "(null)");
        CHECK(k->doc && strlen(k->doc) > 10, "knob %s has no doc string", k->name);
        CHECK(k->def != NULL, "knob %s has no default", k->name);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(k->name, hmpi_knob_table[j].name) != 0, "knob %s twice", k->name);
        if (k->type == HMPI_KNOB_STR) {
            CHECK(k->def[0] != '\0', "string knob %s has an empty default", k->name);
            continue;
        }
        if (k->type == HMPI_KNOB_WORD) {
            CHECK(hmpi_knob_words(k) != NULL, "word knob %s lists no words (WORDS)", k->name);
            CHECK(hmpi_knob_word_ok(k, k->def), "word knob %s: its default '%s' is not one of %s",
                  k->name, k->def, hmpi_knob_words(k));
            continue;
        }
        long long v = SENTINEL;
        CHECK(k->min <= k->max, "knob %s: min %lld > max %lld", k->name, k->min, k->max);
        CHECK(hmpi_knob_parse(k, k->def, &v) == 0 && v >= k->min && v <= k->max,
              "knob %s: its default '%s' does not parse", k->name, k->def);
        if (k->type == HMPI_KNOB_BOOL)
            CHECK(k->min == 0 && k->max == 1, "bool knob %s ranges %lld..%lld", k->name, k->min,
                  k->max);
    }
}

static void clear_env(void)
{
    for (int i = 0; i < hmpi_knob_count; i++) {
        char env[64];
        snprintf(env, sizeof env, "HMPI_%s", hmpi_knob_table[i].name);
        unsetenv(env);
    }
}

/* Runs fn with stderr going into buf; returns its result. */
static int capturing(int (*fn)(void), char *buf, size_t len)
{
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    CHECK(saved >= 0 && dup2(fds[1], STDERR_FILENO) == STDERR_FILENO, "dup2");
    close(fds[1]);
    int rc = fn();
    fflush(stderr);
    CHECK(dup2(saved, STDERR_FILENO) == STDERR_FILENO, "restoring stderr");
    close(saved);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < len && (n = read(fds[0], buf + got, len - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    close(fds[0]);
    return rc;
}

static int load_capturing(char *buf, size_t len) { return capturing(hmpi_knobs_load, buf, len); }

static void expect_bad(const char *env, const char *value, const char *text1, const char *text2)
{
    char out[4096];
    clear_env();
    CHECK(setenv(env, value, 1) == 0, "setenv");
    int rc = load_capturing(out, sizeof out);
    CHECK(rc == -1, "%s='%s' loaded with rc %d", env, value, rc);
    CHECK(strstr(out, text1) != NULL, "%s='%s': message lacks \"%s\": [%s]", env, value, text1,
          out);
    CHECK(text2 == NULL || strstr(out, text2) != NULL, "%s='%s': message lacks \"%s\": [%s]", env,
          value, text2, out);
    CHECK(strncmp(out, "hmpi: error: ", 13) == 0, "message is not an hmpi error line: [%s]", out);
    CHECK(out[strlen(out) - 1] == '\n' && strchr(out, '\n') == out + strlen(out) - 1,
          "one bad knob must give exactly one line: [%s]", out);
}

static void test_load(void)
{
    char out[4096];
    hmpi_log_rank = -1;

    /* Defaults, and nothing said. */
    clear_env();
    CHECK(load_capturing(out, sizeof out) == 0, "defaults do not load: [%s]", out);
    CHECK(out[0] == '\0', "loading the defaults printed [%s]", out);
    CHECK(hmpi_knobs.DISABLE == 0 && hmpi_knobs.NODE_SIZE == 0 &&
              strcmp(hmpi_knobs.STATS, "0") == 0 && hmpi_knobs.VERBOSE == 0,
          "default flags");
    CHECK(hmpi_knobs.HEAP_SIZE == 32LL << 30, "default HEAP_SIZE %lld", hmpi_knobs.HEAP_SIZE);
    CHECK(hmpi_knobs.SHM_MIN_FREE == 64LL << 20, "default SHM_MIN_FREE %lld",
          hmpi_knobs.SHM_MIN_FREE);
    CHECK(strcmp(hmpi_knobs.SHM_DIR, "/dev/shm") == 0, "default SHM_DIR '%s'", hmpi_knobs.SHM_DIR);
    CHECK(strcmp(hmpi_knobs.HUGEPAGES, "auto") == 0, "default HUGEPAGES '%s'",
          hmpi_knobs.HUGEPAGES);

    /* Good values from the environment. */
    clear_env();
    setenv("HMPI_HEAP_SIZE", "1G", 1);
    setenv("HMPI_NODE_SIZE", "3", 1);
    setenv("HMPI_SHM_DIR", "/tmp/x", 1);
    setenv("HMPI_DISABLE", "1", 1);
    setenv("HMPI_HUGEPAGES", "collapse", 1);
    setenv("HMPI_STATS", "json:out.json", 1);
    CHECK(load_capturing(out, sizeof out) == 0 && out[0] == '\0', "good values: [%s]", out);
    CHECK(hmpi_knobs.HEAP_SIZE == 1LL << 30 && hmpi_knobs.NODE_SIZE == 3 &&
              hmpi_knobs.DISABLE == 1 && strcmp(hmpi_knobs.SHM_DIR, "/tmp/x") == 0 &&
              strcmp(hmpi_knobs.HUGEPAGES, "collapse") == 0 &&
              strcmp(hmpi_knobs.STATS, "json:out.json") == 0,
          "values from the environment not loaded");

    /* Bad values: -1 and one line naming the knob, the value and the range. */
    expect_bad("HMPI_HEAP_SIZE", "abc", "HMPI_HEAP_SIZE='abc' is not valid",
               "a size in bytes from 67108864 to 1099511627776");
    expect_bad("HMPI_HEAP_SIZE", "2T", "HMPI_HEAP_SIZE='2T' is not valid", NULL);
    expect_bad("HMPI_HEAP_SIZE", "", "HMPI_HEAP_SIZE='' is not valid", NULL);
    expect_bad("HMPI_NODE_SIZE", "-1", "HMPI_NODE_SIZE='-1' is not valid",
               "an integer from 0 to 1048576");
    expect_bad("HMPI_DISABLE", "yes", "HMPI_DISABLE='yes' is not valid", "0 or 1");
    expect_bad("HMPI_SHM_DIR", "", "HMPI_SHM_DIR='' is not valid", NULL);
    expect_bad("HMPI_HUGEPAGES", "on", "HMPI_HUGEPAGES='on' is not valid",
               "one of auto, off, advise, collapse");
    expect_bad("HMPI_HUGEPAGES", "", "HMPI_HUGEPAGES='' is not valid", NULL);
    expect_bad("HMPI_STATS", "yes", "HMPI_STATS='yes' is not valid",
               "one of 0, 1, per-rank, json:FILE");
    expect_bad("HMPI_STATS", "json:", "HMPI_STATS='json:' is not valid", NULL);

    /* With the world rank known, the line says it. */
    hmpi_log_rank = 5;
    clear_env();
    setenv("HMPI_VERBOSE", "9", 1);
    CHECK(load_capturing(out, sizeof out) == -1, "HMPI_VERBOSE=9 loaded");
    const char *want = "hmpi[5]: error: HMPI_VERBOSE='9' is not valid";
    CHECK(strncmp(out, want, strlen(want)) == 0, "message with rank: [%s]", out);
    hmpi_log_rank = -1;

    /* Two bad knobs: both are named. */
    clear_env();
    setenv("HMPI_HEAP_SIZE", "1Q", 1);
    setenv("HMPI_STATS", "on", 1);
    CHECK(load_capturing(out, sizeof out) == -1, "two bad knobs loaded");
    CHECK(strstr(out, "HMPI_HEAP_SIZE='1Q'") && strstr(out, "HMPI_STATS='on'"),
          "not both bad knobs named: [%s]", out);
    clear_env();
}

static void closest(const char *name, const char *want)
{
    const char *got = hmpi_knob_closest(name);
    CHECK(want ? got && strcmp(got, want) == 0 : got == NULL, "closest to %s: %s, want %s", name,
          got ? got : "none", want ? want : "none");
}

/* Removes every HMPI_* variable, knob or not. */
static void clear_all_hmpi(void)
{
    extern char **environ;
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e; e++) {
            if (strncmp(*e, "HMPI_", 5) == 0) {
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
                unsetenv(name);
                again = 1;
                break;
            }
        }
    }
}

static int emit_three(void)
{
    hmpi_log_error("first %d", 1);
    hmpi_log_warning("second");
    hmpi_log_info("third");
    return (int)hmpi_log_held();
}

static int hold_and_drop(void)
{
    hmpi_log_hold();
    int held = emit_three();
    hmpi_log_release(0);
    return held;
}

static int hold_and_print(void)
{
    hmpi_log_hold();
    int held = emit_three();
    hmpi_log_release(1);
    return held;
}

static int hold_overflow(void)
{
    hmpi_log_hold();
    for (int i = 0; i < 100; i++)
        hmpi_log_info("line %03d of a long run of lines that will not all fit .........", i);
    hmpi_log_release(1);
    return 0;
}

static void test_names(void)
{
    char out[8192];
    closest("STAT", "STATS");
    closest("stats", "STATS");
    closest("STAST", "STATS");
    closest("NODESIZE", "NODE_SIZE");
    closest("HEAPSIZE", "HEAP_SIZE");
    closest("SYNERGISTIC_MINIMUM", "SYNERGISTIC_MIN");
    closest("EAGER_DELAY", "EAGER_DELAY_US");
    closest("FOOBARBAZQUUX", NULL);
    closest("TOTALLY_UNRELATED_NAME", NULL);

    /* Knobs and the tools' variables are quiet; a misspelt knob is one warning line. */
    clear_all_hmpi();
    setenv("HMPI_STATS", "1", 1);
    for (int i = 0; i < hmpi_knob_tool_var_count; i++) {
        char name[64];
        snprintf(name, sizeof name, "HMPI_%s", hmpi_knob_tool_vars[i]);
        setenv(name, "/somewhere", 1);
    }
    CHECK(capturing(hmpi_knobs_check_names, out, sizeof out) == 0 && out[0] == '\0',
          "known names warned about: [%s]", out);
    setenv("HMPI_STAT", "1", 1);
    CHECK(capturing(hmpi_knobs_check_names, out, sizeof out) == 1, "HMPI_STAT not counted");
    CHECK(strcmp(out, "hmpi: warning: HMPI_STAT is not an HMPI setting, ignored: did you mean "
                      "HMPI_STATS?\n") == 0,
          "HMPI_STAT: [%s]", out);
    unsetenv("HMPI_STAT");
    setenv("HMPI_FOOBARBAZQUUX", "1", 1);
    CHECK(capturing(hmpi_knobs_check_names, out, sizeof out) == 1, "HMPI_FOOBARBAZQUUX");
    CHECK(strstr(out, "HMPI_FOOBARBAZQUUX is not an HMPI setting") &&
              !strstr(out, "did you mean") && strstr(out, "hmpi_info"),
          "HMPI_FOOBARBAZQUUX: [%s]", out);
    setenv("HMPI_NODESIZE", "2", 1);
    CHECK(capturing(hmpi_knobs_check_names, out, sizeof out) == 2, "two unknown names");
    CHECK(strstr(out, "did you mean HMPI_NODE_SIZE?"), "HMPI_NODESIZE: [%s]", out);
    clear_all_hmpi();

    /* Held lines: nothing written until released, and then all of them, in order. */
    CHECK(capturing(hold_and_drop, out, sizeof out) > 0 && out[0] == '\0',
          "dropped lines were written: [%s]", out);
    CHECK(capturing(hold_and_print, out, sizeof out) > 0, "nothing held");
    CHECK(strcmp(out, "hmpi: error: first 1\nhmpi: warning: second\nhmpi: third\n") == 0,
          "released lines: [%s]", out);
    CHECK(capturing(emit_three, out, sizeof out) == 0 && strstr(out, "third"),
          "after release, lines go straight out: [%s]", out);
    capturing(hold_overflow, out, sizeof out);
    CHECK(strstr(out, "line 000 ") && !strstr(out, "line 099 ") &&
              strcmp(out + strlen(out) - 4, "...\n") == 0 && strlen(out) <= 4096,
          "overflowing hold: %zu bytes, ends [%s]", strlen(out), out + strlen(out) - 20);
}

int main(void)
{
    test_parse();
    test_table();
    test_load();
    test_names();
    printf("knobs: ok (%d knobs)\n", hmpi_knob_count);
    return 0;
}
