#!/usr/bin/env python3
"""cache_heatmap.py: heat maps of the cache benchmark, as in Hybrid MPI Figures 16-17.
Reads summary.csv of a `bench/run cache` run and draws, per read order and buffer mode,
three maps over (message size M, data buffer size D): HMPI, the MPI below, and HMPI /
MPI below (gnuplot, cache_<order>_<mode>.png with its .gp). The value is the L1 miss
fraction where the counters worked, else ns per cache line of the re-read (see the
"# counters:" line of the runs). Prints a Markdown section listing the maps (bench/run
appends it to summary.md).

  cache_heatmap.py OUTDIR
"""
import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

MARK = "heat map by bench/cache_heatmap.py"


def label(n):
    return f"{n // 1024}K" if n >= 1024 and n % 1024 == 0 else str(n)


def about(out):
    """machine, MPI below and command from raw.csv's comment lines."""
    info = {}
    try:
        for line in (out / "raw.csv").read_text().splitlines():
            if line.startswith("# "):
                k, _, v = line[2:].partition(": ")
                info.setdefault(k, v)
    except OSError:
        pass
    return info


def script(name, unit, grid, ds, ms, info):
    # no backquotes: gnuplot would run them in a shell (raw.csv writes commands as `...`)
    q = lambda s: s.replace('"', "'").replace("`", "").replace("\\", "/")
    xt = ", ".join(f"\"{label(m)}\" {i}" for i, m in enumerate(ms))
    yt = ", ".join(f"\"{label(d)}\" {i}" for i, d in enumerate(ds))
    below = info.get("MPI name", "MPI below")   # "MPICH 4.0.2", written by bench/run
    unit = "µs" if unit == "us" else unit
    lines = [f"# {name}: {MARK}; redraw with: gnuplot {name}.gp", "set encoding utf8",
             "set terminal png size 1500,560 noenhanced", f"set output \"{name}.png\"",
             "set multiplot layout 1,3 title \"" + q(f"cache {name[6:]}: {unit}; "
             f"{info.get('MPI below', '?')}") + "\\n" + q(info.get("machine", "?")) + ", " +
             q(info.get("date", "?")) + "\"",
             f"set xtics ({xt})", f"set ytics ({yt})", "set xlabel \"message size M\"",
             "set ylabel \"data buffer D\"", "set palette grey negative",
             f"set xrange [-0.5:{len(ms) - 0.5}]", f"set yrange [-0.5:{len(ds) - 0.5}]",
             "set style fill solid 1.0 noborder", "set bmargin 7"]
    for col, title in ((0, f"HMPI over {q(below)}"), (1, f"{q(below)} alone"),
                       (2, f"HMPI / {q(below)}")):
        lines.append(f"$d{col} << EOD")
        for (i, j), vals in sorted(grid.items()):
            if vals[col] is not None:
                lines.append(f"{j} {i} {vals[col]!r}")
        lines.append("EOD")
        if col == 0:
            lines.append(f"set label 1 \"{q(info.get('command', '?'))}\" at screen 0.01, "
                         "screen 0.03 left font \",8\" noenhanced")
        else:
            lines.append("unset label 1")
        lines.append(f"set title \"{title}\"")
        lines.append(f"plot $d{col} using 1:2:(0.5):(0.5):3 with boxxyerror lc palette "
                     f"notitle, '' using 1:2:(sprintf(\"%.3g\", $3)) with labels "
                     "tc rgb \"red\" notitle")
    lines.append("unset multiplot")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    rows = list(csv.DictReader(open(out / "summary.csv", newline="")))
    info = about(out)
    configs = {}
    for r in rows:
        m = re.fullmatch(r"(\w+?)_(\w+)_d(\d+)(K?)", r["test"])
        if not m or not r["hmpi_median"] or not r["below_median"]:
            continue
        d = int(m.group(3)) * (1024 if m.group(4) else 1)
        h, b = float(r["hmpi_median"]), float(r["below_median"])
        configs.setdefault((m.group(1), m.group(2)), {})[(d, int(r["size"]))] = (
            h, b, h / b if b > 0 else None, r["unit"])
    text = ["## cache heat maps", "", "Per read order and buffer mode: HMPI, the MPI below "
            "and their ratio over message size M (x) and data buffer size D (y); darker is "
            "more (misses or time); in the ratio, below 1 means HMPI disturbs the cache less.",
            ""]
    if not shutil.which("gnuplot"):
        print("\n".join(text + ["No heat maps: gnuplot is not installed."]))
        return
    for old in out.glob("cache_*.gp"):
        if MARK in old.read_text():
            old.unlink()
            old.with_suffix(".png").unlink(missing_ok=True)
    for (order, mode), pts in configs.items():
        ds = sorted({d for d, _ in pts})
        ms = sorted({m for _, m in pts})
        grid = {(ds.index(d), ms.index(m)): v[:3] for (d, m), v in pts.items()}
        unit = next(iter(pts.values()))[3]
        name = f"cache_{order}_{mode}"
        (out / f"{name}.gp").write_text(script(name, unit, grid, ds, ms, info))
        p = subprocess.run(["gnuplot", f"{name}.gp"], cwd=out, capture_output=True, text=True)
        if p.returncode != 0:
            text.append(f"- {name}: gnuplot failed: {p.stderr.strip().splitlines()[-1:]}")
        else:
            text.append(f"- {order} {mode}: [{name}.png]({name}.png)")
    print("\n".join(text))


if __name__ == "__main__":
    main()
