"""LoopService: everything Flora does with loop tasks, as one plain class over the registry.

Registering ("every day at 9 remind me..."), the user's plain-words operations (list,
pause, resume, delete, modify, run now) and *accepting* a trigger all go through here,
whoever calls: the ExecutionActor that finishes a registration, the LoopSchedulerActor, the
RabbitMQ bridge, a capability, a test. Every operation on a loop task names its user, and a
user only ever sees and touches their own (``Forbidden`` otherwise; a deleted task is gone).

Accepting a trigger is the exactly-once step. The run key is claimed in the registry and the
run's ordinary task is created in the TaskStore with an id derived from the key, so:

- a key seen before is a duplicate and nothing new is recorded;
- a duplicate whose task never started (the process died between recording and handing the
  run on) is handed on again, and the ExecutionActor starts a run task only from ``created``,
  so handing it on twice still runs it once.

Time comes from ``clock`` (a callable returning an aware datetime), so tests do not sleep.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Callable

from capabilities.cognition.rule_tables import table
from capabilities.loop.parse import ParsedSchedule, parse_schedule
from capabilities.loop.schedule import Schedule, ScheduleError, next_fire
from capability_actors.loop_scheduler import LoopScheduler
from common.loops.models import (
    ACTIVE, DELETED, DONE, PAUSED, Forbidden, LoopTask, LoopTaskNotFound,
)
from common.loops.registry import LoopTaskRegistry
from capabilities.context.naming import content_words
from common.i18n import EN, ZH
from common.messages import new_id
from common.tasks.models import CREATED, TaskRecord
from common.tasks.store import TaskStore
from events.event_bus import EventBus
from events.event_types import EventType

log = logging.getLogger("flora.loops")

SOURCE = "LoopSchedulerActor"
_LOOP_ID = table("loop_requests")["loop_id"]
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_DAYS_ZH = ["周日", "周一", "周二", "周三", "周四", "周五", "周六"]
_DAY_NUMBERS = set("01234567")  # a cron day of the week: 0 and 7 are Sunday
_STATE_NAMES = {ZH: {PAUSED: "已暂停", DONE: "已完成", DELETED: "已删除"}}


class LoopRequestError(ValueError):
    """A loop operation cannot be done as asked; ``error_type`` is the protocol's."""

    def __init__(self, error_type: str, message: str):
        super().__init__(message)
        self.error_type = error_type


@dataclass(frozen=True)
class RunStart:
    """A run accepted and recorded: its ordinary task exists (state created) and must now be
    handed to the tenant's AgentActor."""

    tenant_id: str
    user_id: str
    loop_task_id: str
    run_key: str
    task_id: str


@dataclass(frozen=True)
class Accepted:
    """What ``accept`` did: ``started`` (recorded now), ``again`` (recorded before but never
    started: hand it on again), ``duplicate``, ``held`` (overlap policy), ``unknown`` (no such
    loop task, or not active)."""

    outcome: str
    start: RunStart | None = None
    reason: str = ""


def run_task_id(tenant_id: str, run_key: str) -> str:
    """The ordinary task that executes a run: the same id for the same key, always."""
    return "run_" + hashlib.sha256(f"{tenant_id}\x00{run_key}".encode()).hexdigest()[:24]


class LoopService:
    def __init__(self, registry: LoopTaskRegistry, store: TaskStore, events: EventBus, *, timezone: str,
                 missed: str = "latest", overlap: str = "skip", clock: Callable[[], datetime] | None = None):
        self.registry = registry
        self.scheduler = LoopScheduler(registry)
        self._store = store
        self._events = events
        self.timezone = timezone
        self._missed = missed
        self._overlap = overlap
        self._clock = clock or (lambda: datetime.now(UTC))

    def now(self) -> datetime:
        return self._clock()

    # -- reading a schedule ------------------------------------------------------------
    def parse(self, text: str) -> ParsedSchedule | None:
        """The schedule written in ``text``, read now in Flora's timezone (ScheduleError for an
        impossible one)."""
        return parse_schedule(text, now=self.now(), timezone=self.timezone)

    def parse_time(self, text: str) -> ParsedSchedule:
        """Like ``parse`` for a value given as a time ("15:30", "every day at 9"): a bare
        clock time or date counts even without a reminder verb."""
        parsed = self.parse(text) or self.parse(f"remind me {text}") or self.parse(f"提醒我 {text}")
        if parsed is None:
            raise ScheduleError("time", f"cannot read a time in {text!r}; try 15:30, tomorrow 9:00, "
                                        "every day at 9:00 or in 20 minutes")
        return parsed

    # -- registering -------------------------------------------------------------------
    def register(self, *, tenant_id: str, user_id: str, content: str, schedule: Schedule | dict,
                 capability: str, parameters: dict | None = None, channel: str = "",
                 task_id: str = "") -> LoopTask:
        """Store a new loop task and publish LOOP_TASK_REGISTERED (on ``task_id``, the task that
        asked for it, when there is one). ScheduleError when it would never fire."""
        schedule = schedule if isinstance(schedule, dict) else schedule.to_dict()
        now = self.now()
        task = LoopTask(loop_task_id=new_id("loop"), tenant_id=tenant_id, user_id=user_id, content=content,
                        schedule=schedule, capability=capability, parameters=dict(parameters or {}),
                        overlap=self._overlap, missed=self._missed, channel=channel, created_at=now.timestamp())
        task = self.scheduler.register(task, now)
        self._events.publish_task_event(
            event_type=EventType.LOOP_TASK_REGISTERED, task_id=task_id or task.loop_task_id, tenant_id=tenant_id,
            user_id=user_id, source=SOURCE,
            data={"loop_task_id": task.loop_task_id, "capability": capability, "schedule": schedule,
                  "next_fire_at": task.next_fire_at})
        log.info("loop task registered loop_task_id=%s user=%s capability=%s next=%s", task.loop_task_id,
                 user_id, capability, task.next_fire_at)
        return task

    # -- a user's own loop tasks -------------------------------------------------------
    def owned(self, tenant_id: str, user_id: str, loop_task_id: str) -> LoopTask:
        task = self.registry.get(tenant_id, loop_task_id)
        if task is None or task.state == DELETED:
            raise LoopTaskNotFound(loop_task_id)
        if task.user_id != user_id:
            raise Forbidden(loop_task_id, user_id)
        return task

    def list(self, tenant_id: str, user_id: str) -> list[LoopTask]:
        return self.registry.list(tenant_id, user_id=user_id, states=(ACTIVE, PAUSED))

    def named_in(self, tenant_id: str, user_id: str, text: str) -> bool:
        """Whether ``text`` names one of the person's loop tasks, by id or by words of its
        content ("the bins reminder" when one takes the bins out)."""
        if _LOOP_ID.search(text):
            return True
        words = content_words(text)
        return bool(words) and any(words & content_words(t.content) for t in self.list(tenant_id, user_id))

    def find(self, tenant_id: str, user_id: str, text: str) -> LoopTask:
        """The one loop task ``text`` means: its id, or words of its content ("the GRPO
        reminder"), or the only one the user has. LoopRequestError when none or several fit."""
        mine = self.list(tenant_id, user_id)
        named = _LOOP_ID.findall(text)
        if named:
            return self.owned(tenant_id, user_id, named[0])
        if not mine:
            raise LoopRequestError("not_found", "You have no loop tasks.")
        words = content_words(text)
        fitting = [t for t in mine if words & content_words(t.content)] if words else []
        if len(fitting) == 1:
            return fitting[0]
        if len(mine) == 1 and not fitting:
            return mine[0]
        choices = fitting or mine
        raise LoopRequestError("invalid_parameter", "Which loop task? Name it by id:\n" +
                               "\n".join(f"- {t.loop_task_id}: {self.describe(t)}" for t in choices))

    def pause(self, tenant_id: str, user_id: str, loop_task_id: str) -> LoopTask:
        self.owned(tenant_id, user_id, loop_task_id)
        return self.registry.update(tenant_id, loop_task_id, user_id=user_id, state=PAUSED)

    def resume(self, tenant_id: str, user_id: str, loop_task_id: str) -> LoopTask:
        """Active again, next firing from now: runs missed while paused are not owed."""
        task = self.owned(tenant_id, user_id, loop_task_id)
        now = self.now()
        upcoming = next_fire(Schedule.from_dict(task.schedule), now)
        return self.registry.update(tenant_id, loop_task_id, user_id=user_id, state=ACTIVE,
                                    last_fire_at=now.timestamp(),
                                    next_fire_at=upcoming.timestamp() if upcoming else None)

    def delete(self, tenant_id: str, user_id: str, loop_task_id: str) -> LoopTask:
        self.owned(tenant_id, user_id, loop_task_id)
        return self.registry.update(tenant_id, loop_task_id, user_id=user_id, state=DELETED, next_fire_at=None)

    def modify(self, tenant_id: str, user_id: str, loop_task_id: str, *, schedule: Schedule | None = None,
               parameters: dict | None = None) -> LoopTask:
        """A new schedule (counted from now) and/or parameters merged into the old ones."""
        task = self.owned(tenant_id, user_id, loop_task_id)
        changes: dict = {}
        if parameters:
            changes["parameters"] = {**task.parameters, **parameters}
        if schedule is not None:
            now = self.now()
            upcoming = next_fire(schedule, now)
            if upcoming is None:
                raise ScheduleError("at", "that time has already passed")
            changes.update(schedule=schedule.to_dict(), next_fire_at=upcoming.timestamp(),
                           last_fire_at=now.timestamp())
        if not changes:
            raise LoopRequestError("invalid_parameter", "Say what to change: a new time (\"every day at 10:00\") "
                                                        "or parameters (name=value).")
        return self.registry.update(tenant_id, loop_task_id, user_id=user_id, **changes)

    # -- runs ------------------------------------------------------------------------------
    def accept(self, *, tenant_id: str, loop_task_id: str, run_key: str, scheduled_at: datetime | None = None,
               parameters: dict | None = None, user_id: str | None = None, source: str = "") -> Accepted:
        """Record one run of a loop task under ``run_key`` (see the module docstring).
        ``user_id``, when given, must own the task (a user's "run it now")."""
        task = self.registry.get(tenant_id, loop_task_id)
        if task is None or task.state == DELETED:
            return Accepted("unknown", reason=f"no loop task {loop_task_id!r} in tenant {tenant_id!r}")
        if user_id is not None and task.user_id != user_id:
            raise Forbidden(loop_task_id, user_id)
        if task.state != ACTIVE and user_id is None:
            return Accepted("unknown", reason=f"loop task {loop_task_id} is {task.state}")
        start = RunStart(tenant_id, task.user_id, loop_task_id, run_key, run_task_id(tenant_id, run_key))
        at = scheduled_at or self.now()
        if task.overlap == "skip" and user_id is None and self.registry.running(tenant_id, loop_task_id):
            if self._store.get_task(tenant_id, start.task_id) is None:
                return Accepted("held", reason="the previous run is still going (overlap policy skip)")
        if not self.scheduler.claim(tenant_id, loop_task_id, run_key, at):
            existing = self._store.get_task(tenant_id, start.task_id)
            if existing is not None and existing.state == CREATED:
                return Accepted("again", start)
            return Accepted("duplicate", reason=f"run {run_key} was accepted before")
        record = TaskRecord(task_id=start.task_id, tenant_id=tenant_id, user_id=task.user_id, content=task.content,
                            msg_id=new_id("msg"), intent="task", capability=task.capability,
                            parameters={**task.parameters, **(parameters or {})}, approved=True,
                            meta={"run": {"loop_task_id": loop_task_id, "run_key": run_key,
                                          "scheduled_at": at.timestamp(), "channel": task.channel}})
        self._events.create_task(record, source=SOURCE, data={"loop_task_id": loop_task_id, "run_key": run_key})
        self._events.publish_task_event(
            event_type=EventType.TASK_TRIGGERED, task_id=start.task_id, tenant_id=tenant_id, user_id=task.user_id,
            source=SOURCE, data={"loop_task_id": loop_task_id, "run_key": run_key, "source": source,
                                 "scheduled_at": at.timestamp()})
        return Accepted("started", start)

    def finish(self, tenant_id: str, run_key: str, *, ok: bool, task_id: str = "") -> None:
        self.scheduler.finish(tenant_id, run_key, ok=ok, task_id=task_id)

    # -- words -----------------------------------------------------------------------------
    def describe(self, task: LoopTask, language: str = EN) -> str:
        """One line a person reads, in their language: what, when, state."""
        when = describe_schedule(task.schedule, language)
        upcoming = ""
        if task.state == ACTIVE and task.next_fire_at is not None:
            upcoming = ("；下次 " if language == ZH else "; next ") + self.local(task.next_fire_at)
        state = "" if task.state == ACTIVE else f" [{_STATE_NAMES.get(language, {}).get(task.state, task.state)}]"
        return f"{task.content} — {when}{upcoming}{state}"

    def local(self, timestamp: float) -> str:
        from zoneinfo import ZoneInfo

        return datetime.fromtimestamp(timestamp, ZoneInfo(self.timezone)).strftime("%Y-%m-%d %H:%M %Z")


def describe_schedule(schedule: dict, language: str = EN) -> str:
    """"every day at 09:00", "every 20 minutes", "once at 2026-03-02 15:30 (Asia/Shanghai)";
    in Chinese "每天 09:00", "每 20 分钟", "一次：2026-03-02 15:30（Asia/Shanghai）"."""
    zh = language == ZH
    try:
        s = Schedule.from_dict(schedule)
    except ScheduleError:
        return "无法读取的时间安排" if zh else "an unreadable schedule"
    zone = f"（{s.timezone}）" if zh else f" ({s.timezone})"
    if s.kind == "once":
        at = datetime.fromisoformat(s.at).astimezone(s.zone)
        return f"一次：{at:%Y-%m-%d %H:%M}{zone}" if zh else f"once at {at:%Y-%m-%d %H:%M}{zone}"
    if s.kind == "interval":
        return ("每 " if zh else "every ") + _span(s.every_s, language)
    minute, hour, dom, month, dow = s.cron.split()
    if minute.isdigit() and hour.isdigit() and month == "*":
        clock = f"{int(hour):02d}:{int(minute):02d}"
        if dom == "*" and dow == "*":
            return f"每天 {clock}{zone}" if zh else f"every day at {clock}{zone}"
        if dom == "*" and dow == "1-5":
            return f"每个工作日 {clock}{zone}" if zh else f"every weekday at {clock}{zone}"
        if dom == "*" and set(dow.split(",")) <= _DAY_NUMBERS:
            days = [int(d) % 7 for d in dow.split(",")]
            if zh:
                return "每" + "、".join(_DAYS_ZH[d] for d in days) + f" {clock}{zone}"
            return f"every {', '.join(_DAYS[d] for d in days)} at {clock}{zone}"
        if dow == "*" and dom.isdigit():
            return f"每月 {dom} 日 {clock}{zone}" if zh else f"on day {dom} of every month at {clock}{zone}"
    return f"按 cron「{s.cron}」{zone}" if zh else f"on cron '{s.cron}'{zone}"


def _span(seconds: int, language: str = EN) -> str:
    units = (("天", 86400), ("小时", 3600), ("分钟", 60)) if language == ZH else (
        ("day", 86400), ("hour", 3600), ("minute", 60))
    for unit, size in units:
        if seconds % size == 0:
            n = seconds // size
            if language == ZH:
                return f"{n} {unit}"
            return f"{n} {unit}s" if n != 1 else unit
    return f"{seconds} 秒" if language == ZH else f"{seconds} seconds"

