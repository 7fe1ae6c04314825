"""LoopCoordinator: what the LoopSchedulerActor decides, as a plain class.

- ``tick``: the scheduler's due runs are published as triggers to the trigger queue (the
  in-process one is drained and accepted here at once; RabbitMQ's comes back through the
  bridge as ``loop_fire``), and each accepted run is handed to the tenant's AgentActor.
- ``on_command``: a user's operation on their loop tasks (list, trigger, pause, resume,
  delete, modify), answered like any user message.
- ``on_result``: a run finished (or paused, or failed): the run is finished in the registry,
  and the result becomes a notification for its user (kept in the store, pushed by the
  InteractionActor where the user's channel can take pushes). A run the user asked for
  ("run it now") is answered to them directly instead.

Methods return ``(destination, message)`` pairs: ``"agent"`` (the tenant's AgentActor),
``"reply"`` (whoever sent ``msg_id``) and ``"notify"`` (the InteractionActor).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime

from capabilities.loop.intake import TriggerIntake
from capabilities.loop.queues import TriggerQueue
from capabilities.loop.rabbit_bridge import Trigger
from capabilities.loop.schedule import Schedule, ScheduleError, late_by
from capabilities.loop.service import LoopRequestError, LoopService, RunStart
from capability_actors.loop_scheduler import Fire
from common.i18n import language_of, say
from common import messages as m
from common.loops.models import Forbidden, LoopStoreError, LoopTask, LoopTaskNotFound
from common.tasks.models import Notification
from common.tasks.store import TaskStore

log = logging.getLogger("flora.loops")

Out = tuple[str, dict]
_NOTE_KINDS = {"task_completed": "loop_run_completed", "task_paused": "loop_run_paused", "task_error": "loop_run_failed"}


@dataclass
class Running:
    start: RunStart
    answer_to: str | None = None  # msg_id of a user's "run it now", answered with the result


class LoopCoordinator:
    def __init__(self, service: LoopService, store: TaskStore, queue: TriggerQueue, *, default_tenant: str):
        self.service = service
        self._store = store
        self._queue = queue
        self.intake = TriggerIntake(service, default_tenant=default_tenant)
        self.running: dict[str, Running] = {}  # by the run's task_id (a run may be handed on twice)

    # -- time ----------------------------------------------------------------------------
    def tick(self) -> list[Out]:
        tick = self.service.scheduler.tick(self.service.now(), publish=self._publish)
        if tick.fires:
            log.info("tick: %d run(s) due, %d held back", len(tick.fires), len(tick.held_back))
        return self.drain()

    def _publish(self, fire: Fire) -> None:
        at = fire.scheduled_at.isoformat().replace("+00:00", "Z")
        self._queue.publish(Trigger(loop_task_id=fire.task.loop_task_id, run_key=fire.run_key, scheduled_at=at,
                                    tenant_id=fire.task.tenant_id, source="scheduler"))

    def drain(self) -> list[Out]:
        """Accept the triggers of the in-process queue; one the store cannot take now goes
        back on the queue for the next tick."""
        outs: list[Out] = []
        for trigger in self._queue.drain():
            try:
                accepted = self.intake.accept(trigger)
            except Exception:
                log.exception("trigger %s could not be recorded; retrying next tick", trigger.run_key)
                self._queue.publish(trigger)
                continue
            if accepted.start is not None:
                outs += self.start(accepted.start)
        return outs

    def start(self, start: RunStart, answer_to: str | None = None) -> list[Out]:
        """Hand a recorded run to the tenant's AgentActor."""
        if start.task_id not in self.running or answer_to is not None:
            self.running[start.task_id] = Running(start, answer_to)
        return [("agent", m.run_task(task_id=start.task_id, msg_id=m.new_id("msg"), tenant_id=start.tenant_id,
                                     user_id=start.user_id))]

    def on_fire(self, msg: m.LoopFire) -> list[Out]:
        """A run the bridge recorded; one that is not a recorded run of that loop task is dropped."""
        task = self._store.get_task(msg["tenant_id"], msg["task_id"])
        run = task.meta.get("run", {}) if task is not None else {}
        if task is None or run.get("run_key") != msg["run_key"] or run.get("loop_task_id") != msg["loop_task_id"] \
                or task.user_id != msg["user_id"]:
            log.warning("loop_fire for %s does not match a recorded run; dropped", msg["task_id"])
            return []
        return self.start(RunStart(msg["tenant_id"], task.user_id, msg["loop_task_id"], msg["run_key"], task.task_id))

    # -- results -----------------------------------------------------------------------
    def on_result(self, msg: dict) -> list[Out]:
        """A run's reply, matched by task_id: a run handed on twice gets a ``conflict`` for the
        hand-on that lost (ignored) and one real result."""
        task_id = msg.get("task_id", "")
        if msg["message_type"] == "task_error" and msg.get("error_type") == "conflict":
            log.info("run task %s was already taken by another hand-on; waiting for its result", task_id)
            return []
        running = self.running.pop(task_id, None)
        if running is None:
            log.info("result for task_id=%s matches no run here", task_id)
            return []
        start, kind = running.start, msg["message_type"]
        ok = kind == "task_completed"
        try:
            self.service.finish(start.tenant_id, start.run_key, ok=ok, task_id=start.task_id)
        except LoopStoreError as exc:
            log.warning("finishing run %s: %s", start.run_key, exc)
        if running.answer_to is not None:
            return [("reply", {**msg, "msg_id": running.answer_to})]
        return self._notify(start, kind, msg)

    def _notify(self, start: RunStart, kind: str, msg: dict) -> list[Out]:
        loop = self.service.registry.get(start.tenant_id, start.loop_task_id)
        what = loop.content if loop is not None else start.loop_task_id
        text = msg.get("message", "")
        framing = {"task_error": "loop_failed", "task_paused": "loop_waiting"}.get(kind)  # a result is told as it is
        if framing is not None:
            text = say(language_of(what), framing, loop_id=start.loop_task_id, what=what, text=text)
        late = self._late(loop, start)
        if late is not None:  # the next run was due before this result: told as late, not as news
            due, seconds = late
            text = say(language_of(what), "loop_late", due=due.strftime("%Y-%m-%d %H:%M"),
                       ago=_ago(language_of(what), seconds), text=text)
        note = self._store.add_notification(Notification(
            notification_id=m.new_id("note"), tenant_id=start.tenant_id, user_id=start.user_id, message=text,
            kind=_NOTE_KINDS[kind],
            task_id=start.task_id, loop_task_id=start.loop_task_id,
            channel=loop.channel if loop is not None else "",
            data={"run_key": start.run_key, "result": msg.get("result"), "error_type": msg.get("error_type"),
                  **({"late_s": round(late[1])} if late is not None else {})}))
        return [("notify", m.notification(notification_id=note.notification_id, tenant_id=note.tenant_id,
                                          user_id=note.user_id, message=note.message, kind=note.kind,
                                          task_id=note.task_id, loop_task_id=note.loop_task_id,
                                          channel=note.channel or None, data=note.data))]

    def _late(self, loop, start: RunStart) -> tuple[datetime, float] | None:
        """The run's time and how late its result is, when it is later than the schedule's period."""
        if loop is None or not loop.schedule or not start.run_key.startswith(start.loop_task_id + ":"):
            return None
        try:
            due = datetime.fromisoformat(start.run_key[len(start.loop_task_id) + 1:].replace("Z", "+00:00"))
            seconds = late_by(Schedule.from_dict(loop.schedule), due, self.service.now())
        except (ValueError, ScheduleError) as exc:
            log.warning("run %s: cannot tell whether it is late: %s", start.run_key, exc)
            return None
        return None if seconds is None else (due, seconds)

    # -- a user's operations -------------------------------------------------------------
    def on_command(self, msg: m.LoopCommand) -> list[Out]:
        msg_id, tenant, user = msg["msg_id"], msg["tenant_id"], msg["user_id"]
        service = self.service
        try:
            if msg["op"] == "list":
                return [("reply", self._listing(msg))]
            task = (service.owned(tenant, user, msg["loop_task_id"]) if msg.get("loop_task_id")
                    else service.find(tenant, user, msg.get("reference", "")))
            op = msg["op"]
            if op == "trigger":
                key = f"{task.loop_task_id}:manual:{uuid.uuid4().hex[:12]}"
                accepted = service.accept(tenant_id=tenant, loop_task_id=task.loop_task_id, run_key=key,
                                          user_id=user, source="user")
                if accepted.start is None:
                    raise LoopRequestError("conflict", f"{task.loop_task_id} cannot run now: {accepted.reason}")
                return self.start(accepted.start, answer_to=msg_id)
            if op == "pause":
                done, verb = service.pause(tenant, user, task.loop_task_id), "Paused"
            elif op == "resume":
                done, verb = service.resume(tenant, user, task.loop_task_id), "Resumed"
            elif op == "delete":
                done, verb = service.delete(tenant, user, task.loop_task_id), "Deleted"
            else:
                parsed = service.parse(msg.get("schedule_text", "")) if msg.get("schedule_text") else None
                done = service.modify(tenant, user, task.loop_task_id, schedule=parsed.schedule if parsed else None,
                                      parameters=msg.get("parameters"))
                verb = "Changed"
        except LoopRequestError as exc:
            return [("reply", m.task_error(msg_id=msg_id, error_type=exc.error_type, message=str(exc)))]
        except Forbidden as exc:
            return [("reply", m.task_error(msg_id=msg_id, error_type="forbidden", task_id=exc.loop_task_id,
                                           message=f"Loop task {exc.loop_task_id} belongs to another user."))]
        except LoopTaskNotFound as exc:
            return [("reply", m.task_error(msg_id=msg_id, error_type="not_found", task_id=exc.loop_task_id,
                                           message=f"You have no loop task {exc.loop_task_id}."))]
        except ScheduleError as exc:
            return [("reply", m.task_error(msg_id=msg_id, error_type="invalid_parameter", field="time",
                                           message=f"That schedule cannot work: {exc}"))]
        return [("reply", m.task_completed(msg_id=msg_id, task_id=done.loop_task_id, capability="loop_tasks",
                                           result=self._view(done),
                                           message=say(msg.get("language", "en"), f"loop_{verb}",
                                                       loop_task_id=done.loop_task_id,
                                                       what=service.describe(done, msg.get("language", "en")))))]

    def _listing(self, msg: m.LoopCommand) -> dict:
        tasks = self.service.list(msg["tenant_id"], msg["user_id"])
        lang = msg.get("language", "en")
        text = (say(lang, "loop_list") + "\n" + "\n".join(f"- {t.loop_task_id}: {self.service.describe(t, lang)}"
                                                          for t in tasks) if tasks else say(lang, "loop_none"))
        return m.task_completed(msg_id=msg["msg_id"], task_id="loop_tasks", capability="loop_tasks",
                                result=[self._view(t) for t in tasks], message=text)

    def _view(self, task: LoopTask) -> dict:
        return {**task.to_dict(), "description": self.service.describe(task)}


def _ago(language: str, seconds: float) -> str:
    if seconds < 3600:
        return say(language, "ago_minutes", n=max(1, round(seconds / 60)))
    return say(language, "ago_hours", n=f"{seconds / 3600:.1f}".removesuffix(".0"))
