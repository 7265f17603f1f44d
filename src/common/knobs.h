/* knobs.h: the HMPI_* environment knobs, parsed once and strictly.
 * The table itself is knobs.def; every part reads its settings from hmpi_knobs. */
#ifndef HMPI_KNOBS_H
#define HMPI_KNOBS_H

#include "hidden.h"

#include <stddef.h>

typedef enum { HMPI_KNOB_BOOL, HMPI_KNOB_INT, HMPI_KNOB_SIZE, HMPI_KNOB_STR } hmpi_knob_type_t;

typedef struct {
    const char *name;        /* without the HMPI_ prefix */
    hmpi_knob_type_t type;
    const char *def;         /* default, as text */
    long long min, max;      /* accepted range (not for STR) */
    const char *doc;
} hmpi_knob_info_t;

typedef struct {
#define X(name, type, def, min, max, doc) HMPI_KNOB_FIELD_##type(name)
#define HMPI_KNOB_FIELD_BOOL(n) long long n;
#define HMPI_KNOB_FIELD_INT(n)  long long n;
#define HMPI_KNOB_FIELD_SIZE(n) long long n;
#define HMPI_KNOB_FIELD_STR(n)  const char *n;
#include "knobs.def"
#undef X
} hmpi_knobs_t;

extern HMPI_HIDDEN hmpi_knobs_t hmpi_knobs;
extern const hmpi_knob_info_t hmpi_knob_table[];
extern const int hmpi_knob_count;

/* Reads every knob from the environment. Returns 0, or -1 after printing a message
 * that names the bad knob and its accepted range. */
int hmpi_knobs_load(void);

/* Parses one value of the given type into *out_p. Returns 0 or -1 (out untouched). */
int hmpi_knob_parse(const hmpi_knob_info_t *knob, const char *text, long long *out_p);

#endif
