/* assert_levels.c: the three assertion levels of src/common/assert.h. A failed
 * HMPI_ASSERT aborts (SIGABRT) with "hmpi[<rank>]: assertion failed: <expr> (<file>:<line>,
 * <function>)" on stderr, after any held lines; a passing one does nothing and evaluates
 * its expression once; the internal and expensive levels are compiled in exactly when
 * the build type and options say (BUILD_TYPE, SANITIZE, EXPENSIVE from CMake). */
#include "common/assert.h"
#include "common/log.h"
#include "../check.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The level this build must have, decided from the build's settings, not from
 * HMPI_ASSERT_LEVEL: sanitizers or the option give 2, Debug 1, anything else 0. */
static int wanted_level(void)
{
    if (SANITIZE[0] || EXPENSIVE)
        return 2;
    return strcmp(BUILD_TYPE, "Debug") == 0 ? 1 : 0;
}

typedef void (*body_t)(void);

/* Runs body in a child with its stderr into a pipe; returns the wait status and the
 * text (NUL-terminated, cut at size - 1). */
static int run_child(body_t body, char *text, size_t size)
{
    int fd[2];
    CHECK(pipe(fd) == 0, "pipe");
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], STDERR_FILENO);
        body();
        _exit(0);
    }
    close(fd[1]);
    size_t len = 0;
    ssize_t r;
    while (len < size - 1 && (r = read(fd[0], text + len, size - 1 - len)) > 0)
        len += (size_t)r;
    text[len] = '\0';
    close(fd[0]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    return status;
}

static volatile int two = 2;

enum { TRIP_LINE = __LINE__ + 6 }; /* the line of the HMPI_ASSERT below */
static void trip_always(void)
{
    hmpi_log_rank = 7;
    hmpi_log_hold();
    hmpi_log_warning("held before the assertion");
    HMPI_ASSERT(two == 3);
}

static void trip_internal(void) { HMPI_ASSERT_INTERNAL(two == 4); }

static void trip_expensive(void) { HMPI_ASSERT_EXPENSIVE(two == 5); }

static void pass_all(void)
{
    HMPI_ASSERT(two == 2);
    HMPI_ASSERT_INTERNAL(two == 2);
    HMPI_ASSERT_EXPENSIVE(two == 2);
}

static void check_aborted(const char *what, int status, const char *text, const char *expr)
{
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
          "%s: the child did not die of SIGABRT (status %#x); it said: %s", what, status, text);
    char want[128];
    snprintf(want, sizeof want, "assertion failed: %s (", expr);
    CHECK(strstr(text, want), "%s: no \"%s\" in: %s", what, want, text);
    CHECK(strstr(text, "assert_levels.c:"), "%s: no file in: %s", what, text);
}

static void check_passed(const char *what, int status, const char *text)
{
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "%s: the child did not exit 0 (status %#x); it said: %s", what, status, text);
    CHECK(text[0] == '\0', "%s: the child said: %s", what, text);
}

int main(void)
{
    char text[4096];
    int level = wanted_level();
    CHECK(HMPI_ASSERT_LEVEL == level,
          "level %d, but the build (%s, sanitize '%s', expensive %d) wants %d", HMPI_ASSERT_LEVEL,
          BUILD_TYPE, SANITIZE, EXPENSIVE, level);

    /* Always: aborts with the held line first, then rank, expression, file:line, function. */
    int status = run_child(trip_always, text, sizeof text);
    check_aborted("always", status, text, "two == 3");
    const char *held = strstr(text, "hmpi[7]: warning: held before the assertion\n");
    const char *line = strstr(text, "hmpi[7]: assertion failed: two == 3 (");
    CHECK(held && line && held < line, "always: not the held line, then the assertion: %s", text);
    char where[64];
    snprintf(where, sizeof where, "assert_levels.c:%d, trip_always)\n", TRIP_LINE);
    CHECK(strstr(line, where), "always: no \"%s\" in: %s", where, line);

    /* A passing assertion of every level: no output, no abort. */
    check_passed("passing", run_child(pass_all, text, sizeof text), text);

    /* Each expression is evaluated once when its level is on, never when it is off. */
    int n = 0;
    HMPI_ASSERT(++n == 1);
    CHECK(n == 1, "HMPI_ASSERT evaluated its expression %d times", n);
    n = 0;
    HMPI_ASSERT_INTERNAL(++n == 1);
    CHECK(n == (level >= 1), "HMPI_ASSERT_INTERNAL evaluated %d times at level %d", n, level);
    n = 0;
    HMPI_ASSERT_EXPENSIVE(++n == 1);
    CHECK(n == (level >= 2), "HMPI_ASSERT_EXPENSIVE evaluated %d times at level %d", n, level);

    /* A failing internal/expensive assertion aborts exactly when its level is on. */
    status = run_child(trip_internal, text, sizeof text);
    if (level >= 1)
        check_aborted("internal", status, text, "two == 4");
    else
        check_passed("internal (off)", status, text);
    status = run_child(trip_expensive, text, sizeof text);
    if (level >= 2)
        check_aborted("expensive", status, text, "two == 5");
    else
        check_passed("expensive (off)", status, text);

    printf("assert_levels: level %d, all checks passed\n", level);
    return 0;
}
