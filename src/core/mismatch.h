/* mismatch.h: the program's MPI must be the one HMPI was built on. Two MPI libraries in
 * one process (an Open MPI program with an MPICH build of HMPI preloaded or linked in)
 * crash in the first call that passes a handle from one to the other; these checks stop
 * such a process first, with one line that names both libraries and the fix. */
#ifndef HMPI_CORE_MISMATCH_H
#define HMPI_CORE_MISMATCH_H

/* Looks at every library loaded into the process: one of another MPI family than HMPI's
 * (MPICH and its kin, Open MPI) ends the process with exit status 1 after one line on
 * stderr (said once per node, see mismatch.c). Runs when libhmpi is loaded and again in
 * MPI_Init, before the MPI below is started (a Python program loads its MPI late).
 * Returns only when all is well. */
void hmpi_mpi_check_library(void);

/* After PMPI_Init, with the world size: a launcher of the other MPI starts every rank
 * as a singleton of this one (world size 1). Says so once and ends the job. */
void hmpi_mpi_check_launcher(int world_size);

#endif
