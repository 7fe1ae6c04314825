"""Stale work is re-confirmed: a paused task resumed longer than ``tasks.reconfirm_after`` after
the person last spoke about it restates what it is about to do and asks once more before a
step with side effects; a read goes on. The real file tools, a real SQLite store."""

from __future__ import annotations

import time

import pytest

from capability_actors.task_execution_service import ASKED_AT_META, TaskExecutionService
from common import messages as m
from common.tasks.models import WAITING_APPROVAL, WAITING_PARAMETERS, TaskRecord
from common.tasks.sqlite_store import SQLiteTaskStore
from config import load_config
from events.event_bus import EventBus
from init_plugins import build_registry

TWO_DAYS = 2 * 24 * 3600


@pytest.fixture
def world(tmp_path):
    def make(**tasks):
        config = load_config({"data_dir": str(tmp_path), "memory": {"enabled": False}, "tasks": tasks,
                              "understanding": {"examples": False}, "tools": {"per_user": False}}, env={})
        registry = build_registry(config, llm=None)
        events = EventBus(store)
        return TaskExecutionService(store=store, events=events, registry=registry, config=config, llm=None), events

    store = SQLiteTaskStore(tmp_path / "tasks.db")
    yield store, make, tmp_path / "workspace"
    store.close()


def asked_long_ago(events, capability, parameters, content):
    return events.create_task(TaskRecord(task_id=m.new_id("task"), tenant_id="default", user_id="u1",
                                         content=content, capability=capability, parameters=parameters,
                                         created_at=time.time() - TWO_DAYS), source="test")


def run(service, task):
    return service.execute(m.execute(task_id=task.task_id, tenant_id="default", user_id="u1",
                                     capability=task.capability, parameters={}))


def resume(service, task_id):
    return service.resume(m.resume_execution(task_id=task_id, tenant_id="default", user_id="u1"))


def said_yes_days_later(store, task_id):
    """The person answers yes to the approval question two days after it was asked."""
    task = store.get_task("default", task_id)
    store.update_task("default", task_id, approved=True, meta={**task.meta, ASKED_AT_META: time.time() - TWO_DAYS})


def test_a_yes_given_days_after_the_question_is_asked_for_once_more_with_the_request_restated(world):
    store, make, workspace = world
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "plan.txt").write_text("old")
    service, events = make()
    task = asked_long_ago(events, "file_write", {"path": "notes/plan.txt", "content": "new", "overwrite": True},
                          "overwrite notes/plan.txt with the new plan")
    first = run(service, task)
    assert first["pause_kind"] == WAITING_APPROVAL and "ago" not in first["message"]  # asked now: fresh
    said_yes_days_later(store, task.task_id)
    again = resume(service, task.task_id)
    assert again["message_type"] == "task_paused" and again["pause_kind"] == WAITING_APPROVAL
    assert "You asked for this 2 days ago: “overwrite notes/plan.txt with the new plan”" in again["message"]
    assert "file_write" in again["message"] and "notes/plan.txt" in again["message"]
    assert (workspace / "notes" / "plan.txt").read_text() == "old"  # nothing ran
    assert store.get_task("default", task.task_id).approved is False  # the old yes is spent
    store.update_task("default", task.task_id, approved=True)  # yes, now
    done = resume(service, task.task_id)
    assert done["message_type"] == "subtask_result" and done["ok"] is True
    assert (workspace / "notes" / "plan.txt").read_text() == "new"


def test_the_approval_question_describes_the_tool_in_the_persons_language(world):
    store, make, _ = world
    service, events = make()
    task = asked_long_ago(events, "shell", {"command": "du -sh ."}, "终端里执行一下 du -sh . 看看占了多少")
    asked = run(service, task)
    assert asked["pause_kind"] == WAITING_APPROVAL
    spec = build_registry(load_config({}, env={}), llm=None).get_executable("shell")
    assert spec.describe("zh") in asked["message"] and spec.description not in asked["message"]
    said_yes_days_later(store, task.task_id)
    again = resume(service, task.task_id)  # asked once more: the same language
    assert spec.describe("zh") in again["message"] and spec.description not in again["message"]


def test_an_always_allowed_tool_is_still_asked_about_when_its_task_is_stale(world):
    store, make, workspace = world
    service, events = make()
    store.allow_tool("default", "u1", "file_write")
    task = asked_long_ago(events, "file_write", {"path": "a.txt"}, "把结果保存到 a.txt")
    paused = run(service, task)
    assert paused["pause_kind"] == WAITING_PARAMETERS  # the content is missing
    store.update_task("default", task.task_id, parameters={"path": "a.txt", "content": "42"})
    again = resume(service, task.task_id)
    assert again["pause_kind"] == WAITING_APPROVAL and again["message"].startswith("这是你 2 天前的请求")
    assert not (workspace / "a.txt").exists()


def test_a_stale_read_goes_on_without_asking(world):
    store, make, workspace = world
    workspace.mkdir(parents=True)
    (workspace / "r.txt").write_text("hello")
    service, events = make()
    task = asked_long_ago(events, "file_read", {}, "read r.txt")
    assert run(service, task)["pause_kind"] == WAITING_PARAMETERS
    store.update_task("default", task.task_id, parameters={"path": "r.txt"})
    assert resume(service, task.task_id)["ok"] is True


def test_reconfirm_after_zero_never_asks_again_and_a_longer_one_waits_longer(world):
    store, make, workspace = world
    for settings in ({"reconfirm_after": 0}, {"reconfirm_after": 3 * 24 * 3600}):
        service, events = make(**settings)
        task = asked_long_ago(events, "file_write", {"path": f"{len(settings)}{id(settings)}.txt"}, "save it")
        run(service, task)
        store.update_task("default", task.task_id, parameters={**task.parameters, "content": "x"})
        assert resume(service, task.task_id)["ok"] is True
