#!/usr/bin/env python3
"""smoke.py: the bench.smoke.* test. Runs `RUNNER --quick --reps 1 --out TMP NAME` and
checks that raw.csv, summary.csv and summary.md exist and parse and that both variants
gave values for the same points. Never looks at timings.

  smoke.py RUNNER NAME [benchmark args...]
"""
import csv
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


# Sections a benchmark's post helper (Bench.post in run) appends to summary.md.
EXTRA_SECTIONS = {"halo": "## halo claim", "cache": "## cache heat maps"}


def fail(msg, out):
    print(f"smoke: FAIL: {msg} (outputs kept in {out})", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runner, name, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    out = Path(tempfile.mkdtemp(prefix=f"hmpi-smoke-{name}-"))
    cmd = [sys.executable, runner, "--quick", "--reps", "1", "--out", str(out), name, *extra]
    print("smoke:", " ".join(cmd), flush=True)
    if subprocess.run(cmd).returncode != 0:
        fail("the runner failed", out)

    with open(out / "raw.csv", newline="") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("#")))
    if not rows or rows[0] != ["variant", "run", "test", "size", "value", "unit"]:
        fail("raw.csv has no header", out)
    points = {"hmpi": set(), "below": set()}
    for variant, _, test, size, value, _ in rows[1:]:
        float(value)
        points[variant].add((test, int(size)))
    if not points["hmpi"] or points["hmpi"] != points["below"]:
        fail("raw.csv: the variants measured different points", out)

    with open(out / "summary.csv", newline="") as f:
        summary = list(csv.DictReader(f))
    if {(r["test"], int(r["size"])) for r in summary} != points["hmpi"]:
        fail("summary.csv does not cover the measured points", out)
    for r in summary:  # the ratio is left empty only where the MPI below measured 0
        float(r["hmpi_median"])
        if r["ratio"] or float(r["below_median"]) != 0:
            float(r["ratio"])

    md = (out / "summary.md").read_text()
    tests = {t for t, _ in points["hmpi"]}
    table_rows, in_table = [], False           # rows of the per-test tables only: a
    for line in md.splitlines():               # benchmark's extra sections are skipped
        if line.startswith("## "):
            in_table = any(line.startswith(f"## {t} (") for t in tests)
        elif in_table and line.startswith("| ") and "size" not in line:
            table_rows.append(line)
    if any(f"## {t} (" not in md for t in tests) or len(table_rows) != len(summary):
        fail("summary.md lacks a table or rows", out)
    extra = EXTRA_SECTIONS.get(name)
    if extra and extra not in md:
        fail(f"summary.md lacks the section '{extra}' of its post helper", out)
    for png in out.glob("*.png"):
        if png.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
            fail(f"{png.name} is not a PNG", out)

    print(f"smoke: ok: {len(summary)} points in {len(tests)} tests")
    shutil.rmtree(out)


if __name__ == "__main__":
    main()
