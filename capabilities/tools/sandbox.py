"""Run programs for the shell and python_exec tools inside the kernel sandbox, and always clean up
after them.

:class:`Jail` starts one program, or a pipeline of programs connected by pipes, never through a
shell, with:

- the kernel sandbox of :mod:`capabilities.tools.kernel_sandbox` around each program (namespaces,
  an unprivileged uid, seccomp, a file system holding only the system's read-only files and the
  person's workspace, no network, kernel resource limits). It is the boundary: where it cannot
  be set up, nothing runs (``CapabilityError("unavailable")`` saying what is missing), unless the
  operator chose ``tools.isolation: none``;
- the working directory in the user's workspace and a scrubbed environment (``PATH``,
  ``HOME`` = the workspace, ``LANG``; nothing of Flora's own environment, so no secrets);
- a process group of its own (``setpgid``; every program of a pipeline joins the first one's), killed
  whole (``os.killpg``) when the wall clock runs out, when the task is cancelled, when the output
  passes its hard ceiling, and after the program ends; inside the sandbox each program is the
  first process of its own PID namespace, so everything it started dies with it.

stdout and stderr are read as they come and kept up to ``max_output_bytes`` each; the rest is
counted and dropped (the kept part ends with a marker saying how much was cut). A program that
keeps writing past 16 times the cap is killed (``killed`` with reason ``output_limit``).
"""

from __future__ import annotations

import logging
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from capabilities.base import CapabilityError
from capabilities.tools.egress import proxy_environment
from capabilities.tools.kernel_sandbox import KernelSandbox, Limits, SandboxUnavailable, probe

log = logging.getLogger("flora.capability.sandbox")

SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
POLL_S = 0.05  # the longest a wait sleeps before it looks at the clock, output and cancel again
CANCEL_POLL_S = 0.5
OUTPUT_CEILING_FACTOR = 16


@dataclass
class RunResult:
    exit_code: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    elapsed_s: float
    timed_out: bool = False
    killed: bool = False
    kill_reason: str = ""  # timeout | output_limit | cancelled | signal
    isolated: bool = False  # ran inside the kernel sandbox

    def to_dict(self) -> dict:
        return {"exit_code": self.exit_code, "stdout": self.stdout, "stderr": self.stderr,
                "stdout_truncated": self.stdout_truncated, "stderr_truncated": self.stderr_truncated,
                "elapsed_s": round(self.elapsed_s, 3), "timed_out": self.timed_out, "killed": self.killed,
                "kill_reason": self.kill_reason, "isolated": self.isolated}


class _Capture:
    """Reads one pipe to its end in a thread, keeping the first ``cap`` bytes."""

    def __init__(self, fd: int, cap: int) -> None:
        self.cap, self.kept, self.seen = cap, bytearray(), 0
        self._fd = fd
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while True:
                chunk = os.read(self._fd, 65536)
                if not chunk:
                    break
                self.seen += len(chunk)
                room = self.cap - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
        except OSError:
            pass  # the pipe was closed under us after the program was killed
        finally:
            os.close(self._fd)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    @property
    def truncated(self) -> bool:
        return self.seen > len(self.kept)

    def text(self) -> str:
        text = bytes(self.kept).decode("utf-8", errors="replace")
        if self.truncated:
            text += f"\n[... output cut: {self.seen - len(self.kept)} more bytes not shown ...]"
        return text


def scrubbed_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment a sandboxed program gets: nothing inherited from Flora."""
    env = {"PATH": SAFE_PATH, "HOME": str(home), "LANG": "C.UTF-8", "TMPDIR": str(home)}
    env.update(extra or {})
    return env


@dataclass
class Jail:
    """Where and under which limits programs run."""

    workdir: Path
    limits: Limits = field(default_factory=Limits)
    isolation: str = "kernel"  # kernel | none
    network_socket: str = ""  # the egress proxy's socket when the operator gave the tool network
    read_only: tuple[str, ...] = ()  # more paths the program may read (the Python installation...)
    sandbox_uid: int = 65534
    drops_root: bool = False  # the program leaves the namespace's uid 0 itself (see KernelSandbox)
    max_output_bytes: int = 64 * 1024
    env_extra: dict[str, str] = field(default_factory=dict)

    def sandbox(self) -> KernelSandbox | None:
        """The sandbox programs run in; None only when the operator turned isolation off."""
        if self.isolation == "none":
            return None
        reason = probe(self.sandbox_uid)
        if reason:
            raise CapabilityError(
                f"Programs run only inside Flora's kernel sandbox, and it cannot be set up here: {reason}. "
                "Nothing was run. An operator can install bubblewrap (scripts/install.sh does), or set "
                "tools.isolation: none to run tools unconfined (not recommended).", error_type="unavailable")
        return KernelSandbox(self.workdir, read_only=self.read_only, network_socket=self.network_socket,
                             sandbox_uid=self.sandbox_uid, limits=self.limits, drops_root=self.drops_root)

    def run(self, pipeline: list[list[str]], *, timeout_s: float, stdin: bytes = b"",
            cancelled: Callable[[], bool] = lambda: False) -> RunResult:
        """Run ``pipeline`` (argv lists, each one's stdout feeding the next) to its end or its kill."""
        sandbox = self.sandbox()
        if sandbox is not None:
            sandbox.prepare()
        env = scrubbed_env(self.workdir, {**proxy_environment(), **self.env_extra} if self.network_socket
                           else self.env_extra)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe()
        procs: list[subprocess.Popen] = []
        started = time.monotonic()
        try:
            previous = in_r
            for index, argv in enumerate(pipeline):
                last = index == len(pipeline) - 1
                if not last:
                    next_r, next_w = os.pipe()
                stdout = out_w if last else next_w
                try:
                    procs.append(self._start(sandbox, argv, previous, stdout, err_w, env,
                                             procs[0].pid if procs else 0))
                finally:
                    os.close(previous)
                    os.close(stdout)
                if not last:
                    previous = next_r
        except (OSError, SandboxUnavailable) as exc:
            self._kill(procs)
            for fd in (out_r, err_r, in_w, err_w):
                _close(fd)
            if isinstance(exc, SandboxUnavailable):
                raise CapabilityError(f"The kernel sandbox cannot start programs: {exc}. Nothing was run.",
                                      error_type="unavailable") from exc
            raise CapabilityError(f"Could not start {pipeline[len(procs)][0]!r}: {exc.strerror}.",
                                  error_type="not_found" if isinstance(exc, FileNotFoundError)
                                  else "capability_failed") from exc
        os.close(err_w)
        feeder = threading.Thread(target=_feed, args=(in_w, stdin), daemon=True)
        feeder.start()
        out, err = _Capture(out_r, self.max_output_bytes), _Capture(err_r, self.max_output_bytes)
        reason = self._wait(procs, out, err, started + timeout_s, cancelled)
        self._kill(procs)  # whatever the group left behind, also after a normal end
        for capture in (out, err):
            capture.join(5)
        elapsed = time.monotonic() - started
        code = procs[-1].returncode
        log.info("ran %s exit=%s elapsed_ms=%d%s", pipeline[0][0], code, elapsed * 1000,
                 f" killed={reason}" if reason else "")
        if reason == "cancelled":
            raise CapabilityError("The task was cancelled; the program was stopped.", error_type="cancelled")
        return RunResult(exit_code=code, stdout=out.text(), stderr=err.text(), stdout_truncated=out.truncated,
                         stderr_truncated=err.truncated, elapsed_s=elapsed, timed_out=reason == "timeout",
                         killed=bool(reason), kill_reason=reason, isolated=sandbox is not None)

    def _start(self, sandbox: KernelSandbox | None, argv: list[str], stdin: int, stdout: int, stderr: int,
               env: dict[str, str], group: int) -> subprocess.Popen:
        """One program of the pipeline, inside the sandbox (or, with isolation off, under rlimits only)."""
        if sandbox is None:
            return subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=self.workdir, env=env,
                                    close_fds=True, preexec_fn=self.limits.apply if self.limits.any() else None,
                                    process_group=group)
        return sandbox.launch(argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=self.workdir, env=env,
                              process_group=group)

    def _wait(self, procs: list[subprocess.Popen], out: _Capture, err: _Capture, deadline: float,
              cancelled: Callable[[], bool]) -> str:
        """Wait for the pipeline's end; the reason it had to be killed, or ''."""
        ceiling = self.max_output_bytes * OUTPUT_CEILING_FACTOR
        next_cancel_check = time.monotonic() + CANCEL_POLL_S
        waiter = _ExitWaiter(procs)
        try:
            while any(p.poll() is None for p in procs):
                now = time.monotonic()
                if now >= deadline:
                    return "timeout"
                if out.seen > ceiling or err.seen > ceiling:
                    return "output_limit"
                if now >= next_cancel_check:
                    if cancelled():
                        return "cancelled"
                    next_cancel_check = now + CANCEL_POLL_S
                waiter.wait(min(POLL_S, max(0.0, deadline - now)))
        finally:
            waiter.close()
        return ""

    @staticmethod
    def _kill(procs: list[subprocess.Popen]) -> None:
        if not procs:
            return
        try:
            os.killpg(procs[0].pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # the group is already gone
        for proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                log.error("process %s did not die after SIGKILL", proc.pid)


class _ExitWaiter:
    """Sleeps until one of the processes ends or ``timeout`` passes: a pidfd wakes us the moment a
    program exits (a short program is not kept waiting for a polling tick); without pidfds, a sleep."""

    def __init__(self, procs: list[subprocess.Popen]) -> None:
        self._poller = select.poll()
        self._fds: dict[int, subprocess.Popen] = {}
        for proc in procs:
            try:
                fd = os.pidfd_open(proc.pid)
            except (AttributeError, OSError):
                continue  # no pidfds here (or the process is already reaped): sleeping will do
            self._fds[fd] = proc
            self._poller.register(fd, select.POLLIN)

    def wait(self, timeout: float) -> None:
        if not self._fds:
            time.sleep(min(timeout, 0.005))
            return
        for fd, _ in self._poller.poll(timeout * 1000):
            self._poller.unregister(fd)  # it has ended; the caller reaps it
            del self._fds[fd]
            os.close(fd)

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()


def _feed(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass  # the program does not read its input (or ended): nothing more to give
    finally:
        os.close(fd)


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
