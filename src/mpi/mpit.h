/* mpit.h: HMPI's side of the MPI tool information interface (mpit.c). */
#ifndef HMPI_MPI_MPIT_H
#define HMPI_MPI_MPIT_H

#include <stdio.h>

/* The count of a string control variable (MPI_CHAR): room for any value it may take. */
enum { HMPI_MPIT_STRING_MAX = 4096 };

/* The tables of docs/observability.md: HMPI's categories, performance and control
 * variables as MPI_T shows them (hmpi_info --mpit prints them). */
void hmpi_mpit_markdown(FILE *out);

#endif
