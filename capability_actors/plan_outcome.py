"""What a finished plan comes to: its steps' results combined into one answer.

The leaf and workflow steps are what the user asked for; intermediate steps only fed other
steps and are left out of the aggregate (unless the plan has nothing else). The plan's
``aggregation`` picks the ResultAggregator strategy and its options; under the ``continue``
failure policy ``min_ok`` says how many leaves must have succeeded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from capabilities.aggregation.result_aggregator import Aggregate, Outcome
from capabilities.routing.plan import Plan


@dataclass(frozen=True)
class PlanOutcome:
    aggregate: Aggregate
    result: dict  # the plan task's result: value, strategy, detail, failed, plan, steps

    @property
    def summary(self) -> str:
        failed = self.aggregate.failed
        note = f" ({len(failed)} failed: {', '.join(failed)})" if failed else ""
        return f"Done: {len(self.result['steps'])} steps, combined by {self.aggregate.strategy}{note}."


def combine(plan: Plan, results: dict[str, Any], errors: dict[str, str], children: dict[str, str], aggregator,
            *, min_ok: int | None = None) -> PlanOutcome:
    """Aggregate the plan's results (raises AggregationError when they cannot be combined)."""
    leaves = [s for s in plan.steps if s.kind != "intermediate"] or list(plan.steps)
    outcomes = [Outcome(source=s.id, ok=s.id in results, value=results.get(s.id), error=errors.get(s.id, ""))
                for s in leaves]
    options = {k: v for k, v in plan.aggregation.items() if k != "strategy"}
    if min_ok is not None:
        options.setdefault("min_ok", min_ok)
    aggregate = aggregator.aggregate(outcomes, plan.aggregation.get("strategy", "concat"), **options)
    steps = {s.id: {"capability": s.capability, "kind": s.kind, "task_id": children.get(s.id, ""),
                    "ok": s.id in results,
                    **({"result": results[s.id]} if s.id in results else {"error": errors.get(s.id, "not run")})}
             for s in plan.steps}
    result = {"value": aggregate.value, "strategy": aggregate.strategy, "detail": aggregate.detail,
              "failed": list(aggregate.failed), "plan": plan.to_dict(), "steps": steps}
    return PlanOutcome(aggregate, result)
