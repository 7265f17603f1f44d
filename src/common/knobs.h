/* knobs.h: the HMPI_* environment knobs, parsed once and strictly.
 * The table itself is knobs.def; every part reads its settings from hmpi_knobs. */
#ifndef HMPI_KNOBS_H
#define HMPI_KNOBS_H

#include "hidden.h"

#include <stddef.h>

typedef enum {
    HMPI_KNOB_BOOL,
    HMPI_KNOB_INT,
    HMPI_KNOB_SIZE,
    HMPI_KNOB_STR,
    HMPI_KNOB_WORD, /* one of a few words (hmpi_knob_words); kept as the text */
} hmpi_knob_type_t;

typedef struct {
    const char *name; /* without the HMPI_ prefix */
    hmpi_knob_type_t type;
    const char *def;    /* default, as text */
    long long min, max; /* accepted range (not for STR) */
    const char *doc;
} hmpi_knob_info_t;

typedef struct {
#define X(name, type, def, min, max, doc) HMPI_KNOB_FIELD_##type(name)
#define HMPI_KNOB_FIELD_BOOL(n) long long n;
#define HMPI_KNOB_FIELD_INT(n) long long n;
#define HMPI_KNOB_FIELD_SIZE(n) long long n;
#define HMPI_KNOB_FIELD_STR(n) const char *n;
#define HMPI_KNOB_FIELD_WORD(n) const char *n;
#include "knobs.def"
#undef X
} hmpi_knobs_t;

extern HMPI_HIDDEN hmpi_knobs_t hmpi_knobs;
extern const hmpi_knob_info_t hmpi_knob_table[];
extern const int hmpi_knob_count;
/* HMPI_* names (without the prefix) that HMPI's tools read: not knobs, never warned about. */
extern const char *const hmpi_knob_tool_vars[];
extern const int hmpi_knob_tool_var_count;

/* Reads every knob from the environment. Returns 0, or -1 after printing a message
 * that names the bad knob and its accepted range. */
int hmpi_knobs_load(void);

/* Warns (one line each) about every HMPI_* variable of the environment that is neither a
 * knob nor a tool's, naming the closest knob when one is close. Returns how many. */
int hmpi_knobs_check_names(void);

/* The knob (name without HMPI_) closest to name, case aside, or NULL if none is close
 * enough to be a slip of the keyboard. */
const char *hmpi_knob_closest(const char *name);

/* The words a WORD knob accepts, "a|b|c" (NULL for the other types). */
const char *hmpi_knob_words(const hmpi_knob_info_t *knob);

/* 1 when text is one of the words of a WORD knob, else 0. A word with a ':' names a
 * value after it ("json:FILE"): the text is the word up to its ':' and anything non-empty. */
int hmpi_knob_word_ok(const hmpi_knob_info_t *knob, const char *text);

/* Parses one value of the given type into *out_p. Returns 0 or -1 (out untouched). */
int hmpi_knob_parse(const hmpi_knob_info_t *knob, const char *text, long long *out_p);

#endif
