"""Run an MCP stdio server so that it ends with the Flora process that started it.

Usage: ``python guard.py PARENT_PID COMMAND [ARGS...]``. On Linux the server is given a
parent-death signal (SIGTERM) before it is executed in place of this script, so an
ExecutionActor killed without a graceful stop (SIGKILL, a crash) leaves no server behind.
The SDK starts each server in a session of its own, out of reach of a signal to Flora's
process group; this is what still ends it. Only the standard library, run with ``-I -S``.
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
    try:
        os.execvp(command, [command, *args])
    except OSError as exc:
        print(f"flora: cannot start MCP server {command!r}: {exc.strerror}", file=sys.stderr)
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
