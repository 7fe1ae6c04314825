"""LoopScheduler: what the LoopSchedulerActor decides, as a plain class with time injected.

``register`` stores a loop task with its first fire time. ``tick(now)`` returns the runs
due: for each loop task that is due, the scheduled times its missed-run policy owes
(``catch_up`` all of them, ``skip`` only an on-time one, ``latest`` the most recent), minus
those its overlap policy holds back (``skip``: not while a run is still going), and moves
the task's next fire time on. A tick only *proposes* runs: each becomes a trigger with a
run key, and a run starts when its trigger is accepted (``claim``), once per key ever. So
two schedulers ticking at once, a tick repeated after a crash, or a trigger delivered twice
all end in one run (``LoopService.accept`` claims, for scheduled and outside triggers alike).

Exceptions: the registry's (``LoopTaskNotFound``, ``RunNotFound``) and ``ScheduleError`` for a
schedule that would never fire.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Callable

from capabilities.loop.schedule import Schedule, ScheduleError, due_runs, next_fire, run_key
from common.loops.models import ACTIVE, DONE, OVERLAP_SKIP, RUN_COMPLETED, RUN_FAILED, LoopTask, RunRecord
from common.loops.registry import LoopTaskRegistry

log = logging.getLogger("flora.loops")

DEFAULT_BATCH = 100


@dataclass(frozen=True)
class Fire:
    """One run to start: the loop task, its run key and the time it was due."""

    task: LoopTask
    run_key: str
    scheduled_at: datetime


@dataclass
class Tick:
    fires: list[Fire] = field(default_factory=list)
    held_back: list[Fire] = field(default_factory=list)  # overlap policy "skip": the last run still goes
    failed: list[Fire] = field(default_factory=list)  # not published; the task stays due


class LoopScheduler:
    def __init__(self, registry: LoopTaskRegistry, *, batch: int = DEFAULT_BATCH):
        self._registry = registry
        self._batch = batch

    def register(self, task: LoopTask, now: datetime) -> LoopTask:
        """Store a new loop task with its first fire time; a schedule with none is refused."""
        first = next_fire(Schedule.from_dict(task.schedule), now)
        if first is None:
            raise ScheduleError("at", "that time has already passed")
        task.next_fire_at = first.timestamp()
        return self._registry.add(task)

    def tick(self, now: datetime, publish: Callable[[Fire], None] | None = None) -> Tick:
        """The runs due at ``now``. With ``publish``, each is handed to it before the task's
        next fire time moves on; a publish that raises leaves that task due, so the next tick
        publishes its runs again (under the same run keys, so they cannot run twice)."""
        tick = Tick()
        for task in self._registry.due(now.timestamp(), self._batch):
            self._tick_one(task, now, tick, publish)
        return tick

    def _tick_one(self, task: LoopTask, now: datetime, tick: Tick, publish: Callable[[Fire], None] | None) -> None:
        schedule = Schedule.from_dict(task.schedule)
        last = _at(task.last_fire_at if task.last_fire_at is not None else task.created_at)
        owed = due_runs(schedule, last, now, task.missed, self._batch)
        busy = task.overlap == OVERLAP_SKIP and bool(self._registry.running(task.tenant_id, task.loop_task_id))
        for at in owed:
            fire = Fire(task, run_key(task.loop_task_id, at), at)
            if busy:
                tick.held_back.append(fire)
                log.info("loop run held back (previous run still going) loop_task_id=%s run_key=%s",
                         task.loop_task_id, fire.run_key)
            else:
                if publish is not None:
                    try:
                        publish(fire)
                    except Exception as exc:  # the broker is away: keep the task due, try next tick
                        log.warning("cannot publish run %s of loop task %s (%s); retrying next tick",
                                    fire.run_key, task.loop_task_id, exc)
                        tick.failed.append(fire)
                        return
                tick.fires.append(fire)
                busy = task.overlap == OVERLAP_SKIP
        more_owed = task.missed == "catch_up" and len(owed) == self._batch
        upcoming = now if more_owed else next_fire(schedule, now)
        self._registry.update(
            task.tenant_id, task.loop_task_id, user_id=task.user_id,
            last_fire_at=owed[-1].timestamp() if owed else task.last_fire_at,
            next_fire_at=upcoming.timestamp() if upcoming else None)

    def claim(self, tenant_id: str, loop_task_id: str, key: str, scheduled_at: datetime) -> bool:
        """Record the run under ``key``; False when that key ran (or is running) already."""
        return self._registry.claim_run(tenant_id, loop_task_id, key, scheduled_at.timestamp())

    def finish(self, tenant_id: str, key: str, *, ok: bool, task_id: str = "") -> RunRecord:
        """Record how a run ended; a loop task whose schedule fires no more (a one-time reminder)
        is ``done`` once its run ended, whether it succeeded or not."""
        run = self._registry.finish_run(tenant_id, key, RUN_COMPLETED if ok else RUN_FAILED, task_id)
        task = self._registry.get(tenant_id, run.loop_task_id)
        if task is not None and task.state == ACTIVE and task.next_fire_at is None \
                and not self._registry.running(tenant_id, task.loop_task_id):
            self._registry.update(tenant_id, task.loop_task_id, user_id=task.user_id, state=DONE)
            log.info("loop task %s is done: its schedule fires no more", task.loop_task_id)
        return run


def _at(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)
