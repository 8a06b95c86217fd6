#!/usr/bin/env python3
"""One node's processes as one unit: start them, restart the ones that may crash, stop all of them.

Used by scripts/run.sh (`make run`) and scripts/serve.sh (`make serve`), each of which `exec`s it, so that
it is the process `make` waits for. Usage:

    supervise.py NAME:POLICY 'COMMAND' [NAME:POLICY 'COMMAND' ...]

POLICY is `restart` (a crash is logged and the process started again, after a back-off, at most
SUPERVISE_MAX_RESTARTS a minute) or `required` (its exit stops the node, with its status). Why this shape
(docs/operations.md, "Processes and signals"):

- Each child runs in a session of its own, so a signal sent to the terminal's or `make`'s process group
  reaches only this supervisor, which signals each child's main process once. (A Celery worker whose pool
  children also got the group's SIGTERM could hang in billiard's shutdown.)
- SIGTERM, SIGINT and SIGHUP stop the node: the `web` child first fails its readiness (the file
  $VAR_DIR/draining, read by /health) for SHUTDOWN_DRAIN_SECONDS while still serving, then gets SIGTERM;
  the others get SIGTERM at once. A child that exits after that SIGTERM, with status 0 or killed by it, is
  logged as stopped (`web stopped after 0.1 s`); any other status is logged as an exit. A child still
  running SUPERVISE_STOP_TIMEOUT_SECONDS later gets SIGQUIT, and SIGKILL (its whole process group) 3 s
  after that; both are logged.
- Processes it did not start but inherited (a shell's background job, when the shell `exec`s this
  script: run.sh's banner printer) are reaped when they exit, so none is left a zombie.
- Nothing outlives the node: this process and each child ask the kernel for a signal when their parent
  dies (PR_SET_PDEATHSIG), so killing `make` or this supervisor, even with SIGKILL, stops the children.
- The supervisor exits only after every child has exited: 0 after a clean stop, otherwise non-zero.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)

DRAIN_SECONDS = float(os.environ.get("SHUTDOWN_DRAIN_SECONDS") or 0)
# SUPERVISE_STOP_TIMEOUT, its name until this release, still works for one more (docs/operations.md#renamed-settings).
STOP_TIMEOUT = float(os.environ.get("SUPERVISE_STOP_TIMEOUT_SECONDS") or os.environ.get("SUPERVISE_STOP_TIMEOUT") or 8)
MAX_RESTARTS = int(os.environ.get("SUPERVISE_MAX_RESTARTS") or 5)  # per rolling minute and process
BACKOFF_MAX = 30.0
DRAIN_FILE = Path(os.environ.get("VAR_DIR") or "var") / "draining"


def log(message: str) -> None:
    print(f"supervise: {message}", file=sys.stderr, flush=True)


def die_with_parent(sig: int) -> None:
    """Ask the kernel for `sig` when the parent exits (and exit if it already has)."""
    parent = os.getppid()
    _libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), sig)


def _child_setup() -> None:
    # Runs in the child between fork and exec (after start_new_session's setsid).
    die_with_parent(signal.SIGTERM)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)


@dataclass
class Child:
    name: str
    policy: str
    argv: list[str]
    process: subprocess.Popen | None = None
    restarts: collections.deque = field(default_factory=collections.deque)
    failures: int = 0  # consecutive quick crashes, for the back-off
    started_at: float = 0.0
    restart_at: float | None = None
    status: int | None = None
    stop_sent_at: float | None = None  # when the supervisor sent the SIGTERM that stops it

    def start(self) -> None:
        self.process = subprocess.Popen(self.argv, start_new_session=True, preexec_fn=_child_setup)
        self.started_at = time.monotonic()
        self.restart_at = None
        self.stop_sent_at = None
        log(f"{self.name} started (pid {self.process.pid}): {shlex.join(self.argv)}")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal(self, sig: int, *, group: bool = False) -> None:
        if self.running:
            with contextlib.suppress(ProcessLookupError):
                (os.killpg if group else os.kill)(self.process.pid, sig)

    def stop(self) -> None:
        """SIGTERM, remembered: exiting after it is stopping, not crashing."""
        if self.running:
            self.stop_sent_at = time.monotonic()
            self.signal(signal.SIGTERM)

    def describe_exit(self, code: int) -> str:
        """`web stopped after 0.3 s` for a stop this supervisor asked for, else `web exited with status 3`."""
        if self.stop_sent_at is not None and code in (0, -signal.SIGTERM):
            return f"{self.name} stopped after {time.monotonic() - self.stop_sent_at:.1f} s"
        if code < 0:
            try:
                by = signal.Signals(-code).name
            except ValueError:
                by = f"signal {-code}"
            return f"{self.name} exited with status {code} (killed by {by})"
        return f"{self.name} exited with status {code}"


class Supervisor:
    def __init__(self, children: list[Child]):
        self.children = children
        self.stop_requested: str | None = None

    def request_stop(self, signum: int, _frame) -> None:
        if self.stop_requested is None:
            self.stop_requested = signal.Signals(signum).name

    def run(self) -> int:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self.request_stop)
        die_with_parent(signal.SIGTERM)
        DRAIN_FILE.unlink(missing_ok=True)
        for child in self.children:
            child.start()
        status = 0
        while self.stop_requested is None:
            status = self.tick()
            if status is not None:
                break
            time.sleep(0.2)
        reason = self.stop_requested or "a required process exited"
        return self.stop(reason, status or 0)

    def tick(self) -> int | None:
        now = time.monotonic()
        self.reap_inherited()
        for child in self.children:
            if child.process is None:
                if child.restart_at is not None and now >= child.restart_at:
                    child.start()
                continue
            code = child.process.poll()
            if code is None:
                if child.failures and now - child.started_at > 60:
                    child.failures = 0
                continue
            child.process = None
            log(child.describe_exit(code))
            if child.policy == "required":
                child.status = code
                return code or 1
            child.failures += 1
            while child.restarts and now - child.restarts[0] > 60:
                child.restarts.popleft()
            delay = min(BACKOFF_MAX, 2 ** (child.failures - 1))
            if len(child.restarts) >= MAX_RESTARTS:
                delay = max(delay, 60 - (now - child.restarts[0]))
                log(f"{child.name}: {MAX_RESTARTS} restarts in the last minute; next try in {delay:.0f} s")
            child.restarts.append(now + delay)
            child.restart_at = now + delay
            log(f"{child.name} will be restarted in {delay:.0f} s (restart {len(child.restarts)} this minute)")
        return None

    def stop(self, reason: str, status: int) -> int:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # a second Ctrl-C or make's forwarded TERM: already stopping
        log(f"stopping ({reason})")
        web = [c for c in self.children if c.name == "web" and c.running]
        for child in self.children:
            if child not in web:
                child.stop()
        if web and DRAIN_SECONDS > 0:
            DRAIN_FILE.parent.mkdir(parents=True, exist_ok=True)
            DRAIN_FILE.touch()
            log(f"draining: /health answers 503 for {DRAIN_SECONDS:g} s, then the web server stops")
            drained_at = time.monotonic() + DRAIN_SECONDS
            self.wait_all(drained_at, only=[c for c in self.children if c not in web])
            # The drain lasts its full time even when the others stopped sooner, or there are none (a web-only
            # node): the proxy needs it to see readiness fail before the server stops accepting.
            while time.monotonic() < drained_at and any(c.running for c in web):
                time.sleep(0.05)
        for child in web:
            child.stop()
        escalated = False
        if not self.wait_all(time.monotonic() + STOP_TIMEOUT):
            escalated = True
            for child in self.children:
                if child.running:
                    log(f"{child.name} (pid {child.process.pid}) still running after {STOP_TIMEOUT:g} s: SIGQUIT")
                    child.signal(signal.SIGQUIT)
            if not self.wait_all(time.monotonic() + 3):
                for child in self.children:
                    if child.running:
                        log(f"{child.name} (pid {child.process.pid}) still running: SIGKILL to its process group")
                        child.signal(signal.SIGKILL, group=True)
                self.wait_all(time.monotonic() + 5)
        DRAIN_FILE.unlink(missing_ok=True)
        self.collect_exits()
        self.reap_inherited()
        log("stopped")
        return status or (1 if escalated else 0)

    def wait_all(self, deadline: float, only: list[Child] | None = None) -> bool:
        """Wait until every child (or those in `only`) has exited, logging each exit as it comes; False at
        the deadline."""
        watched = self.children if only is None else only
        while True:
            self.collect_exits()
            self.reap_inherited()
            if not any(c.running for c in watched):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)

    def collect_exits(self) -> None:
        """Log each child that has exited since the last look (while stopping: nothing is restarted)."""
        for child in self.children:
            if child.process is not None and child.status is None and child.process.poll() is not None:
                child.status = child.process.returncode
                log(child.describe_exit(child.status))

    def reap_inherited(self) -> None:
        """Wait for exited processes this supervisor did not start. A shell that `exec`s it hands over its
        background jobs as children (run.sh's banner printer): nothing else waits for them, and each would
        stay a zombie for the node's lifetime. A child of ours is left to Popen, which collects its status."""
        ours = {c.process.pid for c in self.children if c.process is not None}
        while True:
            try:
                exited = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return  # no child at all
            if exited is None or exited.si_pid in ours:
                return  # none exited, or one of ours did: the next look collects it, then the others
            with contextlib.suppress(ChildProcessError):
                os.waitpid(exited.si_pid, 0)


def main(argv: list[str]) -> int:
    if not argv or len(argv) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    children = []
    for spec, command in zip(argv[::2], argv[1::2], strict=True):
        name, _, policy = spec.partition(":")
        if policy not in ("restart", "required"):
            print(f"supervise: {spec}: the policy must be restart or required", file=sys.stderr)
            return 2
        children.append(Child(name, policy, shlex.split(command)))
    return Supervisor(children).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
