#!/usr/bin/env python3
"""driver.py: MPI tests that judge a job from outside: its exit code, its output, the
files it leaves in the region directory, ranks left running. Each scenario starts
heap_shared (linked with libhmpi, under the MPI launcher) and, when given, its PLAIN
build under hmpirun, with HMPI_SHM_DIR set to a fresh private directory on a tmpfs.

  driver.py SCENARIO --mpiexec M --program P [--hmpirun H --plain-program Q]
            [--np N] [--launcher-flag F ...]

Scenarios:
  debris       a normal run leaves the region dir empty
  kill         a rank SIGKILLs itself after MPI_Init: the job ends in bounded time,
               no rank survives, the dir is empty
  bad-knob     HMPI_HEAP_SIZE=abc and HMPI_NODE_SIZE=-1 stop the job with a message
               naming the knob, said once for the job (not once per rank)
  knob-typo    HMPI_STAT=1 and HMPI_NODESIZE=2: one warning each for the job, naming
               HMPI_STATS and HMPI_NODE_SIZE; the tools' HMPI_* variables raise none;
               the job runs to its end
  no-region    HMPI_SHM_DIR=/nonexistent-dir: "no shared region", pass-through works
  small-tmpfs  a 1 MiB tmpfs (mounted in a private mount namespace when allowed) and
               HMPI_SHM_MIN_FREE=1T: "bytes free", pass-through works
  split-dir    every rank in a mount namespace of its own, with a tmpfs of its own at
               HMPI_SHM_DIR (a container per rank, each with its own /dev/shm): a
               line saying the ranks do not share it, pass-through works
The scenarios below run fault_victim (--victim; see its banner for the modes):
  kill-mid     a rank SIGKILLed in the middle of a 256 MiB synergistic transfer, as
               receiver and as sender; the same for a pipelined bounce (a private
               send buffer, HMPI_CMA=0)
  kill-part    a rank SIGKILLed in a partitioned transfer of 256 MiB, once its first
               partition arrived: the sender while the receiver waits for the rest,
               the receiver while the sender waits for its buffer back
  kill-wait    a rank SIGKILLed while the others wait for it in MPI_Recv, MPI_Barrier,
               MPI_Win_fence, and in the middle of an MPI_Iallreduce of 1 MiB (the
               others in MPI_Wait)
  abort-wait   the last rank calls MPI_Abort while the others wait as above
  kill-sleep   kill-wait with HMPI_WAIT=sleep: the waiters sleep in a futex (bounded
               naps) when their peer dies
               each of these: the job ends within FAULT_BOUND s of the failure, with a
               nonzero exit, no process of it left, the region dir empty
  other-user   while a job holds its region (a regular file of mode 0600, owned by the
               job's user, unlinked), a process of another user (setpriv as nobody)
               cannot open /proc/<rank>/mem, /proc/<rank>/map_files/<region>, list
               /proc/<rank>/fd, nor process_vm_readv a rank's heap (EPERM); skipped
               (exit 77) when not root or without setpriv
  addr-taken   the region's whole address range taken before MPI_Init: a clear
               message, pass-through works
  rlimit-as    RLIMIT_AS too low for the region (prlimit): a clear message naming the
               limit, pass-through works
  tmpfs-full   a 64 MiB tmpfs that the ranks fill past its size during the run: HMPI's
               message naming the full file system, never a bare SIGBUS
  spin         how long waits spin (HMPI_VERBOSE=2 says): 256 pause steps while the
               ranks fit the host's online cores, 16 when they outnumber them (twice
               as many ranks as cores, up to 8), HMPI_SPIN=700 as set, HMPI_SPIN=3
               raised to 16; every rank says so
Standard library only."""

import argparse
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

JOB_TIMEOUT = 60  # seconds one launch may take before the driver kills it
FAULT_TIMEOUT = 40  # the same, for a job where a rank fails on purpose
FAULT_BOUND = 15  # seconds a job may take to end after one of its ranks failed
SKIP = 77  # CTest SKIP_RETURN_CODE


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Driver:
    def __init__(self, args):
        self.args = args
        self.dirs = []

    # ---- helpers -----------------------------------------------------------------
    def fresh_dir(self):
        """A private directory on a tmpfs, unique to this run."""
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None
        d = tempfile.mkdtemp(prefix="hmpitest-drv.", dir=base)
        self.dirs.append(d)
        return d

    def cleanup(self):
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)

    def launches(self):
        """(name, argv prefix, program) for each way to start the test program."""
        a = self.args
        out = [("mpiexec", [a.mpiexec] + a.launcher_flag, a.program)]
        if a.hmpirun and a.plain_program:
            out.append(("hmpirun", [a.hmpirun] + a.launcher_flag, a.plain_program))
        return out

    def run(self, argv, env_extra, wrap=None, timeout=JOB_TIMEOUT):
        """Runs argv in its own process group; returns (rc, output, seconds). A job
        that outlives the timeout is killed, group and all, and fails the test."""
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("HMPI_"):
                del env[k]
        env.update(env_extra)
        cmd = (wrap or []) + argv
        print("+ " + " ".join("%s=%s" % kv for kv in sorted(env_extra.items())) + " " +
              " ".join(cmd), flush=True)
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            sys.stdout.write(out.decode(errors="replace"))
            raise Failure("the job did not end within %d s" % timeout)
        dt = time.monotonic() - t0
        text = out.decode(errors="replace")
        sys.stdout.write(text)
        print("  -> exit %d after %.1f s" % (p.returncode, dt), flush=True)
        return p.returncode, text, dt

    def ranks_alive(self, marker):
        """Processes whose environment holds marker (an HMPI_SHM_DIR=... entry)."""
        found = []
        me = os.getpid()
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == me:
                continue
            try:
                with open("/proc/%s/environ" % pid, "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            if marker.encode() in env:
                found.append(int(pid))
        return found

    def expect_empty(self, d, what):
        left = sorted(os.listdir(d))
        check(not left, "%s: left in %s: %s" % (what, d, left))

    # ---- scenarios ---------------------------------------------------------------
    def debris(self):
        for name, launch, prog in self.launches():
            d = self.fresh_dir()
            rc, out, _ = self.run(launch + ["-n", str(self.args.np), prog],
                                  {"HMPI_SHM_DIR": d})
            check(rc == 0, "%s: the job failed (exit %d)" % (name, rc))
            check("HMPI active" in out, "%s: the program did not report HMPI active" % name)
            self.expect_empty(d, name)

    def kill(self):
        for name, launch, prog in self.launches():
            d = self.fresh_dir()
            marker = "HMPI_SHM_DIR=" + d
            rc, out, dt = self.run(launch + ["-n", str(self.args.np), prog, "--kill-rank=1"],
                                   {"HMPI_SHM_DIR": d})
            check(rc != 0, "%s: a job with a killed rank exited 0" % name)
            check("the barrier completed" not in out,
                  "%s: a barrier completed without the killed rank" % name)
            # The launcher has returned: give the ranks a moment to be reaped.
            deadline = time.monotonic() + 10
            alive = self.ranks_alive(marker)
            while alive and time.monotonic() < deadline:
                time.sleep(0.2)
                alive = self.ranks_alive(marker)
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            check(not alive, "%s: ranks %s outlived the job" % (name, alive))
            self.expect_empty(d, name)

    def bad_knob(self):
        cases = [({"HMPI_HEAP_SIZE": "abc"}, "HMPI_HEAP_SIZE='abc' is not valid"),
                 ({"HMPI_NODE_SIZE": "-1"}, "HMPI_NODE_SIZE='-1' is not valid")]
        for name, launch, prog in self.launches():
            for env, text in cases:
                d = self.fresh_dir()
                env = dict(env, HMPI_SHM_DIR=d)
                rc, out, _ = self.run(launch + ["-n", str(self.args.np), prog], env)
                check(rc != 0, "%s %s: the job exited 0" % (name, env))
                check(out.count(text) == 1, "%s: \"%s\" said %d times, not once" %
                      (name, text, out.count(text)))
                check(out.count("stopping") == 1, "%s: \"stopping\" said %d times, not once"
                      % (name, out.count("stopping")))
                check("heap_shared:" not in out, "%s: the program ran to its end" % name)
                self.expect_empty(d, name)

    def knob_typo(self):
        tools = {"HMPI_LAUNCHER": self.args.mpiexec, "HMPI_INCDIR": "/nowhere",
                 "HMPI_OPIFY_LIBCLANG": "/nowhere/libclang.so", "HMPI_PREFIX": "/nowhere"}
        for name, launch, prog in self.launches():
            env = dict(tools, HMPI_STAT="1", HMPI_NODESIZE="2", HMPI_SHM_DIR=self.fresh_dir())
            rc, out, _ = self.run(launch + ["-n", str(self.args.np), prog], env)
            check(rc == 0, "%s: the job failed (exit %d)" % (name, rc))
            check("HMPI active" in out, "%s: the program did not report HMPI active" % name)
            for typo, knob in (("HMPI_STAT", "HMPI_STATS"), ("HMPI_NODESIZE", "HMPI_NODE_SIZE")):
                want = "warning: %s is not an HMPI setting, ignored: did you mean %s?" % (typo, knob)
                check(out.count(want) == 1, "%s: \"%s\" said %d times, not once" %
                      (name, want, out.count(want)))
            check(out.count("warning:") == 2, "%s: %d warnings, not 2" % (name, out.count("warning:")))
            check(" stats " not in out, "%s: HMPI_STAT=1 acted as HMPI_STATS=1" % name)

    def spin(self):
        cores = os.sysconf("SC_NPROCESSORS_ONLN")
        cases = [(min(2, cores), {}, 256), (2, {"HMPI_SPIN": "700"}, 700),
                 (2, {"HMPI_SPIN": "3"}, 16)]
        if 2 * cores <= 8:
            cases.append((2 * cores, {}, 16))
        for name, launch, prog in self.launches():
            for np, env, steps in cases:
                env = dict(env, HMPI_VERBOSE="2", HMPI_SHM_DIR=self.fresh_dir())
                rc, out, _ = self.run(launch + ["-n", str(np), prog], env)
                check(rc == 0, "%s, %d ranks, %s: exit %d" % (name, np, env, rc))
                said = re.findall(r"hmpi\[\d+\]: (\d+) ranks on (\d+) cores: waits spin "
                                  r"(\d+) steps", out)
                want = (str(np), str(cores), str(steps))
                check(len(said) == np and all(t == want for t in said),
                      "%s, %d ranks, %s: expected every rank to say %s, got %s" %
                      (name, np, env, want, said))

    def pass_through(self, env, texts, wrap=None, what=""):
        for name, launch, prog in self.launches():
            rc, out, _ = self.run(launch + ["-n", str(self.args.np), prog, "--expect=off"],
                                  env, wrap=wrap)
            check(rc == 0, "%s%s: the pass-through job failed (exit %d)" % (name, what, rc))
            for t in texts:
                check(t in out, "%s%s: no \"%s\" in the output" % (name, what, t))
            check("HMPI off" in out, "%s%s: the program did not report HMPI off" % (name, what))

    def no_region(self):
        missing = "/nonexistent-dir"
        check(not os.path.exists(missing), "%s exists on this machine" % missing)
        self.pass_through({"HMPI_SHM_DIR": missing},
                          ["no shared region in %s" % missing, "pass-through"])

    def small_tmpfs(self):
        texts = ["bytes free", "pass-through"]
        # (a) Emulated: more free space demanded than any tmpfs here has.
        d = self.fresh_dir()
        self.pass_through({"HMPI_SHM_DIR": d, "HMPI_SHM_MIN_FREE": "1T"}, texts,
                          what=" (HMPI_SHM_MIN_FREE=1T)")
        self.expect_empty(d, "HMPI_SHM_MIN_FREE=1T")
        # (b) Real: a 1 MiB tmpfs over a fresh dir, in a mount namespace of the job's own
        # (it disappears with the job). Needs root or user namespaces.
        unshare = shutil.which("unshare")
        d = self.fresh_dir()
        wrap = None
        if unshare:
            wrap = [unshare, "--mount", "--propagation", "private", "sh", "-c",
                    'mount -t tmpfs -o size=1M hmpitest "$0" && '
                    'test "$(stat -f -c %b "$0")" -le 256 && exec "$@"', d]
            probe = subprocess.run(wrap + ["true"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            if probe.returncode != 0:
                wrap = None
        if wrap is None:
            print("small-tmpfs: cannot mount a tmpfs here; only the emulated case ran")
            return
        self.pass_through({"HMPI_SHM_DIR": d}, texts, wrap=wrap, what=" (1 MiB tmpfs)")
        self.expect_empty(d, "1 MiB tmpfs")

    def split_dir(self):
        a = self.args
        unshare = shutil.which("unshare")
        d = self.fresh_dir()
        # Inside each rank's launch: its own tmpfs over d, seen by no other rank.
        per_rank = [unshare or "unshare", "--mount", "--propagation", "private", "sh", "-c",
                    'mount -t tmpfs -o size=1G hmpitest "$0" && exec "$@"', d]
        if not unshare or subprocess.run(per_rank + ["true"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL).returncode != 0:
            raise Skip("cannot mount a tmpfs in a private mount namespace here")
        rc, out, _ = self.run([a.mpiexec] + a.launcher_flag + ["-n", str(a.np)] + per_rank +
                              [a.program, "--expect=off"], {"HMPI_SHM_DIR": d})
        check(rc == 0, "the pass-through job failed (exit %d)" % rc)
        check("do not share that directory" in out and "Containers" in out,
              "no line saying the ranks do not share HMPI_SHM_DIR")
        check("HMPI off" in out, "the program did not report HMPI off")

    # ---- faults: a rank killed or aborting while others wait inside HMPI -------------
    def survivors(self, marker, grace=10):
        """Processes of a finished job still alive after grace seconds: killed, and
        returned as 'pid (name)' for the failure message."""
        deadline = time.monotonic() + grace
        alive = self.ranks_alive(marker)
        while alive and time.monotonic() < deadline:
            time.sleep(0.2)
            alive = self.ranks_alive(marker)
        names = []
        for pid in alive:
            try:
                with open("/proc/%d/comm" % pid) as f:
                    names.append("%d (%s)" % (pid, f.read().strip()))
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return names

    def fault_job(self, mode, np, extra=None):
        """Runs fault_victim MODE; the job must fail, end within FAULT_BOUND s of the
        victim's failure, leave no process and no file. Returns that delay."""
        a = self.args
        d = self.fresh_dir()
        marker = "HMPI_SHM_DIR=" + d
        fd, report = tempfile.mkstemp(prefix="hmpitest-victim.")
        os.close(fd)
        env = {"HMPI_SHM_DIR": d, "FAULT_VICTIM_REPORT": report}
        if mode.endswith("-pipe"):
            env["HMPI_CMA"] = "0"  # a private send buffer goes by the pipelined bounce
        env.update(extra or {})
        rc, out, _ = self.run([a.mpiexec] + a.launcher_flag + ["-n", str(np), a.victim, mode],
                              env, timeout=FAULT_TIMEOUT)
        ended = time.time()
        with open(report) as f:
            said = f.read()  # the victim's report, also when the launcher lost its output
        os.unlink(report)
        what = "fault_victim %s" % mode
        check(rc != 0 or a.exit_may_be_lost, "%s: the job exited 0" % what)
        check("without the victim" not in out, "%s: a wait completed without the victim" % what)
        m = re.search(r"fault_victim: rank \d+ (.*) at (\d+\.\d+)", out + said)
        check(m is not None, "%s: the victim did not report its failure" % what)
        delay = ended - float(m.group(2))
        print("  -> %s: the job ended %.2f s after the victim %s" % (mode, delay,
              "aborted" if "MPI_Abort" in m.group(1) else "died"), flush=True)
        check(delay <= FAULT_BOUND, "%s: the job took %.1f s to end" % (what, delay))
        left = self.survivors(marker)
        check(not left, "%s: processes outlived the job: %s" % (what, ", ".join(left)))
        self.expect_empty(d, what)
        return delay

    def fault_cases(self, modes, extra=None):
        check(self.args.victim, "--victim is required")
        times = ["%s %.2f s" % (m, self.fault_job(m, self.args.np, extra)) for m in modes]
        print("job end after the failure: " + ", ".join(times))

    def kill_mid(self):
        self.fault_cases(["kill-recv-mid", "kill-send-mid", "kill-recv-pipe", "kill-send-pipe"])

    def kill_part(self):
        self.fault_cases(["kill-part-send", "kill-part-recv"])

    def kill_wait(self):
        self.fault_cases(["kill-recv", "kill-barrier", "kill-fence", "kill-iallreduce"])

    def abort_wait(self):
        self.fault_cases(["abort-recv", "abort-barrier", "abort-fence"])

    def kill_sleep(self):
        self.fault_cases(["kill-recv", "kill-barrier", "kill-fence"], {"HMPI_WAIT": "sleep"})

    # ---- another user against a running job ------------------------------------------
    def other_user(self):
        a = self.args
        check(a.victim, "--victim is required")
        setpriv = shutil.which("setpriv")
        if os.geteuid() != 0 or setpriv is None:
            raise Skip("needs root and setpriv to run a probe as another user")
        d = self.fresh_dir()
        hold = self.fresh_dir()
        marker = "HMPI_SHM_DIR=" + d
        env = dict(os.environ)
        env.update({"HMPI_SHM_DIR": d})
        cmd = [a.mpiexec] + a.launcher_flag + ["-n", str(a.np), a.victim, "hold", hold]
        print("+ HMPI_SHM_DIR=%s %s" % (d, " ".join(cmd)), flush=True)
        job = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
        try:
            ranks = self.held_ranks(hold, a.np, job)
            # The system's python: one under /root (pyenv) may be out of nobody's reach.
            python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
            probe = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                     python, os.path.abspath(__file__), "probe"]
            for r in ranks:
                probe += ["--target", "%d:%s:%d:%s" % (r["pid"], r["addr"], r["len"],
                                                       r["map"] or "-")]
            print("+ " + " ".join(probe), flush=True)
            pr = subprocess.run(probe, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                timeout=30)
            sys.stdout.write(pr.stdout.decode(errors="replace"))
            check(b"probe: uid" in pr.stdout,
                  "the probe did not run as nobody (can nobody read %s?)" % __file__)
            check(pr.returncode == 0, "the other user's probe got in (exit %d)" % pr.returncode)
        finally:
            open(os.path.join(hold, "release"), "w").close()
            try:
                out, _ = job.communicate(timeout=FAULT_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(job.pid, signal.SIGKILL)
                out, _ = job.communicate()
            sys.stdout.write(out.decode(errors="replace"))
        check(job.returncode == 0, "the held job failed (exit %d)" % job.returncode)
        check(b"HMPI active" in out, "the held job did not run with HMPI active")
        check(not self.survivors(marker), "processes outlived the held job")
        self.expect_empty(d, "other-user")

    def held_ranks(self, hold, np, job):
        """Waits for every rank's "pid addr len shared" line; adds the region's
        map_files name from /proc/<pid>/maps, and checks that this user (root) can read
        the secret, so that a refusal to the other user means something."""
        deadline = time.monotonic() + 30
        files = [os.path.join(hold, "rank.%d" % r) for r in range(np)]
        while not all(os.path.exists(f) for f in files):
            check(job.poll() is None, "the held job ended early (exit %s)" % job.returncode)
            check(time.monotonic() < deadline, "the ranks did not publish their buffers")
            time.sleep(0.05)
        ranks = []
        for f in files:
            pid, addr, length, shared = open(f).read().split()
            check(shared == "1", "%s: the secret is not in the shared heap" % f)
            rmap = None
            with open("/proc/%s/maps" % pid) as m:
                for line in m:
                    if "/hmpi-" in line and "(deleted)" in line:
                        rmap = line.split()[0]
            check(rmap is not None, "rank pid %s maps no deleted region file" % pid)
            st = os.stat("/proc/%s/map_files/%s" % (pid, rmap))  # the region's file itself
            check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and
                  st.st_uid == os.geteuid() and st.st_nlink == 0,
                  "rank pid %s: region file mode %o, owner %d, links %d (want 0600, %d, 0)"
                  % (pid, st.st_mode, st.st_uid, st.st_nlink, os.geteuid()))
            got = cma_read(int(pid), int(addr, 16), 16)
            check(got == b"\x5e" * 16, "root cannot read rank %s's secret: %r" % (pid, got))
            ranks.append({"pid": int(pid), "addr": addr, "len": int(length), "map": rmap})
        print("held ranks: %s" % ranks, flush=True)
        return ranks

    # ---- resource limits -------------------------------------------------------------
    def victim_pass_through(self, mode_args, env, texts, wrap=None, what=""):
        a = self.args
        check(a.victim, "--victim is required")
        d = self.fresh_dir()
        env = dict(env, HMPI_SHM_DIR=d)
        rc, out, _ = self.run((wrap or []) + [a.mpiexec] + a.launcher_flag +
                              ["-n", str(a.np), a.victim] + mode_args, env)
        check(rc == 0, "%s: the pass-through job failed (exit %d)" % (what, rc))
        for t in texts:
            check(t in out, "%s: no \"%s\" in the output" % (what, t))
        check("HMPI off" in out, "%s: the program did not report HMPI off" % what)
        self.expect_empty(d, what)

    def addr_taken(self):
        # The victim takes [16, 96) TiB before MPI_Init, where Open MPI 5's PMIx (gds/shmem2)
        # also maps its segments at one address in every process (the launcher's largest
        # hole): PMIx's hash store keeps the MPI below out of the way of the test.
        self.victim_pass_through(["occupy"], {"PMIX_MCA_gds": "hash"},
                                 ["no address free in every local rank", "pass-through"],
                                 what="address range taken")

    def rlimit_as(self):
        prlimit = shutil.which("prlimit")
        if prlimit is None:
            raise Skip("prlimit (util-linux) is missing")
        self.victim_pass_through(["ring", "off"], {},
                                 ["RLIMIT_AS", "lower HMPI_HEAP_SIZE", "pass-through"],
                                 wrap=[prlimit, "--as=%d" % (8 << 30)], what="RLIMIT_AS 8G")

    def tmpfs_full(self):
        a = self.args
        check(a.victim, "--victim is required")
        unshare = shutil.which("unshare")
        d = self.fresh_dir()
        wrap = None
        if unshare:
            wrap = [unshare, "--mount", "--propagation", "private", "sh", "-c",
                    'mount -t tmpfs -o size=64M hmpitest "$0" && exec "$@"', d]
            probe = subprocess.run(wrap + ["true"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            if probe.returncode != 0:
                wrap = None
        if wrap is None:
            raise Skip("cannot mount a tmpfs in a private mount namespace here")
        marker = "HMPI_SHM_DIR=" + d
        rc, out, _ = self.run(wrap + [a.mpiexec] + a.launcher_flag +
                              ["-n", str(a.np), a.victim, "fill", "100"],
                              {"HMPI_SHM_DIR": d, "HMPI_SHM_MIN_FREE": "1M"},
                              timeout=FAULT_TIMEOUT)
        check(rc != 0, "filling a 64 MiB tmpfs with 2x100 MiB succeeded")
        check("is full" in out and d in out,
              "no message naming the full file system %s" % d)
        for bare in ("Bus error", "signal 7", "SIGNAL: 7"):
            check(bare not in out, "a bare SIGBUS reached the launcher (\"%s\")" % bare)
        check(not self.survivors(marker), "processes outlived the job")
        self.expect_empty(d, "tmpfs-full")


class Skip(Exception):
    pass


def cma_read(pid, addr, n):
    """process_vm_readv of n bytes at addr in pid: the bytes, or an OSError."""
    import ctypes

    class IoVec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    libc = ctypes.CDLL(None, use_errno=True)
    libc.process_vm_readv.restype = ctypes.c_ssize_t
    buf = ctypes.create_string_buffer(n)
    local = IoVec(ctypes.cast(buf, ctypes.c_void_p), n)
    remote = IoVec(ctypes.c_void_p(addr), n)
    got = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    if got < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return buf.raw[:got]


def probe(targets):
    """Run as another user: every way into the ranks' memory must be refused."""
    if os.geteuid() == 0:
        print("probe: running as root, not as another user")
        return 1
    bad = []
    for t in targets:
        pid, addr, length, rmap = t.split(":")
        pid, addr = int(pid), int(addr, 16)
        tries = [("/proc/%d/mem" % pid, lambda p=pid: open("/proc/%d/mem" % p, "rb")),
                 ("process_vm_readv", lambda p=pid, a=addr: cma_read(p, a, 16)),
                 ("listdir map_files", lambda p=pid: os.listdir("/proc/%d/map_files" % p)),
                 ("listdir fd", lambda p=pid: os.listdir("/proc/%d/fd" % p))]
        if rmap != "-":
            path = "/proc/%d/map_files/%s" % (pid, rmap)
            tries.append((path, lambda q=path: open(q, "rb")))
        for what, fn in tries:
            try:
                fn()
                bad.append("%s of pid %d succeeded" % (what, pid))
            except PermissionError as e:
                print("probe: uid %d: %s of pid %d refused: %s" % (os.geteuid(), what, pid,
                                                                    e.strerror))
            except OSError as e:
                bad.append("%s of pid %d: %s (want EPERM/EACCES)" % (what, pid, e))
    for b in bad:
        print("probe: FAILED: " + b)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    if len(sys.argv) > 1 and sys.argv[1] == "probe":
        pp = argparse.ArgumentParser(description="the other user's probe (other-user)")
        pp.add_argument("probe")
        pp.add_argument("--target", action="append", default=[])
        return probe(pp.parse_args().target)
    ap.add_argument("scenario",
                    choices=["debris", "kill", "bad-knob", "knob-typo", "no-region", "small-tmpfs",
                             "split-dir", "kill-mid", "kill-part", "kill-wait", "abort-wait",
                             "kill-sleep", "other-user",
                             "addr-taken", "rlimit-as", "tmpfs-full", "spin"])
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--hmpirun")
    ap.add_argument("--plain-program")
    ap.add_argument("--victim", help="the fault_victim program")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--launcher-flag", action="append", default=[])
    ap.add_argument("--exit-may-be-lost", action="store_true",
                    help="the launcher may exit 0 for a job whose rank died (MPICH 4.2's "
                    "hydra): a fault scenario is then judged by the victim's report")
    args = ap.parse_args()
    drv = Driver(args)
    try:
        getattr(drv, args.scenario.replace("-", "_"))()
    except Failure as e:
        print("FAILED: %s: %s" % (args.scenario, e), flush=True)
        return 1
    except Skip as e:
        print("SKIPPED: %s: %s" % (args.scenario, e), flush=True)
        return SKIP
    finally:
        drv.cleanup()
    print("ok: %s" % args.scenario)
    return 0


if __name__ == "__main__":
    sys.exit(main())
