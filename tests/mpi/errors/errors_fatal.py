#!/usr/bin/env python3
"""errors_fatal.py CASE --np N --mpiexec M --program P [--launcher-flag F ...]

Runs errors_fatal CASE under mpiexec with the default error handler
(MPI_ERRORS_ARE_FATAL) and judges the job from outside: it must end in bounded time,
with a non-zero exit status, and its output must hold HMPI's line naming the function
and the bad argument. Standard library only."""
import argparse
import os
import re
import subprocess
import sys
import time

# case: the lines (or parts of them) the job's output must contain; an "error: " one right
# after HMPI's prefix, "hmpi[<world rank>]: " once the rank is known, "hmpi: " before (log.c)
EXPECT = {
    "send_rank": ["error: MPI_Send: dest 7 is not a rank of a communicator of size 2 (MPI_ERR_RANK)"],
    "bcast_root": ["error: MPI_Bcast: root 2 is not a rank of a communicator of size 2 (MPI_ERR_ROOT)"],
    "send_type": ["error: MPI_Send: datatype is not committed", "(MPI_ERR_TYPE)"],
    "acc_op": ["error: MPI_Accumulate: op is MPI_OP_NULL (MPI_ERR_OP)"],
    "pready_range": ["error: MPI_Pready: partition 5 is outside 0..1 (MPI_ERR_ARG)"],
    "before_init": ["error: MPI_Send called before MPI_Init"],
    "after_finalize": ["error: MPI_Send called after MPI_Finalize"],
    "session_rank": ["error: MPI_Send: dest 7 is not a rank of a communicator of size 2 (MPI_ERR_RANK)"],
    "session_group": ["error: MPI_Comm_create_from_group: group was made from a pset of a "
                      "session finalized since"],
}
LIMIT = 60  # seconds: the launcher ends the job well before


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(EXPECT))
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--launcher-flag", action="append", default=[])
    ap.add_argument("--exit-may-be-lost", action="store_true",
                    help="the launcher may exit 0 for an aborted job (MPICH 4.2's hydra): "
                    "then the MPI below's abort line stands for the status")
    a = ap.parse_args()
    cmd = [a.mpiexec] + a.launcher_flag + ["-n", str(a.np), a.program, a.case]
    env = dict(os.environ)
    env.pop("HMPI_DISABLE", None)
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=LIMIT, env=env)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        sys.exit("FAIL %s: the job did not end within %d s\n%s" % (a.case, LIMIT, out))
    took = time.monotonic() - t0
    out = p.stdout.decode(errors="replace")
    bad = []
    aborted = re.search(r"^Abort\(\d+\) on node \d+", out, re.M)  # MPICH's own line
    if p.returncode == 0 and not (a.exit_may_be_lost and aborted):
        bad.append("the job exited 0")
    if "returned" in out and "errors_fatal: %s returned" % a.case in out:
        bad.append("the erroneous call returned")
    for want in EXPECT[a.case]:
        prefix = r"hmpi(\[\d+\])?: " if want.startswith("error: ") else ""
        if not re.search(prefix + re.escape(want), out):
            bad.append("no %r in the output" % want)
    if bad:
        sys.exit("FAIL %s (exit %d, %.1f s): %s\n--- output ---\n%s"
                 % (a.case, p.returncode, took, "; ".join(bad), out))
    print("errors_fatal %s: exit %d in %.1f s, message found" % (a.case, p.returncode, took))


if __name__ == "__main__":
    main()
