#!/bin/sh
# check_rewrite: rewrites a corpus program with hmpi-opify, builds original and
# rewritten program with hmpicc, runs both on 2 ranks and compares their output
# (lines sorted, since the ranks' lines may interleave differently).
# usage: check_rewrite.sh PYTHON TOOL HMPICC WORKDIR FILE.c LAUNCHER [launcher flags...]
set -e
python=$1 tool=$2 hmpicc=$3 work=$4 src=$5
shift 5
name=$(basename "$src" .c)
mkdir -p "$work"
# The include flags of the MPI below: MPICH's wrapper tells them with -show, Open MPI's
# with -showme:compile.
incs=$({ "$hmpicc" -showme:compile 2>/dev/null || "$hmpicc" -show; } | tr ' ' '\n' | grep '^-I')
"$python" "$tool" --rewrite -o "$work/$name.opi.c" "$src" -- $incs
grep -q 'OPI_G\|OPI_Ig' "$work/$name.opi.c" || { echo "nothing rewritten"; exit 1; }
grep -q 'OPI_T\|OPI_It' "$work/$name.opi.c" || { echo "no receive rewritten"; exit 1; }
"$hmpicc" -Wall -Werror -o "$work/$name.orig" "$src"
"$hmpicc" -Wall -Werror -o "$work/$name.opi" "$work/$name.opi.c"
"$@" -n 2 "$work/$name.orig" | sort > "$work/$name.orig.out"
"$@" -n 2 "$work/$name.opi" | sort > "$work/$name.opi.out"
test -s "$work/$name.orig.out" || { echo "original printed nothing"; exit 1; }
if cmp "$work/$name.orig.out" "$work/$name.opi.out"; then
  echo "same output:"; cat "$work/$name.opi.out"
else
  diff "$work/$name.orig.out" "$work/$name.opi.out"; exit 1
fi
