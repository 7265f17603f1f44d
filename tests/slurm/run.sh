#!/usr/bin/env bash
# tests/slurm/run.sh: HMPI under Slurm, as a user starts it: a one-node Slurm of its own
# (munged, slurmctld, slurmd, each started here and stopped here by PID, whatever
# happens), then for each MPI the jobs of docs/launchers.md, judged by what they print
# and leave behind, not by exit codes alone:
#   preload    srun --mpi=PLUGIN --export=ALL,LD_PRELOAD=libhmpi.so: hello, ping-pong,
#              collectives, every byte checked (tests/slurm/job.c), HMPI active on every
#              rank and its HMPI_STATS table carrying the ping-pong
#   linked     the same program built with hmpicc, 3 ranks, the plugin from
#              SLURM_MPI_TYPE and the knob from srun's own environment
#   knobs      HMPI_* knobs only in --export (HMPI_VERBOSE, HMPI_STATS=per-rank; then
#              HMPI_DISABLE=1): every rank shows it got them
#   sbatch     tests/slurm/job.sbatch through sbatch --wait: its output file
#   hmpirun    hmpirun inside salloc (Open MPI as root: --allow-run-as-root)
#   singleton  plain srun -n 2, no --mpi: MPICH runs two one-rank jobs and HMPI says so on
#              each task, naming --mpi=pmi2 (and stops them with HMPI_SINGLETON=abort);
#              Open MPI refuses in its MPI_Init, before HMPI runs; the same with the
#              other MPI's plugin (wrong-plugin: --mpi=pmix for MPICH, pmi2 for Open MPI)
#   kill       a rank SIGKILLed while the others wait in an HMPI barrier
#              (tests/mpi/faults/fault_victim): the step ends within 15 s, no rank survives,
#              HMPI_SHM_DIR is left empty
# MPICH (Debian's 4.0.2) speaks srun's pmi2 plugin, Open MPI (4.1.4) its pmix plugin.
# Needs root (the daemons run as root) and Debian's slurm-wlm, slurm-wlm-basic-plugins
# and munge ('./dev slurm' installs them), and build/<mpi> built ('./dev build <mpi>').
#
#   tests/slurm/run.sh [mpich] [openmpi]      (default: both)
# State, logs and the slurm.conf: build/slurm/ (DEV_SLURM_DIR elsewhere). Ends with
# "N passed, N failed"; exit status 0 only when nothing failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DIR=$(mkdir -p "${DEV_SLURM_DIR:-build/slurm}" && cd "${DEV_SLURM_DIR:-build/slurm}" && pwd)
JOB_TIMEOUT=90    # seconds one srun/salloc/sbatch may take before it is killed
KILL_BOUND=15     # seconds a step may take to end after one of its ranks died
PASSED=0 FAILED=0

say() { printf '== %s\n' "$*"; }

# ---- the daemons ---------------------------------------------------------------------
PIDS=()           # munged, slurmctld, slurmd: stopped in reverse order at exit
CONF=$DIR/slurm.conf

# Stops what this script started: the jobs of this Slurm and their steps' slurmstepd
# (which leave slurmd's process tree; given 5 s to end), then the daemons, by PID, in
# reverse order; SIGKILL for any that outlives 5 s.
stop_all() {
  local p i n
  if [ ${#PIDS[@]} -ge 3 ]; then
    scancel --full --quiet --user="$(id -un)" >/dev/null 2>&1
    for n in $(seq 50); do
      [ -z "$(stepds)" ] && break
      sleep 0.1
    done
  fi
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    kill -TERM "${PIDS[i]}" 2>/dev/null
  done
  for n in $(seq 50); do
    local alive=0
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for p in "${PIDS[@]}" $(stepds); do kill -KILL "$p" 2>/dev/null; done
  PIDS=()
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# The slurmstepd processes of this Slurm: they hold its log or spool files open (their
# environment is overwritten by their process title).
stepds() {
  local c pid
  for c in /proc/[0-9]*/comm; do
    [ "$(cat "$c" 2>/dev/null)" = slurmstepd ] || continue
    pid=${c#/proc/}; pid=${pid%/comm}
    find "/proc/$pid/fd" -lname "$DIR/*" 2>/dev/null | grep -q . && echo "$pid"
  done
}

# Two free TCP ports for slurmctld and slurmd: another Slurm on this machine (or another
# checkout running this leg) keeps its own.
free_ports() {
  python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])'
}

start_daemons() {
  local c
  for c in munged mungekey munge unmunge slurmctld slurmd srun salloc sbatch sinfo scancel; do
    command -v "$c" >/dev/null || PATH=$PATH:/usr/sbin
    command -v "$c" >/dev/null || { echo "run.sh: $c is missing (apt-get install slurm-wlm slurm-wlm-basic-plugins munge)"; return 1; }
  done
  [ "$(id -u)" = 0 ] || { echo "run.sh: the daemons run as root: run as root"; return 1; }
  rm -rf "$DIR/munge" "$DIR/state" "$DIR/spool" "$DIR/log"
  mkdir -p "$DIR/munge" "$DIR/state" "$DIR/spool" "$DIR/log"
  chmod 755 "$DIR/munge"          # munged wants its socket's directory open to all
  # A key of its own: the machine's /etc/munge is left alone.
  mungekey --create --keyfile="$DIR/munge/munge.key" 2>/dev/null ||
    { dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 2>/dev/null &&
      chmod 600 "$DIR/munge/munge.key"; }
  local sock=$DIR/munge/munge.socket
  munged --foreground --force --socket="$sock" --key-file="$DIR/munge/munge.key" \
    --log-file="$DIR/log/munged.log" --pid-file="$DIR/munge/munged.pid" \
    --seed-file="$DIR/munge/munged.seed" >>"$DIR/log/munged.out" 2>&1 &
  PIDS+=($!)
  for c in $(seq 100); do
    munge -n -S "$sock" 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1 && break
    sleep 0.1
  done
  munge -n -S "$sock" 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1 ||
    { echo "run.sh: munged does not answer:"; tail -n 5 "$DIR/log/munged.log"; return 1; }

  local node ports cpus
  node=$(hostname -s)
  ports=($(free_ports))
  # CPUs: at least 8, so that a job never waits for the previous one's end (slurmd takes
  # the configured count: config_overrides).
  cpus=$(nproc); [ "$cpus" -lt 8 ] && cpus=8
  cat >"$CONF" <<EOF
# Written by tests/slurm/run.sh: one node, everything as root, no cgroups, no accounting.
ClusterName=hmpitest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/state/slurmctld.pid
SlurmdPidFile=$DIR/spool/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
# Debian's default: srun starts tasks without PMI unless told (--mpi=, SLURM_MPI_TYPE).
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=2
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$CONF
  slurmctld -D -c >>"$DIR/log/slurmctld.out" 2>&1 &
  PIDS+=($!)
  slurmd -D -N "$node" >>"$DIR/log/slurmd.out" 2>&1 &
  PIDS+=($!)
  for c in $(seq 300); do
    [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && return 0
    sleep 0.1
  done
  echo "run.sh: the node did not come up:"
  sinfo 2>&1; tail -n 5 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" 2>/dev/null
  return 1
}

# ---- running and judging -------------------------------------------------------------
# run NAME CMD...: runs CMD (bounded by JOB_TIMEOUT), its output into $LOG (shown on
# failure) and $OUT, its exit status into $RC, seconds into $SECS; starts a verdict.
NAME= OUT= RC=0 SECS=0 LOG= WHY=()
run() {
  NAME=$1; shift
  LOG=$DIR/log/$MPI.$NAME.log
  WHY=()
  local t0 t1
  t0=$(date +%s.%N)
  { printf '+'; printf ' %q' "$@"; printf '\n'; } >"$LOG"
  timeout -k 5 "$JOB_TIMEOUT" "$@" >>"$LOG" 2>&1 </dev/null
  RC=$?
  t1=$(date +%s.%N)
  SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  OUT=$(tail -n +2 "$LOG")
  # Not by the status: srun's is 137 too when a task was SIGKILLed.
  awk -v s="$SECS" -v t="$JOB_TIMEOUT" 'BEGIN { exit !(s >= t) }' &&
    WHY+=("still running after $JOB_TIMEOUT s")
}
# wait_batch ID: waits (up to JOB_TIMEOUT) for batch job ID to end, its exit status into
# $RC; sbatch --wait would do, but it looks only every few seconds.
wait_batch() {
  local n state
  for ((n = 0; n < JOB_TIMEOUT * 10; n++)); do
    state=$(squeue -h -j "$1" -o %T 2>/dev/null)
    [ -z "$state" ] && break
    sleep 0.1
  done
  [ -z "$state" ] || { WHY+=("batch job $1 still $state after $JOB_TIMEOUT s"); scancel "$1"; }
  RC=$(scontrol show job "$1" -o 2>/dev/null | sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p')
  RC=${RC:-unknown}
}
# Checks on $OUT and $RC; each failed one adds a reason.
want_rc() { [ "$RC" = "$1" ] || WHY+=("exit status $RC, expected $1"); }
want_fail() { [ "$RC" != 0 ] || WHY+=("exit status 0, expected a failure"); }
# want N REGEX: exactly N lines match (extended regex).
want() {
  local n
  n=$(grep -cE -- "$2" <<<"$OUT")
  [ "$n" = "$1" ] || WHY+=("$n lines match '$2', expected $1")
}
none() { want 0 "$1"; }
some() { grep -qE -- "$1" <<<"$OUT" || WHY+=("no line matches '$1'"); }
verdict() {
  if [ ${#WHY[@]} = 0 ]; then
    PASSED=$((PASSED + 1))
    printf 'ok     %-8s %-24s %5s s\n' "$MPI" "$NAME" "$SECS"
  else
    FAILED=$((FAILED + 1))
    printf 'FAILED %-8s %-24s %5s s\n' "$MPI" "$NAME" "$SECS"
    printf '         %s\n' "${WHY[@]}"
    sed 's/^/         | /' "$LOG" | tail -n 40
  fi
}
# The job of tests/slurm/job.c on N ranks ran through and checked its data (mode all).
want_job() {
  local n=$1 state=$2 r
  for ((r = 0; r < n; r++)); do
    want 1 "^job: rank $r of $n on .*: HMPI $state\$"
  done
  want 1 '^job: pingpong of 1 MiB: 50 round trips checked'
  want 1 "^job: bcast, allreduce, alltoall over $n ranks checked\$"
  want 1 '^job: done$'
  none 'CHECK\(|error:|warning:'
}
# HMPI_STATS=1's table: the job of N ranks had HMPI active and the ping-pong went through it.
want_stats() {
  want 1 "^hmpi\\[0\\]: stats for the job at MPI_Finalize: $1 ranks, 1 node, HMPI active\$"
  want 1 '^  synergistic +[1-9]'
}

# ---- one MPI -------------------------------------------------------------------------
leg() {
  MPI=$1
  local plugin build=$ROOT/build/$1 bin=$DIR/$1
  case "$MPI" in mpich) plugin=pmi2 ;; openmpi) plugin=pmix ;; esac
  local lib=$build/src/libhmpi.so victim=$build/tests/mpi/faults/fault_victim
  say "$MPI: srun --mpi=$plugin (libhmpi: ${lib#$ROOT/})"
  NAME=setup WHY=() SECS=0 LOG=$DIR/log/$MPI.setup.log
  : >"$LOG"
  for f in "$lib" "$build/tools/hmpicc" "$build/tools/hmpirun" "$victim"; do
    [ -e "$f" ] || WHY+=("$f is missing: ./dev build $MPI")
  done
  srun --mpi=list 2>&1 | grep -qw "$plugin" || WHY+=("srun --mpi=list has no $plugin")
  mkdir -p "$bin"
  # The program twice: the MPI's own wrapper (for the preload) and hmpicc (linked).
  local cflags=(-O2 -Wall -Wextra -Werror)
  if [ ${#WHY[@]} = 0 ]; then
    "mpicc.$MPI" "${cflags[@]}" -o "$bin/job" tests/slurm/job.c -ldl >>"$LOG" 2>&1 &&
      "$build/tools/hmpicc" "${cflags[@]}" -o "$bin/job-linked" tests/slurm/job.c -ldl >>"$LOG" 2>&1 ||
      WHY+=("the test program does not build")
  fi
  if [ ${#WHY[@]} != 0 ]; then verdict; return; fi

  run preload srun --mpi="$plugin" -n 2 --export=ALL,LD_PRELOAD="$lib",HMPI_STATS=1 \
    "$bin/job" all
  want_rc 0; want_job 2 active; want_stats 2
  local with_hmpi
  with_hmpi=$(sed -n 's/^job: pingpong .* \([0-9.]*\) us each$/\1/p' <<<"$OUT")
  verdict

  # Without HMPI, for the record: the same ping-pong through the MPI below alone.
  run no-hmpi srun --mpi="$plugin" -n 2 "$bin/job" all
  want_rc 0; want_job 2 absent
  local without
  without=$(sed -n 's/^job: pingpong .* \([0-9.]*\) us each$/\1/p' <<<"$OUT")
  verdict
  [ -n "$with_hmpi" ] && [ -n "$without" ] &&
    awk -v a="$with_hmpi" -v b="$without" 'BEGIN { printf "         1 MiB ping-pong round trip: %.0f us with HMPI, %.0f us without (%.1fx)\n", a, b, b / a }'

  # Linked with hmpicc; the plugin from SLURM_MPI_TYPE, the knob from srun's environment
  # (--export=ALL, the default).
  run linked env SLURM_MPI_TYPE="$plugin" HMPI_STATS=1 srun -n 3 "$bin/job-linked" all
  want_rc 0; want_job 3 active; want_stats 3
  verdict

  # Knobs set only in --export (none in srun's environment: run() gets a clean one).
  run export-knobs srun --mpi="$plugin" -n 2 \
    --export=ALL,LD_PRELOAD="$lib",HMPI_VERBOSE=1,HMPI_STATS=per-rank "$bin/job" hello
  want_rc 0
  want 1 '^hmpi\[0\]: HMPI active: 2 ranks on 1 node\(s\)$'
  want 1 '^hmpi\[0\]: stats node 0 local 0/2 active: '
  want 1 '^hmpi\[1\]: stats node 0 local 1/2 active: '
  want 2 '^job: rank [01] of 2 on .*: HMPI active$'
  verdict
  run export-disable srun --mpi="$plugin" -n 2 --export=ALL,LD_PRELOAD="$lib",HMPI_DISABLE=1 \
    "$bin/job" all
  want_rc 0; want_job 2 pass-through
  verdict

  # The batch script of docs/launchers.md.
  rm -f "$bin/sbatch.out"
  local t0=$SECONDS
  run sbatch env SLURM_MPI_TYPE="$plugin" sbatch --parsable --output="$bin/sbatch.out" \
    --chdir="$bin" tests/slurm/job.sbatch ./job-linked all
  want_rc 0
  [ ${#WHY[@]} = 0 ] && wait_batch "${OUT%%;*}"
  want_rc 0
  SECS=$((SECONDS - t0))
  OUT=$(cat "$bin/sbatch.out" 2>/dev/null); cat "$bin/sbatch.out" >>"$LOG" 2>/dev/null
  want_job 2 active; want_stats 2
  verdict

  # hmpirun inside an allocation: Hydra starts its proxy with srun, Open MPI's mpirun
  # takes the allocation's slots; as root Open MPI needs --allow-run-as-root.
  local root=()
  [ "$MPI" = openmpi ] && [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
  run hmpirun-salloc env HMPI_STATS=1 salloc -n 2 "$build/tools/hmpirun" "${root[@]}" -n 2 \
    "$bin/job" all
  want_rc 0; want_job 2 active; want_stats 2
  verdict

  # The singleton trap: srun without --mpi (MpiDefault=none).
  run singleton srun -n 2 "$bin/job-linked" hello
  if [ "$MPI" = mpich ]; then
    want_rc 0
    local r
    for r in 0 1; do
      want 1 "^hmpi: warning: srun started this program as task $r of 2 \\(SLURM_PROCID=$r, SLURM_STEP_NUM_TASKS=2\\), but MPICH runs each task alone, in an MPI_COMM_WORLD of 1: add --mpi=pmi2 to srun .*HMPI passes through"
    done
    want 2 '^job: rank 0 of 1 on .*: HMPI pass-through$'
    verdict
    run singleton-abort srun -n 2 --export=ALL,HMPI_SINGLETON=abort "$bin/job-linked" hello
    want_fail
    want 2 '^hmpi: error: srun started this program as task [01] of 2 .*--mpi=pmi2.*stopping \(HMPI_SINGLETON=abort\)$'
    none '^job: '
  else
    # Open MPI stops in its own MPI_Init, before HMPI could say anything.
    want_fail
    some "OMPI was not built with SLURM's PMI support"
    none '^job: |HMPI active'
  fi
  verdict

  # The other plugin: MPICH cannot speak PMIx (srun --mpi=pmix), Open MPI 4.1 not pmi2.
  local other=pmix
  [ "$MPI" = openmpi ] && other=pmi2
  run wrong-plugin srun --mpi="$other" -n 2 "$bin/job-linked" hello
  if [ "$MPI" = mpich ]; then
    want_rc 0
    want 2 '^hmpi: warning: srun started this program as task [01] of 2 .*--mpi=pmi2'
    want 2 '^job: rank 0 of 1 on .*: HMPI pass-through$'
  else
    want_fail
    some "OMPI was not built with SLURM's PMI support"
    none '^job: |HMPI active'
  fi
  verdict

  # A rank SIGKILLed while the others wait for it in MPI_Barrier, inside HMPI. Slurm ends
  # the step by itself only under --mpi=pmix (Open MPI's PMIx server sees the death);
  # MPICH's ranks wait on, with HMPI or without, unless srun is told --kill-on-bad-exit.
  local shm kill=()
  shm=$(mktemp -d /dev/shm/hmpi-slurm.XXXXXX)
  [ "$MPI" = mpich ] && kill=(--kill-on-bad-exit=1)
  run kill srun --mpi="$plugin" "${kill[@]}" -n 3 --export=ALL,HMPI_SHM_DIR="$shm" \
    "$victim" kill-barrier
  want_fail
  want 1 '^fault_victim: rank 2 SIGKILLs itself at '
  want 1 'task 2: Killed'
  local died
  died=$(sed -n 's/^fault_victim: rank 2 SIGKILLs itself at \([0-9.]*\)$/\1/p' <<<"$OUT")
  [ -n "$died" ] && awk -v d="$died" -v n="$(date +%s.%N)" -v b="$KILL_BOUND" \
    'BEGIN { exit !(n - d > b) }' && WHY+=("the step ended more than $KILL_BOUND s after the death")
  [ -z "$(ls -A "$shm")" ] || WHY+=("left in $shm: $(ls -A "$shm" | tr '\n' ' ')")
  local pid left=
  for pid in $(grep -lsF "HMPI_SHM_DIR=$shm" /proc/[0-9]*/environ); do
    pid=${pid#/proc/}; left+=" ${pid%/environ}"
  done
  [ -z "$left" ] || { WHY+=("ranks still alive:$left"); kill -KILL $left 2>/dev/null; }
  rmdir "$shm" 2>/dev/null
  verdict
}

# ---- main ------------------------------------------------------------------------------
MPIS=()
for a in "$@"; do
  case "$a" in
    mpich|openmpi) MPIS+=("$a") ;;
    *) echo "usage: tests/slurm/run.sh [mpich] [openmpi]"; exit 2 ;;
  esac
done
[ ${#MPIS[@]} -gt 0 ] || MPIS=(mpich openmpi)
# The jobs get the environment given here, less what would change them: HMPI_* knobs
# (each case sets its own), a launcher's variables, Open MPI's root permission (the
# hmpirun case passes --allow-run-as-root) and another Slurm's settings.
for v in $(env | sed -n 's/^\(HMPI_[A-Z0-9_]*\|SLURM_[A-Z0-9_]*\|OMPI_[A-Z0-9_]*\|PMI_[A-Z0-9_]*\|PMIX_[A-Z0-9_]*\)=.*/\1/p'); do
  unset "$v"
done
T0=$(date +%s)
say "starting munged, slurmctld, slurmd ($DIR)"
if start_daemons; then
  say "Slurm $(sinfo -V | awk '{ print $2 }') up after $(($(date +%s) - T0)) s: $(sinfo -h -o '%N %c CPUs %T')"
  for m in "${MPIS[@]}"; do leg "$m"; done
else
  FAILED=$((FAILED + 1))
fi
stop_all
say "slurm leg: $(($(date +%s) - T0)) s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
