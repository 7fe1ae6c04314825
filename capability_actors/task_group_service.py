"""TaskGroupService: what the TaskGroupAggregatorActor does, as a plain class.

It keeps one :class:`~capability_actors.task_group.TaskGroupRunner` per plan being run,
routes each step's ``subtask_result`` / ``task_paused`` to the runner that started the step
and each ``plan_aggregated`` to the runner whose results were combined, and asks the
:class:`~capability_actors.parallel_task_aggregator.ParallelTaskAggregator` how wide each
plan runs (and tells it how each plan did).

A runner the service has forgotten (the actor restarted while its plan waited for the user)
is rebuilt from the plan's records when the answer comes (``run_plan`` with ``resume``).
"""

from __future__ import annotations

import logging

from capabilities.routing.context_resolver import ContextResolver
from capability_actors.parallel_task_aggregator import ParallelTaskAggregator
from capability_actors.task_group import TaskGroupRunner
from capability_actors.task_group_actions import Action, Dispatch, GroupPolicy, Report, Setting
from common import messages as m
from common.tasks.models import PAUSED_STATES, PLANNED

log = logging.getLogger("flora.task_group")


class TaskGroupService:
    def __init__(self, *, store, events, registry, config, optimizer=None):
        self._store, self._events, self._config = store, events, config
        self.parallel = ParallelTaskAggregator(config.planning, optimizer)
        self._resolver = registry.get_capability("context_resolver", None) or ContextResolver()
        self.runners: dict[str, TaskGroupRunner] = {}  # by the plan's task id
        self._owner: dict[str, str] = {}  # a step's task id -> its plan's task id

    def on_run_plan(self, msg: m.RunPlan) -> list[Action]:
        parent = self._store.get_task(msg["tenant_id"], msg["task_id"])
        if parent is None or "plan" not in parent.meta:
            return [Report(m.plan_result(task_id=msg["task_id"], tenant_id=msg["tenant_id"], ok=False,
                                         error_type="not_found", error=f"There is no plan task {msg['task_id']}."))]
        runner = self.runners.get(parent.task_id)
        if msg.get("resume"):
            if parent.state not in PAUSED_STATES:
                return []
            if runner is None:
                runner = self._runner(parent)
                return self._track(runner, runner.restore())
            return self._track(runner, runner.resume())
        if runner is not None or parent.state != PLANNED:
            log.info("plan task_id=%s is %s; not started again", parent.task_id, parent.state)
            return []
        runner = self._runner(parent)
        return self._track(runner, runner.start())

    def on_step_reply(self, msg: dict) -> list[Action]:
        """A step's ``subtask_result`` or ``task_paused``."""
        runner = self.runners.get(self._owner.pop(msg["task_id"], ""))
        if runner is None:
            log.info("reply for step task_id=%s of no running plan; dropped", msg["task_id"])
            return []
        if msg["message_type"] == "task_paused":
            return self._track(runner, runner.on_paused(msg))
        return self._track(runner, runner.on_result(msg))

    def on_aggregated(self, msg: dict) -> list[Action]:
        """The ResultAggregatorActor's ``plan_aggregated``."""
        runner = self.runners.get(msg["task_id"])
        if runner is None:
            log.info("aggregate for plan task_id=%s of no running plan; dropped", msg["task_id"])
            return []
        return self._track(runner, runner.on_aggregated(msg))

    def on_aggregation_lost(self, reason: str, task_id: str | None = None) -> list[Action]:
        """The ResultAggregatorActor died (every plan it held is sent again, once), or could not
        take the results of plan ``task_id`` (that plan fails)."""
        if task_id is not None:
            runner = self.runners.get(task_id)
            return self._track(runner, runner.aggregation_lost(reason, retry=False)) if runner is not None else []
        actions: list[Action] = []
        for runner in [r for r in self.runners.values() if r.aggregating]:
            actions += self._track(runner, runner.aggregation_lost(reason))
        return actions

    def on_retry(self, task_id: str, step_id: str) -> list[Action]:
        runner = self.runners.get(task_id)
        return self._track(runner, runner.retry(step_id)) if runner is not None else []

    def on_lost(self, msg: dict, reason: str) -> list[Action]:
        """A message to an ExecutionActor was lost with it (it died, or refused it)."""
        runner = self.runners.get(self._owner.pop(msg.get("task_id", ""), ""))
        return self._track(runner, runner.on_lost(msg["task_id"], reason)) if runner is not None else []

    # -- helpers ------------------------------------------------------------------------
    def _runner(self, parent) -> TaskGroupRunner:
        runner = TaskGroupRunner(parent, events=self._events, store=self._store, resolver=self._resolver,
                                 setting=Setting(1, 1), policy=self._policy(), on_finish=self._finished)
        runner.setting = self.parallel.decide(runner.plan, runner.graph)
        self.runners[parent.task_id] = runner
        return runner

    def _track(self, runner: TaskGroupRunner, actions: list[Action]) -> list[Action]:
        for action in actions:
            if isinstance(action, Dispatch):
                for msg in action.messages:
                    self._owner[msg["task_id"]] = runner.task_id
        if runner.finished and runner.idle:
            self.runners.pop(runner.task_id, None)
        return actions

    def _finished(self, runner: TaskGroupRunner, how: str) -> None:
        for task_id in list(runner.in_flight):
            self._owner.pop(task_id, None)
        self.parallel.observe(runner, how)

    def _policy(self) -> GroupPolicy:
        p = self._config.planning
        return GroupPolicy(max_retries=p.max_retries, retry_backoff_s=p.retry_backoff_s,
                           retry_backoff_max_s=p.retry_backoff_max_s, failure_policy=p.failure_policy,
                           min_ok=p.min_ok, coupled_rounds=p.coupled_rounds)
