"""The TaskCoordinator with its WorkQueue, without actors, on both real stores: tasks beyond a
limit are queued and answered with their position, start in order as slots free, and tell
their users by notification; lost work is retried after a back-off or failed clearly; a
poison message is reported once and never retried; queued work outlives a restart."""

from __future__ import annotations

import time

import pytest

from agents.coordination.task_coordinator import TaskCoordinator
from agents.coordination.work_queue import TASK_QUEUED, TASK_RETRY_SCHEDULED, RetryPolicy, WorkQueue
from common import messages as m
from common.tasks.limits import Admission, Limits, open_slots
from common.tasks.models import COMPLETED, FAILED, QUEUED, RUNNING, WAITING_PARAMETERS, InvalidTransition
from events.event_bus import EventBus

TENANT = "acme"


@pytest.fixture
def make_coordinator(store, store_config):
    def make(*, retry: RetryPolicy = RetryPolicy(), slots=None, **limits) -> TaskCoordinator:
        limits = Limits(**limits)
        events = EventBus(store)
        gate = None if limits.unlimited else Admission(store, slots or open_slots(store_config), limits)
        queue = WorkQueue(store, events, gate, retry=retry, agent_id=f"{TENANT}@local")
        return TaskCoordinator(store, events, agent_id=f"{TENANT}@local", queue=queue, tenant_id=TENANT)

    return make


def ask(coordinator: TaskCoordinator, n: int, *, user="alice", capability="slow_job", content="") -> list:
    """A user's request, understood by a worker as a task for ``capability``."""
    request = m.agent_task(task_id=f"task_{n:03d}", msg_id=f"msg_{n:03d}", tenant_id=TENANT, user_id=user,
                           content=content or f"job {n}")
    assert [d for d, _ in coordinator.on_agent_task(request)] == ["worker"]  # analyze
    time.sleep(0.002)  # created_at orders the queue
    return coordinator.on_analysis(m.analysis_result(task_id=request["task_id"], intent="task",
                                                     capability=capability, parameters={}))


def run(store, task_id: str) -> None:
    """What a worker does when it starts a task."""
    store.transition(TENANT, task_id, RUNNING)


def done(coordinator: TaskCoordinator, task_id: str) -> list:
    return coordinator.on_subtask_result(m.subtask_result(task_id=task_id, tenant_id=TENANT, capability="slow_job",
                                                          ok=True, result={"n": task_id}))


def kinds(outs) -> list[tuple[str, str, str]]:
    return [(d, msg.get("message_type", "wakeup"), msg.get("task_id", msg.get("payload", {}).get("retry", "")))
            for d, msg in outs]


def test_tasks_beyond_the_user_limit_are_queued_with_their_positions_and_all_finish(store, make_coordinator):
    coordinator = make_coordinator(per_user=1)
    first, second, third = ask(coordinator, 1), ask(coordinator, 2), ask(coordinator, 3)
    assert kinds(first) == [("worker", "execute", "task_001")]
    assert [(msg["message_type"], msg["msg_id"], msg["position"], msg["scope"]) for _, msg in second + third] == [
        ("task_queued", "msg_002", 1, "user"), ("task_queued", "msg_003", 2, "user")]
    assert "limit: 1 running per user" in third[0][1]["message"]
    assert store.get_task(TENANT, "task_003").state == QUEUED
    assert coordinator.queue.queue_lengths(TENANT) == {"tenant": 2, "user:alice": 2, "capability:slow_job": 2}
    assert [e.data["scope"] for e in store.events(TENANT, task_id="task_002", event_type=TASK_QUEUED)] == ["user"]

    run(store, "task_001")
    outs = done(coordinator, "task_001")
    assert kinds(outs) == [("reply", "task_completed", "task_001"), ("worker", "execute", "task_002")]
    run(store, "task_002")
    outs = done(coordinator, "task_002")
    # its ask was answered already (task_queued): the result is a notification (kept, and pushed), not a reply
    assert kinds(outs) == [("notify", "notification", "task_002"), ("worker", "execute", "task_003")]
    run(store, "task_003")
    assert kinds(done(coordinator, "task_003")) == [("notify", "notification", "task_003")]
    assert [t.state for t in store.list_tasks(TENANT)] == [COMPLETED] * 3
    notes = store.notifications(TENANT, "alice")
    assert [(n.task_id, n.kind) for n in notes] == [("task_002", "task_completed"), ("task_003", "task_completed")]
    assert notes[0].message.startswith("Task task_002 (job 2) finished")


def test_a_queued_tasks_notification_speaks_the_language_it_was_asked_in(store, make_coordinator):
    coordinator = make_coordinator(per_user=1)
    ask(coordinator, 1), ask(coordinator, 2, content="把这周的报告整理一下"), ask(coordinator, 3)
    run(store, "task_001")
    done(coordinator, "task_001")
    run(store, "task_002")
    coordinator.on_subtask_result(m.subtask_result(task_id="task_002", tenant_id=TENANT, capability="slow_job",
                                                   ok=False, error_type="capability_failed", error="disk full"))
    run(store, "task_003")
    done(coordinator, "task_003")
    chinese, english = store.notifications(TENANT, "alice")
    assert chinese.message == "任务 task_002（把这周的报告整理一下）没能完成：disk full"
    assert english.message.startswith("Task task_003 (job 3) finished")


def test_a_capability_limit_queues_across_users(store, make_coordinator):
    coordinator = make_coordinator(per_capability=(("slow_job", 2),))
    outs = [ask(coordinator, n, user=f"u{n}") for n in (1, 2, 3)] + [ask(coordinator, 4, capability="other")]
    assert [msg["message_type"] for o in outs for _, msg in o] == ["execute", "execute", "task_queued", "execute"]
    assert outs[2][0][1]["scope"] == "capability"
    assert "limit: 2 running for slow_job" in outs[2][0][1]["message"]


def test_a_failed_or_paused_task_frees_its_slot(store, make_coordinator):
    coordinator = make_coordinator(per_user=1)
    ask(coordinator, 1), ask(coordinator, 2), ask(coordinator, 3)
    run(store, "task_001")
    failed = coordinator.on_subtask_result(m.subtask_result(task_id="task_001", tenant_id=TENANT, capability="slow_job",
                                                            ok=False, error_type="capability_failed", error="no"))
    assert kinds(failed) == [("reply", "task_error", "task_001"), ("worker", "execute", "task_002")]
    run(store, "task_002")
    store.transition(TENANT, "task_002", WAITING_PARAMETERS)  # a queued task started, then asked its user
    paused = coordinator.on_task_paused(m.task_paused(msg_id="msg_002", task_id="task_002", message="Which one?",
                                                      missing_parameters=[]))
    assert kinds(paused) == [("notify", "notification", "task_002"), ("worker", "execute", "task_003")]
    assert [n.kind for n in store.notifications(TENANT, "alice")] == ["task_paused"]
    # the answer comes while task 3 runs: the resumed task queues again, and its new ask is answered
    resumed = coordinator.on_resume_task(m.resume_task(task_id="task_002", msg_id="msg_102", tenant_id=TENANT,
                                                       user_id="alice"))
    assert [(msg["message_type"], msg["msg_id"], msg["position"]) for _, msg in resumed] == [
        ("task_queued", "msg_102", 1)]
    run(store, "task_003")
    assert kinds(done(coordinator, "task_003")) == [("notify", "notification", "task_003"),
                                                    ("worker", "execute", "task_002")]


def test_a_resumed_task_with_a_free_slot_resumes_at_once(store, make_coordinator):
    coordinator = make_coordinator(per_user=1)
    ask(coordinator, 1)
    store.transition(TENANT, "task_001", WAITING_PARAMETERS)
    coordinator.on_task_paused(m.task_paused(msg_id="msg_001", task_id="task_001", message="?", missing_parameters=[]))
    outs = coordinator.on_resume_task(m.resume_task(task_id="task_001", msg_id="msg_101", tenant_id=TENANT,
                                                    user_id="alice"))
    assert kinds(outs) == [("worker", "resume_execution", "task_001")]


def test_queued_tasks_start_again_after_a_restart_oldest_first(store, make_store, make_coordinator, store_config):
    before = make_coordinator(per_user=2)
    for n in (1, 2, 3, 4):
        ask(before, n)
    # the node restarts: tasks 1 and 2 were running and are failed by recovery; 3 and 4 wait in the store
    for task_id in ("task_001", "task_002"):
        store.transition(TENANT, task_id, FAILED)
    after = make_coordinator(per_user=2, slots=open_slots(store_config))
    assert kinds(after.resume_queued()) == [("worker", "execute", "task_003"), ("worker", "execute", "task_004")]


def lose(coordinator, store, n: int, reason="the execution process exited") -> list:
    return coordinator.on_worker_lost(m.execute(task_id=f"task_{n:03d}", tenant_id=TENANT, user_id="alice",
                                                capability="slow_once", parameters={}), reason)


def test_lost_work_is_retried_with_backoff_then_failed_saying_how_often(store, make_coordinator):
    coordinator = make_coordinator(retry=RetryPolicy(max_attempts=2, backoff_s=0.02, backoff_max_s=0.03), per_user=1)
    ask(coordinator, 1)
    run(store, "task_001")
    outs = lose(coordinator, store, 1)
    assert outs == [("wakeup", {"delay_s": 0.02, "payload": {"retry": "task_001", "tenant_id": TENANT}})]
    task = store.get_task(TENANT, "task_001")
    assert task.state == QUEUED and task.meta["attempts"] == 1
    assert coordinator.on_wakeup(outs[0][1]["payload"]) == []  # too early: the back-off is not over
    time.sleep(0.03)
    assert kinds(coordinator.on_wakeup(outs[0][1]["payload"])) == [("worker", "execute", "task_001")]
    run(store, "task_001")
    second = lose(coordinator, store, 1)
    assert second[0][1]["delay_s"] == 0.03  # doubled, then capped
    time.sleep(0.04)
    coordinator.on_wakeup(second[0][1]["payload"])
    run(store, "task_001")
    final = lose(coordinator, store, 1)
    assert kinds(final) == [("reply", "task_error", "task_001")]
    error = final[0][1]
    assert error["message"] == "The task failed after 3 attempts: the execution process exited each time."
    assert error["retryable"] is True
    assert store.get_task(TENANT, "task_001").state == FAILED
    assert [e.data["attempt"] for e in store.events(TENANT, task_id="task_001", event_type=TASK_RETRY_SCHEDULED)] == [
        1, 2]
    ask(coordinator, 2)  # the slot came back
    assert store.get_task(TENANT, "task_002").state != QUEUED


def test_with_no_retries_lost_work_fails_at_once(store, make_coordinator):
    coordinator = make_coordinator()
    ask(coordinator, 1)
    run(store, "task_001")
    outs = lose(coordinator, store, 1)
    assert [(msg["message_type"], msg["message"]) for _, msg in outs] == [
        ("task_error", "The worker failed: the execution process exited")]
    assert store.get_task(TENANT, "task_001").state == FAILED


def test_a_lost_analysis_is_sent_again_after_a_backoff(store, make_coordinator):
    coordinator = make_coordinator(retry=RetryPolicy(max_attempts=1, backoff_s=0.5))
    request = m.agent_task(task_id="task_001", msg_id="msg_001", tenant_id=TENANT, user_id="alice", content="hm")
    analyze = coordinator.on_agent_task(request)[0][1]
    outs = coordinator.on_worker_lost(analyze, "the execution process exited")
    assert outs == [("wakeup", {"delay_s": 0.5, "payload": {"resend": analyze}})]
    assert coordinator.on_wakeup(outs[0][1]["payload"]) == [("worker", analyze)]
    again = coordinator.on_worker_lost(analyze, "the execution process exited")
    assert [(msg["message_type"], msg["msg_id"]) for _, msg in again] == [("task_error", "msg_001")]
    assert "after 2 attempts" in again[0][1]["message"]


def test_a_poison_message_is_reported_once_and_never_retried(store, make_coordinator, caplog):
    coordinator = make_coordinator(retry=RetryPolicy(max_attempts=3), per_user=1)
    ask(coordinator, 1), ask(coordinator, 2)
    run(store, "task_001")
    details = "Traceback (most recent call last):\n  File \"x.py\", line 1\nRuntimeError: this error cannot say"
    execute = m.execute(task_id="task_001", tenant_id=TENANT, user_id="alice", capability="slow_job", parameters={})
    outs = coordinator.on_poisoned(execute, details)
    assert kinds(outs) == [("reply", "task_error", "task_001"), ("worker", "execute", "task_002")]
    error = outs[0][1]
    assert error["error_type"] == "poison_message" and error["retryable"] is False
    assert "RuntimeError: this error cannot say" in error["message"]
    failed = store.events(TENANT, task_id="task_001", event_type="TASK_FAILED")
    assert len(failed) == 1 and failed[0].data["traceback"].endswith("RuntimeError: this error cannot say")
    assert not store.events(TENANT, task_id="task_001", event_type=TASK_RETRY_SCHEDULED)
    assert any("poison message execute task_id=task_001" in r.getMessage() for r in caplog.records)
    assert coordinator.on_poisoned(execute, details) == []  # returned again: already reported


def test_a_task_cancelled_while_queued_is_never_started(store, make_coordinator):
    coordinator = make_coordinator(per_user=1)
    ask(coordinator, 1), ask(coordinator, 2), ask(coordinator, 3)
    store.transition(TENANT, "task_002", "cancelled")
    run(store, "task_001")
    assert kinds(done(coordinator, "task_001"))[-1] == ("worker", "execute", "task_003")
    with pytest.raises(InvalidTransition):
        store.transition(TENANT, "task_002", RUNNING)
