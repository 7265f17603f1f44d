/* log.c: messages to the user, one line each, prefixed with the world rank.
 * Formats into a stack buffer and writes once, so lines of ranks do not mix. */
#include "log.h"

#include <stdarg.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int hmpi_log_rank = -1;

static void emit(const char *kind, const char *fmt, va_list ap)
{
    char line[1024];
    int n = hmpi_log_rank >= 0
                ? snprintf(line, sizeof line, "hmpi[%d]: %s", hmpi_log_rank, kind)
                : snprintf(line, sizeof line, "hmpi: %s", kind);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = strnlen(line, sizeof line - 2);
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

void hmpi_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("error: ", fmt, ap);
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
    ssize_t w = writev(STDERR_FILENO, v, 3);
    (void)w;
}
