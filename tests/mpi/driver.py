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
               naming the knob
  no-region    HMPI_SHM_DIR=/nonexistent-dir: "no shared region", pass-through works
  small-tmpfs  a 1 MiB tmpfs (mounted in a private mount namespace when allowed) and
               HMPI_SHM_MIN_FREE=1T: "bytes free", pass-through works
Standard library only."""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

JOB_TIMEOUT = 60  # seconds one launch may take before the driver kills it


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
                check(text in out, "%s: no \"%s\" in the output" % (name, text))
                check("heap_shared:" not in out, "%s: the program ran to its end" % name)
                self.expect_empty(d, name)

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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario",
                    choices=["debris", "kill", "bad-knob", "no-region", "small-tmpfs"])
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--hmpirun")
    ap.add_argument("--plain-program")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--launcher-flag", action="append", default=[])
    args = ap.parse_args()
    drv = Driver(args)
    try:
        getattr(drv, args.scenario.replace("-", "_"))()
    except Failure as e:
        print("FAILED: %s: %s" % (args.scenario, e), flush=True)
        return 1
    finally:
        drv.cleanup()
    print("ok: %s" % args.scenario)
    return 0


if __name__ == "__main__":
    sys.exit(main())
