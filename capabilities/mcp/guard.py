"""Run an MCP stdio server so that it ends with the Flora process that started it.

Usage: ``python guard.py PARENT_PID [--sandbox FOLDER] COMMAND [ARGS...]``. On Linux the server
is given a parent-death signal (SIGTERM) before it is executed in place of this script, so an
ExecutionActor killed without a graceful stop (SIGKILL, a crash) leaves no server behind.
The SDK starts each server in a session of its own, out of reach of a signal to Flora's
process group; this is what still ends it. Only the standard library, run with ``-I -S``.

With ``--sandbox FOLDER`` (a server the operator marked untrusted) the server is started inside
the tools' kernel sandbox (:mod:`capabilities.tools.kernel_sandbox`, the one module of Flora this
imports): FOLDER is its working directory and the only place it can write, it has no network,
and Python's installation is there read-only for servers written in Python. This script then
stays as its parent, passing its exit status on; the sandbox dies with it.
"""

import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> None:
    parent, command, *args = argv
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != int(parent):  # the parent died before the signal was armed
            os._exit(1)
    if command == "--sandbox":
        folder, command, *args = args
        os._exit(_sandboxed(folder, [command, *args]))
    try:
        os.execvp(command, [command, *args])
    except OSError as exc:
        print(f"flora: cannot start MCP server {command!r}: {exc.strerror}", file=sys.stderr)
        os._exit(127)


def _sandboxed(folder: str, argv: list[str]) -> int:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from pathlib import Path

    from capabilities.tools.kernel_sandbox import KernelSandbox, SandboxUnavailable, probe, python_paths

    reason = probe()
    if reason:
        print(f"flora: the MCP server {argv[0]!r} is marked sandbox: true, and the sandbox cannot be set up: "
              f"{reason}", file=sys.stderr)
        return 126
    Path(folder).mkdir(parents=True, exist_ok=True)
    # the program and the files its arguments name (a script given to an interpreter), read-only
    shown = [os.path.dirname(os.path.realpath(p)) for p in argv if os.path.isabs(p) and os.path.isfile(p)]
    sandbox = KernelSandbox(Path(os.path.realpath(folder)), read_only=(*python_paths(), *shown))
    sandbox.prepare()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(143))  # the sandbox dies with this process
    try:
        child = sandbox.launch(argv, cwd=folder, env={**os.environ, "HOME": folder, "TMPDIR": folder})
    except (OSError, SandboxUnavailable) as exc:
        print(f"flora: cannot start MCP server {argv[0]!r} in the sandbox: {exc}", file=sys.stderr)
        return 127
    return child.wait()


if __name__ == "__main__":
    main(sys.argv[1:])
