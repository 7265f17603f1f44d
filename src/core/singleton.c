/* singleton.c: a job whose launcher started N > 1 tasks while the MPI below runs each of
 * them alone, in an MPI_COMM_WORLD of 1 (srun without --mpi=pmi2 for MPICH, a PMIx or
 * PALS launcher for an MPI that does not speak its PMI). Every task then exits 0 having
 * computed alone, and HMPI would say it was active. Each task says one line naming the
 * launcher's variable and the fix, and HMPI passes through (HMPI_SINGLETON=abort: exit
 * status 1 instead). Reads the environment only; after the knobs are loaded.
 *
 * The other MPI family's launcher (Hydra for Open MPI, mpirun for MPICH) is mismatch.c's
 * case, which stops the job before this check runs. */
#include "singleton.h"
#include "../common/knobs.h"
#include "../common/log.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What to tell the user, by the family of the mpi.h HMPI was compiled with. */
#if defined(OMPI_MAJOR_VERSION)
#define FAMILY "Open MPI"
#define PICK(mpich, openmpi, other) openmpi
#elif defined(MPICH_VERSION)
#define FAMILY "MPICH"
#define PICK(mpich, openmpi, other) mpich
#else
#define FAMILY "the MPI below"
#define PICK(mpich, openmpi, other) other
#endif

#ifndef HMPI_BUILD_MPIEXEC
#define HMPI_BUILD_MPIEXEC "mpiexec"
#endif

/* A launcher, by the variables it sets in every task. size: the job's task count, or
 * NULL where the launcher sets none (then only a task other than the first can tell);
 * rank: the task's index; marker: a further variable that must be set (NULL: none). */
typedef struct {
    const char *size, *rank, *marker;
    const char *name; /* as the line names it */
    const char *fix;  /* what to do, for this build's MPI */
} launcher_t;

/* The innermost launcher first: the one that started the task itself. Hydra and Open
 * MPI's mpirun started inside a Slurm allocation pass their tasks the SLURM_* variables
 * of the step that started their daemons (one task per node), and Flux under Slurm
 * likewise; srun's pmi2 plugin and Flux set PMI_SIZE too, without Hydra's
 * MPI_LOCALNRANKS. A real singleton started in an salloc shell or an sbatch script sees
 * SLURM_NTASKS, but no SLURM_STEP_NUM_TASKS: only srun sets that, in each task. */
static const launcher_t launchers[] = {
    {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", NULL, "Open MPI's mpirun",
     "start it with hmpirun (or " HMPI_BUILD_MPIEXEC ") of the Open MPI it was built with"},
    {"PMI_SIZE", "PMI_RANK", "MPI_LOCALNRANKS", "MPICH's mpiexec (Hydra)",
     "start it with hmpirun (or " HMPI_BUILD_MPIEXEC ") of the MPICH it was built with"},
    {"FLUX_JOB_SIZE", "FLUX_TASK_RANK", NULL, "flux run",
     PICK("flux run must offer PMI-1 (-o pmi=simple)",
          "add -o pmi=pmix to flux run (the flux-pmix plugin)",
          "start it with the PMI its MPI speaks")},
    {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID", NULL, "srun",
     PICK("add --mpi=pmi2 to srun (or export SLURM_MPI_TYPE=pmi2, or MpiDefault=pmi2 in "
          "slurm.conf)",
          "add --mpi=pmix to srun (or export SLURM_MPI_TYPE=pmix, or MpiDefault=pmix in "
          "slurm.conf)",
          "give srun the --mpi= plugin its MPI speaks (srun --mpi=list)")},
    {"PMI_SIZE", "PMI_RANK", NULL, "a PMI launcher",
     PICK("start it with hmpirun (or " HMPI_BUILD_MPIEXEC ")",
          "Open MPI needs a PMIx launcher: start it with hmpirun (or " HMPI_BUILD_MPIEXEC
          ") or srun --mpi=pmix",
          "start it with hmpirun (or " HMPI_BUILD_MPIEXEC ")")},
    {NULL, "PMIX_RANK", NULL, "a PMIx launcher",
     PICK("this MPICH speaks PMI, not PMIx: start it with hmpirun (or " HMPI_BUILD_MPIEXEC
          "), or srun --mpi=pmi2",
          "start it with hmpirun (or " HMPI_BUILD_MPIEXEC "), or srun --mpi=pmix",
          "start it with hmpirun (or " HMPI_BUILD_MPIEXEC ")")},
    {NULL, "PALS_RANKID", NULL, "PALS (Cray's mpiexec, srun --mpi=cray_shasta)",
     PICK("this MPICH speaks PMI, not Cray's PMI: start it with hmpirun (or " HMPI_BUILD_MPIEXEC
          "), or srun --mpi=pmi2",
          "start it with hmpirun (or " HMPI_BUILD_MPIEXEC "), or srun --mpi=pmix",
          "start it with hmpirun (or " HMPI_BUILD_MPIEXEC ")")},
};

/* The value of a variable set to a whole number: 1 and *out_p, else 0 (unset, or not a
 * number: then the variable is not the launcher's). */
static int number(const char *name, long *out_p)
{
    const char *text = name ? getenv(name) : NULL;
    if (!text || !*text)
        return 0;
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || v < 0)
        return 0;
    *out_p = v;
    return 1;
}

int hmpi_mpi_check_singleton(int world_size)
{
    if (world_size != 1 || strcmp(hmpi_knobs.SINGLETON, "off") == 0)
        return 0;
    const launcher_t *l = NULL;
    long size = 0, rank = -1;
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0] && !l; i++) {
        const launcher_t *c = &launchers[i];
        if (c->marker && !getenv(c->marker))
            continue;
        int has_size = number(c->size, &size), has_rank = number(c->rank, &rank);
        if (has_size || (!c->size && has_rank && rank > 0))
            l = c;
        else
            rank = -1;
    }
    /* The innermost launcher started one task (mpiexec -n 1 in an allocation of more):
     * a world of 1 is what it asked for. A launcher that sets no size is taken at its
     * word only by a task other than the first: Open MPI's singleton start sets
     * PMIX_RANK=0 in the process's own environment. */
    if (!l || (l->size && size <= 1))
        return 0;

    char task[192];
    if (rank >= 0 && l->size)
        snprintf(task, sizeof task, "task %ld of %ld (%s=%ld, %s=%ld)", rank, size, l->rank, rank,
                 l->size, size);
    else if (rank >= 0)
        snprintf(task, sizeof task, "task %ld (%s=%ld)", rank, l->rank, rank);
    else
        snprintf(task, sizeof task, "one of %ld tasks (%s=%ld)", size, l->size, size);
    int stop = strcmp(hmpi_knobs.SINGLETON, "abort") == 0;
    /* Every task is world rank 0 of its own job: hmpi[0] on each line would mislead. */
    int world_rank = hmpi_log_rank;
    hmpi_log_rank = -1;
    (stop ? hmpi_log_error : hmpi_log_warning)(
        "%s started this program as %s, but " FAMILY " runs each task alone, in an "
        "MPI_COMM_WORLD of 1: %s; %s",
        l->name, task, l->fix,
        stop ? "stopping (HMPI_SINGLETON=abort)"
             : "HMPI passes through (HMPI_SINGLETON=abort stops instead)");
    hmpi_log_rank = world_rank;
    if (stop) {
        PMPI_Finalize();
        exit(1);
    }
    return 1;
}
