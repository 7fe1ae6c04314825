"""TaskExecutionService: what an ExecutionActor does, as a plain class.

``analyze`` works out what a request means (and writes the reply when it is chat);
``execute`` and ``resume`` run a capability for a task: check the gathered parameters
against its JSON schema, pause the task for whatever is missing or refused, ask for
approval where the capability needs it, otherwise run it and report the result.

A task carrying ``meta["loop"]`` is a request to run the capability on a schedule: it is
paused for its parameters (and for its time, when none was said) like any task, and once
complete it is registered as a loop task instead of run. A loop *run* (``meta["run"]``)
starts only from ``created``, so a run handed on twice runs once.

Each method returns the one message to send back to the AgentActor. Capability failures
are data in that message; a bug in Flora itself raises.
"""

from __future__ import annotations

import logging
import time

from capabilities.base import CapabilityError, CapabilityInputError, CapabilitySpec, ExecutionContext
from capabilities.cognition.chat import ChatResponder
from capabilities.cognition.intent_router import IntentRouter
from capabilities.context.conversation_manager import ConversationManager, ask_message
from capabilities.params import check_parameters
from capabilities.registry import CapabilityRegistry, UnknownCapability
from capabilities.routing.task_planner import DEFAULT_MAX_STEPS, TaskPlanner
from capabilities.routing.task_router import TaskRouter
from common import messages as m
from common.cluster import current_node
from capabilities.loop.schedule import ScheduleError
from common.tasks.models import (
    CREATED, FAILED, PAUSED_STATES, RUNNING, WAITING_APPROVAL, WAITING_PARAMETERS, InvalidTransition, TaskNotFound,
    TaskRecord,
)
from common.tasks.store import TaskStore
from events.event_bus import EventBus
from events.event_types import EventType

log = logging.getLogger("flora.execution")

SOURCE = "ExecutionActor"
TIME_PARAMETER = "time"
TIME_DESCRIPTION = "when to run it: 15:30, tomorrow at 9:00, every day at 9:00, every Monday at 10:00, in 20 minutes"


class TaskExecutionService:
    def __init__(self, *, store: TaskStore, events: EventBus, registry: CapabilityRegistry,
                 config=None, llm=None):
        self._store = store
        self._events = events
        self._registry = registry
        self._config = config
        self._llm = llm
        self._conversation = ConversationManager(store, events, registry, source=SOURCE)
        self._intents = IntentRouter(TaskRouter(registry), llm)
        self._chat = ChatResponder(registry, llm)
        self._planner = TaskPlanner(registry, llm, max_steps=config.planning.max_steps if config is not None
                                    else DEFAULT_MAX_STEPS)

    # -- understanding -------------------------------------------------------------------
    def analyze(self, msg: m.Analyze) -> m.AnalysisResult:
        task_id, content = msg["task_id"], msg["content"]
        if msg.get("capability"):
            chosen = self._intents.decide_by_rules(content, msg["capability"])
            if chosen is None:
                return m.analysis_result(task_id=task_id, intent="chat",
                                         message=f"There is no capability named {msg['capability']!r}.")
            return m.analysis_result(task_id=task_id, intent=chosen.kind, capability=chosen.capability,
                                     parameters=chosen.parameters)
        hint = msg.get("intent")
        if hint not in ("chat", "system"):
            # several steps the rules could not split: the model may plan them (a revision's
            # instruction is part of what it plans)
            told = f"{content}\n{msg['instruction']}" if msg.get("instruction") else content
            plan = self._planner.plan(told)
            if plan is not None:
                log.info("analyzed task_id=%s as a plan of %d steps", task_id, len(plan.steps))
                return m.analysis_result(task_id=task_id, intent="task", capability="plan", plan=plan.to_dict())
        intent = self._intents.classify(content) if hint not in ("chat", "system") else None
        kind = hint if intent is None else intent.kind
        log.info("analyzed task_id=%s intent=%s capability=%s", task_id, kind, intent and intent.capability)
        if kind == "chat":
            return m.analysis_result(task_id=task_id, intent="chat", message=self._chat.reply(content))
        if kind == "system":
            return m.analysis_result(task_id=task_id, intent="system", message=self._chat.help_text())
        if kind == "clarify":
            return m.analysis_result(task_id=task_id, intent="clarify", options=intent.options,
                                     message="I'm not sure which of these you mean. Reply with the number:\n" +
                                     "\n".join(f"{o['id']}. {o['label']}" for o in intent.options))
        return m.analysis_result(task_id=task_id, intent=kind, capability=intent.capability,
                                 parameters=intent.parameters)

    # -- running ---------------------------------------------------------------------------
    def execute(self, msg: m.Execute) -> dict:
        tenant, task_id = msg["tenant_id"], msg["task_id"]
        task = self._store.get_task(tenant, task_id)
        if task is None:
            return _failed(tenant, task_id, msg["capability"], "not_found", f"There is no task {task_id}.")
        if task.meta.get("run") and task.state != CREATED:
            return _failed(tenant, task_id, task.capability, "conflict", f"Run task {task_id} is {task.state} already.")
        return self._run(task, msg["capability"], {**task.parameters, **msg["parameters"]}, resumed=False)

    def resume(self, msg: m.ResumeExecution) -> dict:
        tenant, task_id = msg["tenant_id"], msg["task_id"]
        task = self._store.get_task(tenant, task_id)
        if task is None:
            return _failed(tenant, task_id, "", "not_found", f"There is no task {task_id}.")
        if task.state not in PAUSED_STATES:
            return _failed(tenant, task_id, task.capability, "conflict",
                           f"Task {task_id} is {task.state}; only a paused task can be resumed.")
        return self._run(task, task.capability, task.parameters, resumed=True)

    def _run(self, task: TaskRecord, capability: str, parameters: dict, *, resumed: bool) -> dict:
        tenant, task_id = task.tenant_id, task.task_id
        try:
            spec = self._registry.get_executable(capability)
        except UnknownCapability as exc:
            return _failed(tenant, task_id, capability, "unknown_capability", str(exc))
        check = check_parameters(spec, parameters)
        missing = list(check.to_ask)
        loop = task.meta.get("loop")
        if loop is not None and loop.get("schedule") is None:
            loop, asked = self._loop_time(task, parameters.get(TIME_PARAMETER))
            missing += asked
        if missing:
            return self._pause(tenant, task_id, spec, missing, check.values)
        if spec.needs_approval and not task.approved and spec.name not in self._auto_approved():
            return self._pause(tenant, task_id, spec, [], check.values, kind=WAITING_APPROVAL)
        try:
            task = self._events.transition(
                tenant, task_id, RUNNING, source=SOURCE, data={"capability": capability},
                event_type=EventType.TASK_RESUMED if resumed else EventType.TASK_STARTED,
                expect=None if resumed or not task.meta.get("run") else (CREATED,),
                parameters=check.values, missing=[], meta={**task.meta, "node": self._node()})
        except InvalidTransition as exc:
            return _failed(tenant, task_id, capability, "conflict", str(exc))
        if loop is not None:
            return self._register_loop(task, spec, check.values, loop)
        run = task.meta.get("run") or {}
        context = ExecutionContext(task_id=task_id, user_id=task.user_id, tenant_id=tenant, config=self._config,
                                   settings=self._settings(capability), llm=self._llm, registry=self._registry,
                                   meta={k: run[k] for k in ("loop_task_id", "run_key") if k in run},
                                   logger=logging.getLogger(f"flora.capability.{capability}"),
                                   instruction=task.meta.get("instruction", ""), store=self._store)
        started = time.perf_counter()
        try:
            result = spec.invoke(check.values, context)
        except CapabilityInputError as exc:
            values = {k: v for k, v in check.values.items() if k != exc.parameter}
            refused = [{"name": exc.parameter, "description": spec.describe_parameter(exc.parameter),
                        "schema": spec.properties.get(exc.parameter, {}), "reason": str(exc)}]
            return self._pause(tenant, task_id, spec, refused, values)
        except CapabilityError as exc:
            log.warning("capability failed task_id=%s capability=%s: %s", task_id, capability, exc)
            return _failed(tenant, task_id, capability, exc.error_type, str(exc), exc.retryable)
        except Exception as exc:  # a plugin's bug: report it on the task, keep the worker serving
            log.exception("capability raised task_id=%s capability=%s", task_id, capability)
            return _failed(tenant, task_id, capability, "capability_failed", f"{capability} crashed: {exc!r}")
        log.info("capability done task_id=%s capability=%s elapsed_ms=%.1f", task_id, capability,
                 (time.perf_counter() - started) * 1000)
        said = result.get("message") if isinstance(result, dict) and isinstance(result.get("message"), str) else None
        return m.subtask_result(task_id=task_id, tenant_id=tenant, capability=capability, ok=True, result=result,
                                message=said)

    # -- loop tasks ------------------------------------------------------------------------
    def _loop_time(self, task: TaskRecord, said: object) -> tuple[dict, list]:
        """Read the time the user gave for a loop request; the question to ask if there is none
        (or it cannot be read)."""
        loop = dict(task.meta["loop"])
        reason = ""
        if isinstance(said, str) and said.strip():
            try:
                parsed = self._loops().parse_time(said)
            except ScheduleError as exc:
                reason = str(exc)
            else:
                loop.update(schedule=parsed.schedule.to_dict(), description=parsed.description)
                self._store.update_task(task.tenant_id, task.task_id, meta={**task.meta, "loop": loop})
                return loop, []
        ask = {"name": TIME_PARAMETER, "description": TIME_DESCRIPTION, "schema": {"type": "string", "minLength": 1}}
        return loop, [{**ask, "reason": reason} if reason else ask]

    def _register_loop(self, task: TaskRecord, spec: CapabilitySpec, values: dict, loop: dict) -> dict:
        loops = self._loops()
        try:
            registered = loops.register(tenant_id=task.tenant_id, user_id=task.user_id, content=loop["content"],
                                        schedule=loop["schedule"], capability=spec.name, parameters=values,
                                        channel=loop.get("channel", ""), task_id=task.task_id)
        except ScheduleError as exc:  # a one-shot whose time passed while the task waited
            self._store.update_task(task.tenant_id, task.task_id, meta={**task.meta, "loop": {**loop, "schedule": None}})
            ask = {"name": TIME_PARAMETER, "description": TIME_DESCRIPTION, "schema": {"type": "string"},
                   "reason": str(exc)}
            return self._pause(task.tenant_id, task.task_id, spec, [ask], values)
        text = (f"Registered loop task {registered.loop_task_id}: {loops.describe(registered)}.\n"
                f"Say \"list my loop tasks\", or pause / resume / delete / \"run {registered.loop_task_id} now\".")
        return m.subtask_result(task_id=task.task_id, tenant_id=task.tenant_id, capability=spec.name, ok=True,
                                result={"loop_task_id": registered.loop_task_id, "schedule": registered.schedule,
                                        "next_fire_at": registered.next_fire_at, "capability": spec.name,
                                        "parameters": registered.parameters,
                                        "description": loops.describe(registered)},
                                message=text)

    def _loops(self):
        return self._registry.get_capability("loop_tasks")

    def _pause(self, tenant: str, task_id: str, spec: CapabilitySpec, missing: list, values: dict,
               kind: str = WAITING_PARAMETERS) -> dict:
        try:
            task = self._conversation.pause_task_for_parameters(tenant, task_id, missing, values, kind=kind)
        except InvalidTransition as exc:
            return _failed(tenant, task_id, spec.name, "conflict", str(exc))
        if kind == WAITING_APPROVAL:
            text = (f"{spec.name} needs your approval before it runs: {spec.description}\n"
                    f"Parameters: {values}\nReply yes to run it or no to cancel.")
        else:
            text = ask_message(spec.name, missing)
        return m.task_paused(msg_id=task.msg_id or m.new_id("msg"), task_id=task_id, message=text,
                             missing_parameters=missing, pause_kind=kind, capability=spec.name)

    def crashed(self, msg: dict, exc: BaseException) -> dict:
        """Fail the task that a bug in Flora stopped (``execute``/``resume_execution`` raised),
        so it is reported and not left running."""
        tenant, task_id = msg["tenant_id"], msg["task_id"]
        error = f"Flora failed while running this task (an internal error, logged): {exc!r}"[:500]
        try:
            self._events.transition(tenant, task_id, FAILED, source=SOURCE, error=error,
                                    data={"error_type": "internal", "error": error})
        except (InvalidTransition, TaskNotFound):
            pass  # it ended meanwhile, or never existed: the report below is all there is to do
        return _failed(tenant, task_id, msg.get("capability", ""), "internal", error)

    def _settings(self, capability: str) -> dict:
        if self._config is None:
            return {}
        return dict(self._config.capabilities.settings.get(capability, {}))

    def _node(self) -> str:
        """The node that runs the task: after a crash, that node's restart answers for it."""
        return current_node(self._config.actors.node if self._config is not None else "local")

    def _auto_approved(self) -> set[str]:
        return set(self._config.capabilities.auto_approve) if self._config is not None else set()


def _failed(tenant: str, task_id: str, capability: str, error_type: str, error: str,
            retryable: bool = False) -> dict:
    return m.subtask_result(task_id=task_id, tenant_id=tenant, capability=capability or "unknown", ok=False,
                            error_type=error_type, error=error, retryable=retryable)
