"""A node's actor processes end with the program that started them: the lifeline.

``multiprocTCPBase``'s admin double-forks away (common/processes.py): it is neither a child
nor in the process group of the program that called ``start_flora`` or ``run_worker``. When
that program ends without stopping Flora — SIGKILL, a SIGTERM it has no handler for,
``os._exit``, a crash — the admin, its logger and every actor kept running, each with its
listening port, until someone killed them by hand.

How. Before the actor system starts, the program opens a pipe (:class:`Lifeline`). The forks
that become the admin and the actors inherit its read end. The write end is closed in every
child forked from Python (``os.register_at_fork``) and on ``exec`` (it is not inheritable),
so the program is its only holder. Once the admin runs, the read end is set to signal the
admin's process group (``F_SETOWN`` with the negated group id, ``F_SETSIG`` SIGKILL,
``O_ASYNC``: :meth:`Lifeline.attach`) and the program closes its own copy. When the program's
process ends, whichever way, the kernel closes the write end, and the pipe's last writer
gone, sends SIGKILL to every process of the group at once: the admin, the logger and each
actor, those created after the start too (they are forked into the admin's group). Their
sockets close with them. A clean stop ends the group first and then lets go of the pipe
(:meth:`Lifeline.release`): no reader is left to signal.

Why this and not:

- ``PR_SET_PDEATHSIG`` follows the parent, and the admin's parent is the short-lived middle
  process of Thespian's double fork, which exits at once; an actor's parent is the admin or
  another actor, never the program.
- a watchdog thread in each process (reading the pipe to EOF, polling a pidfd or the pid)
  needs Flora code running in every Thespian process. The admin and the logger run only
  Thespian's; a thread started in the fork's middle process does not survive the second
  fork; and a Python fork hook that starts threads would also run between fork and exec of
  every ``subprocess`` started with a ``preexec_fn``. Polling a pid also takes a reused pid
  for the program.
- here nothing has to run, neither in the program nor in the actors: the kernel signals when
  the program's file table is torn down, so SIGKILL and a program stuck in its own exit are
  covered like a normal exit.

Why SIGKILL: the program they served is gone and nothing is left to answer; an actor blocked
in a capability or a model call would not act on a SIGTERM until the call returns (Thespian
only sets a flag), and the admin's own stop needs the others to answer. What a clean stop
would have done with the tasks (fail those that were running) is done by the next start's
recovery (common/tasks/recovery.py); the store's transactions keep it consistent.

Scope: the processes of the admin's group. Not those that put themselves in a group of
their own (the tools' sandboxes end their programs themselves), nor those the program
``exec``s itself: the model hosts are the program's own children and follow it with
``PR_SET_PDEATHSIG`` (capabilities/llm/model_host.py). It needs Thespian's ``fork`` start
method, the one Flora uses.

The lifeline follows the program that started the actor system, never that program's
parent. A node run on purpose as a daemon (``nohup python main.py --worker ... &``, a systemd
unit, a container's main process) is that program: its actors live exactly as long as it
does, and the shell or launcher that started it may exit. There is no mode in which a node's
actors outlive its program: a node is its program, and is stopped by stopping it.

Linux only (``F_SETSIG``); elsewhere :meth:`Lifeline.attach` only lets go of the pipe and
stopping relies on the program's own stop.
"""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import sys
import threading

log = logging.getLogger("flora.lifeline")

_held: set[int] = set()  # write ends of this process's lifelines; never inherited by its children
_forking = threading.RLock()  # a pipe is opened and recorded in _held between two forks, never across one


def _before_fork() -> None:
    _forking.acquire()


def _after_fork_in_parent() -> None:
    _forking.release()


def _after_fork_in_child() -> None:
    _forking.release()
    for fd in _held:  # a child never keeps its parent's program alive in the others' eyes
        try:
            os.close(fd)
        except OSError:
            pass
    _held.clear()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)

SUPPORTED = sys.platform.startswith("linux") and hasattr(fcntl, "F_SETSIG")


class Lifeline:
    """Open it before the actor system forks its admin; :meth:`attach` it to the admin's
    process group once that runs; :meth:`release` it after the group was stopped."""

    def __init__(self) -> None:
        with _forking:
            self._read, self._write = os.pipe()  # neither survives an exec
            _held.add(self._write)
        self.group: int | None = None

    @property
    def holding(self) -> bool:
        """This process still holds the write end: the group dies when this process does."""
        return self._write is not None and self._write in _held

    def attach(self, group: int | None) -> bool:
        """Have the kernel SIGKILL process group ``group`` when this process ends; the read
        end is then only the group's. Without a group (actors in this process) or off Linux,
        let go of the pipe instead. True when attached."""
        read, self._read = self._read, None
        if read is None:
            raise RuntimeError("this lifeline was already attached or released")
        try:
            if group is None or not SUPPORTED:
                self.release()
                return False
            fcntl.fcntl(read, fcntl.F_SETOWN, -group)
            fcntl.fcntl(read, fcntl.F_SETSIG, signal.SIGKILL)
            fcntl.fcntl(read, fcntl.F_SETFL, fcntl.fcntl(read, fcntl.F_GETFL) | os.O_ASYNC)
            self.group = group
            log.debug("actor process group %s ends with this process (pid %s)", group, os.getpid())
            return True
        except OSError as exc:  # the group is already gone: nothing left to follow
            log.warning("could not tie actor process group %s to this process: %s", group, exc)
            self.release()
            return False
        finally:
            os.close(read)

    def release(self) -> None:
        """Let go of the pipe: after the group was stopped, or when the actor system did not
        start. Whatever is still left in an attached group is SIGKILLed now, as if this process
        had ended: the last writer is gone. Idempotent."""
        with _forking:
            write, self._write = self._write, None
            if write is not None and write in _held:  # not in a forked copy of this object
                _held.discard(write)
                os.close(write)
        if self._read is not None:
            os.close(self._read)
            self._read = None
