#!/bin/sh
# install_test.sh: installs the build tree into a fresh prefix (cmake --install
# --prefix), checks the installed files and man pages, builds project/hello.c against
# the installed tree through find_package(HMPI) and through pkg-config (hmpi.pc), and
# runs both with the installed hmpirun under stats_check.py. With OTHER_MPICC (the other
# MPI's wrapper, or "none"), both ways refuse a project built against the other MPI:
# find_package(HMPI) after find_package(MPI) found it, and a compile with its wrapper
# and pkg-config hmpi.
#   install_test.sh CMAKE BUILD WORK LIBDIR MANDIR MPICC OTHER_MPICC PYTHON STATS_CHECK
#                   [launcher flags]
set -eu
cmake=$1 build=$2 work=$3 libdir=$4 mandir=$5 mpicc=$6 other_mpicc=$7 python=$8 check=$9
shift 9
src=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log" || fail "cmake --install"

man1="hmpirun.1 hmpi_info.1"
man3="OPI_Alloc.3 OPI_Free.3 OPI_Give.3 OPI_Take.3 OPI_Igive.3 OPI_Itake.3"
for f in bin/hmpirun bin/hmpicc bin/hmpic++ bin/hmpifort bin/hmpi_info include/hmpi.h \
         include/hmpi_mpi_check.h \
         "$libdir/libhmpi.so" "$libdir/cmake/HMPI/HMPIConfig.cmake" \
         "$libdir/cmake/HMPI/HMPITargets.cmake" "$libdir/pkgconfig/hmpi.pc"; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
for p in $man1; do [ -s "$prefix/$mandir/man1/$p" ] || fail "not installed: $mandir/man1/$p"; done
for p in $man3; do [ -s "$prefix/$mandir/man3/$p" ] || fail "not installed: $mandir/man3/$p"; done

# Every page renders without a warning (groff -ww), from the man tree's root so that
# the .so links of man3 resolve.
if command -v groff > /dev/null; then
  for p in $(cd "$prefix/$mandir" && ls man1/* man3/*); do
    out=$(cd "$prefix/$mandir" && groff -man -ww -z -Tutf8 "$p" 2>&1) || fail "groff $p"
    [ -z "$out" ] || fail "groff warns on $p: $out"
    words=$(cd "$prefix/$mandir" && groff -man -Tutf8 "$p" 2>/dev/null | wc -w)
    [ "$words" -gt 50 ] || fail "$p renders only $words words"
  done
else
  echo "groff not found: man pages only checked to be installed"
fi

# The installed tools run from the installed tree alone (no LD_LIBRARY_PATH).
"$prefix/bin/hmpi_info" > "$work/hmpi_info.txt" 2>&1 ||
  fail "installed hmpi_info does not run: $(cat "$work/hmpi_info.txt")"
grep -q "^HMPI " "$work/hmpi_info.txt" || fail "installed hmpi_info: $(cat "$work/hmpi_info.txt")"

# find_package(HMPI): HMPI::hmpi.
"$cmake" -S "$src/project" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "configuring with find_package(HMPI)"; }
"$cmake" --build "$work/cmake" > "$work/cmake-build.log" 2>&1 ||
  { cat "$work/cmake-build.log"; fail "building with HMPI::hmpi"; }

# pkg-config: hmpi.pc, its prefix redefined to where the tree was installed.
pc="pkg-config --define-variable=prefix=$prefix"
flags=$(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" $pc --cflags --libs hmpi) ||
  fail "pkg-config hmpi"
case "$flags" in
  *"-I$prefix/include"*"$prefix/$libdir"*) ;;
  *) fail "hmpi.pc does not follow the installed prefix: $flags" ;;
esac
# shellcheck disable=SC2086
"$mpicc" -o "$work/hello_pc" "$src/project/hello.c" $flags || fail "building with pkg-config"

# The other MPI: refused by the CMake package (HMPI not found, saying why) and by the
# compile that pkg-config's flags make (an #error naming the MPI HMPI is built for).
if [ "$other_mpicc" != none ]; then
  if "$cmake" -S "$src/project" -B "$work/cmake-wrong" -DCMAKE_PREFIX_PATH="$prefix" \
       -DMPI_FIRST=ON -DMPI_C_COMPILER="$other_mpicc" > "$work/cmake-wrong.log" 2>&1; then
    cat "$work/cmake-wrong.log"; fail "find_package(HMPI) accepted the other MPI ($other_mpicc)"
  fi
  said=$(tr -s ' \n' '  ' < "$work/cmake-wrong.log")   # CMake wraps the reason's lines
  case "$said" in
    *"HMPI in $prefix is built for "*", but this project found "*"find_package(HMPI) before find_package(MPI)"*) ;;
    *) false ;;
  esac ||
    { cat "$work/cmake-wrong.log"; fail "the CMake package refused the other MPI without saying why"; }
  # shellcheck disable=SC2086
  if "$other_mpicc" -o "$work/hello_wrong" "$src/project/hello.c" $flags \
       > "$work/pc-wrong.log" 2>&1; then
    fail "pkg-config hmpi with $other_mpicc compiled"
  fi
  grep -q "error: #error \"HMPI is built for" "$work/pc-wrong.log" ||
    { cat "$work/pc-wrong.log"; fail "the compile with $other_mpicc failed without saying why"; }
  # The same project, MPI found first but HMPI's: accepted.
  "$cmake" -S "$src/project" -B "$work/cmake-first" -DCMAKE_PREFIX_PATH="$prefix" \
    -DMPI_FIRST=ON -DMPI_C_COMPILER="$mpicc" > "$work/cmake-first.log" 2>&1 ||
    { cat "$work/cmake-first.log"; fail "find_package(MPI) first, with $mpicc: refused"; }
fi

for exe in "$work/cmake/hello_cmake" "$work/hello_pc"; do
  ldd "$exe" | grep -q "$prefix/$libdir/libhmpi.so" || fail "$exe does not load the installed libhmpi"
  "$python" "$check" --ranks 2 --each "msgs_synergistic >= 1" --each "msgs_remote == 0" \
    "--output=install_hello: OK" -- "$prefix/bin/hmpirun" "$@" -n 2 "$exe" ||
    fail "running $exe"
done
echo "install: OK"
