"""Limits, queueing and supervision with real processes (multiprocTCPBase): a user's tasks
beyond the per-user limit are queued with their positions and all finish and notify; a
capability's limit queues across users; an ExecutionActor killed with -9 mid-task has its
task retried until it completes, or failed saying how often it was tried; a message that
makes a worker raise is reported once and the worker keeps serving."""

from __future__ import annotations

import os
import signal
import time

import pytest

import main
from common import messages as m
from tests.actors.conftest import flora_config
from tests.support.fake_llm import CRASH


@pytest.fixture(scope="module")
def flora(tmp_path_factory, dify, sales_db):
    config = flora_config(tmp_path_factory.mktemp("flora-limits"), dify.url, sales_db, "multiprocTCPBase")
    config["actors"].update(retry_max_attempts=1, retry_backoff_s=0.2, retry_backoff_max_s=0.5)
    config["limits"] = {"per_user": 1, "per_capability": {"slow_job": 2}}
    running = main.start_flora(config)
    yield running
    running.shutdown()


def replies(flora, n: int, timeout: float = 20) -> list[dict]:
    got, deadline = [], time.monotonic() + timeout
    while len(got) < n:
        left = deadline - time.monotonic()
        assert left > 0, f"only {len(got)} of {n} replies came: {got}"
        reply = flora.system.listen(left)
        if reply is not None:
            got.append(m.validate(reply))
    return got


def wait_for(predicate, timeout: float = 20, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_users_tasks_beyond_the_limit_queue_in_order_and_all_finish(flora, store, user, tmp_path):
    sent = [m.user_input(user_id=user, content=f"slow job seconds=0.5 pid_file={tmp_path / str(n)}") for n in range(3)]
    for request in sent:
        flora.system.tell(flora.interaction, request)
        time.sleep(0.1)  # in this order
    by_msg = {r["msg_id"]: r for r in replies(flora, 3)}
    first, second, third = (by_msg[s["msg_id"]] for s in sent)
    assert first["message_type"] == "task_completed"
    assert [(r["message_type"], r["position"], r["scope"]) for r in (second, third)] == [
        ("task_queued", 1, "user"), ("task_queued", 2, "user")]
    wait_for(lambda: all(store.get_task(flora.config.default_tenant, r["task_id"]).state == "completed"
                         for r in (second, third)), what="the queued tasks to finish")
    # a task is completed in the store before its result reaches the front desk as a notification
    def noted() -> list[dict]:
        return flora.system.ask(flora.interaction, m.notifications_request(user_id=user, mark_read=False),
                                10)["notifications"]

    wait_for(lambda: len(noted()) >= 2, what="both results noted")
    assert [(n["task_id"], n["kind"]) for n in noted()] == [(second["task_id"], "task_completed"),
                                                            (third["task_id"], "task_completed")]
    started = [store.events(flora.config.default_tenant, task_id=r["task_id"], event_type="TASK_STARTED")[0].event_id
               for r in (first, second, third)]
    assert started == sorted(started)  # FIFO


def test_a_subscriber_gets_a_queued_tasks_result_pushed_when_it_finishes(flora, user, tmp_path):
    with flora.system.private() as client:
        assert client.ask(flora.interaction, m.subscribe(user_id=user), 10)["message_type"] == "notifications_reply"
        sent = [m.user_input(user_id=user, content=f"slow job seconds=0.3 pid_file={tmp_path / str(n)}")
                for n in range(2)]
        for request in sent:
            client.tell(flora.interaction, request)
            time.sleep(0.1)
        got, deadline = [], time.monotonic() + 20
        while len(got) < 3 and time.monotonic() < deadline:
            reply = client.listen(max(0.1, deadline - time.monotonic()))
            if reply is not None:
                got.append(m.validate(reply))
    kinds = sorted(r["message_type"] for r in got)
    assert kinds == ["notification", "task_completed", "task_queued"], got
    queued = next(r for r in got if r["message_type"] == "task_queued")
    pushed = next(r for r in got if r["message_type"] == "notification")
    assert pushed["task_id"] == queued["task_id"] and pushed["kind"] == "task_completed"
    assert pushed["data"]["queued"] is True


def test_a_capability_limit_queues_the_third_users_job(flora, store, user, tmp_path):
    sent = [m.user_input(user_id=f"{user}_{n}", content=f"slow job seconds=0.5 pid_file={tmp_path / str(n)}")
            for n in range(3)]
    for request in sent:
        flora.system.tell(flora.interaction, request)
        time.sleep(0.1)
    got = {r["msg_id"]: r for r in replies(flora, 3)}
    kinds = [got[s["msg_id"]]["message_type"] for s in sent]
    assert kinds == ["task_completed", "task_completed", "task_queued"]
    queued = got[sent[2]["msg_id"]]
    assert (queued["scope"], queued["limit"], queued["position"]) == ("capability", 2, 1)
    wait_for(lambda: store.get_task(flora.config.default_tenant, queued["task_id"]).state == "completed",
             what="the queued job")


def kill_worker_when_started(pid_file) -> None:
    wait_for(pid_file.exists, what="the job to start")
    pid = int(pid_file.read_text())
    assert pid != os.getpid()
    os.kill(pid, signal.SIGKILL)


def test_a_killed_worker_s_task_is_retried_and_completes(flora, store, user, tmp_path):
    pid_file = tmp_path / "worker.pid"
    request = m.user_input(user_id=user, content=f"slow once seconds=30 pid_file={pid_file}")
    flora.system.tell(flora.interaction, request)
    kill_worker_when_started(pid_file)
    (reply,) = replies(flora, 1)
    assert (reply["msg_id"], reply["message_type"], reply["result"]) == (
        request["msg_id"], "task_completed", {"ran_again": True})
    events = [e.event_type for e in store.events(flora.config.default_tenant, task_id=reply["task_id"])]
    assert events == ["TASK_CREATED", "TASK_STARTED", "TASK_RETRY_SCHEDULED", "TASK_STARTED", "TASK_COMPLETED"]


def test_a_task_whose_worker_dies_every_time_fails_saying_so(flora, store, user, tmp_path):
    pid_file = tmp_path / "worker.pid"
    request = m.user_input(user_id=user, content=f"slow job seconds=30 pid_file={pid_file}")
    flora.system.tell(flora.interaction, request)
    kill_worker_when_started(pid_file)
    pid_file.unlink()
    kill_worker_when_started(pid_file)  # the retry, in the replacement worker
    (reply,) = replies(flora, 1)
    assert reply["message_type"] == "task_error" and reply["retryable"] is True
    assert reply["message"] == "The task failed after 2 attempts: the execution process exited each time."
    assert store.get_task(flora.config.default_tenant, reply["task_id"]).state == "failed"


def test_a_poison_message_is_reported_once_and_the_worker_keeps_serving(flora, store, user):
    reply = flora.system.ask(flora.interaction, m.user_input(user_id=user, content=f"{CRASH}, please"), 20)
    assert reply["message_type"] == "task_error"
    assert reply["error_type"] == "poison_message" and reply["retryable"] is False
    assert "RuntimeError: the test model crashed on this prompt" in reply["message"]
    events = store.events(flora.config.default_tenant, task_id=reply["task_id"])
    assert [e.event_type for e in events] == ["POISON_MESSAGE"]
    assert "the test model crashed" in events[0].data["traceback"]
    assert flora.system.listen(1) is None  # reported once: no second answer
    for _ in range(3):  # both workers serve on, the one that raised included
        done = flora.system.ask(flora.interaction, m.user_input(user_id=user, content="add numbers a=1 b=2"), 20)
        assert done["message_type"] == "task_completed"


def test_an_internal_error_after_a_task_started_fails_it_once_instead_of_leaving_it_running(flora, store, user):
    reply = flora.ask("broken result", user_id=user, timeout=20)
    assert reply["message_type"] == "task_error" and reply["error_type"] == "internal"
    assert "cannot be read" in reply["message"]
    assert store.get_task(flora.config.default_tenant, reply["task_id"]).state == "failed"
    assert flora.ask("add numbers a=1 b=2", user_id=user, timeout=20)["result"] == {"sum": 3}
