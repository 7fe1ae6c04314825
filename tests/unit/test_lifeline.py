"""common/lifeline.py on plain processes: a program opens a lifeline, forks a process group
the way Thespian's admin does (fork, setsid, fork again), attaches the lifeline to it, and
then ends; the group must end with it, and must not once the lifeline was released.

The kernel sends the signal while the program's files are closed, before the program is a
zombie its parent can reap; so once ``wait()`` returned, every member is already dying or has
SIGKILL pending, or never will: :func:`signalled` tells which, without waiting to see."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common.processes import alive, group_members

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the lifeline is Linux's")

REPO = Path(__file__).resolve().parents[2]

# argv: "attach" | "none" (attach to no group); prints the group's id and whether it holds
# the lifeline, then on a line "release" lets go of it and says so; waits for stdin to close
PROGRAM = """
import os, sys, time
from common.lifeline import Lifeline

lifeline = Lifeline()
first = os.fork()
if first == 0:  # Thespian's startAdmin: a session of its own, then fork again and let the middle go
    os.dup2(os.open(os.devnull, os.O_RDWR), 1)  # the test reads the program's output to its end
    os.setsid()
    if os.fork():
        os._exit(0)
    os.fork()  # an admin and one actor
    while True:
        time.sleep(0.05)
os.waitpid(first, 0)
lifeline.attach(first if sys.argv[1] == "attach" else None)
print(first, lifeline.holding, flush=True)
for line in sys.stdin:
    lifeline.release()
    print("released", lifeline.holding, flush=True)
"""


def run(mode: str) -> tuple[subprocess.Popen, int, bool]:
    process = subprocess.Popen([sys.executable, "-c", PROGRAM, mode], cwd=REPO, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    group, holding = process.stdout.readline().split()
    deadline = time.monotonic() + 10
    while len(group_members(int(group))) < 2:  # both members are up
        assert time.monotonic() < deadline, "the group did not start"
        time.sleep(0.01)
    return process, int(group), holding == "True"


def signalled(pid: int) -> bool:
    """Gone, exiting (PF_EXITING) or with SIGKILL pending."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    fields = stat[stat.rindex(")") + 2:].split()
    pending = [int(line.split()[1], 16) for line in status.splitlines() if line.startswith(("SigPnd:", "ShdPnd:"))]
    return (fields[0] in ("Z", "X") or bool(int(fields[6]) & _PF_EXITING)
            or any(mask & (1 << (signal.SIGKILL - 1)) for mask in pending))


_PF_EXITING = 0x4


def wait_empty(group: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while group_members(group):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def end(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass
    wait_empty(group, 5)


@pytest.mark.parametrize("how", ["SIGKILL", "exit"])
def test_the_group_ends_with_the_program_that_holds_the_lifeline(how):
    process, group, holding = run("attach")
    try:
        assert holding
        members = group_members(group)
        if how == "SIGKILL":
            process.kill()
            process.wait()
        else:
            process.stdin.close()
            process.wait(timeout=10)
        assert all(signalled(pid) for pid in members)
        assert wait_empty(group, 10), f"{group_members(group)} outlived the program"
        assert not any(alive(pid) for pid in members)
    finally:
        process.kill()
        process.wait()
        end(group)


def test_releasing_the_lifeline_ends_what_is_left_of_the_group():
    """A clean stop ends the group itself, then releases the lifeline: whatever the stop left
    in the group goes then, while the program runs on."""
    process, group, _ = run("attach")
    try:
        members = group_members(group)
        process.stdin.write("release\n")
        process.stdin.flush()
        assert process.stdout.readline().split() == ["released", "False"]
        assert all(signalled(pid) for pid in members)
        assert wait_empty(group, 10)
        assert process.poll() is None
    finally:
        process.kill()
        process.wait()
        end(group)


def test_a_lifeline_tied_to_no_group_signals_nobody():
    """Actors in the program's own process (simpleSystemBase): there is no group to follow,
    and the lifeline's pipe, whoever still holds its read end, signals nobody."""
    process, group, holding = run("none")
    try:
        assert not holding
        members = group_members(group)
        process.kill()
        process.wait()
        assert not any(signalled(pid) for pid in members)
        assert group_members(group) == members
    finally:
        end(group)


def test_a_forked_child_does_not_hold_its_parents_lifeline():
    from common.lifeline import Lifeline

    lifeline = Lifeline()
    try:
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # in the child: report whether it still holds the write end
            os.close(read)
            os.write(write, b"1" if lifeline.holding else b"0")
            os._exit(0)
        os.close(write)
        assert os.read(read, 1) == b"0"
        os.close(read)
        os.waitpid(child, 0)
        assert lifeline.holding
    finally:
        lifeline.release()
    assert not lifeline.holding
