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

Whether a task starts now or waits under the concurrency limits, and what happens to work a
dead worker had in flight (retried after a back-off, or failed), is its WorkQueue's decision
(``agents/coordination/work_queue.py``); it adds ``("wakeup", ...)`` to the destinations.
"""

from __future__ import annotations

import logging
from typing import Any

from capabilities.cognition.intent_router import IntentRouter
from capabilities.cognition.personas import choice_of, refusal, task_meta
from capabilities.cognition import claims
from capabilities.cognition.claims import acts_of
from capabilities.cognition.reading import carried
from capabilities.cognition.semantic import Reading
from capabilities.context.pointing import Pointed
from capabilities.loop.requests import LoopOperation, NewLoop, read_loop_request, schedule_words
from capabilities.loop.schedule import ScheduleError
from capabilities.memory.results import memory_meta
from common import messages as m
from common import spans
from common.cluster import current_node
from common.i18n import language_of, say
from common.tasks.models import COMPLETED, CREATED, FAILED, PAUSED_STATES, InvalidTransition, TaskNotFound, TaskRecord
from common.tasks.store import TaskStore
from agents.coordination.work_queue import POISON_MESSAGE, WorkQueue, traceback_tail
from agents.coordination.plan_desk import PlanDesk
from agents.coordination.loop_reading import second_look
from events.event_bus import EventBus

log = logging.getLogger("flora.agent")
_TIME = "time"  # the value a reminder or loop task asked for without a time waits for (TaskExecutionService)

SOURCE = "AgentActor"
Out = tuple[str, dict]
WRITTEN_REPLIES = ("chat", "unsupported")  # replies the model writes, held against what the turn did


class TaskCoordinator:
    def __init__(self, store: TaskStore, events: EventBus, *, rules: IntentRouter | None = None,
                 agent_id: str = "agent", loops=None, queue: WorkQueue | None = None, tenant_id: str = "default",
                 node: str | None = None, planner=None, registry=None):
        self._store = store
        self._node = current_node("local") if node is None else node
        self._tenant_id = tenant_id  # the one tenant this AgentActor serves
        self.queue = queue or WorkQueue(store, events, None, agent_id=agent_id)
        self._analyze_attempts: dict[str, int] = {}  # task_id -> analyses lost with a worker
        self._events = events
        self._rules = rules
        self._agent_id = agent_id
        self._loops = loops  # LoopService: reads schedules in Flora's timezone
        self._pending: dict[str, m.AgentTask] = {}  # analysis in progress, by task_id
        self._pending_loops: dict[str, tuple[dict, str]] = {}  # task_id -> (meta, what to run)
        self._runs: set[str] = set()  # loop runs being executed, answered to the scheduler
        # plans and operations on existing tasks (a TaskPlanner without a model: rules only)
        self.plans = PlanDesk(store, events, registry, planner, start=self._start, pending=self._pending,
                              agent_id=agent_id) if planner is not None else None

    def on_agent_task(self, msg: m.AgentTask) -> list[Out]:
        """Route by rules here when they are sure (cheap, never blocks); a worker is asked
        only when the model must decide or write a chat reply."""
        with spans.span("rules"):
            return self._route(msg)

    def _route(self, msg: m.AgentTask) -> list[Out]:
        said = carried(msg)
        reading = said.examples
        pointed = Pointed.from_dict(msg.get("operation"))
        if pointed is not None:  # read at the front desk: an operation on one of the person's tasks or loop tasks
            operated = self._operate(msg, pointed, said.language)
            if operated is not None:
                return operated
        if self._loops is not None and msg.get("intent") not in ("chat", "system") and not msg.get("capability"):
            try:
                # the loop reader reads the schedule in Flora's timezone where the front desk spotted loop words
                spotted = read_loop_request(msg["content"], self._loops.parse) if said.loop_words else None
                request = second_look(spotted, msg, reading,
                                       names_one=lambda: self._loops.named_in(msg["tenant_id"], msg["user_id"],
                                                                              msg["content"]),
                                       awaits_a_time=lambda: _TIME in self._awaited(msg))
            except ScheduleError as exc:
                if reading is None or reading.family == "loop" or not reading.sure():
                    return [("reply", m.task_error(msg_id=msg["msg_id"], error_type="invalid_parameter",
                                                   message=f"That schedule cannot work: {exc}", field="time"))]
                request = second_look(None, msg, reading)
            if isinstance(request, LoopOperation):
                return [("loops", m.loop_command(msg_id=msg["msg_id"], tenant_id=msg["tenant_id"],
                                                 user_id=msg["user_id"], op=request.op, reference=request.reference,
                                                 schedule_text=request.schedule_text or None,
                                                 parameters=request.parameters or None,
                                                 language=said.language))]
            if isinstance(request, NewLoop):
                return self._new_loop(msg, request)
        persona = choice_of(msg)
        if persona is not None and msg.get("capability") and not persona.allows(msg["capability"]):
            return [("reply", m.task_error(msg_id=msg["msg_id"], error_type="forbidden", field="capability",
                                           message=refusal(persona.name, msg["capability"], persona.allowed),
                                           persona=persona.name))]
        ruled = None
        if not msg.get("pick_persona"):  # a persona still to be picked: what it may use is not known yet
            planned = self.plans.on_agent_task(msg) if self.plans is not None else None
            if planned is not None:  # an operation on an existing task, or a plan of several steps
                return planned
            if self._rules is not None and msg.get("intent") not in ("chat", "system"):
                rules = self._rules.within(persona.allowed if persona is not None else None)
                ruled = rules.decide_by_rules(msg["content"], msg.get("capability"))
                if ruled is not None and not msg.get("capability") and _reads_otherwise(reading, ("task",)) \
                        and rules.examples_know(ruled.capability):
                    # "HTTP请求里GET和POST有啥区别": a keyword is no request; "hit https://…, and once you've
                    # got it, send a summary to https://…": two steps. Understanding decides.
                    ruled = None
        if ruled is not None and self._gives_awaited(msg, ruled):
            ruled = None  # the value a paused task of the same work waits for: understood as its answer
        if ruled is not None:
            return self._start(msg, ruled.kind, ruled.capability, ruled.parameters)
        self._pending[msg["task_id"]] = msg
        return [("worker", m.analyze(task_id=msg["task_id"], tenant_id=msg["tenant_id"], user_id=msg["user_id"],
                                     content=msg["content"], intent=msg.get("intent"),
                                     capability=msg.get("capability"), history=msg.get("history"),
                                     memories=msg.get("memories"),
                                     pending_task_id=msg.get("pending_task_id"), stream=msg.get("stream"),
                                     persona=msg.get("persona"), pick_persona=msg.get("pick_persona"),
                                     reading=msg.get("reading")))]

    def _operate(self, msg: m.AgentTask, pointed: Pointed, language: str) -> list[Out] | None:
        """The operation the front desk read, done on the task or loop task it found; None where
        nobody here does such operations (no loop scheduler, no plan desk)."""
        if pointed.on == "loop" and self._loops is not None:
            said = pointed.loop_operation(msg["content"])
            return [("loops", m.loop_command(msg_id=msg["msg_id"], tenant_id=msg["tenant_id"], user_id=msg["user_id"],
                                             op=said.op, reference=said.reference,
                                             schedule_text=said.schedule_text or None,
                                             parameters=said.parameters or None,
                                             language=language))]
        if pointed.on == "task" and self.plans is not None:
            return self.plans.operate(msg, pointed.task_operation())
        return None

    def _awaited(self, msg: m.AgentTask) -> set[str]:
        """The values the paused task this message may answer waits for (none: no task waits)."""
        if not msg.get("pending_task_id"):
            return set()
        waiting = self._store.get_task(msg["tenant_id"], msg["pending_task_id"])
        return {p["name"] for p in waiting.missing} if waiting is not None and waiting.state in PAUSED_STATES else set()

    def _gives_awaited(self, msg: m.AgentTask, ruled) -> bool:
        """Whether the rules' reading is the work of the paused task this message may answer,
        with a value that task waits for ("just call this one: https://…" while it waits for
        its address)."""
        if not msg.get("pending_task_id"):
            return False
        waiting = self._store.get_task(msg["tenant_id"], msg["pending_task_id"])
        return waiting is not None and waiting.capability == ruled.capability \
            and bool(set(ruled.parameters) & {p["name"] for p in waiting.missing})

    def on_reply_chunk(self, msg: m.ReplyChunk) -> list[Out]:
        """A piece of a reply being written for a request still waiting for its analysis."""
        request = self._pending.get(msg["task_id"])
        if request is None:
            return []
        return [("chunk", m.reply_chunk(task_id=msg["task_id"], text=msg["text"], seq=msg["seq"],
                                        msg_id=request["msg_id"]))]

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
        self._analyze_attempts.pop(msg["task_id"], None)
        if request is None:
            log.warning("analysis for unknown request task_id=%s", msg["task_id"])
            return []
        intent = msg["intent"]
        loop = self._pending_loops.pop(msg["task_id"], None)
        if loop is not None:
            meta, wanted = loop
            if intent in ("task", "query") and msg.get("capability"):
                return self._start(request, intent, msg["capability"], msg.get("parameters", {}), meta)
            if intent == "unsupported" and not wanted.reminder:
                # "book a meeting with Tom on Thursday at 2": nothing can book it then either; say
                # so, and offer the reminder rather than silently schedule one in its place
                return [("reply", m.chat_reply(msg_id=request["msg_id"], intent="unsupported",
                                               message=_cannot_schedule(msg.get("message", ""), request["content"],
                                                                        wanted, carried(request).language)))]
            return self._start(request, "task", "remind", _reminder(wanted), meta)  # a thing to be told: remind

        if msg.get("persona"):  # picked by the understanding step: the rest of the work is its
            request = {**request, "persona": msg["persona"]}
        persona = (request.get("persona") or {}).get("name")
        revision = self.plans.take_meta(msg["task_id"]) if self.plans is not None else {}
        if msg.get("plan") is not None and self.plans is not None:
            return self.plans.start(request, msg["plan"], revision)
        if intent in ("chat", "system", "status", "command", "unsupported"):
            message = msg.get("message", "")
            if intent in WRITTEN_REPLIES:  # the model's words: no claim of an act the store does not show
                done = acts_of([self._store.get_task(request["tenant_id"], request["task_id"])])
                message = claims.shipped().honest(message, done, said=request["content"])
            return [("reply", m.chat_reply(msg_id=request["msg_id"], message=message,
                                           intent="command" if intent == "system" else intent,
                                           timing=msg.get("timing"), persona=persona))]
        if intent == "clarify":
            return [("reply", m.clarification(msg_id=request["msg_id"], message=msg.get("message", ""),
                                              options=msg.get("options", []), intent="clarify", persona=persona))]
        if intent == "answer":
            return self._answered(request, msg)
        return self._start(request, intent, msg["capability"], msg.get("parameters", {}), revision or None)

    def _answered(self, request: m.AgentTask, msg: m.AnalysisResult) -> list[Out]:
        """The message answered a paused task (its values are recorded): resume it, or ask
        again for what was refused."""
        task_id = msg["answered_task_id"]
        if msg.get("missing"):
            return [("reply", m.task_paused(msg_id=request["msg_id"], task_id=task_id, message=msg.get("message", ""),
                                            missing_parameters=msg["missing"], capability=msg.get("capability")))]
        return self.on_resume_task(m.resume_task(task_id=task_id, msg_id=request["msg_id"],
                                                 tenant_id=request["tenant_id"], user_id=request["user_id"]))

    def _start(self, request: m.AgentTask, intent: str, capability: str, parameters: dict,
               meta: dict | None = None) -> list[Out]:
        """Record the task and send it to a worker to run."""
        persona = choice_of(request)
        task = TaskRecord(task_id=request["task_id"], tenant_id=request["tenant_id"], user_id=request["user_id"],
                          content=request["content"], msg_id=request["msg_id"], intent=intent,
                          capability=capability, parameters={**parameters, **request.get("parameters", {})},
                          # whose restart answers for it until it runs; what its persona may use; memories it got (ids, facts)
                          meta={**(meta or {}), **task_meta(persona), "node": self._node, **memory_meta(request),
                                # the chat it was asked in: its later news goes there
                                **({"channel": request["channel"]} if request.get("channel") else {})})
        task = self._events.create_task(task, source=SOURCE, agent_id=self._agent_id,
                                        data={"capability": task.capability, "intent": intent, "content": task.content})
        return _stamped(self.queue.admit(task), task)

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
        task = self._store.update_task(task.tenant_id, task.task_id, msg_id=msg["msg_id"])
        resumed = self.plans.resume(task) if self.plans is not None else None
        if resumed is not None:  # a plan: its group resumes the step that asked
            return resumed
        # a paused task held no slot: it takes one again, or waits in the queue like a new one
        return self.queue.admit(task, m.resume_execution(task_id=task.task_id, tenant_id=task.tenant_id,
                                                         user_id=task.user_id))

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
                                     capability=task.capability, parameters=task.parameters, task=task.to_dict()))]

    def on_plan_reply(self, msg: dict) -> list[Out]:
        """The TaskGroupAggregatorActor's ``plan_result`` or ``task_paused`` for a plan task.
        Plans take no slot under the concurrency limits, so none is given back."""
        outs = self.plans.on_plan_result(msg) if msg["message_type"] == "plan_result" else [("reply", msg)]
        final = msg["message_type"] == "plan_result"
        return [(self._answer_to(msg["task_id"], final=final), out) for _, out in outs]

    def on_task_paused(self, msg: m.TaskPaused) -> list[Out]:
        task = self._store.get_task(self._tenant_id, msg["task_id"])
        return self._settle(task, [(self._answer_to(msg["task_id"]), msg)])

    def _settle(self, task: TaskRecord | None, outs: list[Out]) -> list[Out]:
        """A task stopped running (ended or paused): free its slot and start what fits now. Its
        answer goes to the ask only if that was not answered already with ``task_queued``."""
        if task is None:
            return outs
        outs = _stamped(outs, task)
        waiting, started = self.queue.finished(task, outs[0][1])
        return [*(outs if waiting or outs[0][0] != "reply" else []), *started]

    def on_subtask_result(self, msg: m.SubtaskResult) -> list[Out]:
        if msg["ok"]:
            return self._complete(msg)
        task = self._store.get_task(msg["tenant_id"], msg["task_id"])
        if task is None:
            log.warning("result for unknown task task_id=%s", msg["task_id"])
            return []
        if msg.get("error_type") == "conflict":  # the task is someone else's now (a run handed on twice)
            taken = m.task_error(msg_id=task.msg_id, error_type="conflict", task_id=task.task_id,
                                 message=msg.get("error", "") or "The task is already being handled.")
            return [(self._answer_to(task.task_id), taken)]
        failed = self._fail(task, msg.get("error_type", "capability_failed"), msg.get("error", ""),
                            bool(msg.get("retryable", False)))
        return self._settle(task, [(self._answer_to(task.task_id, final=True), failed)])

    def on_worker_lost(self, poisoned: Any, reason: str) -> list[Out]:
        """A worker died with this message in flight: send it again after a back-off while
        ``actors.retry_max_attempts`` allows, else tell the user how often it was tried."""
        if not isinstance(poisoned, dict) or "task_id" not in poisoned:
            return []
        task_id = poisoned["task_id"]
        if poisoned.get("message_type") == "analyze" and task_id in self._pending:
            attempt = self._analyze_attempts.get(task_id, 0) + 1
            if attempt <= self.queue.retry.max_attempts:  # nothing recorded yet: the count lives here
                self._analyze_attempts[task_id] = attempt
                return [("wakeup", {"delay_s": self.queue.retry.delay(attempt), "payload": {"resend": poisoned}})]
        elif poisoned.get("message_type") in ("execute", "resume_execution"):
            retried = self.queue.lost(poisoned, reason)
            if retried is not None:
                return retried
        request = self._pending.pop(task_id, None)
        tries = self._analyze_attempts.pop(task_id, 0)
        task = self._store.get_task(poisoned.get("tenant_id", self._tenant_id), task_id)
        tries = 1 + (int(task.meta.get("attempts", 0)) if task is not None else tries)
        text = (f"The task failed after {tries} attempts: {reason} each time." if tries > 1
                else f"The worker failed: {reason}")
        if task is not None and task.state not in (COMPLETED, FAILED):
            failed = self._fail(task, "internal", text, True)
            return self._settle(task, [(self._answer_to(task.task_id, final=True), failed)])
        if request is not None:
            return [("reply", m.task_error(msg_id=request["msg_id"], error_type="internal", retryable=True,
                                           task_id=request["task_id"], message=text))]
        return []

    def on_poisoned(self, poisoned: Any, details: Any) -> list[Out]:
        """A worker raised twice on this message (Thespian's PoisonMessage): a bug, so it is
        reported, with the traceback's tail on the event, and never retried."""
        tail = traceback_tail(details)
        kind = poisoned.get("message_type") if isinstance(poisoned, dict) else type(poisoned).__name__
        task_id = poisoned.get("task_id") if isinstance(poisoned, dict) else None
        log.warning("poison message %s task_id=%s: the worker raised on it twice; not retried: %s", kind, task_id,
                    tail.strip().splitlines()[-1] if tail.strip() else "(no details)")
        self.queue.poisoned(poisoned)
        if not isinstance(task_id, str):
            return []
        last = tail.strip().splitlines()[-1] if tail.strip() else "an error"
        text = f"The worker raised on this task twice ({last}), so it was stopped and will not be retried."
        request = self._pending.pop(task_id, None)
        self._analyze_attempts.pop(task_id, None)
        task = self._store.get_task(poisoned.get("tenant_id", self._tenant_id), task_id)
        if task is not None and task.state not in (COMPLETED, FAILED):
            failed = self._fail(task, "poison_message", text, False, data={"message_type": kind, "traceback": tail})
            return self._settle(task, [(self._answer_to(task.task_id, final=True), failed)])
        if request is not None:  # not a task yet: the event stands alone
            self._events.publish_task_event(task_id=task_id, event_type=POISON_MESSAGE, source=SOURCE,
                                            tenant_id=request["tenant_id"], user_id=request["user_id"],
                                            agent_id=self._agent_id,
                                            data={"message_type": kind, "traceback": tail, "error": text})
            return [("reply", m.task_error(msg_id=request["msg_id"], error_type="poison_message", message=text,
                                           task_id=task_id))]
        return []

    def on_wakeup(self, payload: Any) -> list[Out]:
        """A back-off is over: an analysis is sent again, or the queue starts what is due."""
        if not isinstance(payload, dict):
            return []
        resend = payload.get("resend")
        if isinstance(resend, dict):
            return [("worker", resend)] if resend["task_id"] in self._pending else []
        return self.queue.on_wakeup(payload)

    def resume_queued(self) -> list[Out]:
        """At start: the tenant's queued tasks (left by a previous life, or waiting for a
        retry) start again, oldest first, as far as the limits allow."""
        return self.queue.drain(self._tenant_id)

    def _answer_to(self, task_id: str, *, final: bool = False) -> str:
        """Where a task's reply goes: a loop run's to the LoopSchedulerActor (matched there by
        task_id, however often the run was handed on), any other to whoever asked (by msg_id)."""
        if task_id in self._runs:
            if final:
                self._runs.discard(task_id)
            return "loops"
        return "reply"

    # -- endings --------------------------------------------------------------------------
    def _complete(self, msg: m.SubtaskResult) -> list[Out]:
        """Record a worker's result as its task's (the result as the task keeps it) and answer.
        The move returns the task as written, so it is not read first."""
        tenant, task_id, result = msg["tenant_id"], msg["task_id"], msg.get("result")
        try:
            task = self._events.transition(tenant, task_id, COMPLETED, source=SOURCE, agent_id=self._agent_id,
                                           data={"capability": msg["capability"]}, result=result)
        except TaskNotFound:
            log.warning("result for unknown task task_id=%s", task_id)
            return []
        except InvalidTransition as exc:
            task = self._store.get_task(tenant, task_id)
            done = m.task_error(msg_id=task.msg_id, error_type="conflict", message=str(exc), task_id=task_id)
        else:
            done = m.task_completed(msg_id=task.msg_id, task_id=task_id, result=result, capability=task.capability,
                                    message=msg.get("message") or say(language_of(task.content), "task_finished",
                                                                      capability=task.capability)
                                    + f"\n{m.preview(result)}")
        return self._settle(task, [(self._answer_to(task_id, final=True), done)])

    def _fail(self, task: TaskRecord, error_type: str, error: str, retryable: bool, data: dict | None = None) -> dict:
        try:
            task = self._events.transition(task.tenant_id, task.task_id, FAILED, source=SOURCE,
                                           agent_id=self._agent_id,
                                           data={"error_type": error_type, "error": error, **(data or {})},
                                           error=error)
        except InvalidTransition:
            log.info("task %s already ended; reporting the error only", task.task_id)
        return m.task_error(msg_id=task.msg_id, error_type=error_type, message=error or "The task failed.",
                            retryable=retryable, task_id=task.task_id)


def _stamped(outs: list[Out], task: TaskRecord) -> list[Out]:
    """The task's persona named on the replies among ``outs`` (the user sees who answered)."""
    persona = task.meta.get("persona")
    if not persona:
        return outs
    return [(to, {**msg, "persona": persona} if msg.get("message_type") in m.REPLY_TYPES
             and msg.get("msg_id") == task.msg_id and "persona" not in msg else msg) for to, msg in outs]


def _cannot_schedule(why: str, content: str, request: NewLoop, lang: str) -> str:
    """Why nothing can do it, and the words that would ask for a reminder at that time."""
    when = schedule_words(content, request)
    offer = say(lang, "offer_reminder", when=when, what=request.task_text) if when else ""
    return "\n".join(part for part in (why.strip(), offer) if part)


def _reminder(request: NewLoop) -> dict:
    parameters = {"content": request.task_text}
    if request.auto_continue:
        parameters["auto_continue"] = True
    return parameters


def _reads_otherwise(reading: Reading | None, families: tuple[str, ...]) -> bool:
    """Whether the message reads surely as something other than ``families``."""
    return reading is not None and reading.sure() and reading.family not in families


# what a message that reads surely as one of these asks is no new loop task, whatever times it names
