/* report.h: the HMPI_STATS report at MPI_Finalize (report.c). */
#ifndef HMPI_CORE_REPORT_H
#define HMPI_CORE_REPORT_H

/* At MPI_Init, once the knobs are read: the report HMPI_STATS asks for on this rank (a
 * small number), which the ranks compare: all must ask for the same one. */
int hmpi_report_wanted(void);
/* Then, with the lowest and the highest hmpi_report_wanted of all ranks: which report
 * this rank makes; counting starts when it makes one. provided: the thread level
 * MPI_Init_thread gave. */
int hmpi_report_setup(int provided, int lowest, int highest);

/* At MPI_Finalize, before anything is torn down (collective over MPI_COMM_WORLD). */
void hmpi_report_finalize(void);

#endif
