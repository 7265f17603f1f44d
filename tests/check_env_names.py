#!/usr/bin/env python3
"""check_env_names.py HMPI_INFO SOURCE_DIR: every HMPI_* environment variable that HMPI's
tools, scripts and docs read or tell users to set is a knob or one of the tools' own
(`hmpi_info --names`), so libhmpi never warns about it as a misspelt knob; and every
tool variable in that list is still used somewhere (no stale entry). Standard library only."""
import re
import subprocess
import sys
from pathlib import Path

# Where HMPI_* names are read: shell ${HMPI_X...} / $HMPI_X, Python os.environ[...] and
# .get(...), C getenv("HMPI_X"); in CMake files ${HMPI_X} is a CMake variable and only
# $ENV{HMPI_X} counts.
READS = [re.compile(r"\$\{?(HMPI_[A-Z0-9_]+)"),
         re.compile(r"environ(?:\.get\(|\[)\s*[\"'](HMPI_[A-Z0-9_]+)"),
         re.compile(r"getenv\(\s*\"(HMPI_[A-Z0-9_]+)\"")]
CMAKE_READS = [re.compile(r"\$ENV\{(HMPI_[A-Z0-9_]+)\}")]
PLACES = ["dev", "tools", "bench", "src", "contrib", "examples", "docs", "README.md", "man"]


def main():
    info, src = sys.argv[1], Path(sys.argv[2])
    known = {}
    for line in subprocess.run([info, "--names"], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        name, kind = line.split()
        known[name] = kind
    used, bad = set(), []
    for place in PLACES:
        root = src / place
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for f in files:
            try:
                text = f.read_text()
            except (UnicodeDecodeError, OSError):
                continue
            cmake = f.name == "CMakeLists.txt" or f.suffix == ".cmake"
            for rx in CMAKE_READS if cmake else READS:
                for m in rx.finditer(text):
                    used.add(m.group(1))
                    if m.group(1) not in known:
                        line = text.count("\n", 0, m.start()) + 1
                        bad.append(f"{f.relative_to(src)}:{line}: {m.group(1)}")
    stale = sorted(n for n, k in known.items() if k == "tool" and n not in used)
    for b in bad:
        print(f"not a knob nor a tool variable (add it to hmpi_knob_tool_vars in "
              f"src/common/knobs.c, or rename it): {b}")
    for s in stale:
        print(f"tool variable used nowhere (remove it from hmpi_knob_tool_vars): {s}")
    if bad or stale:
        return 1
    print(f"env names: ok ({len(used)} names used, {len(known)} known)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
