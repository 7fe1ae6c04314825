"""An ExecutionActor that dies mid-task: its user is told (retryable), the task is marked
failed with an event, the worker is replaced, and the next request runs."""

from __future__ import annotations

import os
import signal
import time

import pytest

from common import messages as m
from common.tasks.sqlite_store import SQLiteTaskStore


@pytest.fixture
def multiproc_flora(flora):
    if flora.config.actors.system_base != "multiprocTCPBase":
        pytest.skip("needs actors in their own processes")
    return flora


def test_killed_worker_fails_its_task_clearly_and_is_replaced(multiproc_flora, user, tmp_path):
    flora = multiproc_flora
    pid_file = tmp_path / "worker.pid"
    request = m.user_input(user_id=user, content=f"slow job seconds=30 pid_file={pid_file}")
    flora.system.tell(flora.interaction, request)
    deadline = time.monotonic() + 20
    while not pid_file.exists():
        assert time.monotonic() < deadline, "the slow job never started"
        time.sleep(0.05)
    worker_pid = int(pid_file.read_text())
    assert worker_pid != os.getpid()
    os.kill(worker_pid, signal.SIGKILL)

    reply = flora.system.listen(20)
    assert reply is not None, "no reply after the worker died"
    m.validate(reply)
    assert reply["msg_id"] == request["msg_id"]
    assert reply["message_type"] == "task_error"
    assert reply["retryable"] is True
    assert "exited" in reply["message"]

    store = SQLiteTaskStore(flora.config.sqlite_path)
    try:
        task = store.get_task(flora.config.default_tenant, reply["task_id"])
        events = [e.event_type for e in store.events(flora.config.default_tenant, task_id=reply["task_id"])]
    finally:
        store.close()
    assert task.state == "failed"
    assert events[-1] == "TASK_FAILED"

    for _ in range(3):  # both workers serve again, the replacement included
        done = flora.system.ask(flora.interaction, m.user_input(user_id=user, content="add numbers a=1 b=2"), 30)
        assert done["message_type"] == "task_completed"

