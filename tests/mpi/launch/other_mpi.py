#!/usr/bin/env python3
"""other_mpi.py: a program of the other MPI never meets HMPI in a segfault. Debian
installs both MPIs and its plain mpicc/mpiexec are Open MPI's, so an MPICH build of HMPI
meets Open MPI programs (and the reverse). Each way of starting one must end the job
with a non-zero exit and exactly one line that names both MPI libraries and the fix
(hmpicc), without the program running past MPI_Init and without a crash:

  hmpirun         hmpirun -n 2 OTHER: refused before launching (the binary's MPI)
  preload         HMPI's launcher, libhmpi preloaded into the ranks of OTHER
  preload-other   the other MPI's launcher, libhmpi preloaded likewise
  linked          OTHER_LINKED (the other wrapper with -lhmpi, as a Makefile with the
                  wrong mpicc and `pkg-config --libs hmpi` builds it), HMPI's launcher
  late            late_mpi: the other MPI loaded after start (as Python loads it),
                  libhmpi preloaded; caught in MPI_Init
  singletons      OWN (linked with HMPI, HMPI's MPI) under the other MPI's launcher:
                  every rank would run alone; one line says so

  other_mpi.py --hmpirun H --lib LIBHMPI --mpiexec M --other-mpiexec M2 --other P
               --other-linked P2 --late L --own P3 [--launcher-flag F ...]
Standard library only."""

import argparse
import os
import re
import subprocess
import sys

TIMEOUT = 60
CRASH = ("signal 11", "Segmentation fault", "SIGSEGV", "Caught signal", "core dumped")
RAN = ("other_mpi: ran", "late_mpi: MPI_Init returned")


def mpi_libs(path):
    """The MPI libraries (soname, path) that ldd lists for path."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    return re.findall(r"^\s*(libmpi(?:ch)?\.so\.\d+) => (\S+)", out, re.M)


def run(cmd, env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HMPI_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **env_extra)
    print("+ " + " ".join("%s=%s" % kv for kv in sorted(env_extra.items())) + " " +
          " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT, text=True, errors="replace")
    except subprocess.TimeoutExpired as e:
        out = e.output.decode(errors="replace") if isinstance(e.output, bytes) else e.output
        sys.stdout.write(out or "")
        return None, out or ""
    sys.stdout.write(p.stdout)
    print("  -> exit %d" % p.returncode, flush=True)
    return p.returncode, p.stdout


def judge(name, rc, out, marker, names):
    """The failures of one case, as sentences (none: it passed)."""
    bad = []
    if rc is None:
        return ["%s: still running after %d s" % (name, TIMEOUT)]
    if rc == 0:
        bad.append("%s: exit 0" % name)
    if rc < 0 or rc >= 128:
        bad.append("%s: ended by a signal (exit %d)" % (name, rc))
    bad += ["%s: crash text '%s' in the output" % (name, c) for c in CRASH if c in out]
    bad += ["%s: the program ran ('%s')" % (name, r) for r in RAN if r in out]
    lines = [l for l in out.splitlines() if marker in l]
    if len(lines) != 1:
        bad.append("%s: %d lines with '%s', not 1" % (name, len(lines), marker))
    else:
        bad += ["%s: the line does not name '%s'" % (name, n) for n in names
                if n not in lines[0]]
    return bad


def preload_args(mpiexec, lib):
    """How a launcher sets LD_PRELOAD for the ranks only."""
    if "openmpi" in os.path.basename(mpiexec) or "orterun" in mpiexec:
        return ["-x", "LD_PRELOAD=" + lib]
    return ["-genv", "LD_PRELOAD", lib]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for a in ("--hmpirun", "--lib", "--mpiexec", "--other-mpiexec", "--other",
              "--other-linked", "--late", "--own"):
        ap.add_argument(a, required=True)
    ap.add_argument("--launcher-flag", action="append", default=[])
    a = ap.parse_args()

    own = [s for s, _ in mpi_libs(a.lib)]
    other = mpi_libs(a.other)
    if not own or not other:
        print("FAILED: cannot tell the MPI libraries: libhmpi %s, other %s" % (own, other))
        return 1
    own_so, (other_so, other_path) = own[0], other[0]
    names = [own_so, other_so, "hmpicc"]
    flags = a.launcher_flag
    other_flags = ["--oversubscribe"] if "openmpi" in os.path.basename(a.other_mpiexec) else []
    lib_line = "error: this program uses"
    cases = [
        ("hmpirun", [a.hmpirun] + flags + ["-n", "2", a.other], {}, "hmpirun: error:", names),
        ("preload", [a.mpiexec] + flags + preload_args(a.mpiexec, a.lib) + ["-n", "2", a.other],
         {}, lib_line, names),
        ("preload-other", [a.other_mpiexec] + other_flags + preload_args(a.other_mpiexec, a.lib)
         + ["-n", "2", a.other], {}, lib_line, names),
        ("linked", [a.mpiexec] + flags + ["-n", "2", a.other_linked], {}, lib_line, names),
        ("linked-hmpirun", [a.hmpirun] + flags + ["-n", "2", a.other_linked], {},
         "hmpirun: error:", names),
        ("late", [a.late, other_path], {"LD_PRELOAD": a.lib}, lib_line, names),
        ("singletons", [a.other_mpiexec] + other_flags + ["-n", "2", a.own], {},
         "ran alone", ["launcher", "hmpirun", os.path.basename(a.mpiexec)]),
    ]
    failures = []
    for name, cmd, env, marker, want in cases:
        rc, out = run(cmd, env)
        failures += judge(name, rc, out, marker, want)
    for f in failures:
        print("FAILED: " + f)
    if failures:
        return 1
    print("other_mpi: OK (%d ways, HMPI on %s, the program on %s)" %
          (len(cases), own_so, other_so))
    return 0


if __name__ == "__main__":
    sys.exit(main())
