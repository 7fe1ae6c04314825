"""Flora's processes as the operating system sees them (Linux ``/proc``), and how they stop.

A ``multiprocTCPBase`` ActorSystem does not keep its processes under the one that started it:
Thespian's admin calls ``setsid()`` and forks again (``thespian/system/multiprocCommon.py``,
``startAdmin``), so the admin, its logger and every actor live in a process group of their
own, outside the starter's group and session. A signal to the starter does not reach them;
the starter has to stop them. :func:`actor_process_group` finds that group from the admin's
port, so that a stop that the admin does not finish in time can end the group
(:func:`end_process_group`).

:class:`StopSignals` gives SIGTERM and SIGINT the meaning Flora documents: the first asks for
a clean stop, a second one forces it. Forked children that inherit the handler before they
install their own (Thespian's admin installs none for SIGTERM) get the default action.

Elsewhere than Linux the lookups find nothing and stopping relies on Thespian alone.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable

log = logging.getLogger("flora.processes")

PROC = Path("/proc")
_LISTEN = "0A"


def listening_sockets() -> dict[int, tuple[str, int]]:
    """Every TCP socket in LISTEN state in this network namespace: inode -> (address, port)."""
    found: dict[int, tuple[str, int]] = {}
    for name, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        try:
            lines = (PROC / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != _LISTEN:
                continue
            host_hex, port_hex = fields[1].split(":")
            found[int(fields[9])] = (_address(host_hex, family), int(port_hex, 16))
    return found


def _address(host_hex: str, family: int) -> str:
    raw = bytes.fromhex(host_hex)
    # /proc prints each 32-bit word of the address in little-endian order
    return socket.inet_ntop(family, b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4)))


def socket_inodes(pid: int) -> set[int]:
    inodes: set[int] = set()
    try:
        entries = list((PROC / str(pid) / "fd").iterdir())
    except OSError:
        return inodes
    for entry in entries:
        try:
            target = os.readlink(entry)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def listening_addresses(pids: Iterable[int]) -> dict[int, list[tuple[str, int]]]:
    """For each pid, the (address, port) pairs it listens on."""
    sockets = listening_sockets()
    return {pid: sorted(sockets[i] for i in socket_inodes(pid) if i in sockets) for pid in pids}


def pids_listening_on(port: int) -> set[int]:
    wanted = {inode for inode, (_, p) in listening_sockets().items() if p == port}
    return {pid for pid in all_pids() if socket_inodes(pid) & wanted} if wanted else set()


def all_pids() -> list[int]:
    try:
        return [int(p.name) for p in PROC.iterdir() if p.name.isdigit()]
    except OSError:
        return []


def stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, process group) of a live process; None when it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[2])


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped does not count)."""
    info = stat(pid)
    return info is not None and info[0] not in ("Z", "X")


def group_members(pgid: int) -> list[int]:
    return [pid for pid in all_pids() if (info := stat(pid)) and info[2] == pgid and info[0] not in ("Z", "X")]


def descendants(root: int) -> list[int]:
    """Live processes below ``root`` by parent links (not those that were re-parented away)."""
    children: dict[int, list[int]] = {}
    for pid in all_pids():
        info = stat(pid)
        if info and info[0] not in ("Z", "X"):
            children.setdefault(info[1], []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def actor_process_group(admin_port: int) -> int | None:
    """The process group of the Thespian admin listening on ``admin_port`` (and of the actors
    it forked); None when it cannot be told or is this process's own group."""
    for pid in pids_listening_on(admin_port):
        if pid == os.getpid():
            continue
        info = stat(pid)
        if info and info[2] != os.getpgrp():
            return info[2]
    return None


def end_process_group(pgid: int, *, grace_s: float) -> list[int]:
    """SIGTERM the group, SIGKILL what is left after ``grace_s``; the pids that were still
    there to be killed."""
    if not group_members(pgid):
        return []
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and group_members(pgid):
        time.sleep(0.05)
    left = group_members(pgid)
    if left:
        _signal_group(pgid, signal.SIGKILL)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and group_members(pgid):
            time.sleep(0.05)
    return left


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


class StopSignals:
    """SIGTERM / SIGINT: the first calls ``on_stop`` (in the main thread, between two Python
    instructions: it may raise to unwind a blocking call), any later one calls ``on_force``.

    A process forked while the handlers are installed (Thespian's admin) must not inherit this
    meaning: there, the signal gets its default action.

    An exception raised from a signal handler surfaces in whatever code runs at that moment,
    and code inside a C extension may swallow it or turn it into an error of its own (pydantic
    building a schema does both). Around such code, :meth:`deferred` only records the first
    signal; the caller looks at :attr:`stopping` afterwards."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self, on_stop: Callable[[int], None], on_force: Callable[[int], None]):
        self._on_stop = on_stop
        self._on_force = on_force
        self._owner = os.getpid()
        self.received: list[int] = []
        self._previous: dict[int, object] = {}
        self._deferring = 0

    def install(self) -> "StopSignals":
        for sig in self.SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def uninstall(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    @property
    def stopping(self) -> bool:
        return bool(self.received)

    @contextmanager
    def deferred(self):
        """Inside: a first signal is recorded in :attr:`received`, ``on_stop`` is not called."""
        self._deferring += 1
        try:
            yield self
        finally:
            self._deferring -= 1

    def escalate(self) -> None:
        """The stop has begun without a signal (the user left): any signal now forces it."""
        if not self.received:
            self.received.append(0)

    def _handle(self, signum: int, _frame) -> None:
        if os.getpid() != self._owner:  # an inherited copy in a forked child
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        first = not self.received
        self.received.append(signum)
        if first:
            log.warning("%s received: stopping (send it again to force)", signal.Signals(signum).name)
            if not self._deferring:
                self._on_stop(signum)
        else:
            log.warning("%s received again: forcing the stop", signal.Signals(signum).name)
            self._on_force(signum)
