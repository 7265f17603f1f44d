#!/usr/bin/env python3
"""smoke_sweep.py: the bench.smoke.scale and bench.smoke.idle tests. Runs a tiny sweep
(`RUNNER --out TMP scale --max 2 --iters 5`, or `idle --np 2,3 --seconds 0.3`) and checks
that its CSV and summary.md exist, that every figure has a value for HMPI and for the
MPI below at every rank count (the instruction counts only where valgrind is there), and
that the values are sane (positive where they must be). Never judges a value.

  smoke_sweep.py RUNNER scale|idle
"""
import csv
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def fail(msg, out):
    print(f"smoke_sweep: FAIL: {msg} (outputs kept in {out})", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("scale", "idle"):
        sys.exit(__doc__)
    runner, name = sys.argv[1], sys.argv[2]
    out = Path(tempfile.mkdtemp(prefix=f"hmpi-smoke-{name}-"))
    valgrind = shutil.which("valgrind") is not None
    if name == "scale":
        args = ["--max", "2", "--iters", "5"] + ([] if valgrind else ["--instr-max", "0"])
    else:
        args = ["--np", "2,3", "--seconds", "0.3", "--waits", "spin,sleep"]
    cmd = [sys.executable, runner, "--out", str(out), "--timeout", "200", name, *args]
    print("smoke_sweep:", " ".join(cmd), flush=True)
    if subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode != 0:
        fail("the runner failed", out)
    if not (out / "summary.md").is_file():
        fail("no summary.md", out)
    with open(out / f"{name}.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    if name == "scale":
        figures = ["init_max", "job_wall", "rss_anon", "rss_shmem", "rss_file", "shm_below"]
        if valgrind:
            figures += ["instr_recv", "instr_barrier", "instr_allreduce"]
        got = {(r["figure"], r["ranks"]): r for r in rows}
        for fig in figures + ["shm_hmpi"]:
            for np in ("2",):
                r = got.get((fig, np))
                if r is None:
                    fail(f"no {fig} at {np} ranks", out)
                if fig != "shm_hmpi" and not (float(r["hmpi"]) > 0 and float(r["below"]) > 0):
                    fail(f"{fig} at {np} ranks is not positive for both: {r}", out)
            if fig == "shm_hmpi" and not float(got[(fig, "2")]["hmpi"]) > 0:
                fail("HMPI's region was not found (shm_hmpi is 0 with HMPI)", out)
    else:
        want = {(np, v, w, t) for np in ("2", "3") for v, w in (("hmpi", "spin"),
                ("hmpi", "sleep"), ("below", "-")) for t in ("recv", "barrier")}
        seen = set()
        for r in rows:
            seen.add((r["ranks"], r["variant"], r["hmpi_wait"], r["test"]))
            if not 0.25 < float(r["wall_s"]) < 60 or float(r["cpu_s"]) < 0:
                fail(f"implausible row {r}", out)
        if seen != want:
            fail(f"rows for {sorted(want - seen)} missing, {sorted(seen - want)} extra", out)
    shutil.rmtree(out)
    print(f"smoke_sweep: {name}: OK")


if __name__ == "__main__":
    main()
