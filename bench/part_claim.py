#!/usr/bin/env python3
"""part_claim.py: the partitioned claims from bench/run's output (issue 40). With 4
partitions of 256 KiB between 2 ranks, HMPI's time from the sender's last MPI_Pready to
the receiver's completion ("last") is at most 1.2x one 256 KiB memcpy measured in the same
run ("memcpy": the receiver's copy of a partition the sender has just written; also
against "memcpy_local", a copy within the receiver's cache), and HMPI's whole round
("round") at most 0.5x the MPI below's. Reads raw.csv of a `bench/run part` run and
prints a Markdown section (bench/run appends it to summary.md): medians over runs, with
the lowest and highest run.

  part_claim.py OUTDIR|raw.csv [--last 1.2] [--round 0.5]
"""
import csv
import math
import statistics
import sys
from pathlib import Path


def fmt(v):
    """Four significant digits, never an exponent."""
    if v == 0 or v != v or v in (float("inf"), float("-inf")):
        return str(v)
    digits = 3 - math.floor(math.log10(abs(v)))
    return f"{v:.{max(0, digits)}f}"


def main():
    limits = {"last": 1.2, "round": 0.5}
    args = []
    for a in sys.argv[1:]:
        if a.startswith("--") and "=" in a and a[2:].split("=")[0] in limits:
            k, v = a[2:].split("=", 1)
            limits[k] = float(v)
        else:
            args.append(a)
    if len(args) != 1:
        sys.exit(__doc__)
    raw = Path(args[0])
    raw = raw / "raw.csv" if raw.is_dir() else raw
    values = {}  # (variant, test, size) -> [values]
    with open(raw, newline="") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            key = (row["variant"], row["test"], int(row["size"]))
            values.setdefault(key, []).append(float(row["value"]))

    def cell(variant, test, size):
        v = values.get((variant, test, size))
        if not v:
            return None, "-"
        return statistics.median(v), f"{fmt(statistics.median(v))} ({fmt(min(v))}-{fmt(max(v))})"

    sizes = sorted({s for _, t, s in values if t == "last"})
    out = [f"## partitioned claims (targets: last <= {limits['last']:g} x memcpy, "
           f"round <= {limits['round']:g} x the MPI below's)", "",
           "Medians over runs in us (lowest-highest run).", "",
           "| partition | HMPI last | HMPI memcpy | HMPI memcpy_local | last / memcpy | "
           "last / memcpy_local | HMPI round | below round | round ratio |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for size in sizes:
        last, last_s = cell("hmpi", "last", size)
        mc, mc_s = cell("hmpi", "memcpy", size)
        ml, ml_s = cell("hmpi", "memcpy_local", size)
        hr, hr_s = cell("hmpi", "round", size)
        br, br_s = cell("below", "round", size)
        r1 = f"{last / mc:.2f}" if last and mc else "-"
        r2 = f"{last / ml:.2f}" if last and ml else "-"
        r3 = f"{hr / br:.2f}" if hr and br else "-"
        out.append(f"| {size} | {last_s} | {mc_s} | {ml_s} | {r1} | {r2} | {hr_s} | {br_s} | "
                   f"{r3} |")
    if not sizes:
        out.append("| - | no `last` points | - | - | - | - | - | - | - |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
