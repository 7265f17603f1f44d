#!/usr/bin/env python3
"""check_pmpi_names.py BELOW_H LIBHMPI_SO LIBHMPI_A: HMPI is an MPI to tools too.

Checks, with nm, that
- the functions libhmpi.so defines under MPI_* are exactly the list HMPI_BELOW_CALLS of
  src/core/below.h (a new entry point without HMPI_PMPI(name) fails here);
- each is weak and has a strong PMPI_* twin at the same address;
- no object of libhmpi.a refers to one of those PMPI_* by name: HMPI's own calls to the
  MPI below go through the hmpi_below table, never to its own PMPI_* (which would call
  HMPI again)."""
import re
import subprocess
import sys


def nm(args):
    out = subprocess.run(["nm"] + args, check=True, capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def main():
    below_h, so, archive = sys.argv[1:4]
    text = open(below_h).read()
    block = re.search(r"#define HMPI_BELOW_CALLS\(X\)(.*?)\n\n", text, re.S).group(1)
    listed = set(re.findall(r"X\((\w+)\)", block))
    # The lists of MPI 4's calls (HMPI_BELOW_CALLS_4, HMPI_BELOW_CALLS_PART): each all of
    # its calls where the MPI below has them, else none.
    optional = [set(re.findall(r"X\((\w+)\)", b)) for b in
                re.findall(r"\n#if [^\n]*\n(?:#define HMPI_HAVE_\w+ 1\n)?"
                           r"#define HMPI_BELOW_CALLS_\w+\(X\)(.*?)\n#else", text, re.S)]
    if len(optional) < 2:
        print("check_pmpi_names: below.h's optional lists not found")
        return 1
    errors = []

    defined = {}  # symbol -> (type, address)
    for f in nm(["-D", "--defined-only", so]):
        if len(f) == 3:
            defined[f[2].split("@")[0]] = (f[1], f[0])
    # C names (MPI_Send); MPI_SEND and the like are Fortran entry points (fortran.c).
    mpi = {s[4:] for s, (t, _) in defined.items()
           if re.fullmatch(r"MPI_[A-Z][a-z0-9_]*", s) and t in "TW"}
    for block in optional:
        if mpi & block:
            listed |= block
    for name in sorted(mpi - listed):
        errors.append(f"MPI_{name} is defined but not in HMPI_BELOW_CALLS (no PMPI_{name})")
    for name in sorted(listed - mpi):
        errors.append(f"MPI_{name} is in HMPI_BELOW_CALLS but libhmpi does not define it")
    for name in sorted(listed & mpi):
        t, addr = defined[f"MPI_{name}"]
        if t != "W":
            errors.append(f"MPI_{name} is not weak ({t})")
        twin = defined.get(f"PMPI_{name}")
        if not twin or twin[0] != "T" or twin[1] != addr:
            errors.append(f"PMPI_{name} is not a strong alias of MPI_{name}: {twin}")

    obj = "?"
    for f in nm([archive]):
        if len(f) == 1 and f[0].endswith(":"):
            obj = f[0][:-1]
        elif len(f) == 2 and f[0] == "U" and f[1].startswith("PMPI_") and f[1][5:] in listed:
            errors.append(f"{obj} calls {f[1]} by name (use the hmpi_below table)")

    for e in errors:
        print("check_pmpi_names:", e)
    print(f"check_pmpi_names: {len(listed)} calls listed, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
