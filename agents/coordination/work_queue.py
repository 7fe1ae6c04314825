"""WorkQueue: what the AgentActor decides about starting tasks under the concurrency limits and
about work its ExecutionActors lost, as a plain class used by the TaskCoordinator.

Starting: ``admit`` takes a slot (``common.tasks.limits.Admission``) and sends the task to a
worker, or records it ``queued`` (with a TASK_QUEUED event) and answers the user at once with
``task_queued`` and its place in line. ``finished`` gives the slot back when a task completes,
fails or pauses, and starts the oldest queued tasks that fit now (``drain``). A task that
started from the queue has had its answer already, so its result (or its question, when it
pauses) is kept for its user as a notification, the way loop runs' results are.

Supervision: when an ExecutionActor dies with a task in flight, ``lost`` either queues the
task again to be retried after an exponential back-off (``actors.retry_max_attempts``; the
attempt count is kept on the task, ``meta["attempts"]``, so a restart does not reset it) and
asks for a wake-up, or fails it with a sentence that says how often it was tried. A message
that made a worker raise twice (Thespian's PoisonMessage) is never retried: ``poisoned``
fails the task with ``error_type: poison_message`` and records the traceback's tail, so a
bug cannot loop.

Every method returns ``(destination, message)`` pairs as the TaskCoordinator does, plus
``("wakeup", {"delay_s": s, "payload": {...}})``: the actor calls ``wakeupAfter`` and hands
the payload back to ``on_wakeup``.

No exceptions of its own; a task that changed meanwhile (InvalidTransition) is left to
whoever changed it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from common import messages as m
from common import spans
from common.i18n import language_of, say
from common.tasks.limits import Admission
from common.tasks.models import FINAL_STATES, QUEUED, InvalidTransition, Notification, TaskNotFound, TaskRecord, origin_channel
from common.tasks.store import TaskStore
from events.event_bus import EventBus
from events.event_types import EventType

log = logging.getLogger("flora.agent.queue")

SOURCE = "AgentActor"
TASK_QUEUED = EventType.TASK_QUEUED
TASK_RETRY_SCHEDULED = EventType.TASK_RETRY_SCHEDULED
POISON_MESSAGE = EventType.POISON_MESSAGE
TRACEBACK_TAIL = 800  # characters of a poison message's traceback kept on its event
Out = tuple[str, dict]


@dataclass(frozen=True)
class RetryPolicy:
    """``max_attempts`` retries after the first try (0: none), waiting ``backoff_s`` and
    doubling, never more than ``backoff_max_s``."""

    max_attempts: int = 0
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0

    @classmethod
    def from_config(cls, actors) -> "RetryPolicy":
        return cls(actors.retry_max_attempts, actors.retry_backoff_s, actors.retry_backoff_max_s)

    def delay(self, attempt: int) -> float:
        """The wait before retry number ``attempt`` (1 for the first)."""
        return min(self.backoff_s * 2 ** (attempt - 1), self.backoff_max_s)


class WorkQueue:
    def __init__(self, store: TaskStore, events: EventBus, admission: Admission | None, *,
                 retry: RetryPolicy = RetryPolicy(), agent_id: str = "agent"):
        self._store = store
        self._events = events
        self.admission = admission  # None: no limits, every task starts at once
        self.retry = retry
        self._agent_id = agent_id
        self._starting: set[str] = set()  # taken from the queue and sent to a worker, not answered yet

    # -- starting -------------------------------------------------------------------------
    def admit(self, task: TaskRecord, start: dict | None = None) -> list[Out]:
        """Start ``task`` (just recorded, or resumed by its user: ``start`` is then its
        ``resume_execution``) or queue it; from the queue it starts with ``execute``."""
        with spans.span("limits"):
            return self._admitted(task, start)

    def _admitted(self, task: TaskRecord, start: dict | None) -> list[Out]:
        refusal = self.admission.try_start(task) if self.admission is not None else None
        if refusal is None:
            return [("worker", start or _execute(task))]
        reason = f"{refusal.running} running, {refusal.describe()}"
        try:
            task = self._events.transition(
                task.tenant_id, task.task_id, QUEUED, source=SOURCE, agent_id=self._agent_id, event_type=TASK_QUEUED,
                data={"scope": refusal.scope, "key": refusal.name, "limit": refusal.limit, "reason": reason},
                # msg_id: the ask this queueing answered; a later resume (a new msg_id) is answered normally
                meta={**task.meta, "queue": {"scope": refusal.scope, "key": refusal.name, "limit": refusal.limit,
                                             "reason": reason, "at": time.time(), "msg_id": task.msg_id}})
        except InvalidTransition as exc:
            return [("reply", m.task_error(msg_id=task.msg_id, error_type="conflict", message=str(exc),
                                           task_id=task.task_id))]
        position = self.admission.position(task)
        ahead = f"behind {position - 1} other queued task{'s' if position != 2 else ''}" if position > 1 else "next"
        log.info("task queued task_id=%s position=%d %s", task.task_id, position, reason)
        return [("reply", m.task_queued(
            msg_id=task.msg_id, task_id=task.task_id, position=position, scope=refusal.scope, limit=refusal.limit,
            capability=task.capability,
            message=f"Queued ({ahead}; {reason}). Task {task.task_id} starts by itself and its result "
                    "comes as a notification."))]

    def drain(self, tenant_id: str) -> list[Out]:
        """Start the oldest queued tasks that fit now."""
        if self.admission is None:
            return [("worker", _execute(t)) for t in self._due_without_limits(tenant_id)]
        ready = self.admission.startable(tenant_id, skip=self._starting)
        self._starting.update(t.task_id for t in ready)
        return [("worker", _execute(t)) for t in ready]

    def _due_without_limits(self, tenant_id: str) -> list[TaskRecord]:
        """With no limits only retries wait in the queue: those whose back-off is over."""
        now = time.time()
        queued = self._store.list_tasks(tenant_id, states=[QUEUED], limit=10_000)
        due = [t for t in sorted(queued, key=lambda t: (t.created_at, t.task_id))
               if t.task_id not in self._starting and (t.meta.get("retry") or {}).get("not_before", 0) <= now]
        self._starting.update(t.task_id for t in due)
        return due

    def finished(self, task: TaskRecord, answer: dict) -> tuple[bool, list[Out]]:
        """A task completed, failed or paused (``answer`` is what its user is told): give its
        slot back and start what fits now. Returns whether the answer still goes to a waiting
        ask (False: the ask was answered with ``task_queued``, and the answer is kept as a
        notification instead), and what to send."""
        with spans.span("limits"):
            return self._finished(task, answer)

    def _finished(self, task: TaskRecord, answer: dict) -> tuple[bool, list[Out]]:
        self._starting.discard(task.task_id)
        if self.admission is not None:
            self.admission.release(task)
        detached = (task.meta.get("queue") or {}).get("msg_id") == task.msg_id
        pushed = [("notify", self._notify(task, answer))] if detached else []
        # with no limits a freed slot starts nothing: only retries wait then, each started by its wake-up
        started = self.drain(task.tenant_id) if self.admission is not None else []
        return not detached, [*pushed, *started]

    def _notify(self, task: TaskRecord, answer: dict) -> dict:
        """Keep the answer as the user's notification; the message that pushes it to them."""
        kind = answer["message_type"]
        what = task.content if len(task.content) <= 80 else task.content[:80] + "…"
        key = {"task_error": "queued_failed", "task_paused": "queued_waiting"}.get(kind, "queued_finished")
        text = say(language_of(task.content), key, task_id=task.task_id, what=what, text=answer.get("message", ""))
        note = self._store.add_notification(Notification(
            notification_id=m.new_id("note"), tenant_id=task.tenant_id, user_id=task.user_id, message=text,
            kind={"task_completed": "task_completed", "task_paused": "task_paused"}.get(kind, "task_failed"),
            task_id=task.task_id, channel=origin_channel(task),
            data={"result": answer.get("result"), "error_type": answer.get("error_type"), "queued": True}))
        return m.notification(notification_id=note.notification_id, tenant_id=note.tenant_id, user_id=note.user_id,
                              message=note.message, kind=note.kind, task_id=note.task_id, data=note.data,
                              channel=note.channel or None)

    # -- supervision ----------------------------------------------------------------------
    def lost(self, message: dict, reason: str) -> list[Out] | None:
        """A worker died with ``message`` (execute / resume_execution) in flight. Queue its task
        to be retried and ask for a wake-up; None when it is not retried (no retries left, a
        loop run, a task that ended) and the caller fails it as before."""
        self._starting.discard(message["task_id"])
        task = self._store.get_task(message.get("tenant_id", ""), message["task_id"])
        if task is None:
            return None
        if self.admission is not None:
            self.admission.release(task)
        if task.state in FINAL_STATES or task.meta.get("run"):
            return None  # a loop run starts only from created: it is failed, and its registry answers for it
        attempt = int(task.meta.get("attempts", 0)) + 1
        if attempt > self.retry.max_attempts:
            return None
        delay = self.retry.delay(attempt)
        retry = {"attempt": attempt, "not_before": time.time() + delay, "reason": reason}
        try:
            self._events.transition(task.tenant_id, task.task_id, QUEUED, source=SOURCE, agent_id=self._agent_id,
                                    event_type=TASK_RETRY_SCHEDULED, expect=(task.state,),
                                    data={"attempt": attempt, "delay_s": delay, "reason": reason},
                                    meta={**task.meta, "attempts": attempt, "retry": retry})
        except (InvalidTransition, TaskNotFound):
            return None
        log.warning("worker lost task_id=%s (%s); retry %d of %d in %.1fs", task.task_id, reason, attempt,
                    self.retry.max_attempts, delay)
        return [("wakeup", {"delay_s": delay, "payload": {"retry": task.task_id, "tenant_id": task.tenant_id}})]

    def on_wakeup(self, payload: dict) -> list[Out]:
        """A retry's back-off is over: start it, and anything else that fits, if a slot is free."""
        if "retry" in payload:
            return self.drain(payload["tenant_id"])
        return []

    def poisoned(self, message: Any) -> None:
        """Forget that a poisoned message was being started (its task is failed by the caller)."""
        if isinstance(message, dict):
            self._starting.discard(message.get("task_id", ""))

    # -- what a user or an operator sees ------------------------------------------------
    def position(self, task: TaskRecord) -> int:
        return self.admission.position(task) if self.admission is not None else 0

    def queue_lengths(self, tenant_id: str) -> dict[str, int]:
        """Queued tasks per key (``tenant``, ``user:<id>``, ``capability:<name>``): for a status view."""
        if self.admission is not None:
            return self.admission.queue_lengths(tenant_id)
        queued = self._store.list_tasks(tenant_id, states=[QUEUED], limit=10_000)  # retries waiting, with no limits
        return {"tenant": len(queued)} if queued else {}

    def running_counts(self, tenant_id: str) -> dict[str, int]:
        """Slots held per key, named as in ``queue_lengths`` (empty with no limits: nothing is counted)."""
        return self.admission.running_counts(tenant_id) if self.admission is not None else {}


def _execute(task: TaskRecord) -> dict:
    """Run ``task``, just written or read: the worker need not read it again."""
    return m.execute(task_id=task.task_id, tenant_id=task.tenant_id, user_id=task.user_id,
                     capability=task.capability, parameters=task.parameters, task=task.to_dict())


def traceback_tail(details: Any) -> str:
    return str(details or "")[-TRACEBACK_TAIL:]

