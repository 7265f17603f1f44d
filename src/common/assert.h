/* assert.h: HMPI's three levels of assertion, for invariants of HMPI's own state (never
 * for what another process wrote in shared memory: that is untrusted input and gets a
 * graceful error, docs/design.md). A failed one says "hmpi[<rank>]: assertion failed"
 * with the expression, file and line on stderr, then aborts.
 *   HMPI_ASSERT           always on: cheap, and guards against memory corruption or a hang.
 *   HMPI_ASSERT_INTERNAL  on in Debug and sanitizer builds (HMPI_ASSERT_LEVEL >= 1).
 *   HMPI_ASSERT_EXPENSIVE on in sanitizer builds or with -DHMPI_EXPENSIVE_ASSERTS=ON
 *                         (HMPI_ASSERT_LEVEL >= 2): walks of lists and the like.
 * A level compiled out still type-checks its expression but never evaluates it. */
#ifndef HMPI_ASSERT_H
#define HMPI_ASSERT_H

#ifndef HMPI_ASSERT_LEVEL
#define HMPI_ASSERT_LEVEL 0 /* set by CMake (src/CMakeLists.txt) */
#endif

/* Writes the message (lines held by hmpi_log_hold first) and aborts. */
_Noreturn void hmpi_assert_fail(const char *expr, const char *file, int line, const char *func);

#define HMPI_ASSERT(e) \
    (__builtin_expect(!!(e), 1) ? (void)0 : hmpi_assert_fail(#e, __FILE__, __LINE__, __func__))

#define HMPI_ASSERT_OFF(e) ((void)sizeof(!(e)))

#if HMPI_ASSERT_LEVEL >= 1
#define HMPI_ASSERT_INTERNAL(e) HMPI_ASSERT(e)
#else
#define HMPI_ASSERT_INTERNAL(e) HMPI_ASSERT_OFF(e)
#endif

#if HMPI_ASSERT_LEVEL >= 2
#define HMPI_ASSERT_EXPENSIVE(e) HMPI_ASSERT(e)
#else
#define HMPI_ASSERT_EXPENSIVE(e) HMPI_ASSERT_OFF(e)
#endif

#endif
