"""TaskCoordinator: what an AgentActor decides, as a plain class.

A new task whose capability the rules are sure of becomes a task record and an
``execute`` at once; any other goes to a worker to be understood (``analyze``: a model
call), whose analysis either answers the user directly (chat, help, a clarification) or
becomes the task record and ``execute``. A worker's ``task_paused`` is passed to the front desk; its ``subtask_result``
completes or fails the task. ``resume_task`` sends a paused task back to a worker.

Loop tasks are read here first, by rules (``read_loop_request``): an operation on the user's
loop tasks ("pause my GRPO reminder") goes to the LoopSchedulerActor (``"loops"``); a
request with a schedule ("every Monday at 10:00 fetch the sales report") becomes an ordinary
task carrying ``meta["loop"]``, which gathers its parameters (and its time, if none was
said) like any task and is registered when complete. ``run_task`` runs a loop run the
scheduler recorded.

Every method returns a list of ``(destination, message)`` where destination is
``"worker"`` (any ExecutionActor), ``"loops"`` (the LoopSchedulerActor) or ``"reply"``
(back to whoever sent the task, keyed by the message's ``msg_id``). Task state is in the store; ``_inflight`` only remembers which
user message a running task answers, and is rebuilt from the store if lost.
"""

from __future__ import annotations

import logging
from typing import Any

from capabilities.cognition.intent_router import IntentRouter
from capabilities.loop.requests import LoopOperation, NewLoop, read_loop_request
from capabilities.loop.schedule import ScheduleError
from common import messages as m
from common.tasks.models import COMPLETED, CREATED, FAILED, PAUSED_STATES, InvalidTransition, TaskRecord
from common.tasks.store import TaskStore
from events.event_bus import EventBus

log = logging.getLogger("flora.agent")

SOURCE = "AgentActor"
Out = tuple[str, dict]


class TaskCoordinator:
    def __init__(self, store: TaskStore, events: EventBus, *, rules: IntentRouter | None = None,
                 agent_id: str = "agent", loops=None):
        self._store = store
        self._events = events
        self._rules = rules
        self._agent_id = agent_id
        self._loops = loops  # LoopService: reads schedules in Flora's timezone
        self._pending: dict[str, m.AgentTask] = {}  # analysis in progress, by task_id
        self._pending_loops: dict[str, tuple[dict, str]] = {}  # task_id -> (meta, what to run)
        self._runs: set[str] = set()  # loop runs being executed, answered to the scheduler

    def on_agent_task(self, msg: m.AgentTask) -> list[Out]:
        """Route by rules here when they are sure (cheap, never blocks); a worker is asked
        only when the model must decide or write a chat reply."""
        if self._loops is not None and msg.get("intent") not in ("chat", "system") and not msg.get("capability"):
            try:
                request = read_loop_request(msg["content"], self._loops.parse)
            except ScheduleError as exc:
                return [("reply", m.task_error(msg_id=msg["msg_id"], error_type="invalid_parameter",
                                               message=f"That schedule cannot work: {exc}", field="time"))]
            if isinstance(request, LoopOperation):
                return [("loops", m.loop_command(msg_id=msg["msg_id"], tenant_id=msg["tenant_id"],
                                                 user_id=msg["user_id"], op=request.op, reference=request.reference,
                                                 schedule_text=request.schedule_text or None,
                                                 parameters=request.parameters or None))]
            if isinstance(request, NewLoop):
                return self._new_loop(msg, request)
        ruled = None
        if self._rules is not None and msg.get("intent") not in ("chat", "system"):
            ruled = self._rules.decide_by_rules(msg["content"], msg.get("capability"))
        if ruled is not None:
            return self._start(msg, ruled.kind, ruled.capability, ruled.parameters)
        self._pending[msg["task_id"]] = msg
        return [("worker", m.analyze(task_id=msg["task_id"], tenant_id=msg["tenant_id"], user_id=msg["user_id"],
                                     content=msg["content"], intent=msg.get("intent"),
                                     capability=msg.get("capability")))]

    def _new_loop(self, msg: m.AgentTask, request: NewLoop) -> list[Out]:
        """A task to run on a schedule: recorded with ``meta["loop"]`` and run to completion
        of its parameters; the ExecutionActor registers it then."""
        meta = {"loop": {"schedule": request.parsed.schedule.to_dict() if request.parsed else None,
                         "description": request.parsed.description if request.parsed else "",
                         "content": request.task_text, "request": msg["content"],
                         "channel": msg.get("channel", "")}}
        if request.reminder:
            return self._start(msg, "task", "remind", _reminder(request), meta)
        ruled = self._rules.decide_by_rules(request.task_text, None) if self._rules is not None else None
        if ruled is not None:
            return self._start(msg, ruled.kind, ruled.capability, ruled.parameters, meta)
        self._pending[msg["task_id"]] = msg
        self._pending_loops[msg["task_id"]] = (meta, request)
        return [("worker", m.analyze(task_id=msg["task_id"], tenant_id=msg["tenant_id"], user_id=msg["user_id"],
                                     content=request.task_text))]

    def on_analysis(self, msg: m.AnalysisResult) -> list[Out]:
        request = self._pending.pop(msg["task_id"], None)
        if request is None:
            log.warning("analysis for unknown request task_id=%s", msg["task_id"])
            return []
        intent = msg["intent"]
        loop = self._pending_loops.pop(msg["task_id"], None)
        if loop is not None:
            meta, wanted = loop
            if intent in ("task", "query") and msg.get("capability"):
                return self._start(request, intent, msg["capability"], msg.get("parameters", {}), meta)
            return self._start(request, "task", "remind", _reminder(wanted), meta)  # nothing to run: remind

        if intent in ("chat", "system"):
            return [("reply", m.chat_reply(msg_id=request["msg_id"], message=msg.get("message", "")))]
        if intent == "clarify":
            return [("reply", m.clarification(msg_id=request["msg_id"], message=msg.get("message", ""),
                                              options=msg.get("options", [])))]
        return self._start(request, intent, msg["capability"], msg.get("parameters", {}))

    def _start(self, request: m.AgentTask, intent: str, capability: str, parameters: dict,
               meta: dict | None = None) -> list[Out]:
        """Record the task and send it to a worker to run."""
        task = TaskRecord(task_id=request["task_id"], tenant_id=request["tenant_id"], user_id=request["user_id"],
                          content=request["content"], msg_id=request["msg_id"], intent=intent,
                          capability=capability, parameters={**parameters, **request.get("parameters", {})},
                          meta=meta or {})
        self._events.create_task(task, source=SOURCE, agent_id=self._agent_id,
                                 data={"capability": task.capability, "intent": intent, "content": task.content})
        return [("worker", m.execute(task_id=task.task_id, tenant_id=task.tenant_id, user_id=task.user_id,
                                     capability=task.capability, parameters=task.parameters))]

    def on_resume_task(self, msg: m.ResumeTask) -> list[Out]:
        task = self._store.get_task(msg["tenant_id"], msg["task_id"])
        if task is None or task.user_id != msg["user_id"]:
            kind, text = ("not_found", f"There is no task {msg['task_id']}.") if task is None else \
                ("forbidden", f"Task {msg['task_id']} belongs to another user.")
            return [("reply", m.task_error(msg_id=msg["msg_id"], error_type=kind, message=text,
                                           task_id=msg["task_id"]))]
        if task.state not in PAUSED_STATES:
            return [("reply", m.task_error(msg_id=msg["msg_id"], error_type="conflict", task_id=task.task_id,
                                           message=f"Task {task.task_id} is {task.state}, not paused."))]
        self._store.update_task(task.tenant_id, task.task_id, msg_id=msg["msg_id"])
        return [("worker", m.resume_execution(task_id=task.task_id, tenant_id=task.tenant_id,
                                              user_id=task.user_id))]

    def on_run_task(self, msg: m.RunTask) -> list[Out]:
        """Run a recorded loop run. Only from ``created``: a run handed on twice runs once."""
        task = self._store.get_task(msg["tenant_id"], msg["task_id"])
        if task is None:
            return [("loops", m.task_error(msg_id=msg["msg_id"], error_type="not_found", task_id=msg["task_id"],
                                           message=f"There is no task {msg['task_id']}."))]
        if task.state != CREATED:
            return [("loops", m.task_error(msg_id=msg["msg_id"], error_type="conflict", task_id=task.task_id,
                                           message=f"Run task {task.task_id} is {task.state} already."))]
        self._runs.add(task.task_id)
        return [("worker", m.execute(task_id=task.task_id, tenant_id=task.tenant_id, user_id=task.user_id,
                                     capability=task.capability, parameters=task.parameters))]

    def on_task_paused(self, msg: m.TaskPaused) -> list[Out]:
        return [(self._answer_to(msg["task_id"]), msg)]

    def on_subtask_result(self, msg: m.SubtaskResult) -> list[Out]:
        task = self._store.get_task(msg["tenant_id"], msg["task_id"])
        if task is None:
            log.warning("result for unknown task task_id=%s", msg["task_id"])
            return []
        if msg["ok"]:
            done = self._complete(task, msg.get("result"), msg.get("message"))
            return [(self._answer_to(task.task_id, final=True), done)]
        if msg.get("error_type") == "conflict":  # the task is someone else's now (a run handed on twice)
            taken = m.task_error(msg_id=task.msg_id, error_type="conflict", task_id=task.task_id,
                                 message=msg.get("error", "") or "The task is already being handled.")
            return [(self._answer_to(task.task_id), taken)]
        failed = self._fail(task, msg.get("error_type", "capability_failed"), msg.get("error", ""),
                            bool(msg.get("retryable", False)))
        return [(self._answer_to(task.task_id, final=True), failed)]

    def on_worker_lost(self, poisoned: Any, reason: str) -> list[Out]:
        """A message to a worker came back undelivered or crashed it: tell the user."""
        if not isinstance(poisoned, dict) or "task_id" not in poisoned:
            return []
        request = self._pending.pop(poisoned["task_id"], None)
        task = self._store.get_task(poisoned.get("tenant_id", "default"), poisoned["task_id"])
        if task is not None and task.state not in (COMPLETED, FAILED):
            failed = self._fail(task, "internal", f"The worker failed: {reason}", True)
            return [(self._answer_to(task.task_id, final=True), failed)]
        if request is not None:
            return [("reply", m.task_error(msg_id=request["msg_id"], error_type="internal", retryable=True,
                                           task_id=request["task_id"], message=f"The worker failed: {reason}"))]
        return []

    def _answer_to(self, task_id: str, *, final: bool = False) -> str:
        """Where a task's reply goes: a loop run's to the LoopSchedulerActor (matched there by
        task_id, however often the run was handed on), any other to whoever asked (by msg_id)."""
        if task_id in self._runs:
            if final:
                self._runs.discard(task_id)
            return "loops"
        return "reply"

    # -- endings --------------------------------------------------------------------------
    def _complete(self, task: TaskRecord, result: Any, message: str | None = None) -> dict:
        try:
            task = self._events.transition(task.tenant_id, task.task_id, COMPLETED, source=SOURCE,
                                           agent_id=self._agent_id, data={"capability": task.capability},
                                           result=result)
        except InvalidTransition as exc:
            return m.task_error(msg_id=task.msg_id, error_type="conflict", message=str(exc), task_id=task.task_id)
        return m.task_completed(msg_id=task.msg_id, task_id=task.task_id, result=result, capability=task.capability,
                                message=message or f"{task.capability} finished.\n{_preview(result)}")

    def _fail(self, task: TaskRecord, error_type: str, error: str, retryable: bool) -> dict:
        try:
            task = self._events.transition(task.tenant_id, task.task_id, FAILED, source=SOURCE,
                                           agent_id=self._agent_id, data={"error_type": error_type, "error": error},
                                           error=error)
        except InvalidTransition:
            log.info("task %s already ended; reporting the error only", task.task_id)
        return m.task_error(msg_id=task.msg_id, error_type=error_type, message=error or "The task failed.",
                            retryable=retryable, task_id=task.task_id)


def _reminder(request: NewLoop) -> dict:
    parameters = {"content": request.task_text}
    if request.auto_continue:
        parameters["auto_continue"] = True
    return parameters


def _preview(result: Any, limit: int = 500) -> str:
    import json

    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
