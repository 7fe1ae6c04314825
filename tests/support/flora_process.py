"""Flora in a process of its own, and keeping track of the processes tests start.

``python -m tests.support.flora_process CONFIG.json USER MESSAGE...`` starts Flora, sends each
message (without waiting for its reply), prints READY once the last task shows in the store,
then waits to be stopped.

A Flora process forks the Thespian admin, which leaves the starter's process group and
session (see common/processes.py), so a test cannot end "its" Flora by process group.
Instead every process a test starts carries a mark in its environment (``marked_env``); the
processes forked from it share that environment block, so :func:`marked_pids` finds the whole
family through ``/proc/PID/environ`` and :func:`end_marked` ends it, whether the test passed
or not.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import uuid
from pathlib import Path

import main
from common import messages as m
from common.tasks.sqlite_store import SQLiteTaskStore


MARK_ENV = "FLORA_TEST_PROCESS"


def marked_env(base: dict | None = None) -> tuple[dict, str]:
    """An environment for a process a test starts, and the mark that finds its family later."""
    mark = uuid.uuid4().hex
    return {**(os.environ if base is None else base), MARK_ENV: mark}, mark


def pids_with_env(name: str, value: str) -> list[int]:
    """Live processes whose environment (as they were started) holds ``name=value``."""
    needle = f"{name}={value}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def marked_pids(mark: str) -> list[int]:
    return pids_with_env(MARK_ENV, mark)


def end_pids(pids: list[int], grace_s: float = 3.0) -> list[int]:
    """SIGTERM, then SIGKILL after ``grace_s``, each of ``pids``; returns those that were alive."""
    from common.processes import alive

    living = [pid for pid in pids if alive(pid)]
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        for pid in living:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and any(alive(pid) for pid in living):
            time.sleep(0.05)
        if not any(alive(pid) for pid in living):
            break
    return living


def end_marked(mark: str, grace_s: float = 3.0) -> list[int]:
    """End every process of the family ``mark``; the pids that were still running."""
    return end_pids(marked_pids(mark), grace_s)


def wait_gone(mark: str, within_s: float) -> float:
    """Seconds until no process of the family ``mark`` is left; raises after ``within_s``.
    A process whose memory is already freed shows no environment any more while it may still
    be closing its files: each one seen is followed by pid until it has ended (a zombie)."""
    from common.processes import alive

    started = time.monotonic()
    seen: set[int] = set()
    while True:
        seen.update(marked_pids(mark))
        left = sorted(pid for pid in seen if alive(pid))
        if not left:
            return time.monotonic() - started
        if time.monotonic() - started > within_s:
            raise AssertionError(f"processes {left} still running {within_s:.0f} s later")
        time.sleep(0.05)


def run(config_path: str, user: str, messages: list[str]) -> None:
    from common.processes import StopSignals

    config = json.loads(open(config_path).read())
    flora = main.start_flora(config)

    def stop(signum: int) -> None:
        raise main.StopRequested(signum)

    def force(signum: int) -> None:
        flora.force_stop()
        os._exit(128 + signum)

    signals = StopSignals(stop, force).install()
    try:
        store = SQLiteTaskStore(flora.config.sqlite_path)
        for content in messages:
            flora.system.tell(flora.interaction, m.user_input(user_id=user, content=content))
        deadline = time.monotonic() + 30
        while len(store.list_tasks(flora.config.default_tenant, user_id=user)) < len(messages):
            if time.monotonic() > deadline:
                raise SystemExit("the messages did not become tasks")
            time.sleep(0.05)
        print("READY", flush=True)
        while True:  # until SIGTERM / SIGINT
            time.sleep(1)
    except main.StopRequested:
        pass
    finally:
        signals.escalate()
        flora.shutdown()


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], sys.argv[3:])
