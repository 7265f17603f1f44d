#!/bin/sh
# hmpirun_usage.sh HMPIRUN: hmpirun given launcher options but no program prints its
# usage on stderr and exits 2, without starting the launcher; given nothing at all, the
# same; --help prints the usage and exits 0.
hmpirun=$1
fail() { echo "FAIL: $*"; exit 1; }
for args in "-n 2" "-n 2 -bind-to core" ""; do
  # shellcheck disable=SC2086
  out=$("$hmpirun" $args 2>&1 </dev/null)
  rc=$?
  echo "+ hmpirun $args -> exit $rc"
  echo "$out"
  [ "$rc" = 2 ] || fail "hmpirun $args: exit $rc, not 2"
  echo "$out" | grep -q "^usage: hmpirun " || fail "hmpirun $args: no usage line"
  if echo "$out" | grep -Eiq "signal|segmentation|BAD TERMINATION|HYDU|proxy"; then
    fail "hmpirun $args: the launcher ran"
  fi
done
out=$("$hmpirun" --help 2>&1) || fail "hmpirun --help: exit $?"
echo "$out" | grep -q "^usage: hmpirun " || fail "hmpirun --help: no usage line"
echo "hmpirun_usage: OK"
