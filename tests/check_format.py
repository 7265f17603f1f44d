#!/usr/bin/env python3
"""check_format.py [BASE]: the C and C++ files of the tree are formatted as .clang-format
says (clang-format --dry-run --Werror), as committed at HEAD (not the work tree).

Without BASE every file git tracks is checked whole (the test unit.format): the tree was
formatted wholesale once (.git-blame-ignore-revs names that commit), so any line out of
format fails. With BASE, only the lines changed between BASE and HEAD are checked
(`tests/check_format.py main` before merging a branch: what it added). Files under
tests/fuzz/corpus and tests/opify (hmpi-opify's inputs, whose lines carry the expected
verdicts: their layout is the test) and deleted files are left out.

Exits 77 (a skip for ctest) when it cannot check, saying why: no clang-format (set
CLANG_FORMAT to name one), not a git checkout, or no BASE in the history (a shallow
clone). Before checking, it makes sure clang-format flags a badly formatted line with
this configuration, so a check that cannot fail fails."""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTS = (".c", ".h", ".cpp", ".hpp", ".cc")
LEFT_OUT = ("tests/fuzz/corpus/", "tests/opify/")
SKIP = 77


def skip(why):
    print(f"check_format: skipped: {why}")
    sys.exit(SKIP)


def git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


def find_clang_format():
    named = os.environ.get("CLANG_FORMAT")
    if named:
        return shutil.which(named) or skip(f"CLANG_FORMAT={named} is not a program")
    for name in ("clang-format", "clang-format-14", "clang-format-15", "clang-format-16"):
        path = shutil.which(name)
        if path:
            return path
    skip("no clang-format in PATH (Debian: apt-get install clang-format)")


def changed_lines(base):
    """{path: [(first, last), ...]}: the lines of HEAD changed since it left base (from
    their merge base, so what base gained meanwhile is not counted)."""
    out = git("diff", "-U0", "--no-color", "--no-ext-diff", "--diff-filter=AMRC",
              f"{base}...HEAD", "--")
    if out.returncode != 0:
        sys.exit(f"check_format: git diff {base}...HEAD failed: {out.stderr.strip()}")
    ranges, path = {}, None
    for line in out.stdout.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            path = name[2:] if name.startswith("b/") else None
            if path and (not path.endswith(EXTS) or path.startswith(LEFT_OUT)):
                path = None
        elif line.startswith("@@") and path:
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            first, count = int(m.group(1)), int(m.group(2) or 1)
            if count:
                ranges.setdefault(path, []).append((first, first + count - 1))
    return ranges


def all_files():
    """{path: None} for every C and C++ file git tracks at HEAD (None: every line)."""
    out = git("ls-tree", "-r", "--name-only", "HEAD")
    if out.returncode != 0:
        sys.exit(f"check_format: git ls-tree HEAD failed: {out.stderr.strip()}")
    return {p: None for p in out.stdout.splitlines()
            if p.endswith(EXTS) and not p.startswith(LEFT_OUT)}


def dry_run(clang_format, path, text, ranges):
    """clang-format's complaints about text (the file at path) on the given lines (None:
    all of them), or ""."""
    args = [clang_format, "--dry-run", "--Werror", "--style=file", f"--assume-filename={path}"]
    args += [f"--lines={a}:{b}" for a, b in ranges or []]
    r = subprocess.run(args, input=text, capture_output=True, text=True, cwd=ROOT)
    return r.stderr if r.returncode != 0 else ""


def main():
    named = len(sys.argv) > 1
    base = sys.argv[1] if named else "HEAD"
    clang_format = find_clang_format()
    if not (ROOT / ".clang-format").exists():
        sys.exit("check_format: no .clang-format at the top of the tree")
    inside = git("rev-parse", "--is-inside-work-tree")
    if inside.returncode != 0:
        skip(f"{ROOT} is not a git checkout git can read ({inside.stderr.strip()})")
    if git("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}").returncode != 0:
        if named:
            sys.exit(f"check_format: no commit {base}")
        skip(f"no commit {base} in this history (a shallow clone?)")

    # The check itself: a badly formatted line must be flagged, a good one not.
    bad = "int  f( void ){return 0;}\n"
    good = "int f(void) { return 0; }\n"
    if not dry_run(clang_format, "src/x.c", bad, [(1, 1)]):
        sys.exit(f"check_format: {clang_format} does not flag {bad.strip()!r}")
    if dry_run(clang_format, "src/x.c", good, [(1, 1)]):
        sys.exit(f"check_format: {clang_format} flags {good.strip()!r}")

    ranges = changed_lines(base) if named else all_files()
    def check(item):
        path, lines = item
        text = git("show", f"HEAD:{path}")
        if text.returncode != 0:
            sys.exit(f"check_format: git show HEAD:{path} failed: {text.stderr.strip()}")
        return path, dry_run(clang_format, path, text.stdout, lines)

    # Each file is two processes of its own: as many at once as there are cores, so that
    # the whole tree stays well inside the test's timeout on a loaded machine.
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for path, complaints in pool.map(check, sorted(ranges.items())):
            if complaints:
                failed.append(path)
                sys.stderr.write(complaints)
    if not named:
        if failed:
            print(f"check_format: {len(failed)} of {len(ranges)} files are not formatted; "
                  f"fix with: clang-format -i FILE (or git clang-format BASE)")
            return 1
        print(f"check_format: {len(ranges)} files at HEAD: formatted")
        return 0
    n = sum(len(v) for v in ranges.values())
    if failed:
        print(f"check_format: {len(failed)} of {len(ranges)} files changed since {base} are "
              f"not formatted on the lines changed; fix with:\n"
              f"  git clang-format {base}   (or clang-format -i FILE)")
        return 1
    print(f"check_format: {len(ranges)} files, {n} changed ranges since {base}: formatted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
