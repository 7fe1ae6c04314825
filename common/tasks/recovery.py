"""TaskRecovery: what a node does at start-up about the work its previous life left behind.

Paused tasks need nothing: they live in the store and the user's answer resumes them. A
task that was *running* when the node died (kill -9, power loss) cannot be resumed safely:
its capability may have had half its effect. It is marked failed, with a TASK_FAILED event
(``reason: interrupted``) and a notification that tells its user, so nothing vanishes
silently. A recorded loop run that had not started yet (state ``created``) is handed on
again — nothing of it ran, and its run key was claimed once, so it still runs exactly once.
A user's task accepted but not started (``created``/``planned``) is failed like a running
one: its user stopped waiting for the reply long ago.

A node that stops cleanly (SIGTERM, SIGINT) fails its running tasks the same way at once
(:meth:`TaskRecovery.fail_running`), so their users learn it without waiting for a restart.

Only tasks of this node (``meta["node"]``, stamped when a task starts running; tasks never
started carry none) last changed before this start are touched, so a restart never takes
work from a node that is alive.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable

from common import messages as m
from common.tasks.models import (
    CREATED, FAILED, PLANNED, RUNNING, InvalidTransition, Notification, TaskRecord, origin_channel,
)
from common.tasks.store import TaskStore
from events.event_bus import EventBus

log = logging.getLogger("flora.recovery")

SOURCE = "recovery"
INTERRUPTED = ("Flora stopped while this task was {state}, so it did not finish and was not retried (it may have "
               "done part of its work). Ask again to run it.")


@dataclass
class RecoveryReport:
    failed: list[str] = field(default_factory=list)  # task ids marked failed
    handed_on: list[str] = field(default_factory=list)  # loop runs started again
    notes: list[Notification] = field(default_factory=list)  # what the failed tasks' people are told

    def __bool__(self) -> bool:
        return bool(self.failed or self.handed_on)


class TaskRecovery:
    def __init__(self, store: TaskStore, events: EventBus, *, node: str,
                 hand_on: Callable[[TaskRecord], None] | None = None,
                 finish_run: Callable[[TaskRecord], None] | None = None):
        """``hand_on(task)`` starts a recorded loop run again; ``finish_run(task)`` closes a
        failed run in the loop registry (so its overlap policy does not wait for it forever)."""
        self._store = store
        self._events = events
        self._node = node
        self._hand_on = hand_on
        self._finish_run = finish_run

    def recover(self, *, started_at: float) -> RecoveryReport:
        report = RecoveryReport()
        for task in self._store.unfinished_tasks((CREATED, PLANNED, RUNNING), updated_before=started_at):
            if task.meta.get("node", self._node) != self._node:
                continue
            run = task.meta.get("run")
            if run and task.state == CREATED and self._hand_on is not None:
                self._hand_on(task)
                report.handed_on.append(task.task_id)
            elif (note := self._fail(task)) is not None:
                report.failed.append(task.task_id)
                report.notes.append(note)
        if report:
            log.warning("recovered after restart: %d task(s) marked failed, %d loop run(s) started again",
                        len(report.failed), len(report.handed_on))
        return report

    def fail_running(self, *, stopped_at: float) -> RecoveryReport:
        """At a clean stop: the tasks this node was running are failed now, as :meth:`recover`
        would fail them at the next start. Tasks not started yet (a recorded loop run, work
        accepted but not begun) are left to the next start, which hands loop runs on again."""
        report = RecoveryReport()
        for task in self._store.unfinished_tasks((RUNNING,), updated_before=stopped_at):
            if task.meta.get("node") == self._node and (note := self._fail(task)) is not None:
                report.failed.append(task.task_id)
                report.notes.append(note)
        if report:
            log.warning("stopping: %d running task(s) marked failed", len(report.failed))
        return report

    def _fail(self, task: TaskRecord) -> Notification | None:
        """Fail ``task`` as interrupted; the notification that tells its person (sent to the chat
        the task came from, when it came from one), None when it moved meanwhile."""
        text = INTERRUPTED.format(state=task.state)
        try:
            self._events.transition(task.tenant_id, task.task_id, FAILED, source=SOURCE, expect=(task.state,),
                                    data={"reason": "interrupted", "was": task.state, "error_type": "interrupted"},
                                    error=text)
        except InvalidTransition:  # it moved meanwhile: someone is working on it
            return None
        what = task.content if len(task.content) <= 80 else task.content[:80] + "…"
        note = self._store.add_notification(Notification(
            notification_id=m.new_id("note"), tenant_id=task.tenant_id, user_id=task.user_id,
            message=f"Task {task.task_id} ({what}) was interrupted: {text}", kind="task_interrupted",
            task_id=task.task_id, loop_task_id=(task.meta.get("run") or {}).get("loop_task_id", ""),
            channel=origin_channel(task), data={"state": task.state, "capability": task.capability}))
        if task.meta.get("run") and self._finish_run is not None:
            self._finish_run(task)
        return note
