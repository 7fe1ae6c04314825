"""TaskRecovery on a real store: what a restarted node does with the work its last life left."""

from __future__ import annotations

import time

from common.tasks.models import TaskRecord
from common.tasks.recovery import TaskRecovery
from events.event_bus import EventBus

TENANT = "acme"


def add(store, task_id: str, state: str, **meta) -> TaskRecord:
    return store.create_task(TaskRecord(task_id=task_id, tenant_id=TENANT, user_id="alice", content=f"do {task_id}",
                                        state=state, capability="job", meta=meta))


def test_running_tasks_of_this_node_are_failed_with_an_event_and_a_notification(store):
    add(store, "ran", "running", node="a")
    add(store, "queued", "created")
    add(store, "paused", "waiting_parameters", node="a")
    add(store, "elsewhere", "running", node="b")
    report = TaskRecovery(store, EventBus(store), node="a").recover(started_at=time.time() + 1)
    assert sorted(report.failed) == ["queued", "ran"] and report.handed_on == []
    ran = store.get_task(TENANT, "ran")
    assert ran.state == "failed" and "did not finish" in ran.error
    event = store.events(TENANT, task_id="ran")[-1]
    assert (event.event_type, event.source, event.data["reason"], event.data["was"]) == \
        ("TASK_FAILED", "recovery", "interrupted", "running")
    notes = store.notifications(TENANT, "alice")
    assert sorted(n.task_id for n in notes) == ["queued", "ran"] and {n.kind for n in notes} == {"task_interrupted"}
    assert store.get_task(TENANT, "paused").state == "waiting_parameters"
    assert store.get_task(TENANT, "elsewhere").state == "running"


def test_tasks_changed_after_this_start_are_not_touched(store):
    started_at = time.time()
    time.sleep(0.01)
    add(store, "new", "running", node="a")
    assert not TaskRecovery(store, EventBus(store), node="a").recover(started_at=started_at)
    assert store.get_task(TENANT, "new").state == "running"


def test_a_recorded_loop_run_not_started_is_handed_on_and_a_started_one_is_failed_and_finished(store):
    run = {"loop_task_id": "loop_1", "run_key": "loop_1:k"}
    add(store, "run_waiting", "created", run=run)
    add(store, "run_going", "running", node="a", run={**run, "run_key": "loop_1:k2"})
    handed, finished = [], []
    report = TaskRecovery(store, EventBus(store), node="a", hand_on=lambda t: handed.append(t.task_id),
                          finish_run=lambda t: finished.append(t.meta["run"]["run_key"])).recover(
        started_at=time.time() + 1)
    assert report.handed_on == ["run_waiting"] and handed == ["run_waiting"]
    assert report.failed == ["run_going"] and finished == ["loop_1:k2"]
    assert store.get_task(TENANT, "run_waiting").state == "created"
    note = store.notifications(TENANT, "alice")[0]
    assert note.loop_task_id == "loop_1" and note.task_id == "run_going"


def test_a_task_that_moves_meanwhile_is_left_to_whoever_moved_it(store):
    add(store, "racing", "running", node="a")

    class Racing(EventBus):
        def transition(self, tenant_id, task_id, state, **kwargs):
            store.transition(tenant_id, task_id, "completed", result={"ok": 1})  # its worker finished first
            return super().transition(tenant_id, task_id, state, **kwargs)

    report = TaskRecovery(store, Racing(store), node="a").recover(started_at=time.time() + 1)
    assert report.failed == [] and store.get_task(TENANT, "racing").state == "completed"
    assert store.notifications(TENANT, "alice") == []


def test_a_clean_stop_fails_only_the_running_tasks_stamped_with_this_node(store):
    run = {"loop_task_id": "loop_1", "run_key": "loop_1:k"}
    add(store, "ran", "running", node="a")
    add(store, "accepted", "created")
    add(store, "run_waiting", "created", run=run)
    add(store, "paused", "waiting_parameters", node="a")
    add(store, "elsewhere", "running", node="b")
    report = TaskRecovery(store, EventBus(store), node="a").fail_running(stopped_at=time.time() + 1)
    assert report.failed == ["ran"] and report.handed_on == []
    assert store.get_task(TENANT, "ran").state == "failed"
    assert store.events(TENANT, task_id="ran")[-1].data["reason"] == "interrupted"
    assert {t: store.get_task(TENANT, t).state for t in ("accepted", "run_waiting", "paused", "elsewhere")} == \
        {"accepted": "created", "run_waiting": "created", "paused": "waiting_parameters", "elsewhere": "running"}


def test_an_interrupted_task_asked_in_a_chat_has_its_notice_queued_in_that_channels_outbox(store, tmp_path,
                                                                                           monkeypatch):
    from agents.recovery import queue_for_chats
    from config import load_config

    monkeypatch.setenv("FLORA_TEST_TG_TOKEN", "1:t")
    config = load_config({"data_dir": str(tmp_path), "default_tenant": TENANT,
                          "channels": {"tg": {"type": "telegram", "mode": "polling", "token_env": "FLORA_TEST_TG_TOKEN",
                                              "users": {"7": "alice"}}}}, env={})
    add(store, "from_chat", "running", node="a", channel="tg:42")
    add(store, "from_api", "running", node="a")
    report = TaskRecovery(store, EventBus(store), node="a").recover(started_at=time.time() + 1)
    assert {n.task_id: n.channel for n in report.notes} == {"from_chat": "tg:42", "from_api": ""}
    from common.tasks.sqlite_store import SQLiteTaskStore

    outboxes = SQLiteTaskStore(config.sqlite_path)
    try:
        queue_for_chats(config, report.notes)
        [entry] = outboxes.pending_channel_deliveries(TENANT, "tg")
        assert (entry.target, entry.kind, entry.payload["chat_id"]) == ("42", "notification", "42")
        assert "from_chat" in entry.payload["text"] and "interrupted" in entry.payload["text"]
    finally:
        outboxes.close()
