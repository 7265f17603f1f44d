/* log.h: the one way HMPI reports to the user: lines on stderr that start with
 * "hmpi[<world rank>]:". The function that first decides an error logs it. */
#ifndef HMPI_LOG_H
#define HMPI_LOG_H

#include <stdio.h>

extern int hmpi_log_rank; /* world rank once known, -1 before */

void hmpi_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hmpi_log_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hmpi_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One line of any length (the others are cut at 1 KiB), written at once. */
void hmpi_log_long(const char *text);

/* Holding: from hmpi_log_hold on, lines are kept (up to 4 KiB) instead of written, so
 * that what every rank would say about the same environment is said by one rank only.
 * hmpi_log_held says how many bytes are kept; hmpi_log_release writes them (print = 1)
 * or drops them, and ends holding. One thread only, at MPI_Init. */
void hmpi_log_hold(void);
size_t hmpi_log_held(void);
void hmpi_log_release(int print);

#endif
