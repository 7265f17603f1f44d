#!/usr/bin/env python3
"""halo_claim.py: the halo claim from bench/run's output. HMPI's claim is that the
unchanged Isend/Irecv/Waitall halo code under HMPI is within 1.2x of the hand-written
MPI-3 shared-window code (the best of mpi3shm_lock, _lockall, _fence) on the MPI below.
Reads raw.csv of a `bench/run halo` run and prints, per decomposition and size,
median over runs of HMPI's waitall / the best median of the below's mpi3shm variants,
as a Markdown section (bench/run appends it to summary.md).

  halo_claim.py OUTDIR|raw.csv [--limit 1.2]
"""
import csv
import math
import statistics
import sys
from pathlib import Path

SHM = ("mpi3shm_lock", "mpi3shm_lockall", "mpi3shm_fence")


def human_size(n):
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k and n % k == 0:
            return f"{n // k} {unit}"
    return f"{n} B"


def fmt(v):
    """Four significant digits, never an exponent."""
    if v == 0 or v != v or v in (float("inf"), float("-inf")):
        return str(v)
    digits = 3 - math.floor(math.log10(abs(v)))
    return f"{v:.{max(0, digits)}f}"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--limit")]
    limit = 1.2
    for a in sys.argv[1:]:
        if a.startswith("--limit="):
            limit = float(a.split("=", 1)[1])
    if len(args) != 1:
        sys.exit(__doc__)
    raw = Path(args[0])
    raw = raw / "raw.csv" if raw.is_dir() else raw
    values = {}                                     # (variant, test, size) -> [values]
    with open(raw, newline="") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            key = (row["variant"], row["test"], int(row["size"]))
            values.setdefault(key, []).append(float(row["value"]))
    med = {k: statistics.median(v) for k, v in values.items()}
    dims = sorted({t.rsplit("_", 1)[1] for _, t, _ in med if t.startswith("waitall_")})
    out = [f"## halo claim: HMPI waitall / best mpi3shm on the MPI below (target <= {limit:g})",
           "", "Medians over runs of the slowest rank's us per exchange. The claim holds "
           f"where the ratio is at most {limit:g}: the unchanged Isend/Irecv/Waitall code "
           "under HMPI is as fast as code rewritten for MPI-3 shared windows.", "",
           "| decomposition | size | HMPI waitall | below best mpi3shm | which | ratio | holds |",
           "|---|---:|---:|---:|---|---:|---|"]
    held = total = 0
    for dim in dims:
        sizes = sorted({s for v, t, s in med if v == "hmpi" and t == f"waitall_{dim}"})
        for size in sizes:
            hmpi = med[("hmpi", f"waitall_{dim}", size)]
            shm = [(med[("below", f"{name}_{dim}", size)], name) for name in SHM
                   if ("below", f"{name}_{dim}", size) in med]
            if not shm:
                continue
            best, which = min(shm)
            ratio = hmpi / best if best > 0 else float("inf")
            total += 1
            held += ratio <= limit
            out.append(f"| {dim} | {human_size(size)} | {fmt(hmpi)} | {fmt(best)} | {which} | "
                       f"{ratio:.2f} | {'yes' if ratio <= limit else 'no'} |")
    if total == 0:
        out.append("| - | - | - | - | no waitall and mpi3shm points to compare | - | - |")
    out += ["", f"The claim holds at {held} of {total} points."]
    print("\n".join(out))


if __name__ == "__main__":
    main()
