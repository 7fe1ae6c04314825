"""LoopService and LoopCoordinator over both real registries and a real SQLite TaskStore, with
the clock injected: registering, a user's operations, and the exactly-once acceptance of runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from capabilities.loop.queues import MemoryTriggerQueue
from capabilities.loop.rabbit_bridge import Outcome, Trigger
from capabilities.loop.intake import TriggerIntake
from capabilities.loop.schedule import Schedule, ScheduleError
from capabilities.loop.service import LoopRequestError, LoopService, describe_schedule, run_task_id
from capability_actors.loop_coordinator import LoopCoordinator
from common import messages as m
from common.loops.models import Forbidden, LoopTaskNotFound
from common.tasks.sqlite_store import SQLiteTaskStore
from events.event_bus import EventBus

TZ = "Asia/Shanghai"
START = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)  # 08:00 in Shanghai
NINE = START + timedelta(hours=1)


class Clock:
    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock():
    return Clock(START)


@pytest.fixture
def store(tmp_path):
    store = SQLiteTaskStore(tmp_path / "tasks.db")
    yield store
    store.close()


@pytest.fixture
def service(reg, store, clock):
    return LoopService(reg, store, EventBus(store), timezone=TZ, clock=clock)


def daily(service: LoopService, user="u1", content="复习GRPO", **kw):
    return service.register(tenant_id="acme", user_id=user, content=content,
                            schedule=Schedule.on_cron("0 9 * * *", timezone=TZ), capability="remind",
                            parameters={"content": content}, **kw)


def test_register_sets_the_next_fire_and_records_the_event(service, store):
    task = daily(service, task_id="task_1")
    assert task.next_fire_at == NINE.timestamp()
    events = store.events("acme", task_id="task_1")
    assert [e.event_type for e in events] == ["LOOP_TASK_REGISTERED"]
    assert events[0].data["loop_task_id"] == task.loop_task_id
    assert service.describe(task) == "复习GRPO — every day at 09:00 (Asia/Shanghai); next 2026-03-02 09:00 CST"


def test_a_one_shot_in_the_past_is_refused(service):
    with pytest.raises(ScheduleError):
        service.register(tenant_id="acme", user_id="u1", content="x", capability="remind",
                         schedule=Schedule.once(START - timedelta(minutes=1), timezone=TZ))


def test_parse_time_reads_bare_times_and_refuses_nonsense(service):
    assert service.parse_time("15:30").schedule.kind == "once"
    assert service.parse_time("every day at 9:00").schedule.cron == "0 9 * * *"
    with pytest.raises(ScheduleError, match="cannot read a time"):
        service.parse_time("whenever")


def test_operations_touch_only_the_owners_tasks(service):
    task = daily(service)
    with pytest.raises(Forbidden):
        service.pause("acme", "intruder", task.loop_task_id)
    with pytest.raises(Forbidden):
        service.find("acme", "intruder", f"pause {task.loop_task_id}")
    assert service.list("acme", "intruder") == []
    with pytest.raises(LoopTaskNotFound):
        service.pause("other-tenant", "u1", task.loop_task_id)
    assert service.pause("acme", "u1", task.loop_task_id).state == "paused"
    service.delete("acme", "u1", task.loop_task_id)
    with pytest.raises(LoopTaskNotFound):
        service.owned("acme", "u1", task.loop_task_id)
    assert service.list("acme", "u1") == []


def test_find_by_words_by_id_or_the_only_one(service):
    grpo = daily(service)
    assert service.find("acme", "u1", "pause my reminder").loop_task_id == grpo.loop_task_id  # the only one
    water = daily(service, content="drink water")
    assert service.find("acme", "u1", "暂停GRPO提醒").loop_task_id == grpo.loop_task_id
    assert service.find("acme", "u1", "stop the water reminder").loop_task_id == water.loop_task_id
    with pytest.raises(LoopRequestError) as ambiguous:
        service.find("acme", "u1", "pause my reminder")
    assert grpo.loop_task_id in str(ambiguous.value) and water.loop_task_id in str(ambiguous.value)


def test_a_loop_task_is_named_by_its_id_or_by_words_of_its_content(service):
    water = daily(service, content="take the bins out")
    assert service.named_in("acme", "u1", "send me the bins reminder now")
    assert service.named_in("acme", "u1", f"what about {water.loop_task_id}?")
    assert not service.named_in("acme", "u1", "remind me to renew my passport")
    assert not service.named_in("acme", "someone-else", "send me the bins reminder now")


def test_resume_counts_from_now_and_modify_changes_schedule_and_parameters(service, clock):
    task = daily(service)
    service.pause("acme", "u1", task.loop_task_id)
    clock.now = NINE + timedelta(days=2, hours=1)  # two 09:00s passed while paused
    resumed = service.resume("acme", "u1", task.loop_task_id)
    assert resumed.next_fire_at == (NINE + timedelta(days=3)).timestamp()
    assert service.scheduler.tick(clock.now).fires == []  # nothing owed for the paused days
    changed = service.modify("acme", "u1", task.loop_task_id, schedule=Schedule.on_cron("0 10 * * *", timezone=TZ),
                             parameters={"content": "复习GRPO第二章"})
    assert changed.schedule["cron"] == "0 10 * * *" and changed.parameters["content"] == "复习GRPO第二章"
    with pytest.raises(LoopRequestError):
        service.modify("acme", "u1", task.loop_task_id)


def test_accept_records_a_run_once_and_hands_on_again_only_a_run_that_never_started(service, store):
    task = daily(service)
    first = service.accept(tenant_id="acme", loop_task_id=task.loop_task_id, run_key="k1", scheduled_at=NINE)
    assert first.outcome == "started" and first.start.task_id == run_task_id("acme", "k1")
    run = store.get_task("acme", first.start.task_id)
    assert run.state == "created" and run.approved and run.meta["run"]["run_key"] == "k1"
    assert [e.event_type for e in store.events("acme", task_id=run.task_id)] == ["TASK_CREATED", "TASK_TRIGGERED"]
    assert service.accept(tenant_id="acme", loop_task_id=task.loop_task_id, run_key="k1").outcome == "again"
    store.transition("acme", run.task_id, "running")
    assert service.accept(tenant_id="acme", loop_task_id=task.loop_task_id, run_key="k1").outcome == "duplicate"
    assert len(service.registry.runs("acme", task.loop_task_id)) == 1


def test_accept_holds_an_overlapping_run_and_refuses_unknown_or_paused_tasks(service):
    task = daily(service)
    assert service.accept(tenant_id="acme", loop_task_id=task.loop_task_id, run_key="k1").outcome == "started"
    assert service.accept(tenant_id="acme", loop_task_id=task.loop_task_id, run_key="k2").outcome == "held"
    service.finish("acme", "k1", ok=True)
    assert service.accept(tenant_id="acme", loop_task_id=task.loop_task_id, run_key="k2").outcome == "started"
    assert service.accept(tenant_id="acme", loop_task_id="loop_nope", run_key="k3").outcome == "unknown"
    service.finish("acme", "k2", ok=True)
    service.pause("acme", "u1", task.loop_task_id)
    assert service.accept(tenant_id="acme", loop_task_id=task.loop_task_id, run_key="k4").outcome == "unknown"
    # the owner's "run it now" works on a paused task too; nobody else's does
    with pytest.raises(Forbidden):
        service.accept(tenant_id="acme", loop_task_id=task.loop_task_id, run_key="k5", user_id="someone_else")
    assert service.accept(tenant_id="acme", loop_task_id=task.loop_task_id, run_key="k5", user_id="u1").outcome == "started"
    service.finish("acme", "k5", ok=False)
    assert service.registry.runs("acme", task.loop_task_id)[0].state == "failed"


def test_intake_settles_deliveries_by_what_accept_did(service):
    task = daily(service)
    handed = []
    intake = TriggerIntake(service, default_tenant="acme", hand_on=handed.append)
    trigger = Trigger(loop_task_id=task.loop_task_id, run_key="ext-1", scheduled_at="2026-03-02T01:00:00Z")
    assert intake.handle(trigger) is Outcome.RECORDED
    assert intake.handle(trigger) is Outcome.RECORDED  # recorded, never started: handed on again
    assert [h.task_id for h in handed] == [run_task_id("acme", "ext-1")] * 2
    service._store.transition("acme", handed[0].task_id, "running")
    assert intake.handle(trigger) is Outcome.DUPLICATE
    assert intake.handle(Trigger(loop_task_id="loop_gone", run_key="x")) is Outcome.REJECTED
    assert intake.handle(Trigger(loop_task_id=task.loop_task_id, run_key="ext-2")) is Outcome.RETRY  # ext-1 runs
    service.finish("acme", "ext-1", ok=True)
    assert intake.handle(Trigger(loop_task_id=task.loop_task_id, run_key="ext-2")) is Outcome.RECORDED
    assert len(handed) == 3


def test_describe_schedule_reads_like_english():
    assert describe_schedule(Schedule.on_cron("0 10 * * 1", timezone=TZ).to_dict()) == \
        "every Monday at 10:00 (Asia/Shanghai)"
    assert describe_schedule(Schedule.on_cron("30 8 * * 1-5", timezone=TZ).to_dict()).startswith("every weekday at 08:30")
    assert describe_schedule(Schedule.every(1200, timezone=TZ).to_dict()) == "every 20 minutes"
    assert describe_schedule({"kind": "bogus"}) == "an unreadable schedule"


def test_describe_schedule_reads_like_chinese_for_a_chinese_speaker():
    assert describe_schedule(Schedule.on_cron("0 9 * * *", timezone=TZ).to_dict(), "zh") == "每天 09:00（Asia/Shanghai）"
    assert describe_schedule(Schedule.on_cron("0 10 * * 1,3", timezone=TZ).to_dict(), "zh").startswith("每周一、周三 10:00")
    assert describe_schedule(Schedule.every(1200, timezone=TZ).to_dict(), "zh") == "每 20 分钟"
    assert describe_schedule({"kind": "bogus"}, "zh") == "无法读取的时间安排"


# -- the LoopSchedulerActor's decisions ------------------------------------------------------

def coordinator(service, store) -> LoopCoordinator:
    return LoopCoordinator(service, store, MemoryTriggerQueue(), default_tenant="acme")


def test_a_tick_at_the_due_time_hands_one_run_to_the_agent(service, store, clock):
    task = daily(service)
    desk = coordinator(service, store)
    clock.now = NINE - timedelta(seconds=1)
    assert desk.tick() == []
    clock.now = NINE + timedelta(seconds=1)
    outs = desk.tick()
    assert [(d, msg["message_type"]) for d, msg in outs] == [("agent", "run_task")]
    run = outs[0][1]
    assert run["task_id"] == run_task_id("acme", f"{task.loop_task_id}:2026-03-02T01:00:00Z")
    assert desk.tick() == []  # the same time never fires twice


def test_a_runs_result_becomes_a_stored_notification(service, store, clock):
    task = daily(service, channel="cli")
    desk = coordinator(service, store)
    clock.now = NINE
    run = desk.tick()[0][1]
    done = m.task_completed(msg_id=run["msg_id"], task_id=run["task_id"], message="⏰ Reminder: 复习GRPO",
                            result={"message": "⏰ Reminder: 复习GRPO"})
    [(where, note)] = desk.on_result(done)
    assert where == "notify" and note["message"] == "⏰ Reminder: 复习GRPO" and note["channel"] == "cli"
    stored = store.notifications("acme", "u1")
    assert [n.notification_id for n in stored] == [note["notification_id"]]
    assert service.registry.runs("acme", task.loop_task_id)[0].state == "completed"
    assert desk.on_result(done) == []  # a repeated result changes nothing


def test_a_result_that_comes_after_the_next_run_was_due_is_marked_late_not_news(service, store, clock):
    task = daily(service, channel="cli")
    desk = coordinator(service, store)
    clock.now = NINE
    first, = [msg for _, msg in desk.tick()]
    clock.now = NINE + timedelta(hours=2)  # within the day: still news
    on_time = m.task_completed(msg_id=first["msg_id"], task_id=first["task_id"], message="复习GRPO", result={})
    [(_, note)] = desk.on_result(on_time)
    assert note["message"] == "复习GRPO" and "late_s" not in note["data"]
    clock.now = NINE + timedelta(days=1, seconds=1)
    second, = [msg for _, msg in desk.tick()]
    clock.now = NINE + timedelta(days=2, hours=3)  # its result after the next day's run was due
    late = m.task_completed(msg_id=second["msg_id"], task_id=second["task_id"], message="复习GRPO", result={})
    [(_, note)] = desk.on_result(late)
    assert note["message"].startswith("⏰ 迟到的通知") and "2026-03-03 01:00" in note["message"]
    assert note["message"].endswith("复习GRPO") and note["data"]["late_s"] == 27 * 3600


def test_late_by_counts_only_past_the_schedules_own_period():
    from capabilities.loop.schedule import late_by
    hourly = Schedule.every(3600, timezone=TZ)
    assert late_by(hourly, NINE, NINE + timedelta(minutes=59)) is None
    assert late_by(hourly, NINE, NINE + timedelta(minutes=61)) == 61 * 60
    assert late_by(Schedule.once(NINE, timezone=TZ), NINE, NINE + timedelta(days=9)) is None  # no period


def test_a_failed_run_is_told_and_a_conflict_is_left_to_the_run_that_holds_the_task(service, store, clock):
    task = daily(service)
    desk = coordinator(service, store)
    clock.now = NINE
    run = desk.tick()[0][1]
    failed = m.task_error(msg_id=run["msg_id"], error_type="capability_failed", message="the service is down",
                          task_id=run["task_id"])
    [(where, note)] = desk.on_result(failed)
    assert where == "notify" and note["kind"] == "loop_run_failed"
    # the loop was asked for in Chinese ("复习GRPO"): its failure is framed in Chinese, the cause as it came
    assert note["message"] == f"循环任务 {task.loop_task_id}（复习GRPO）这次没能完成：the service is down"
    assert service.registry.runs("acme", task.loop_task_id)[0].state == "failed"

    clock.now = NINE + timedelta(days=1)
    run = desk.tick()[0][1]
    assert desk.on_result(m.task_error(msg_id=run["msg_id"], error_type="conflict", message="taken",
                                       task_id=run["task_id"])) == []
    assert service.registry.running("acme", task.loop_task_id)  # still the other hand-on's to finish
    done = m.task_completed(msg_id="msg_other_hand_on", task_id=run["task_id"], message="ok", result=None)
    assert desk.on_result(done)[0][0] == "notify"  # the hand-on that won reports


def test_commands_answer_like_a_user_message(service, store):
    task = daily(service)
    desk = coordinator(service, store)
    listed = desk.on_command(m.loop_command(msg_id="msg_1", tenant_id="acme", user_id="u1", op="list"))
    assert listed[0][1]["message_type"] == "task_completed" and task.loop_task_id in listed[0][1]["message"]
    refused = desk.on_command(m.loop_command(msg_id="msg_2", tenant_id="acme", user_id="intruder", op="pause",
                                             reference=f"pause {task.loop_task_id}"))
    assert refused[0][1]["error_type"] == "forbidden"
    bad = desk.on_command(m.loop_command(msg_id="msg_3", tenant_id="acme", user_id="u1", op="modify",
                                         reference="change it", schedule_text="every 0 minutes"))
    assert bad[0][1]["error_type"] == "invalid_parameter"
    now = desk.on_command(m.loop_command(msg_id="msg_4", tenant_id="acme", user_id="u1", op="trigger",
                                         reference="run it now"))
    assert now[0][0] == "agent"
    reply = desk.on_result(m.task_completed(msg_id=now[0][1]["msg_id"], task_id=now[0][1]["task_id"],
                                            message="⏰ Reminder: 复习GRPO", result=None))
    assert reply == [("reply", {**reply[0][1], "msg_id": "msg_4"})]
    assert store.notifications("acme", "u1") == []  # answered directly, not as a notification
