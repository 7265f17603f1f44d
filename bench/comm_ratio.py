#!/usr/bin/env python3
"""comm_ratio.py OUTDIR: the figures of a communicator from MPI_Comm_create_from_group
against the same figures on MPI_COMM_WORLD, from a `bench/run pingpong|coll --comm both`
out dir (its raw.csv: tests TEST and TEST_group, measured in turns within each run).

Prints a Markdown section (run appends it to summary.md): per test and size, for each
variant (HMPI, the MPI below), the median over runs of each run's own ratio group /
world, with its min-max over runs. A ratio is of times for tests in us (above 1: the
group's communicator is slower) and of rates otherwise (below 1: it is slower). Prints
nothing when the out dir has no TEST_group tests. Standard library only."""
import csv
import statistics
import sys
from pathlib import Path


def main():
    out = Path(sys.argv[1])
    rows = [r for r in csv.reader(line for line in (out / "raw.csv").open()
                                   if not line.startswith("#"))]
    if not rows:
        return
    head, rows = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(head)}
    vals, units = {}, {}  # (variant, test, size) -> {run: value}
    for r in rows:
        key = (r[col["variant"]], r[col["test"]], int(r[col["size"]]))
        vals.setdefault(key, {})[r[col["run"]]] = float(r[col["value"]])
        units[r[col["test"]]] = r[col["unit"]]
    pairs = sorted({(t[:-6], s) for (_, t, s) in vals if t.endswith("_group")},
                   key=lambda p: (p[0], p[1]))
    if not pairs:
        return
    variants = [v for v in ("hmpi", "below") if any(k[0] == v for k in vals)]
    names = {"hmpi": "HMPI", "below": "MPI below alone"}
    print("## A communicator from MPI_Comm_create_from_group against MPI_COMM_WORLD\n")
    print("Each run measured both in turns (alternating repetitions); a cell is the median "
          "over runs of that run's ratio group / world, min–max over runs. Times (us): "
          "above 1 the group's communicator is slower; rates: below 1.\n")
    print("| test | size | " + " | ".join(names[v] for v in variants) + " |")
    print("|---|---:|" + "---:|" * len(variants))
    for test, size in pairs:
        cells = []
        for v in variants:
            world, group = vals.get((v, test, size), {}), vals.get((v, test + "_group", size), {})
            ratios = [group[run] / world[run] for run in world if run in group and world[run] > 0]
            if not ratios:
                cells.append("-")
                continue
            cells.append(f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})")
        print(f"| {test} ({units.get(test, '')}) | {size} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
