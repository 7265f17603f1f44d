#!/usr/bin/env python3
"""check_exports.py LIBHMPI_SO: libhmpi.so exports the API and nothing else.

libhmpi is loaded into other people's programs (LD_PRELOAD, or linked in), so every
name it exports could clash with one of theirs. It is built with hidden visibility
(src/CMakeLists.txt); what stays visible must be, by `nm -D --defined-only`: the MPI and
PMPI functions (C, and the Fortran names of fortran.c: mpi_send_, MPI_SEND,
mpi_send_f08_, pmpi_...), HMPI's extensions (HMPI_*, OPI_*), the malloc family and C++
operator new/delete. A test of its own (mpi.own_names) runs a program that defines
names HMPI used internally."""
import re
import subprocess
import sys

API = [
    r"P?MPI_[A-Za-z0-9_]+",        # MPI_Send, PMPI_Send, MPI_T_*, Fortran MPI_SEND
    r"p?mpi_[a-z0-9_]+",           # Fortran mpi_send, mpi_send_, mpi_send__, mpi_send_f08_
    r"HMPI_[A-Za-z_]+",            # hmpi.h
    r"OPI_[A-Za-z_]+",             # hmpi.h
    r"(malloc|free|calloc|realloc|reallocarray|malloc_usable_size|posix_memalign|"
    r"aligned_alloc|memalign|valloc|pvalloc)",
    r"_Z(nw|na|dl|da)[A-Za-z0-9_]*",  # operator new[], delete[] (Itanium names)
]


def main():
    so = sys.argv[1]
    out = subprocess.run(["nm", "-D", "--defined-only", so], check=True, capture_output=True,
                         text=True).stdout
    names = [line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()]
    allowed = re.compile("|".join("(?:%s)" % a for a in API))
    extra = sorted(n for n in names if not allowed.fullmatch(n))
    for n in extra:
        print("exported but not API: %s" % n)
    print("%d names exported, %d not API" % (len(names), len(extra)))
    return 1 if extra or not names else 0


if __name__ == "__main__":
    sys.exit(main())
