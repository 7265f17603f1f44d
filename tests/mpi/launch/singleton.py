#!/usr/bin/env python3
"""singleton.py: a launcher that started N > 1 tasks which the MPI below runs alone (srun
without --mpi=pmi2 for MPICH) is named in one line per task, and HMPI passes through;
HMPI_SINGLETON=abort stops the task instead; a real singleton, or one started where only
the allocation (SLURM_NTASKS) or the innermost launcher says one task, says nothing.

Each case runs PROGRAM (heap_shared, linked with libhmpi) without a launcher, as a
singleton, with a launcher's variables set by hand (the ones src/core/singleton.c
reads), and judges its exit status, the lines HMPI says, HMPI_Active() (heap_shared
--expect=on|off checks it and the data of its messages) and the HMPI_STATS report. The
same check under a real srun is tests/slurm/run.sh's.

  singleton.py --program P --mpi mpich|openmpi
Standard library only."""

import argparse
import os
import subprocess
import sys

TIMEOUT = 60
# Every variable of a launcher that src/core/singleton.c or the MPI below reads.
LAUNCHER_PREFIXES = ("SLURM_", "PMI_", "PMIX_", "PALS_", "FLUX_", "OMPI_COMM_WORLD_",
                     "MPI_LOCALNRANKS", "HMPI_")


def run(program, env_extra, expect):
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_PREFIXES)}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **env_extra)
    cmd = [program, "--expect=" + expect]
    print("+ " + " ".join("%s=%s" % kv for kv in sorted(env_extra.items())) + " " +
          " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return None, ""
    sys.stdout.write(p.stdout)
    print("  -> exit %d" % p.returncode, flush=True)
    return p.returncode, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--program", required=True)
    ap.add_argument("--mpi", required=True, choices=["mpich", "openmpi"])
    a = ap.parse_args()
    fix = "--mpi=pmi2" if a.mpi == "mpich" else "--mpi=pmix"
    family = "MPICH" if a.mpi == "mpich" else "Open MPI"
    srun = {"SLURM_STEP_NUM_TASKS": "2", "SLURM_PROCID": "1"}
    warned = "HMPI passes through"
    # name, environment, HMPI active, exit status, texts of the one line (None: silent)
    cases = [
        ("real singleton", {}, True, 0, None),
        ("salloc shell / sbatch script", {"SLURM_NTASKS": "4", "SLURM_NPROCS": "4"}, True,
         0, None),
        ("srun -n 1", {"SLURM_STEP_NUM_TASKS": "1", "SLURM_PROCID": "0"}, True, 0, None),
        ("srun -n 2, task 1", dict(srun, HMPI_STATS="1"), False, 0,
         ["srun", "task 1 of 2", "SLURM_PROCID=1", "SLURM_STEP_NUM_TASKS=2", family, fix,
          "SLURM_MPI_TYPE", warned]),
        ("srun -n 2, task 0", {"SLURM_STEP_NUM_TASKS": "2", "SLURM_PROCID": "0"}, False, 0,
         ["task 0 of 2", fix, warned]),
        ("HMPI_SINGLETON=off", dict(srun, HMPI_SINGLETON="off"), True, 0, None),
        ("HMPI_SINGLETON=abort", dict(srun, HMPI_SINGLETON="abort"), None, 1,
         ["error:", "SLURM_STEP_NUM_TASKS=2", fix, "stopping (HMPI_SINGLETON=abort)"]),
        ("hydra -n 1 inside srun -n 2",
         dict(srun, PMI_SIZE="1", PMI_RANK="0", MPI_LOCALNRANKS="1"), True, 0, None),
        ("PMI launcher", {"PMI_SIZE": "3", "PMI_RANK": "2"}, False, 0,
         ["a PMI launcher", "task 2 of 3", "PMI_SIZE=3", warned]),
        ("flux run", {"FLUX_JOB_SIZE": "3", "FLUX_TASK_RANK": "2"}, False, 0,
         ["flux run", "FLUX_JOB_SIZE=3", "FLUX_TASK_RANK=2", warned]),
        ("PALS", {"PALS_RANKID": "1", "PALS_NODEID": "0"}, False, 0,
         ["PALS", "PALS_RANKID=1", warned]),
        ("PALS, first task", {"PALS_RANKID": "0", "PALS_NODEID": "0"}, True, 0, None),
    ]
    # Open MPI's own singleton start sets PMIX_RANK=0 in the process's environment.
    if a.mpi == "mpich":
        cases.append(("PMIx launcher", {"PMIX_RANK": "1"}, False, 0,
                      ["PMIx", "PMIX_RANK=1", "srun --mpi=pmi2", warned]))
    failures = []
    for name, env, active, status, texts in cases:
        expect = "on" if active or active is None else "off"
        rc, out = run(a.program, env, expect)
        bad = []
        if rc is None:
            bad.append("still running after %d s" % TIMEOUT)
        elif rc != status:
            bad.append("exit %d, expected %d" % (rc, status))
        said = [l for l in out.splitlines() if "started this program" in l]
        if texts is None:
            bad += ["a line where none was due: %s" % l for l in said]
        elif len(said) != 1:
            bad.append("%d lines about the launcher, expected 1" % len(said))
        else:
            bad += ["the line lacks '%s'" % t for t in texts if t not in said[0]]
            if said[0].startswith("hmpi["):
                bad.append("the line carries a world rank (every task is rank 0)")
        ran = "heap_shared: 1 ranks" in out
        if status == 0 and not ran:
            bad.append("the program did not finish")
        if status != 0 and ran:
            bad.append("the program ran past MPI_Init")
        if env.get("HMPI_STATS") and "1 ranks, 1 node, HMPI pass-through" not in out:
            bad.append("HMPI_STATS does not report a pass-through job of 1 rank on 1 node")
        failures += ["%s: %s" % (name, b) for b in bad]
    for f in failures:
        print("FAILED: " + f)
    if failures:
        return 1
    print("singleton: OK (%d cases, %s)" % (len(cases), family))
    return 0


if __name__ == "__main__":
    sys.exit(main())
