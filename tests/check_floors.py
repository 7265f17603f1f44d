#!/usr/bin/env python3
"""check_floors.py SRC_DIR: no #include and no call in src/ points up a floor
(docs/design.md, "Floors").

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

Calls are checked as well: a function defined in a source of a higher floor is not called
from a lower one (a declaration written by hand, or a name reached through a macro, would
otherwise hide the arrow), and HMPI's own MPI entry points are not called back through
their hmpi_self_X names (core/below.h) from below mpi/. A call is a name followed by "(";
a definition is a name at the start of a line after its type, its body's "{" following.
Calls through function pointers (the hooks a higher floor registers below, such as
shm/wait.h's progress hook and p2p/req.h's table of request kinds) are the sanctioned way
up and are not seen here.

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
# A function definition: a type, then the name at the line's start or after the type on one
# line, then "(", and the body on the line or the next ones (no ";" before "{").
DEFINITION = re.compile(r'^(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w\s\*]*?\b([a-z_]\w*)\s*\([^;]*$')
CALL = re.compile(r'\b([a-z_]\w*)\s*\(')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')
SOURCES = ("*.c", "*.h", "*.def")


def resolve(src, inc_dirs, f, name):
    for base in [f.parent] + inc_dirs:
        p = (base / name).resolve()
        if p.is_file():
            return p
    return None


def strip(text):
    """The text without comments and strings, line structure kept."""
    text = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return STRING.sub('""', text)


def definitions(files, src):
    """Non-static functions by name: the floor of the folder that defines them."""
    where = {}
    for f in files:
        rel = f.relative_to(src)
        if len(rel.parts) < 2 or rel.parts[0] not in FLOORS or f.suffix != ".c":
            continue
        lines = strip(f.read_text(errors="replace")).splitlines()
        for i, line in enumerate(lines):
            m = DEFINITION.match(line)
            if not m or line.startswith("static"):
                continue
            rest = " ".join(lines[i:i + 4])
            if "{" in rest and ";" not in rest.split("{")[0]:
                where.setdefault(m.group(1), rel.parts[0])
    return where


def check_calls(files, src):
    """Calls of functions defined on a higher floor, and hmpi_self_X below mpi/."""
    problems = []
    where = definitions(files, src)
    for f in files:
        rel = f.relative_to(src)
        if len(rel.parts) < 2 or rel.parts[0] not in FLOORS:
            continue
        part = rel.parts[0]
        for n, line in enumerate(strip(f.read_text(errors="replace")).splitlines(), 1):
            for m in CALL.finditer(line):
                name = m.group(1)
                if name.startswith("hmpi_self_") and part != "mpi":
                    problems.append(f"src/{rel}:{n}: {part}/ calls {name}, an MPI entry point "
                                    "of HMPI's own (a call up to mpi/)")
                    continue
                tpart = where.get(name)
                if tpart and FLOORS[tpart] > FLOORS[part]:
                    problems.append(f"src/{rel}:{n}: {part}/ (floor {FLOORS[part]}) calls "
                                    f"{name} of {tpart}/ (floor {FLOORS[tpart]})")
    return problems


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
    return problems + check_calls(files, src)


def selftest():
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        for d in ("shm", "p2p", "mpi"):
            (src / d).mkdir(parents=True)
        (src / "mpi" / "top.h").write_text("")
        (src / "p2p" / "p2p.h").write_text('#include "../shm/q.h"\n')
        (src / "p2p" / "engine.h").write_text('#include "p2p.h"\n')
        (src / "shm" / "q.h").write_text('#include "../mpi/top.h"\n')
        (src / "mpi" / "use.c").write_text('#include "../p2p/engine.h"\n'
                                            'int hmpi_mpi_thing(void)\n{\n    return 0;\n}\n')
        (src / "p2p" / "ok.c").write_text('/* hmpi_mpi_thing() in a comment */\n'
                                          'int hmpi_p2p_op(void);\n'
                                          'int hmpi_p2p_op(void) { return 1; }\n')
        (src / "shm" / "up.c").write_text('int hmpi_mpi_thing(void);\n'
                                          'static int f(void)\n{\n'
                                          '    return hmpi_mpi_thing() + hmpi_self_Send(0);\n}\n')
        got = check(src)
        want = ['src/mpi/use.c:1: mpi/ includes "../p2p/engine.h", private to p2p/',
                'src/shm/q.h:1: shm/ (floor 2) includes "../mpi/top.h" of mpi/ (floor 7)',
                'src/shm/up.c:1: shm/ (floor 2) calls hmpi_mpi_thing of mpi/ (floor 7)',
                'src/shm/up.c:4: shm/ (floor 2) calls hmpi_mpi_thing of mpi/ (floor 7)',
                'src/shm/up.c:4: shm/ calls hmpi_self_Send, an MPI entry point of HMPI\'s own '
                '(a call up to mpi/)']
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
        print(f"{len(problems)} include(s) or call(s) against the floors")
        sys.exit(1)
    print("every include and call keeps to the floors")


if __name__ == "__main__":
    main()
