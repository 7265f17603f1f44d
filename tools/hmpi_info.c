/* hmpi_info: what HMPI is built on and every HMPI_* knob with its default and meaning,
 * and a warning for each HMPI_* variable set that is no knob. With --markdown it prints
 * the knob table of docs/tuning.md; with --mpit the MPI_T tables of docs/observability.md;
 * with --names every HMPI_* name HMPI knows, knobs and the tools' variables (a test checks
 * the tools read no other). */
#include "hmpi.h"
#include "common/knobs.h"
#include "mpi/mpit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(hmpi_knob_type_t t)
{
    switch (t) {
    case HMPI_KNOB_BOOL: return "bool";
    case HMPI_KNOB_INT: return "int";
    case HMPI_KNOB_SIZE: return "size";
    case HMPI_KNOB_STR: return "string";
    case HMPI_KNOB_WORD: return "word";
    }
    return "?";
}

/* "a|b|c" as "a, b, c" (a '|' would split a Markdown table's cell). */
static void words_text(const char *w, char *buf, size_t len)
{
    size_t n = 0;
    for (; w != NULL && *w != '\0' && n + 3 < len; w++) {
        if (*w == '|') {
            buf[n++] = ',';
            buf[n++] = ' ';
        } else {
            buf[n++] = *w;
        }
    }
    buf[n] = '\0';
}

static void range_text(const hmpi_knob_info_t *k, char *buf, size_t len)
{
    if (k->type == HMPI_KNOB_STR)
        snprintf(buf, len, "-");
    else if (k->type == HMPI_KNOB_WORD)
        words_text(hmpi_knob_words(k), buf, len);
    else if (k->type == HMPI_KNOB_BOOL)
        snprintf(buf, len, "0..1");
    else
        snprintf(buf, len, "%lld..%lld", k->min, k->max);
}

int main(int argc, char **argv)
{
    int markdown = argc > 1 && strcmp(argv[1], "--markdown") == 0;
    int names = argc > 1 && strcmp(argv[1], "--names") == 0;
    int mpit = argc > 1 && strcmp(argv[1], "--mpit") == 0;
    if (argc > 2 || (argc > 1 && !markdown && !names && !mpit)) {
        fprintf(stderr, "usage: hmpi_info [--markdown | --mpit | --names]\n");
        return 2;
    }
    if (mpit) {
        hmpi_mpit_markdown(stdout);
        return 0;
    }
    if (names) {
        for (int i = 0; i < hmpi_knob_count; i++)
            printf("HMPI_%s knob\n", hmpi_knob_table[i].name);
        for (int i = 0; i < hmpi_knob_tool_var_count; i++)
            printf("HMPI_%s tool\n", hmpi_knob_tool_vars[i]);
        return 0;
    }
    if (markdown) {
        printf("| knob | type | default | range | meaning |\n|---|---|---|---|---|\n");
        for (int i = 0; i < hmpi_knob_count; i++) {
            const hmpi_knob_info_t *k = &hmpi_knob_table[i];
            char range[64];
            range_text(k, range, sizeof range);
            printf("| `HMPI_%s` | %s | `%s` | %s | %s |\n", k->name, type_name(k->type), k->def,
                   range, k->doc);
        }
        return 0;
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    char *nl = strchr(version, '\n');
    if (nl)
        *nl = '\0';
    printf("HMPI %d.%d (built %s)\n", HMPI_VERSION_MAJOR, HMPI_VERSION_MINOR, HMPI_BUILD_MPI);
    printf("MPI below: %s\n", version);
    printf("Knobs (environment variables; current value when set):\n");
    for (int i = 0; i < hmpi_knob_count; i++) {
        const hmpi_knob_info_t *k = &hmpi_knob_table[i];
        char env[64], range[64];
        snprintf(env, sizeof env, "HMPI_%s", k->name);
        range_text(k, range, sizeof range);
        const char *set = getenv(env);
        printf("  %-22s %-6s default %-10s range %-24s %s%s%s\n      %s\n", env, type_name(k->type),
               k->def, range, set ? "now '" : "", set ? set : "", set ? "'" : "", k->doc);
    }
    printf("Not knobs, used by HMPI's tools and docs (never warned about):");
    for (int i = 0; i < hmpi_knob_tool_var_count; i++)
        printf(" HMPI_%s", hmpi_knob_tool_vars[i]);
    printf("\n");
    fflush(stdout);
    hmpi_knobs_check_names();
    return 0;
}
