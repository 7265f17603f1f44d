#!/usr/bin/env python3
"""run.py: the conformance leg. Runs test programs of MPICH's own test suite (test/mpi,
configured and built by `./dev conformance` under build/conformance/<mpi>) under hmpirun
and judges each by the suite's own rule; a test that fails under HMPI is run again alone
(the MPI below, no HMPI): one that passes alone is an HMPI-only failure and fails the leg.

  run.py --suite DIR --mpi NAME --mpiexec M --hmpirun H --logs DIR [--all] [--only RE]

Which tests (docs: README.md, "Conformance"):
  every line of the test lists of DIRS (the suite's configured `testlist` files; for
  basic/, which has none, tests/conformance/basic.testlist); with --all all of them,
  without it the lines that tests/conformance/ci.txt names (a line may start with an
  MPI's name, as in fail-alone.txt: that MPI only). Each runs under hmpirun;
  for pt2pt, coll, rma and comm, and 3 ranks or more, also with HMPI_NODE_SIZE=2.
A testlist line: `program ranks [key=value ...]`; the keys read here are arg= (program
argument), env= (environment of the run), mpiexecarg= (launcher argument), timeLimit=
(seconds, 180 when absent, as runtests), resultTest= (TestStatus and TestErrFatal: pass
on a non-zero exit; TestStatusNoErrors: " No Errors" and a non-zero exit; ExitZero,
ours, for basic/: exit 0), strict=false and mpix=true (skipped when the suite was
configured --enable-strictmpi, as runtests does), mem= (GiB; skipped above this
machine's memory, as runtests does), xfail= (run all the same: tests/conformance/
fail-alone.txt lists what fails alone, whatever MPICH's list says).
The pass rule (runtests's): exit 0, a line " No Errors", and no other output line but
"Test Passed".

fail-alone.txt names tests that fail on the MPI below alone, with the reason. Each run
runs those alone first: while they fail alone they are counted and not run under HMPI;
one that passes alone is run under HMPI and must pass there too (and the file should
drop it). A test that fails alone and is not listed fails the leg, so the list stays
true. The last line of the output is `N passed, N failed`; the exit status is non-zero
when anything failed. Per run: a log under --logs, and one line in results.tsv there.
Standard library only."""

import argparse
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DIRS = ["pt2pt", "coll", "rma", "comm", "datatype", "attr", "group", "basic", "init",
        "errhan", "info", "topo", "part"]
NODE_DIRS = {"pt2pt", "coll", "rma", "comm"}  # also run with HMPI_NODE_SIZE=2
DEFAULT_LIMIT = 180  # seconds, runtests's default timeLimit
KILL_GRACE = 30  # seconds past the limit before the run is killed from here


class Test:
    """One line of a test list: a program, its rank count and its key=value words."""

    def __init__(self, dir_, prog, np, words, line):
        self.dir, self.prog, self.np, self.words, self.line = dir_, prog, np, words, line
        self.args, self.envs, self.mpiexecargs, self.keys = [], [], [], {}
        for w in words:
            key, _, value = w.partition("=")
            if key == "arg":
                self.args.append(value)
            elif key == "env":
                self.envs.append(value)
            elif key == "mpiexecarg":
                self.mpiexecargs.append(value)
            else:
                self.keys[key] = value
        self.name = f"{dir_}/{prog} {np}" + "".join(" " + w for w in words)
        self.log_stem = f"{dir_}/{prog}.{np}"  # made unique in read_tests

    def limit(self, scale):
        t = self.keys.get("timeLimit", "")
        return int((int(t) if t.isdigit() else DEFAULT_LIMIT) * scale)


def read_list(path, dir_, tests):
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            text = raw.split("#", 1)[0].strip()
            if not text or text.startswith("!"):
                continue
            w = text.split()
            # pt2pt's first lines carry a bare path as a third word; runtests ignores
            # words without '=' and so does this.
            words = [x for x in w[2:] if "=" in x]
            np = int(w[1]) if len(w) > 1 else 2
            tests.append(Test(dir_, w[0], np, words, n))


def read_tests(suite, dirs):
    srcdir = os.path.join(suite, "..", "src", "test", "mpi")
    tests = []
    for d in dirs:
        if d == "basic":
            read_list(os.path.join(HERE, "basic.testlist"), d, tests)
            continue
        for cand in (os.path.join(suite, d, "testlist"), os.path.join(srcdir, d, "testlist")):
            if os.path.exists(cand):
                read_list(cand, d, tests)
                break
        else:
            sys.exit(f"run.py: no testlist for {d} in {suite}")
    seen = {}
    for t in tests:
        k = seen.get(t.log_stem, 0) + 1
        seen[t.log_stem] = k
        if k > 1:
            t.log_stem += f".{k}"
    return tests


class Spec:
    """A line of ci.txt or fail-alone.txt: `dir/program [ranks] [key=value ...]`; it names
    every test of that program (with that rank count) whose words include these."""

    def __init__(self, words):
        self.path = words[0]
        rest = words[1:]
        self.np = int(rest.pop(0)) if rest and rest[0].isdigit() else None
        self.words = rest

    def match(self, t):
        return (self.path == f"{t.dir}/{t.prog}" and self.np in (None, t.np)
                and all(w in t.words for w in self.words))


def read_specs(path, mpi_keys, mpi_optional=False):
    """fail-alone.txt: `mpi spec -- reason` (mpi: a name, name-version or *); ci.txt
    (mpi_optional): `[mpi] spec`, a line without mpi for every MPI. Returns the lines
    for mpi_keys, as [(Spec, reason)]."""
    specs = []
    with open(path) as f:
        for raw in f:
            text = raw.split("#", 1)[0].strip()
            if not text:
                continue
            reason = ""
            if " -- " in text:
                text, reason = (s.strip() for s in text.split(" -- ", 1))
            w = text.split()
            if not (mpi_optional and "/" in w[0]):
                if w[0] not in mpi_keys:
                    continue
                w = w[1:]
            specs.append((Spec(w), reason))
    return specs


def judge(rule, rc, out):
    """The suite's rule (runtests's RunMPIProgram and its resultTest routines)."""
    lines = out.splitlines()
    no_errors = any(re.match(r"^\s*No [Ee]rrors\s*$", ln) for ln in lines)
    stray = [ln for ln in lines if not re.match(r"^\s*(No [Ee]rrors|Test Passed)\s*$", ln)
             and not re.search(r"FORTRAN STOP|requesting checkpoint\s*$|checkpoint completed\s*$", ln)]
    if rule in ("TestStatus", "TestErrFatal"):
        return rc != 0, "exit 0 where a failing exit is the test" if rc == 0 else ""
    if rule == "TestStatusNoErrors":
        ok = rc != 0 and no_errors and not stray
        return ok, "" if ok else "wants ' No Errors', no other output and a failing exit"
    if rule == "ExitZero":
        return rc == 0, "" if rc == 0 else f"exit {rc}"
    if stray:
        return False, f"unexpected output: {stray[0][:200]}"
    if not no_errors:
        return False, "no ' No Errors' line"
    if rc != 0:
        return False, f"exit {rc}"
    return True, ""


class Runner:
    def __init__(self, a):
        self.a = a
        self.results = open(os.path.join(a.logs, "results.tsv"), "w")
        self.results.write("test\tvariant\tresult\texit\tseconds\twhy\tlog\n")
        self.launcher_flags = a.launcher_flag or []

    def run(self, t, variant):
        """variant: 'alone', 'hmpi' or 'hmpi-node2'. Returns (passed, why)."""
        a = self.a
        env = dict(os.environ)
        for v in ("LD_PRELOAD", "HMPI_NODE_SIZE"):
            env.pop(v, None)
        limit = t.limit(a.timeout_scale)
        env["MPIEXEC_TIMEOUT"] = str(limit)  # hydra and Open MPI's mpirun both honour it
        for e in t.envs:
            k, _, v = e.partition("=")
            env[k] = v
        if variant == "hmpi-node2":
            env["HMPI_NODE_SIZE"] = "2"
        launcher = [a.mpiexec] if variant == "alone" else [a.hmpirun]
        cmd = launcher + self.launcher_flags + t.mpiexecargs + ["-n", str(t.np),
                                                                "./" + t.prog] + t.args
        cwd = os.path.join(a.suite, t.dir)
        t0 = time.monotonic()
        timed_out = False
        try:
            p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            return False, f"cannot start: {e}"
        try:
            out, _ = p.communicate(timeout=limit + KILL_GRACE)
        except subprocess.TimeoutExpired:
            timed_out = True
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    pass
                try:
                    out, _ = p.communicate(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    continue
            else:
                out = b""
        secs = time.monotonic() - t0
        out = out.decode(errors="replace")
        rc = p.returncode
        ok, why = judge(t.keys.get("resultTest", ""), rc, out)
        if timed_out:
            ok, why = False, f"killed after {limit + KILL_GRACE} s"
        elif not ok and secs >= limit - 1:
            why = f"timed out after {limit} s; {why}"
        log = os.path.join(a.logs, f"{t.log_stem}.{variant}.log")
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "w") as f:
            f.write(f"# {t.name}\n# {variant}: {' '.join(cmd)}\n# in {cwd}\n")
            extra = [e for e in t.envs] + (["HMPI_NODE_SIZE=2"] if variant == "hmpi-node2" else [])
            f.write(f"# env: {' '.join(extra) or '-'}; limit {limit} s\n")
            f.write(out)
            f.write(f"\n# exit {rc}, {secs:.1f} s: {'pass' if ok else 'FAIL: ' + why}\n")
        self.results.write(f"{t.name}\t{variant}\t{'pass' if ok else 'fail'}\t{rc}\t"
                           f"{secs:.1f}\t{why}\t{os.path.relpath(log, a.logs)}\n")
        self.results.flush()
        return ok, why

    def close(self):
        self.results.close()


def built(suite, t):
    return os.access(os.path.join(suite, t.dir, t.prog), os.X_OK)


def build(a, tests):
    """make the selected programs, each directory once; a program that does not build
    is judged as failing (alone and under HMPI alike)."""
    by_dir = {}
    for t in tests:
        by_dir.setdefault(t.dir, set()).add(t.prog)
    with open(os.path.join(a.logs, "build.log"), "w") as log:
        subprocess.run(["make", "-C", os.path.join(a.suite, "util"), f"-j{a.jobs}"],
                       stdout=log, stderr=subprocess.STDOUT, check=True)
        for d, progs in by_dir.items():
            missing = sorted(p for p in progs if not os.access(os.path.join(a.suite, d, p), os.X_OK))
            if missing:
                subprocess.run(["make", "-k", "-C", os.path.join(a.suite, d), f"-j{a.jobs}"]
                               + missing, stdout=log, stderr=subprocess.STDOUT)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", required=True, help="the configured test/mpi build dir")
    ap.add_argument("--mpi", required=True, help="mpich or openmpi, with -VERSION")
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--hmpirun", required=True)
    ap.add_argument("--launcher-flag", action="append", help="for both launchers")
    ap.add_argument("--logs", required=True)
    ap.add_argument("--all", action="store_true", help="every test, not ci.txt's")
    ap.add_argument("--only", help="a regular expression on test names")
    ap.add_argument("--dirs", default=",".join(DIRS))
    ap.add_argument("--strict", action="store_true", help="suite configured strict")
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--fail-alone", default=os.path.join(HERE, "fail-alone.txt"))
    ap.add_argument("--ci", default=os.path.join(HERE, "ci.txt"))
    a = ap.parse_args()
    a.suite = os.path.abspath(a.suite)
    a.hmpirun = os.path.abspath(a.hmpirun)
    os.makedirs(a.logs, exist_ok=True)
    name = a.mpi.split("-")[0]
    mpi_keys = {"*", name, a.mpi}

    tests = read_tests(a.suite, a.dirs.split(","))
    if not a.all:
        ci = [s for s, _ in read_specs(a.ci, mpi_keys, mpi_optional=True)]
        tests = [t for t in tests if any(s.match(t) for s in ci)]
    if a.only:
        tests = [t for t in tests if re.search(a.only, t.name)]
    fail_alone = read_specs(a.fail_alone, mpi_keys)
    with open("/proc/meminfo") as f:
        mem_gib = int(f.readline().split()[1]) / 2**20

    skipped, selected = [], []
    for t in tests:
        strict = t.keys.get("strict", "").lower() == "false"
        mpix = t.keys.get("mpix", "").lower() == "true"
        mem = float(t.keys.get("mem", "0") or 0)
        if a.strict and (strict or mpix):
            skipped.append((t, "uses extensions; the suite is configured strict"))
        elif mem > mem_gib:
            skipped.append((t, f"needs {mem} GiB"))
        else:
            selected.append(t)
    t_build = time.monotonic()
    build(a, selected)
    print(f"{a.mpi}: programs built in {(time.monotonic() - t_build) / 60:.1f} min",
          flush=True)

    r = Runner(a)
    passed = failed = known = 0
    hmpi_only, unlisted, stale = [], [], []
    t_start = time.monotonic()
    for t in selected:
        variants = ["hmpi"] + (["hmpi-node2"] if t.dir in NODE_DIRS and t.np >= 3 else [])
        listed = [why for s, why in fail_alone if s.match(t)]
        alone = None
        if not built(a.suite, t):
            alone = (False, "does not build (see build.log)")
        if listed:
            if alone is None:
                alone = r.run(t, "alone")
            if not alone[0]:
                known += 1
                print(f"fails alone (listed): {t.name}: {alone[1]}", flush=True)
                continue
            stale.append(t)
        for v in variants:
            ok, why = r.run(t, v) if built(a.suite, t) else (False, alone[1])
            if ok:
                passed += 1
                continue
            if alone is None:
                alone = r.run(t, "alone")
            failed += 1
            if alone[0]:
                hmpi_only.append((t, v, why))
                print(f"HMPI-ONLY FAILURE: {t.name} [{v}]: {why} "
                      f"(log: {os.path.join(a.logs, t.log_stem)}.{v}.log)", flush=True)
            else:
                unlisted.append((t, v, alone[1]))
                print(f"FAILS ALONE TOO, not in {os.path.basename(a.fail_alone)}: {t.name} "
                      f"[{v}]: {alone[1]}", flush=True)
    r.close()

    mins = (time.monotonic() - t_start) / 60
    print(f"{a.mpi}: {len(selected)} tests, {passed + failed} runs under HMPI in "
          f"{mins:.1f} min; {len(hmpi_only)} HMPI-only failures, {len(unlisted)} failing "
          f"alone too and not listed, {known} failing alone as listed, {len(skipped)} "
          f"skipped; logs in {a.logs}")
    for t in stale:
        print(f"note: {t.name} passes alone now: drop it from {a.fail_alone}")
    for t, why in skipped:
        print(f"skipped: {t.name}: {why}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
