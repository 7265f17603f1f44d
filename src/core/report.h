/* report.h: the HMPI_STATS report at MPI_Finalize (report.c). */
#ifndef HMPI_CORE_REPORT_H
#define HMPI_CORE_REPORT_H

/* At MPI_Init, once the knobs are read: which report HMPI_STATS asks for (all ranks
 * agree on it: collective over MPI_COMM_WORLD); counting starts when it asks for one.
 * provided: the thread level MPI_Init_thread gave. */
int hmpi_report_setup(int provided);

/* At MPI_Finalize, before anything is torn down (collective over MPI_COMM_WORLD). */
void hmpi_report_finalize(void);

#endif
