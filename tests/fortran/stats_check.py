#!/usr/bin/env python3
"""stats_check.py: runs an MPI job with HMPI_STATS=per-rank and judges it from its output:
exit code 0, every expected line of output, one "stats" line per rank from an active
HMPI, and conditions on each rank's counters (src/common/stats.def). Used by the
ecosystem tests (Fortran, C++, Python, tool stacking, install).

  stats_check.py --ranks N [--each EXPR ...] [--output TEXT ...] -- command args...

EXPR is a Python expression over one rank's counters, e.g. "msgs_synergistic >= 20";
local_msgs is msgs_immediate + msgs_copy + msgs_synergistic + msgs_cma + msgs_pipe. A counter
missing from the line (the line is cut at 4 KiB) makes the expression fail.
Standard library only."""

import argparse
import os
import re
import subprocess
import sys

LINE = re.compile(r"hmpi\[(\d+)\]: stats (.*?): (.*)$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--each", action="append", default=[])
    ap.add_argument("--output", action="append", default=[])
    ap.add_argument("--timeout", type=int, default=100)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    env = dict(os.environ, HMPI_STATS="per-rank")
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=a.timeout, text=True, errors="replace")
    except subprocess.TimeoutExpired as e:
        sys.stdout.write(e.output or "")
        print(f"FAIL: job still running after {a.timeout} s")
        return 1
    out = p.stdout
    sys.stdout.write(out)
    fails = []
    if p.returncode != 0:
        fails.append(f"exit code {p.returncode}")
    for text in a.output:
        if text not in out:
            fails.append(f"output lacks {text!r}")
    ranks = {}
    for line in out.splitlines():
        m = LINE.search(line)
        if not m:
            continue
        counters = {}
        for tok in m.group(3).split():
            k, _, v = tok.partition("=")
            if v.isdigit():
                counters[k] = int(v)
        ranks[int(m.group(1))] = (m.group(2), counters)
    if sorted(ranks) != list(range(a.ranks)):
        fails.append(f"stats lines from ranks {sorted(ranks)}, expected 0..{a.ranks - 1}")
    for r, (where, c) in sorted(ranks.items()):
        if "active" not in where.split():
            fails.append(f"rank {r}: HMPI not active ({where})")
        c["local_msgs"] = sum(c.get(k, 0) for k in
                              ("msgs_immediate", "msgs_copy", "msgs_synergistic", "msgs_cma",
                               "msgs_pipe"))
        for expr in a.each:
            try:
                ok = eval(expr, {"__builtins__": {}}, dict(c))
            except NameError as e:
                ok, expr = False, f"{expr} ({e})"
            if not ok:
                fails.append(f"rank {r}: {expr} does not hold")
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
