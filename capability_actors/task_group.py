"""TaskGroupRunner: one plan's execution, as a plain class the TaskGroupAggregatorActor drives.

The plan's task (the *parent*, capability ``plan``) holds the plan in ``meta["plan"]``; each
attempt of each step is a task record of its own (``meta.parent``, ``meta.step``), whose id
the parent keeps in ``meta["children"]``. The runner walks the plan's units
(:class:`~capabilities.routing.plan_graph.PlanGraph`): a unit is started when every unit it
waits for is done, up to ``setting.concurrency`` steps at a time, and the steps started
together are handed out in batches of ``setting.batch_size`` (one batch to one
ExecutionActor). Before a step starts its references are resolved against the results so
far (:class:`~capabilities.routing.context_resolver.ContextResolver`). A coupled unit runs
its steps one after another, round after round.

A step that fails with a retryable error is tried again after an exponential backoff
(``retry_backoff_s · 2^(attempt-1)``, the actor's ``wakeupAfter``, never a sleep), at most
``max_retries`` times; then it has failed. ``fail_fast`` ends the plan at the first failed
step (what still runs is cancelled); ``continue`` runs what does not depend on the failed
step and aggregates what succeeded, if at least ``min_ok`` did. Intermediate steps feed
others and are left out of the aggregate; a workflow step is a Dify capability like any other.

A step that pauses for a parameter pauses the parent with the step's question; the answer,
recorded with the parent, is copied to the step when the parent resumes. A cancelled parent
(cancelled by anyone, in any process: the store says so) stops the runner: no step starts,
and results that arrive later are dropped.

When every step has ended the results go to the ResultAggregatorActor (an ``Aggregate``
action); its answer (:meth:`TaskGroupRunner.on_aggregated`) completes or fails the parent.
Results lost with a dying ResultAggregatorActor are sent to its successor once more.

Each public method returns the actions for the actor
(:mod:`capability_actors.task_group_actions`). A bug raises.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from capabilities.memory.results import with_memory
from capabilities.routing.context_resolver import UnresolvedReference
from capabilities.routing.plan import Plan
from capabilities.routing.plan_graph import PlanGraph, Unit
from capability_actors.task_group_actions import (
    CONTINUE, FAIL_FAST, Action, Aggregate, Dispatch, GroupPolicy, Report, Retry, Setting,
)
from common import messages as m
from common.i18n import language_of, say
from common.tasks.models import (
    CANCELLED, COMPLETED, FAILED, PAUSED_STATES, PLANNED, RUNNING, UNFINISHED_STATES, InvalidTransition,
    TaskNotFound, TaskRecord,
)
from events.event_types import EventType

log = logging.getLogger("flora.task_group")

SOURCE = "TaskGroupAggregatorActor"
PLAN_CAPABILITY = "plan"
MAX_AGGREGATIONS = 2  # a ResultAggregatorActor that dies holding a plan's results: its successor gets them once


@dataclass
class _UnitRun:
    """Where a started unit is: the round and the position of its next step."""

    unit: Unit
    rounds: int
    round: int = 1
    index: int = 0
    this_round: dict = field(default_factory=dict)
    prev_round: dict = field(default_factory=dict)

    @property
    def step_id(self) -> str:
        return self.unit.step_ids[self.index]


class TaskGroupRunner:
    def __init__(self, parent: TaskRecord, *, events, store, resolver, setting: Setting,
                 policy: GroupPolicy, on_finish: Callable[["TaskGroupRunner", str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.task_id, self.tenant_id, self.user_id = parent.task_id, parent.tenant_id, parent.user_id
        self.plan = Plan.from_dict(parent.meta["plan"])
        self.graph = PlanGraph(self.plan)
        self.setting, self.policy = setting, policy
        self._events, self._store, self._resolver = events, store, resolver
        self._instruction = parent.meta.get("instruction", "")
        self.language = language_of(parent.content)  # what the person reads about its steps is in theirs
        # each step is held to the plan's persona: execution checks its allow-list
        self._persona = {k: parent.meta[k] for k in ("persona", "allowed_capabilities") if k in parent.meta}
        self._on_finish = on_finish
        self._clock = clock
        self._steps = {s.id: s for s in self.plan.steps}
        self.done: set[str] = set()  # unit ids
        self.failed_units: set[str] = set()
        self.running: dict[str, _UnitRun] = {}
        self.results: dict[str, Any] = {}  # step id -> result (a coupled step's last round)
        self.errors: dict[str, str] = {}
        self.children: dict[str, str] = dict(parent.meta.get("children") or {})
        self.in_flight: dict[str, str] = {}  # step's task id -> step id
        self.attempts: dict[str, int] = {}
        self.waiting_retry: set[str] = set()
        self.paused: str | None = None  # the step task the parent waits on
        self._pause_queue: list[dict] = []  # further steps' questions, asked one at a time
        self.was_paused = False
        self.aggregating = False  # every step ended; waiting for the ResultAggregatorActor
        self._aggregations = 0  # times the results were sent to one
        self.finished = False
        self.items = self.errors_seen = 0
        self._started = clock()
        self._out: list[Action] = []

    # -- what the actor calls ------------------------------------------------------------
    def start(self) -> list[Action]:
        try:
            self._events.transition(self.tenant_id, self.task_id, RUNNING, source=SOURCE, expect=(PLANNED,),
                                    data={"capability": PLAN_CAPABILITY, "steps": len(self.plan.steps),
                                          "parallel": self.setting.mode, "concurrency": self.setting.concurrency,
                                          "batch_size": self.setting.batch_size})
        except InvalidTransition as exc:  # cancelled before it began
            log.info("plan task_id=%s not started: %s", self.task_id, exc)
            self.finished = True
            return []
        return self._pump()

    def on_result(self, msg: dict) -> list[Action]:
        step_id = self.in_flight.pop(msg["task_id"], None)
        if step_id is None or self.finished:
            return []
        if not self._parent_alive():
            return self._abandon()
        if msg["ok"]:
            try:
                self._events.transition(self.tenant_id, msg["task_id"], COMPLETED, source=SOURCE,
                                        data={"capability": msg["capability"], "parent": self.task_id},
                                        result=msg.get("result"))
            except InvalidTransition as exc:  # the step was cancelled on its own
                self._failed_attempt(step_id, msg["task_id"], "cancelled", str(exc), retryable=False)
                return self._pump()
            self.items += 1
            self._event(EventType.STEP_COMPLETED, step=step_id, task_id=msg["task_id"],
                        capability=msg["capability"], round=self.running[self._unit_id(step_id)].round)
            self._advance(step_id, msg.get("result"))
        else:
            self._failed_attempt(step_id, msg["task_id"], msg.get("error_type", "capability_failed"),
                                 msg.get("error", "") or "the step failed", bool(msg.get("retryable")))
        return self._pump()

    def on_paused(self, msg: dict) -> list[Action]:
        """A step waits for the user: the parent waits with the step's question."""
        step_id = self.in_flight.pop(msg["task_id"], None)
        if step_id is None or self.finished:
            return []
        if not self._parent_alive():
            return self._abandon()
        if self.paused is not None:
            self._pause_queue.append({**msg, "step": step_id})
            return self._drain()
        self._pause_parent({**msg, "step": step_id})
        return self._drain()

    def resume(self) -> list[Action]:
        """The user answered the parent's question: hand the answer to the step and go on."""
        parent = self._store.get_task(self.tenant_id, self.task_id)
        if parent is None or parent.state not in PAUSED_STATES or self.paused is None or self.finished:
            return []
        child = self._store.get_task(self.tenant_id, self.paused)
        step_id = child.meta.get("step") if child is not None else None
        if child is None or step_id is None:
            self._finish_failed("internal", f"the paused step {self.paused} is gone")
            return self._drain()
        self._store.update_task(self.tenant_id, child.task_id, parameters={**child.parameters, **parent.parameters},
                                approved=parent.approved)
        try:
            self._events.transition(self.tenant_id, self.task_id, RUNNING, source=SOURCE,
                                    event_type=EventType.TASK_RESUMED, expect=PAUSED_STATES,
                                    data={"step": step_id}, missing=[])
        except InvalidTransition:
            return self._abandon()
        self.paused = None
        self.in_flight[child.task_id] = step_id
        self._out.append(Dispatch((m.resume_execution(task_id=child.task_id, tenant_id=self.tenant_id,
                                                      user_id=self.user_id),)))
        if self._pause_queue:
            self._pause_parent(self._pause_queue.pop(0))
        return self._pump()

    def restore(self) -> list[Action]:
        """Rebuild where a paused plan stood from its records, when the runner that ran it is
        gone (the actor restarted), then resume it. Units with every step completed are done;
        the unit of the paused step goes on from that step; any other unit runs again (a step
        record it left unfinished is cancelled first)."""
        parent = self._store.get_task(self.tenant_id, self.task_id)
        paused_id = (parent.meta.get("paused_step") or {}).get("task_id") if parent else None
        records = {sid: self._store.get_task(self.tenant_id, cid) for sid, cid in self.children.items()}
        for unit in self.graph.units():
            rounds = self.policy.coupled_rounds if unit.coupled else 1
            recs = [records.get(sid) for sid in unit.step_ids]
            if all(r is not None and r.state == COMPLETED and r.meta.get("round", 1) == rounds for r in recs):
                self.done.add(unit.id)
                self.results.update({sid: r.result for sid, r in zip(unit.step_ids, recs)})
                continue
            paused = next((r for r in recs if r is not None and r.task_id == paused_id), None)
            if paused is not None:
                run = self.running[unit.id] = _UnitRun(unit, rounds, round=paused.meta.get("round", 1),
                                                       index=unit.step_ids.index(paused.meta["step"]))
                run.this_round = {sid: r.result for sid, r in zip(unit.step_ids[:run.index], recs)
                                  if r is not None and r.state == COMPLETED and r.meta.get("round") == run.round}
                self.paused, self.was_paused = paused.task_id, True
                self.attempts[paused.meta["step"]] = paused.meta.get("attempt", 1)
                continue
            for record in recs:
                if record is not None and record.state in UNFINISHED_STATES:
                    try:
                        self._events.transition(self.tenant_id, record.task_id, CANCELLED, source=SOURCE,
                                                expect=UNFINISHED_STATES, error="replaced after a restart")
                    except InvalidTransition:
                        pass  # it ended meanwhile
        return self.resume()

    def retry(self, step_id: str) -> list[Action]:
        if step_id not in self.waiting_retry or self.finished:
            return []
        self.waiting_retry.discard(step_id)
        if not self._parent_alive():
            return self._abandon()
        started = self._start_step(self.running[self._unit_id(step_id)])
        if started is not None:
            self._out.append(Dispatch((started,)))
        return self._pump()

    def on_lost(self, task_id: str, reason: str) -> list[Action]:
        """The ExecutionActor running a step died or refused the message: a retryable failure."""
        return self.on_result(m.subtask_result(task_id=task_id, tenant_id=self.tenant_id, capability="unknown",
                                               ok=False, error_type="internal", retryable=True,
                                               error=f"the worker failed: {reason}"))

    @property
    def idle(self) -> bool:
        """Nothing of this plan is running or due: the runner may be forgotten."""
        return self.finished or (not self.in_flight and not self.waiting_retry and not self.aggregating)

    # -- scheduling ----------------------------------------------------------------------
    def _pump(self) -> list[Action]:
        if self.finished:
            return self._drain()
        if not self._parent_alive():
            return self._abandon()
        starts: list[dict] = []
        if self.paused is None:
            while not self.finished:
                ready = self.graph.ready(self.done | self.failed_units, set(self.running))
                blocked = [u for u in ready if u.depends_on & self.failed_units]
                for unit in blocked:  # what needs a failed step cannot run
                    self.failed_units.add(unit.id)
                    for sid in unit.step_ids:
                        self.errors[sid] = "not run: a step it needs failed"
                if blocked:
                    continue
                slots = self.setting.concurrency - len(self.in_flight)
                if not ready or slots <= 0:
                    break
                for unit in ready[:slots]:
                    run = self.running[unit.id] = _UnitRun(unit, self.policy.coupled_rounds if unit.coupled else 1)
                    started = self._start_step(run)
                    if started is not None:
                        starts.append(started)
                    if self.finished:
                        break
        size = max(1, self.setting.batch_size)
        self._out.extend(Dispatch(tuple(starts[i:i + size])) for i in range(0, len(starts), size))
        if not self.finished and not self.aggregating and not self.running and self.paused is None:
            self._finish()
        return self._drain()

    def _start_step(self, run: _UnitRun) -> dict | None:
        step = self._steps[run.step_id]
        visible = dict(self.results)
        if run.unit.coupled:  # a partner not run yet this round: its previous round's result
            visible.update(run.prev_round)
            visible.update(run.this_round)
        try:
            parameters = self._resolver.resolve(step.parameters, visible,
                                                missing="null" if run.unit.coupled else "error")
        except UnresolvedReference as exc:
            self._give_up(step.id, "invalid_parameter", str(exc))
            return None
        attempt = self.attempts[step.id] = self.attempts.get(step.id, 0) + 1
        meta = {"parent": self.task_id, "step": step.id, "kind": step.kind, "attempt": attempt, "round": run.round}
        if self._instruction:
            meta["instruction"] = self._instruction
        meta.update(self._persona)
        child = TaskRecord(task_id=m.new_id("task"), tenant_id=self.tenant_id, user_id=self.user_id,
                           content=step.description or say(self.language, "plan_step", capability=step.capability,
                                                           step=step.id, task_id=self.task_id),
                           intent="task", capability=step.capability, parameters=parameters, meta=meta)
        child = self._events.create_task(child, source=SOURCE, data={"capability": step.capability,
                                                                     "parent": self.task_id, "step": step.id})
        self.children[step.id] = child.task_id
        parent = self._store.get_task(self.tenant_id, self.task_id)
        self._store.update_task(self.tenant_id, self.task_id, meta={**parent.meta, "children": dict(self.children)})
        self._event(EventType.STEP_STARTED, step=step.id, task_id=child.task_id, capability=step.capability,
                    attempt=attempt, round=run.round)
        self.in_flight[child.task_id] = step.id
        return m.execute(task_id=child.task_id, tenant_id=self.tenant_id, user_id=self.user_id,
                         capability=step.capability, parameters=parameters, task=child.to_dict())

    def _advance(self, step_id: str, result: Any) -> None:
        run = self.running[self._unit_id(step_id)]
        run.this_round[step_id] = result
        run.index += 1
        if run.index < len(run.unit.step_ids):
            started = self._start_step(run)
        elif run.round < run.rounds:
            run.prev_round, run.this_round, run.index = run.this_round, {}, 0
            run.round += 1
            started = self._start_step(run)
        else:
            del self.running[run.unit.id]
            self.done.add(run.unit.id)
            self.results.update(run.this_round)
            return
        if started is not None:
            self._out.append(Dispatch((started,)))

    def _failed_attempt(self, step_id: str, task_id: str, error_type: str, error: str, retryable: bool) -> None:
        try:
            self._events.transition(self.tenant_id, task_id, FAILED, source=SOURCE, expect=UNFINISHED_STATES,
                                    data={"error_type": error_type, "error": error, "parent": self.task_id},
                                    error=error)
        except (InvalidTransition, TaskNotFound):
            pass  # it ended already (cancelled): the failure is recorded on the plan below
        self.errors_seen += 1
        attempt = self.attempts.get(step_id, 1)
        if retryable and attempt <= self.policy.max_retries:
            delay = self.policy.backoff(attempt)
            self._event(EventType.STEP_RETRIED, step=step_id, task_id=task_id, attempt=attempt, delay_s=delay,
                        error=error)
            self.waiting_retry.add(step_id)
            self._out.append(Retry(self.task_id, step_id, delay))
            return
        self._give_up(step_id, error_type, error)

    def _give_up(self, step_id: str, error_type: str, error: str) -> None:
        self.errors[step_id] = error
        self._event(EventType.STEP_FAILED, step=step_id, task_id=self.children.get(step_id, ""),
                    error_type=error_type, error=error, attempts=self.attempts.get(step_id, 0))
        unit_id = self._unit_id(step_id)
        self.running.pop(unit_id, None)
        self.failed_units.add(unit_id)
        if self.policy.failure_policy == FAIL_FAST:
            step = self._steps[step_id]
            self._finish_failed(error_type, f"Step {step_id} ({step.capability}) failed: {error}")

    def _pause_parent(self, msg: dict) -> None:
        child = self._store.get_task(self.tenant_id, msg["task_id"])
        parent = self._store.get_task(self.tenant_id, self.task_id)
        step = msg["step"]
        try:
            parent = self._events.transition(
                self.tenant_id, self.task_id, msg["pause_kind"], source=SOURCE,
                data={"pause_kind": msg["pause_kind"], "missing": [p["name"] for p in msg["missing_parameters"]],
                      "step": step},
                missing=msg["missing_parameters"], parameters=dict(child.parameters) if child else {}, approved=False,
                meta={**parent.meta, "children": dict(self.children),
                      "paused_step": {"step": step, "task_id": msg["task_id"], "capability": msg.get("capability", "")}})
        except InvalidTransition:
            self._stop()
            return
        self.paused, self.was_paused = msg["task_id"], True
        self._out.append(Report(m.task_paused(
            msg_id=parent.msg_id or m.new_id("msg"), task_id=self.task_id,
            message=say(self.language, "plan_step_waits", step=step, task_id=self.task_id) + "\n" + msg["message"],
            missing_parameters=msg["missing_parameters"], pause_kind=msg["pause_kind"],
            capability=msg.get("capability"))))

    # -- endings -------------------------------------------------------------------------
    def _finish(self) -> None:
        """Every step has ended: hand the results to the ResultAggregatorActor."""
        self.aggregating = True
        self._send_for_aggregation()

    def _send_for_aggregation(self) -> None:
        self._aggregations += 1
        self._out.append(Aggregate(m.aggregate_plan(
            task_id=self.task_id, tenant_id=self.tenant_id, plan=self.plan.to_dict(), results=dict(self.results),
            errors=dict(self.errors), children=dict(self.children),
            min_ok=self.policy.min_ok if self.policy.failure_policy == CONTINUE else None)))

    def aggregation_lost(self, reason: str, *, retry: bool = True) -> list[Action]:
        """The ResultAggregatorActor died holding this plan's results (``retry``: they go to
        its successor, once more), or could not take them: then the plan fails."""
        if not self.aggregating or self.finished:
            return []
        if retry and self._aggregations < MAX_AGGREGATIONS:
            self._send_for_aggregation()
            return self._drain()
        times = f" {self._aggregations} times" if retry else ""
        return self.on_aggregated(m.plan_aggregated(task_id=self.task_id, tenant_id=self.tenant_id, ok=False,
                                                    error_type="internal",
                                                    error=f"Combining the steps' results failed{times}: {reason}"))

    def on_aggregated(self, msg: dict) -> list[Action]:
        """The ResultAggregatorActor's ``plan_aggregated``: the plan's task ends with it."""
        if not self.aggregating or self.finished:
            return []
        self.aggregating = False
        if not msg["ok"]:
            self._finish_failed(msg.get("error_type", "capability_failed"), msg.get("error", "") or "no reason given")
            return self._drain()
        self.finished = True
        parent = self._store.get_task(self.tenant_id, self.task_id)
        result = with_memory(msg["result"], self._store, parent) if parent is not None else msg["result"]
        try:
            self._events.transition(self.tenant_id, self.task_id, COMPLETED, source=SOURCE, expect=(RUNNING,),
                                    data={"capability": PLAN_CAPABILITY}, result=result)
        except InvalidTransition as exc:  # cancelled while it was combined: nothing is reported done
            log.info("plan task_id=%s not completed: %s", self.task_id, exc)
            self._end("abandoned")
            return self._drain()
        self._event(EventType.PLAN_COMPLETED, aggregate={key: result[key] for key in ("strategy", "value", "failed")})
        self._end("completed")
        self._out.append(Report(m.plan_result(task_id=self.task_id, tenant_id=self.tenant_id, ok=True,
                                              result=result, message=msg.get("message"))))
        return self._drain()

    def _finish_failed(self, error_type: str, error: str) -> None:
        self.finished = True
        self._cancel_running("the plan failed")
        try:
            self._events.transition(self.tenant_id, self.task_id, FAILED, source=SOURCE, expect=UNFINISHED_STATES,
                                    data={"error_type": error_type, "error": error}, error=error)
        except InvalidTransition:
            self._end("abandoned")
            return
        self._end("failed")
        self._out.append(Report(m.plan_result(task_id=self.task_id, tenant_id=self.tenant_id, ok=False,
                                              error_type=error_type, error=error, retryable=False)))

    def _abandon(self) -> list[Action]:
        self._stop()
        return self._drain()

    def _stop(self) -> None:
        """The parent ended elsewhere (cancelled): stop, and make sure no step of it goes on."""
        if not self.finished:
            log.info("plan task_id=%s ended elsewhere; dropping its runner", self.task_id)
            self.finished = True
            self._cancel_running("the plan was cancelled")
            self._end("abandoned")
        self.in_flight.clear()
        self.waiting_retry.clear()

    def _cancel_running(self, reason: str) -> None:
        for task_id in [*self.in_flight, *([self.paused] if self.paused else [])]:
            try:
                self._events.transition(self.tenant_id, task_id, CANCELLED, source=SOURCE, expect=UNFINISHED_STATES,
                                        data={"parent": self.task_id, "reason": reason}, error=reason)
            except (InvalidTransition, TaskNotFound):
                continue

    def _end(self, how: str) -> None:
        """``how``: completed | failed | abandoned (it ended elsewhere, e.g. cancelled)."""
        if self._on_finish is not None:
            self._on_finish(self, how)

    # -- helpers -------------------------------------------------------------------------
    @property
    def elapsed_s(self) -> float:
        return self._clock() - self._started

    def _parent_alive(self) -> bool:
        parent = self._store.get_task(self.tenant_id, self.task_id)
        return parent is not None and parent.state in UNFINISHED_STATES

    def _unit_id(self, step_id: str) -> str:
        return self.graph.unit_of(step_id).id

    def _event(self, kind: EventType, **data) -> None:
        self._events.publish_task_event(task_id=self.task_id, event_type=kind, source=SOURCE,
                                        tenant_id=self.tenant_id, user_id=self.user_id, data=data)

    def _drain(self) -> list[Action]:
        out, self._out = self._out, []
        return out
