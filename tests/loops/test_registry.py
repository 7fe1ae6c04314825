"""The loop registry, against the real SQLite file and the real Redis: one suite, both
backends. Redis must be reachable; an unreachable Redis fails these tests rather than
skipping them, so a run without it cannot pass."""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import pytest

from capabilities.loop.schedule import Schedule, run_key
from common.loops.models import (
    Forbidden, LoopTask, LoopTaskExists, LoopTaskNotFound, RunNotFound,
)
from common.loops.registry import open_loop_registry
from common.loops.sqlite_registry import SQLiteLoopRegistry

EVERY_HOUR = Schedule.on_cron("0 * * * *", timezone="Asia/Shanghai").to_dict()
T0 = 1_750_000_000.0


def task(loop_task_id="lt1", *, tenant="acme", user="u1", **fields) -> LoopTask:
    fields.setdefault("content", "提醒我复习GRPO")
    fields.setdefault("schedule", EVERY_HOUR)
    return LoopTask(loop_task_id=loop_task_id, tenant_id=tenant, user_id=user, **fields)


# -- loop tasks --------------------------------------------------------------------------

def test_add_then_get_returns_an_equal_task(reg):
    added = reg.add(task(next_fire_at=T0, channel="wechat:u1", parameters={"topic": "GRPO"}))
    assert reg.get("acme", "lt1") == added
    assert reg.get("acme", "nope") is None


def test_tenants_are_those_with_loop_tasks_sorted(reg):
    assert reg.tenants() == []
    reg.add(task("a", tenant="zeta"))
    reg.add(task("b", tenant="acme"))
    reg.add(task("c", tenant="acme"))
    assert reg.tenants() == ["acme", "zeta"]


def test_add_refuses_an_id_already_taken(reg):
    reg.add(task())
    with pytest.raises(LoopTaskExists):
        reg.add(task(content="something else"))
    assert reg.get("acme", "lt1").content == "提醒我复习GRPO"


def test_list_filters_by_user_and_state_oldest_first(reg):
    reg.add(task("b", user="u1", created_at=T0 + 2))
    reg.add(task("a", user="u1", created_at=T0 + 1, state="paused"))
    reg.add(task("c", user="u2", created_at=T0 + 3))
    reg.add(task("d", user="u1", created_at=T0 + 4, state="deleted"))
    assert [t.loop_task_id for t in reg.list("acme")] == ["a", "b", "c", "d"]
    assert [t.loop_task_id for t in reg.list("acme", user_id="u1")] == ["a", "b", "d"]
    assert [t.loop_task_id for t in reg.list("acme", user_id="u1", states=["active", "paused"])] == ["a", "b"]
    assert reg.list("other") == []


def test_update_changes_the_named_fields_and_stamps_updated_at(reg):
    before = reg.add(task(updated_at=T0))
    after = reg.update("acme", "lt1", user_id="u1", state="paused", parameters={"n": 2}, missed="catch_up")
    assert (after.state, after.parameters, after.missed) == ("paused", {"n": 2}, "catch_up")
    assert after.updated_at > before.updated_at
    assert after.content == before.content and after.schedule == before.schedule
    assert reg.get("acme", "lt1") == after


def test_update_by_another_user_is_forbidden_and_changes_nothing(reg):
    reg.add(task())
    with pytest.raises(Forbidden):
        reg.update("acme", "lt1", user_id="mallory", state="deleted")
    assert reg.get("acme", "lt1").state == "active"


def test_update_of_an_unknown_task_raises_not_found(reg):
    with pytest.raises(LoopTaskNotFound):
        reg.update("acme", "ghost", user_id="u1", state="paused")


def test_update_refuses_fixed_fields_and_unknown_values(reg):
    reg.add(task())
    for bad in ({"created_at": 0.0}, {"updated_at": 0.0}, {"owner": "u2"}, {"state": "running"},
                {"overlap": "parallel"}, {"missed": "never"},
                {"schedule": "hourly"}):
        with pytest.raises(ValueError):
            reg.update("acme", "lt1", user_id="u1", **bad)
    stored = reg.get("acme", "lt1")
    assert (stored.tenant_id, stored.state, stored.overlap, stored.schedule) == ("acme", "active", "skip", EVERY_HOUR)


def test_concurrent_updates_lose_no_field_and_keep_due_in_step(reg):
    """Two writers change different fields at once; a third flips the state. Afterwards
    both fields hold their writer's last value and ``due`` agrees with the stored state."""
    reg.add(task(next_fire_at=T0))

    def write(n, **fields_of):
        for i in range(n):
            reg.update("acme", "lt1", user_id="u1", **{k: f(i) for k, f in fields_of.items()})

    threads = [threading.Thread(target=write, args=(30,), kwargs={"parameters": lambda i: {"i": i}}),
               threading.Thread(target=write, args=(30,), kwargs={"next_fire_at": lambda i: T0 + i}),
               threading.Thread(target=write, args=(31,), kwargs={"state": lambda i: ("active", "paused")[i % 2]})]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    final = reg.get("acme", "lt1")
    assert (final.parameters, final.next_fire_at, final.state) == ({"i": 29}, T0 + 29, "active")
    assert [t.loop_task_id for t in reg.due(T0 + 100, 10)] == ["lt1"]


def test_schedule_and_parameters_round_trip_as_json_including_unicode(make):
    weekly = Schedule.on_cron("30 9 * * 1", timezone="Asia/Shanghai").to_dict()
    params = {"主题": "GRPO 复习", "nested": {"list": [1, 2.5, None, True], "emoji": "📚"}, "empty": {}}
    make().add(task(schedule=weekly, parameters=params, content="每周一提醒我复习GRPO"))
    stored = make().get("acme", "lt1")
    assert stored.parameters == params and stored.content == "每周一提醒我复习GRPO"
    assert Schedule.from_dict(stored.schedule) == Schedule.from_dict(weekly)


def test_a_loop_task_and_its_runs_survive_a_restart(make):
    first = make()
    added = first.add(task(next_fire_at=T0, last_fire_at=T0 - 3600))
    assert first.claim_run("acme", "lt1", "lt1:k1", T0)
    first.close()
    again = make()
    assert again.get("acme", "lt1") == added
    assert [t.loop_task_id for t in again.due(T0, 10)] == ["lt1"]
    assert again.claim_run("acme", "lt1", "lt1:k1", T0) is False
    assert [r.run_key for r in again.running("acme", "lt1")] == ["lt1:k1"]


# -- due -----------------------------------------------------------------------------------

def test_due_returns_overdue_active_tasks_of_every_tenant_most_overdue_first(reg):
    reg.add(task("late", tenant="acme", next_fire_at=T0 - 60))
    reg.add(task("later", tenant="globex", user="g1", next_fire_at=T0 - 600))
    reg.add(task("now", tenant="globex", user="g1", next_fire_at=T0))
    reg.add(task("future", tenant="acme", next_fire_at=T0 + 1))
    due = reg.due(T0, 10)
    assert [(t.tenant_id, t.loop_task_id) for t in due] == [("globex", "later"), ("acme", "late"), ("globex", "now")]
    assert [t.loop_task_id for t in reg.due(T0, 2)] == ["later", "late"]


def test_due_leaves_out_paused_deleted_and_unscheduled_tasks_until_they_change(reg):
    reg.add(task("paused", state="paused", next_fire_at=T0 - 5))
    reg.add(task("deleted", state="deleted", next_fire_at=T0 - 5))
    reg.add(task("done", next_fire_at=None))
    reg.add(task("live", next_fire_at=T0 - 5))
    assert [t.loop_task_id for t in reg.due(T0, 10)] == ["live"]
    reg.update("acme", "paused", user_id="u1", state="active")
    reg.update("acme", "live", user_id="u1", next_fire_at=T0 + 3600)
    reg.update("acme", "done", user_id="u1", next_fire_at=T0 - 1)
    assert [t.loop_task_id for t in reg.due(T0, 10)] == ["paused", "done"]
    reg.update("acme", "paused", user_id="u1", state="deleted")
    assert [t.loop_task_id for t in reg.due(T0, 10)] == ["done"]


# -- runs ----------------------------------------------------------------------------------

def test_claim_run_is_true_the_first_time_and_false_ever_after(reg):
    reg.add(task())
    key = run_key("lt1", datetime.fromtimestamp(T0, timezone.utc))
    assert reg.claim_run("acme", "lt1", key, T0) is True
    assert reg.claim_run("acme", "lt1", key, T0) is False
    reg.finish_run("acme", key, "completed")
    assert reg.claim_run("acme", "lt1", key, T0) is False
    assert [r.run_key for r in reg.runs("acme", "lt1")] == [key]


def test_a_hundred_threads_claiming_one_run_key_have_exactly_one_winner(reg):
    reg.add(task())
    start, wins = threading.Barrier(100), []

    def claim():
        start.wait()
        wins.append(reg.claim_run("acme", "lt1", "lt1:same", T0))

    threads = [threading.Thread(target=claim) for _ in range(100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 100 and wins.count(True) == 1
    assert len(reg.runs("acme", "lt1")) == 1


def test_two_registry_objects_on_one_store_claim_a_run_once(make):
    """Two processes (two connections to one SQLite file, two Redis clients) racing."""
    one, two = make(), make()
    one.add(task())
    start, wins = threading.Barrier(40), []

    def claim(registry, key):
        start.wait()
        wins.append((key, registry.claim_run("acme", "lt1", key, T0)))

    threads = [threading.Thread(target=claim, args=(r, f"lt1:{k}")) for k in range(2) for r in (one, two) * 10]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(key for key, won in wins if won) == ["lt1:0", "lt1:1"]


def test_finish_run_records_the_outcome_and_the_first_finish_wins(reg):
    reg.add(task())
    reg.claim_run("acme", "lt1", "lt1:a", T0)
    done = reg.finish_run("acme", "lt1:a", "completed", task_id="task-42")
    assert (done.state, done.task_id, done.loop_task_id, done.scheduled_at) == ("completed", "task-42", "lt1", T0)
    assert done.finished_at is not None and done.finished_at >= done.started_at
    again = reg.finish_run("acme", "lt1:a", "failed", task_id="task-43")
    assert again == done
    assert reg.runs("acme", "lt1") == [done]


def test_finish_run_of_an_unclaimed_key_or_with_a_bad_state_raises(reg):
    reg.add(task())
    with pytest.raises(RunNotFound):
        reg.finish_run("acme", "lt1:never", "completed")
    reg.claim_run("acme", "lt1", "lt1:a", T0)
    with pytest.raises(ValueError):
        reg.finish_run("acme", "lt1:a", "running")


def test_runs_are_newest_first_and_limited(reg):
    reg.add(task())
    for i in (2, 0, 3, 1):
        reg.claim_run("acme", "lt1", f"lt1:{i}", T0 + i * 3600)
    assert [r.run_key for r in reg.runs("acme", "lt1")] == ["lt1:3", "lt1:2", "lt1:1", "lt1:0"]
    assert [r.run_key for r in reg.runs("acme", "lt1", limit=2)] == ["lt1:3", "lt1:2"]
    assert reg.runs("acme", "other") == []


def test_running_lists_unfinished_runs_oldest_first_for_the_overlap_policy(reg):
    reg.add(task(overlap="queue"))
    reg.add(task("lt2"))
    for i in range(3):
        reg.claim_run("acme", "lt1", f"lt1:{i}", T0 + i)
    reg.claim_run("acme", "lt2", "lt2:0", T0)
    reg.finish_run("acme", "lt1:1", "failed")
    assert [r.run_key for r in reg.running("acme", "lt1")] == ["lt1:0", "lt1:2"]
    assert all(r.state == "running" and r.finished_at is None for r in reg.running("acme", "lt1"))
    reg.finish_run("acme", "lt1:0", "completed")
    reg.finish_run("acme", "lt1:2", "completed")
    assert reg.running("acme", "lt1") == []
    assert [r.run_key for r in reg.running("acme", "lt2")] == ["lt2:0"]


# -- tenants -------------------------------------------------------------------------------

def test_tenant_b_cannot_reach_tenant_a_task_by_its_id(reg):
    reg.add(task("lt1", tenant="a", user="u1"))
    reg.claim_run("a", "lt1", "lt1:k", T0)
    assert reg.get("b", "lt1") is None
    assert reg.list("b") == []
    with pytest.raises(LoopTaskNotFound):
        reg.update("b", "lt1", user_id="u1", state="deleted")
    with pytest.raises(LoopTaskNotFound):
        reg.claim_run("b", "lt1", "lt1:other", T0)
    with pytest.raises(RunNotFound):
        reg.finish_run("b", "lt1:k", "failed")
    assert reg.runs("b", "lt1") == [] and reg.running("b", "lt1") == []
    assert reg.get("a", "lt1").state == "active"
    assert [r.state for r in reg.runs("a", "lt1")] == ["running"]


def test_the_same_id_in_two_tenants_is_two_tasks(reg):
    reg.add(task("lt1", tenant="a", content="A's"))
    reg.add(task("lt1", tenant="b", content="B's"))
    assert reg.claim_run("a", "lt1", "lt1:k", T0) and reg.claim_run("b", "lt1", "lt1:k", T0)
    reg.update("b", "lt1", user_id="u1", content="B's, changed")
    assert (reg.get("a", "lt1").content, reg.get("b", "lt1").content) == ("A's", "B's, changed")


@pytest.mark.parametrize("make", ["redis"], indirect=True)
def test_redis_keys_of_a_tenant_carry_its_name(make):
    reg = make()
    reg.add(task("lt1", tenant="a", next_fire_at=T0))
    reg.claim_run("a", "lt1", "lt1:k", T0)
    keys = set(make.client.scan_iter(f"{make.prefix}:*"))
    assert keys - {f"{make.prefix}:loop:due"} and all(
        k.startswith(f"{make.prefix}:{{a}}:loop:") for k in keys - {f"{make.prefix}:loop:due"})
    with pytest.raises(ValueError):
        reg.get("a|b", "lt1")


# -- choosing a backend --------------------------------------------------------------------

def test_open_loop_registry_refuses_unknown_backends_and_missing_locations():
    for backend, kwargs in (("mongo", {}), ("sqlite", {}), ("redis", {})):
        with pytest.raises(ValueError):
            open_loop_registry(backend, **kwargs)


def test_the_registry_shares_a_file_with_the_task_store(tmp_path):
    from common.tasks.models import TaskRecord
    from common.tasks.sqlite_store import SQLiteTaskStore

    store, loops = SQLiteTaskStore(tmp_path / "flora.db"), SQLiteLoopRegistry(tmp_path / "flora.db")
    store.create_task(TaskRecord(task_id="t1", tenant_id="acme", user_id="u1", content="x"))
    loops.add(task())
    assert store.get_task("acme", "t1") is not None and loops.get("acme", "lt1") is not None
    store.close()
    loops.close()
