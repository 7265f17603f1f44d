/* singleton.h: a launcher that started N > 1 tasks which the MPI below runs alone, each
 * in a world of 1 (singleton.c). */
#ifndef HMPI_CORE_SINGLETON_H
#define HMPI_CORE_SINGLETON_H

/* After PMPI_Init and the knobs, with the world size: when the launcher's variables say
 * the job has more tasks than the world, says one line (on every task: they cannot talk)
 * naming the variable and the fix, and returns 1: HMPI passes through. With
 * HMPI_SINGLETON=abort it ends the process (exit status 1) after the line instead; =off,
 * or a world of more than 1, or no launcher that says more: returns 0, silent. */
int hmpi_mpi_check_singleton(int world_size);

#endif
