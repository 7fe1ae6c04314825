"""PlanDesk: the AgentActor's decisions about plans and about operations on existing tasks.

A request the rules planner splits into several steps (``TaskPlanner.plan`` without a
model: cheap, so it runs here) becomes a *plan task*: a task record with capability
``plan`` and ``meta.plan``, moved to ``planned`` with a ``PLAN_CREATED`` event, and handed to
the TaskGroupAggregatorActor (``"group"``, ``run_plan``). A plan the model wrote arrives in
an ``analysis_result`` and starts the same way. The group's ``plan_result`` becomes the
user's reply here.

Operations on a task the user already has (``TaskPlanner.operation``, zh and en):

- ``comment_on_task``: the comment is kept on the task (``meta.comments``) with a
  ``TASK_COMMENTED`` event, and acknowledged;
- ``revise_result``: a new task runs the same capability and parameters, or the same plan,
  with the comment as an added instruction (``meta.instruction``, which capabilities see as
  ``ExecutionContext.instruction``); a plan the model wrote is planned again with it;
- ``re_run_task``: a new task, same capability and parameters, or the same plan;
- ``cancel_task``: the task and each unfinished step of it are cancelled; the user message
  that waits for the task is answered ``cancelled``.

"last" is the user's most recent task (for a cancel, the most recent unfinished one; for a
comment, a revision or a re-run, the most recent that is not waiting for an answer), or the
most recent that the words name ("the report one": ``pointing.target_of``); a
step of a plan is never "last", its plan is. A task of another user is refused
(``forbidden``); one of another tenant does not exist for this one (``not_found``).

Methods return ``(destination, message)`` like the TaskCoordinator's, plus ``"group"``.
"""

from __future__ import annotations

import logging
import time
from typing import Callable

from capabilities.memory.results import memory_meta
from capabilities.cognition.personas import choice_of, refusal, task_meta
from capabilities.cognition import semantic
from capabilities.cognition.reading import carried
from capabilities.cognition.semantic import CERTAIN, LEANS
from capabilities.registry import UnknownCapability
from capabilities.routing.plan import Plan, PlanError
from capabilities.context.pointing import target_of, weighed
from capabilities.routing.task_operations import operation_read_as
from capability_actors.task_group import PLAN_CAPABILITY
from common import messages as m
from common.i18n import say
from common.tasks.cancel import cancel_task_tree
from common.tasks.models import PLANNED, InvalidTransition, TaskRecord
from events.event_bus import EventBus
from events.event_types import EventType

log = logging.getLogger("flora.agent")

SOURCE = "AgentActor"
RECENT = 50  # how far back "last" looks among a user's tasks
Out = tuple[str, dict]
Start = Callable[..., list[Out]]  # TaskCoordinator._start(request, intent, capability, parameters, meta)


class PlanDesk:
    def __init__(self, store, events: EventBus, registry, planner, *, start: Start, pending: dict,
                 agent_id: str = "agent"):
        self._store, self._events, self._registry = store, events, registry
        self._planner = planner  # a TaskPlanner without a model: never blocks
        self._start_single = start
        self._pending = pending  # the coordinator's requests waiting for an analysis, by task_id
        self._agent_id = agent_id
        self._meta: dict[str, dict] = {}  # task_id -> meta of a revision being planned again

    # -- new requests -----------------------------------------------------------------
    def on_agent_task(self, msg: m.AgentTask) -> list[Out] | None:
        """An operation on an existing task, or a plan; None for the usual path."""
        if msg.get("intent") in ("chat", "system") or msg.get("capability"):
            return None
        said = carried(msg)
        reading = said.examples
        operation = weighed(said.task_operation, reading, msg["content"])
        # the reading was made knowing the person has a task to operate on (semantic.py): leaning is
        # enough where a word names the operation ("attach a note to that last task — …"); without
        # one only a reading that is all but certain acts on the task ("use your tools: the total of
        # 4 plus 5, said back" reads 0.66 as a comment on the last task, and is a new request)
        if operation is None and reading is not None and reading.family == "task_op" and reading.sure(LEANS):
            operation = operation_read_as(reading.kind, msg["content"], needs_word=not reading.sure(CERTAIN))
        if operation is not None:
            return self.operate(msg, operation)
        plan = self._planner.plan(msg["content"], msg.get("memories"))
        if plan is not None and reading is not None and reading.sure() and reading.family not in ("plan", "task", "loop") \
                and all(semantic.knows(self._registry, step.capability) for step in plan.steps):
            return None  # a comma, a "then" inside what reads as one thing: understanding decides
        return self.start(msg, plan) if plan is not None else None

    def start(self, request: m.AgentTask, plan: Plan | dict, meta: dict | None = None) -> list[Out]:
        """Record the plan task and hand it to the group."""
        persona = choice_of(request)
        meta = {**(meta or {}), **self._meta.pop(request["task_id"], {}), **task_meta(persona)}
        try:
            plan = plan if isinstance(plan, Plan) else Plan.from_dict(plan)
            for i, step in enumerate(plan.steps):
                try:
                    self._registry.get_executable(step.capability)
                except UnknownCapability as exc:
                    raise PlanError(f"steps[{i}].capability: {exc}") from None
        except PlanError as exc:
            return [("reply", m.task_error(msg_id=request["msg_id"], error_type="invalid_parameter",
                                           task_id=request["task_id"], message=f"The plan is not usable: {exc}"))]
        refused = [s.capability for s in plan.steps if persona is not None and not persona.allows(s.capability)]
        if refused:  # the persona's allow-list holds for every step of its plans
            return [("reply", m.task_error(msg_id=request["msg_id"], error_type="forbidden", task_id=request["task_id"],
                                           message=refusal(persona.name, refused[0], persona.allowed),
                                           persona=persona.name))]
        task = TaskRecord(task_id=request["task_id"], tenant_id=request["tenant_id"], user_id=request["user_id"],
                          content=request["content"], msg_id=request["msg_id"], intent="task",
                          capability=PLAN_CAPABILITY, meta={**meta, "plan": plan.to_dict(), "children": {},
                                                            **memory_meta(request)})
        self._events.create_task(task, source=SOURCE, agent_id=self._agent_id,
                                 data={"capability": PLAN_CAPABILITY, "content": task.content,
                                       "steps": len(plan.steps)})
        self._events.transition(task.tenant_id, task.task_id, PLANNED, source=SOURCE, agent_id=self._agent_id,
                                event_type=EventType.PLAN_CREATED, data={"plan": plan.to_dict()})
        log.info("plan task_id=%s steps=%d source=%s", task.task_id, len(plan.steps), plan.source)
        return [("group", m.run_plan(task_id=task.task_id, tenant_id=task.tenant_id, user_id=task.user_id))]

    def take_meta(self, task_id: str) -> dict:
        """The revision meta of a request whose analysis came back as a single task."""
        return self._meta.pop(task_id, {})

    # -- the group's answers ---------------------------------------------------------------
    def on_plan_result(self, msg: m.PlanResult) -> list[Out]:
        task = self._store.get_task(msg["tenant_id"], msg["task_id"])
        if task is None:
            return []
        if msg["ok"]:
            return [("reply", m.task_completed(msg_id=task.msg_id, task_id=task.task_id, result=msg.get("result"),
                                               capability=PLAN_CAPABILITY, message=msg.get("message") or "Done."))]
        return [("reply", m.task_error(msg_id=task.msg_id, error_type=msg.get("error_type", "capability_failed"),
                                       task_id=task.task_id, retryable=bool(msg.get("retryable", False)),
                                       message=msg.get("error") or "The plan failed."))]

    def resume(self, task: TaskRecord) -> list[Out] | None:
        """A paused plan task the user answered: the group resumes its step. None: not a plan."""
        if task.capability != PLAN_CAPABILITY or "plan" not in task.meta:
            return None
        return [("group", m.run_plan(task_id=task.task_id, tenant_id=task.tenant_id, user_id=task.user_id,
                                     resume=True))]

    # -- operations ------------------------------------------------------------------------
    def operate(self, msg: m.AgentTask, operation) -> list[Out]:
        """Do ``operation`` (a TaskOperation) on the task it names, or on "the last" one."""
        target = self._target(msg, operation)
        if isinstance(target, dict):
            return [("reply", target)]
        kind = operation.kind
        if kind == "comment_on_task":
            return self._comment(msg, target, operation.text)
        if kind == "cancel_task":
            return self._cancel(msg, target)
        instruction = operation.text if kind == "revise_result" else ""
        return self._again(msg, target, instruction)

    def _target(self, msg: m.AgentTask, operation) -> TaskRecord | dict:
        tenant, user = msg["tenant_id"], msg["user_id"]
        if operation.task_ref != "last":
            task = self._store.get_task(tenant, operation.task_ref)
            if task is None:
                return m.task_error(msg_id=msg["msg_id"], error_type="not_found",
                                    message=f"There is no task {operation.task_ref}.")
            if task.user_id != user:
                return m.task_error(msg_id=msg["msg_id"], error_type="forbidden", task_id=task.task_id,
                                    message=f"Task {task.task_id} belongs to another user.")
            parent = task.meta.get("parent")
            return self._store.get_task(tenant, parent) or task if parent else task
        mine = [t for t in self._store.list_tasks(tenant, user_id=user, limit=RECENT)
                if not t.meta.get("parent") and t.task_id != msg["task_id"]]
        if not mine:
            # "把它弄成跟上次一样的格式" from someone with no task: "it" is nothing yet, so ask
            return m.clarification(msg_id=msg["msg_id"], message=say(carried(msg).language, "no_task_yet"),
                                   options=[], intent="clarify")
        chosen = target_of(operation.kind, msg["content"], mine)
        return next(t for t in mine if t.task_id == chosen)

    def _comment(self, msg: m.AgentTask, task: TaskRecord, text: str) -> list[Out]:
        comments = [*task.meta.get("comments", []), {"text": text, "user_id": msg["user_id"], "at": time.time()}]
        self._store.update_task(task.tenant_id, task.task_id, meta={**task.meta, "comments": comments})
        self._events.publish_task_event(task_id=task.task_id, event_type=EventType.TASK_COMMENTED, source=SOURCE,
                                        tenant_id=task.tenant_id, user_id=msg["user_id"], agent_id=self._agent_id,
                                        data={"text": text})
        return [("reply", m.task_completed(msg_id=msg["msg_id"], task_id=task.task_id, capability=task.capability,
                                           result={"task_id": task.task_id, "comment": text,
                                                   "comments": len(comments)},
                                           message=say(carried(msg).language, "comment_noted",
                                                       task_id=task.task_id)))]

    def _cancel(self, msg: m.AgentTask, task: TaskRecord) -> list[Out]:
        try:
            done = cancel_task_tree(self._events, self._store, task.tenant_id, task.task_id, source=SOURCE,
                                    by=msg["user_id"])
        except InvalidTransition:
            return [("reply", m.task_error(msg_id=msg["msg_id"], error_type="conflict", task_id=task.task_id,
                                           message=f"Task {task.task_id} is {task.state} already; "
                                                   "there is nothing to cancel."))]
        outs: list[Out] = [("reply", m.task_completed(
            msg_id=msg["msg_id"], task_id=task.task_id, capability=task.capability,
            result={"task_id": task.task_id, "state": done.task.state, "steps_cancelled": list(done.steps)},
            message=say(carried(msg).language, "task_cancelled_steps" if done.steps else "task_cancelled",
                        task_id=task.task_id, count=len(done.steps))))]
        if task.msg_id and task.msg_id != msg["msg_id"]:  # whoever still waits for the task hears it
            outs.append(("reply", m.task_error(msg_id=task.msg_id, error_type="cancelled", task_id=task.task_id,
                                               message=f"Task {task.task_id} was cancelled.")))
        return outs

    def _again(self, msg: m.AgentTask, task: TaskRecord, instruction: str) -> list[Out]:
        """Revise (with an instruction) or re-run a task as a new one."""
        said = "\n".join(x for x in (task.meta.get("instruction", ""), instruction) if x)
        meta = {"revision_of" if instruction else "rerun_of": task.task_id}
        if said:
            meta["instruction"] = said
        request = m.agent_task(task_id=msg["task_id"], msg_id=msg["msg_id"], tenant_id=msg["tenant_id"],
                               user_id=msg["user_id"], content=task.content)
        if "plan" in task.meta:
            plan = Plan.from_dict(task.meta["plan"])
            if instruction and plan.source == "llm":  # the model plans it again, told what to change
                self._meta[request["task_id"]] = meta
                self._pending[request["task_id"]] = request
                return [("worker", m.analyze(task_id=request["task_id"], tenant_id=request["tenant_id"],
                                             user_id=request["user_id"], content=task.content,
                                             instruction=instruction))]
            return self.start(request, plan, meta)
        if not task.capability:
            return [("reply", m.task_error(msg_id=msg["msg_id"], error_type="conflict", task_id=task.task_id,
                                           message=f"Task {task.task_id} never ran a capability; "
                                                   "ask for it again instead."))]
        return self._start_single(request, task.intent or "task", task.capability, dict(task.parameters), meta)
