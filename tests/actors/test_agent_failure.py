"""An AgentActor killed with ``kill -9`` (multiprocTCPBase): the RouterActor makes another
within seconds, the request that arrives meanwhile is answered (or told to try again) without
waiting out its timeout, and the dead one's ExecutionActors are ended, not left behind."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

import main
from common import messages as m
from tests.actors.conftest import flora_config
from tests.support.asking import ask_flora

WITHIN_S = 15.0  # far below the reply timeout: the point is not to wait it out


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if parent_of(int(entry.name)) == pid:
                    found.add(int(entry.name))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue  # it ended while we looked
    return found


def descendants_of(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        for child in children_of(todo.pop()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def wait_until(condition, what: str, timeout: float = WITHIN_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what} not within {timeout} s")


def router_agents(flora) -> list[dict]:
    reply = flora.system.ask(flora.router, m.status_request(), 10)
    assert reply is not None and reply["message_type"] == "status_reply", reply
    return reply["status"]["agents"]


@pytest.fixture
def flora_mp(tmp_path, dify, sales_db):
    config = flora_config(tmp_path / "data", dify.url, sales_db, "multiprocTCPBase")
    config["actors"]["ask_timeout_s"] = 120  # the default a user has: a lost request must not wait it out
    running_flora = main.start_flora(config)
    doomed: set[int] = set()
    yield running_flora, doomed
    running_flora.shutdown()
    left = [pid for pid in doomed if running(pid)]
    for pid in left:  # whatever happened, leave nothing running
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes of the killed AgentActor outlived Flora: {left}"


def ask(flora, user: str, content: str, timeout: float = WITHIN_S) -> dict:
    return ask_flora(flora, user, content, timeout=timeout)


def test_a_killed_agent_is_replaced_the_next_request_answered_and_its_workers_ended(flora_mp, tmp_path):
    flora, doomed = flora_mp
    user = "agent_failure_user"
    pid_file = tmp_path / "worker.pid"
    assert ask(flora, user, f"slow job seconds=0 pid_file={pid_file}")["message_type"] == "task_completed"
    agent_pid = parent_of(int(pid_file.read_text()))
    assert agent_pid != os.getpid()
    [before] = router_agents(flora)
    wait_until(lambda: router_agents(flora)[0]["children"] >= flora.config.actors.execution_pool_size,
               "the RouterActor learning the AgentActor's ExecutionActors")
    workers = descendants_of(agent_pid)
    assert len(workers) >= flora.config.actors.execution_pool_size
    doomed.update(workers | {agent_pid})

    os.kill(agent_pid, signal.SIGKILL)
    started = time.monotonic()
    reply = ask(flora, user, "add numbers a=2 b=3")
    if reply["message_type"] == "task_error":  # it reached the dead one: told at once to send it again
        assert reply["retryable"] is True, reply
        reply = ask(flora, user, "add numbers a=2 b=3")
    assert reply["message_type"] == "task_completed" and reply["result"] == {"sum": 5}, reply
    assert time.monotonic() - started < WITHIN_S

    [after] = wait_until(lambda: router_agents(flora), "a new AgentActor")
    assert after["tenant_id"] == before["tenant_id"]
    assert not running(agent_pid)
    wait_until(lambda: not [pid for pid in workers if running(pid)], "the dead AgentActor's ExecutionActors ending")
    assert ask(flora, user, "add numbers a=1 b=1")["result"] == {"sum": 2}
