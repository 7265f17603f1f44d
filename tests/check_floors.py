#!/usr/bin/env python3
"""check_floors.py SRC_DIR: no #include in src/ points up a floor (docs/design.md, "Floors").

Each folder of src/ is a part on one floor, lowest first:

    common < heap < shm < node < core < p2p < coll = rma = opi < mpi

A source may include headers of its own floor and of the floors below it, never of one
above. node/ sits between shm/ and core/: it includes common/, heap/ and shm/ only, and
core/ (the communicator table, the argument checks) reads its rank tables. Parts of one
floor (coll/, rma/, opi/) may include each other's headers. A header named in PRIVATE
(p2p/engine.h: the engine's state and the envelope's layout) is included only inside
its own folder (p2p/short.h, there, includes it and is included by mpi/pt2pt.c: the
short ways of MPI_Send and MPI_Recv, inline in their entry points, docs/design.md).

The build forces core/below.h, the table of the MPI below, into every source of libhmpi
(-include, src/CMakeLists.txt) so that PMPI_X names the MPI below everywhere: that is
not an #include line and is not checked here; node/ reaches the MPI below through it.

Each "..." include is resolved as the compiler does: next to the including file, then in
src/ and include/ (the include directories of libhmpi). One that resolves nowhere fails
too (a typo would otherwise hide an arrow), and so does a folder of src/ that is on no
floor. Before looking at src/, the script checks itself on a small tree with one upward
include, so a check that cannot fail fails."""
import re
import sys
import tempfile
from pathlib import Path

FLOORS = {
    "common": 0,
    "heap": 1,
    "shm": 2,
    "node": 3,
    "core": 4,
    "p2p": 5,
    "coll": 6, "rma": 6, "opi": 6,
    "mpi": 7,
}
# Headers private to their part: included only by the sources of that part's folder.
PRIVATE = ("p2p/engine.h",)
INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')
SOURCES = ("*.c", "*.h", "*.def")


def resolve(src, inc_dirs, f, name):
    for base in [f.parent] + inc_dirs:
        p = (base / name).resolve()
        if p.is_file():
            return p
    return None


def check(src):
    """Returns the list of problems of the tree src (a src/ folder)."""
    src = src.resolve()
    inc_dirs = [src, src.parent / "include"]
    problems = []
    for d in sorted(p for p in src.iterdir() if p.is_dir()):
        if d.name not in FLOORS:
            problems.append(f"src/{d.name}/: a folder on no floor (add it to FLOORS "
                            "in tests/check_floors.py and to docs/design.md)")
    files = sorted({f for pat in SOURCES for f in src.rglob(pat)})
    for f in files:
        rel = f.relative_to(src)
        if len(rel.parts) < 2 or rel.parts[0] not in FLOORS:
            continue
        part = rel.parts[0]
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = resolve(src, inc_dirs, f, m.group(1))
            if target is None:
                problems.append(f"src/{rel}:{n}: \"{m.group(1)}\" is not found")
                continue
            try:
                tpart = target.relative_to(src).parts[0]
            except ValueError:
                continue  # include/: the public headers, below every floor
            trel = target.relative_to(src).as_posix()
            if trel in PRIVATE and tpart != part:
                problems.append(f"src/{rel}:{n}: {part}/ includes \"{m.group(1)}\", private "
                                f"to {tpart}/")
            if tpart in FLOORS and FLOORS[tpart] > FLOORS[part]:
                problems.append(f"src/{rel}:{n}: {part}/ (floor {FLOORS[part]}) includes "
                                f"\"{m.group(1)}\" of {tpart}/ (floor {FLOORS[tpart]})")
    return problems


def selftest():
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        for d in ("shm", "p2p", "mpi"):
            (src / d).mkdir(parents=True)
        (src / "mpi" / "top.h").write_text("")
        (src / "p2p" / "p2p.h").write_text('#include "../shm/q.h"\n')
        (src / "p2p" / "engine.h").write_text('#include "p2p.h"\n')
        (src / "shm" / "q.h").write_text('#include "../mpi/top.h"\n')
        (src / "mpi" / "use.c").write_text('#include "../p2p/engine.h"\n')
        got = check(src)
        want = ['src/mpi/use.c:1: mpi/ includes "../p2p/engine.h", private to p2p/',
                'src/shm/q.h:1: shm/ (floor 2) includes "../mpi/top.h" of mpi/ (floor 7)']
        if got != want:
            print(f"check_floors self-test: got {got}, want {want}")
            return False
    return True


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if not selftest():
        sys.exit(1)
    problems = check(Path(sys.argv[1]))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against the floors")
        sys.exit(1)
    print("every include keeps to the floors")


if __name__ == "__main__":
    main()
