"""ParallelTaskAggregator: the parallel decision for one plan (how wide it runs), and what
the plan's run teaches the optimizer afterwards.

For each plan the TaskGroupAggregatorActor starts, :meth:`ParallelTaskAggregator.decide`
answers with a :class:`~capability_actors.task_group.Setting`:

``serial``
    the plan's units form one chain (:meth:`PlanGraph.width` is 1), or it has one step:
    nothing could run beside anything else, so one step at a time, one per batch, and no
    Optuna trial is spent on a plan that cannot tell one setting from another.
``fixed``
    ``planning.parallelism: fixed``, or no ``parallel_optimization`` capability:
    ``planning.concurrency`` steps at a time in batches of ``planning.batch_size``.
``tuned``
    the ``parallel_optimization`` capability (Optuna) suggests a concurrency and a batch size
    for the plan's main capability (the one most of its steps run);
    :meth:`ParallelTaskAggregator.observe` tells it how the plan did (good steps per second,
    from the steps it ran and the failed attempts among them) when the plan ran to its end
    unattended. A plan that paused for the user or was cancelled is not reported: the time it
    took measures the user, not the setting.
"""

from __future__ import annotations

from collections import Counter

from capabilities.routing.plan import Plan
from capabilities.routing.plan_graph import PlanGraph
from capability_actors.task_group import TaskGroupRunner
from capability_actors.task_group_actions import Setting

SERIAL, FIXED, TUNED = "serial", "fixed", "tuned"


def main_capability(plan: Plan) -> str:
    """The capability most of the plan's steps run: whose parallel setting the plan uses."""
    return Counter(s.capability for s in plan.steps).most_common(1)[0][0]


class ParallelTaskAggregator:
    def __init__(self, planning, optimizer=None):
        self._planning = planning  # the config's ``planning`` section
        self._optimizer = optimizer if planning.parallelism != FIXED else None

    def decide(self, plan: Plan, graph: PlanGraph | None = None) -> Setting:
        if (graph or PlanGraph(plan)).width() <= 1:
            return Setting(1, 1, mode=SERIAL)
        if self._optimizer is None:
            return Setting(self._planning.concurrency, self._planning.batch_size, mode=FIXED)
        suggested = self._optimizer.suggest(main_capability(plan))
        return Setting(suggested.concurrency, suggested.batch_size, suggested, mode=TUNED)

    def observe(self, runner: TaskGroupRunner, how: str) -> None:
        """``how`` the runner's plan ended: completed | failed | abandoned."""
        trial = runner.setting.trial
        if trial is None or self._optimizer is None or runner.was_paused or how == "abandoned":
            return
        self._optimizer.report(trial, main_capability(runner.plan), items=runner.items + runner.errors_seen,
                               elapsed_s=max(runner.elapsed_s, 1e-6), errors=runner.errors_seen)
