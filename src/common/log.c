/* log.c: messages to the user, one line each, prefixed with the world rank.
 * Formats into a stack buffer and writes once, so lines of ranks do not mix; while
 * held (MPI_Init), keeps the lines for one rank to say on behalf of all. */
#include "log.h"
#include "assert.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int hmpi_log_rank = -1;

/* Lines kept while holding; the last 4 bytes are left for "...\n", which marks that a
 * line did not fit and was dropped. */
static struct {
    int on, cut;
    size_t len;
    char text[4096];
} held;

/* Writes the pieces as one line, or keeps them while holding. */
static void put(const struct iovec *v, int n)
{
    if (!held.on) {
        ssize_t w = writev(STDERR_FILENO, v, n);
        (void)w;
        return;
    }
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += v[i].iov_len;
    if (held.len + len > sizeof held.text - 4) {
        held.cut = 1;
        return;
    }
    for (int i = 0; i < n; i++) {
        memcpy(held.text + held.len, v[i].iov_base, v[i].iov_len);
        held.len += v[i].iov_len;
    }
}

static void emit(const char *kind, const char *fmt, va_list ap)
{
    char line[1024];
    int n = hmpi_log_rank >= 0 ? snprintf(line, sizeof line, "hmpi[%d]: %s", hmpi_log_rank, kind)
                               : snprintf(line, sizeof line, "hmpi: %s", kind);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = strnlen(line, sizeof line - 2);
    line[len++] = '\n';
    struct iovec v = {line, len};
    put(&v, 1);
}

void hmpi_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("error: ", fmt, ap);
    va_end(ap);
}

void hmpi_log_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}

void hmpi_log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}

void hmpi_log_long(const char *text)
{
    char prefix[32];
    int n = hmpi_log_rank >= 0 ? snprintf(prefix, sizeof prefix, "hmpi[%d]: ", hmpi_log_rank)
                               : snprintf(prefix, sizeof prefix, "hmpi: ");
    struct iovec v[3] = {{prefix, (size_t)n}, {(void *)text, strlen(text)}, {"\n", 1}};
    put(v, 3);
}

void hmpi_log_hold(void)
{
    held.on = 1;
    held.cut = 0;
    held.len = 0;
}

size_t hmpi_log_held(void) { return held.len + (held.cut ? 4 : 0); }

void hmpi_log_release(int print)
{
    held.on = 0;
    if (held.cut) {
        memcpy(held.text + held.len, "...\n", 4);
        held.len += 4;
    }
    if (print && held.len) {
        struct iovec v = {held.text, held.len};
        put(&v, 1);
    }
    held.len = 0;
}

void hmpi_assert_fail(const char *expr, const char *file, int line, const char *func)
{
    /* Whatever was held (MPI_Init) goes out first: it may say why. */
    if (held.on)
        hmpi_log_release(1);
    const char *src = NULL; /* the path from the last "src/" on */
    for (const char *f = strstr(file, "src/"); f; f = strstr(f + 1, "src/"))
        src = f;
    char text[768];
    snprintf(text, sizeof text, "assertion failed: %s (%s:%d, %s)", expr, src ? src : file, line,
             func);
    hmpi_log_long(text);
    abort();
}
