"""LoopScheduler over both real registries, with time injected: runs are proposed when due,
by the missed-run and overlap policies, and each run key is claimed once."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from capabilities.loop.schedule import Schedule, ScheduleError
from capability_actors.loop_scheduler import LoopScheduler
from common.loops.models import LoopTask

TZ = "Asia/Shanghai"
DAILY_9 = Schedule.on_cron("0 9 * * *", timezone=TZ).to_dict()
# 2026-03-02 08:00 in Shanghai is 00:00 UTC
START = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
NINE = START + timedelta(hours=1)


def loop_task(loop_task_id="lt1", *, schedule=DAILY_9, created=START, **fields) -> LoopTask:
    return LoopTask(loop_task_id=loop_task_id, tenant_id="acme", user_id="u1", content="提醒我复习GRPO",
                    schedule=schedule, created_at=created.timestamp(), **fields)


def test_registered_task_fires_once_at_its_time(reg):
    scheduler = LoopScheduler(reg)
    stored = scheduler.register(loop_task(), START)
    assert stored.next_fire_at == NINE.timestamp()
    assert scheduler.tick(NINE - timedelta(minutes=1)).fires == []
    fires = scheduler.tick(NINE + timedelta(seconds=3)).fires
    assert [f.run_key for f in fires] == ["lt1:2026-03-02T01:00:00Z"]
    assert scheduler.tick(NINE + timedelta(seconds=10)).fires == []
    assert reg.get("acme", "lt1").next_fire_at == (NINE + timedelta(days=1)).timestamp()


def test_many_schedulers_ticking_at_once_start_the_run_once(make):
    LoopScheduler(make()).register(loop_task(), START)
    schedulers = [LoopScheduler(make()) for _ in range(8)]
    claimed, proposed, barrier = [], [], threading.Barrier(len(schedulers))

    def run(scheduler):
        barrier.wait()
        for fire in scheduler.tick(NINE + timedelta(seconds=1)).fires:
            proposed.append(fire.run_key)
            if scheduler.claim("acme", "lt1", fire.run_key, fire.scheduled_at):
                claimed.append(fire.run_key)

    threads = [threading.Thread(target=run, args=(s,)) for s in schedulers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert set(proposed) == {"lt1:2026-03-02T01:00:00Z"}  # however many proposed it: one key
    assert claimed == ["lt1:2026-03-02T01:00:00Z"]


def test_a_publish_that_fails_keeps_the_task_due_for_the_next_tick(reg):
    scheduler = LoopScheduler(reg)
    scheduler.register(loop_task(), START)

    def broker_down(fire):
        raise ConnectionError("broker away")

    failed = scheduler.tick(NINE + timedelta(seconds=1), publish=broker_down)
    assert failed.fires == [] and [f.run_key for f in failed.failed] == ["lt1:2026-03-02T01:00:00Z"]
    published = []
    again = scheduler.tick(NINE + timedelta(seconds=2), publish=published.append)
    assert [f.run_key for f in again.fires] == [f.run_key for f in published] == ["lt1:2026-03-02T01:00:00Z"]


@pytest.mark.parametrize("policy, expected", [
    ("catch_up", ["2026-03-02T01:00:00Z", "2026-03-03T01:00:00Z", "2026-03-04T01:00:00Z"]),
    ("latest", ["2026-03-04T01:00:00Z"]),
    ("skip", []),
])
def test_after_three_days_down_the_missed_policy_decides(reg, policy, expected):
    scheduler = LoopScheduler(reg)
    scheduler.register(loop_task(missed=policy, overlap="queue"), START)
    fires = scheduler.tick(NINE + timedelta(days=2, hours=5)).fires
    assert [f.run_key.split(":", 1)[1] for f in fires] == expected
    assert reg.get("acme", "lt1").next_fire_at == (NINE + timedelta(days=3)).timestamp()


def test_overlap_skip_holds_a_run_back_while_the_last_one_runs(reg):
    scheduler = LoopScheduler(reg)
    scheduler.register(loop_task(overlap="skip"), START)
    first = scheduler.tick(NINE).fires[0]
    assert scheduler.claim("acme", "lt1", first.run_key, first.scheduled_at)
    second_day = scheduler.tick(NINE + timedelta(days=1))
    assert second_day.fires == [] and len(second_day.held_back) == 1
    scheduler.finish("acme", first.run_key, ok=True, task_id="task_1")
    assert len(scheduler.tick(NINE + timedelta(days=2)).fires) == 1


def test_overlap_queue_starts_runs_even_while_one_runs(reg):
    scheduler = LoopScheduler(reg)
    scheduler.register(loop_task(overlap="queue"), START)
    scheduler.tick(NINE)
    assert len(scheduler.tick(NINE + timedelta(days=1)).fires) == 1


def test_one_shot_fires_once_and_a_past_one_is_refused(reg):
    scheduler = LoopScheduler(reg)
    at = START + timedelta(minutes=20)
    scheduler.register(loop_task("once", schedule=Schedule.once(at, timezone=TZ).to_dict()), START)
    assert len(scheduler.tick(at + timedelta(seconds=1)).fires) == 1
    assert reg.get("acme", "once").next_fire_at is None
    assert scheduler.tick(at + timedelta(days=1)).fires == []
    with pytest.raises(ScheduleError):
        scheduler.register(loop_task("late", schedule=Schedule.once(at, timezone=TZ).to_dict()),
                           at + timedelta(hours=1))


@pytest.mark.parametrize("ok", [True, False])
def test_a_one_shot_is_done_once_its_run_ended_and_a_repeating_one_stays_active(reg, ok):
    scheduler = LoopScheduler(reg)
    at = START + timedelta(minutes=20)
    scheduler.register(loop_task("once", schedule=Schedule.once(at, timezone=TZ).to_dict()), START)
    scheduler.register(loop_task("daily"), START)
    fires = scheduler.tick(at + timedelta(hours=1)).fires
    for fire in fires:
        assert scheduler.claim("acme", fire.task.loop_task_id, fire.run_key, fire.scheduled_at)
    assert reg.get("acme", "once").state == "active"  # fired, its run still going: accepted as active
    for fire in fires:
        scheduler.finish("acme", fire.run_key, ok=ok, task_id="t")
    assert reg.get("acme", "once").state == "done"
    assert reg.get("acme", "daily").state == "active"
    assert scheduler.tick(at + timedelta(days=3)).fires[0].task.loop_task_id == "daily"  # done fires no more
