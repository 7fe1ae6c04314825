"""What a finished plan comes to: its steps' results combined into one answer.

Each kind of step contributes in its own way (:func:`step_value`):

``leaf``
    what the user asked for: its result, as the capability returned it.
``workflow``
    a Dify workflow run: its ``outputs`` (the run's id, status and token count stay in the
    step's record, not in the answer).
``intermediate``
    only fed other steps: left out of the aggregate (unless the plan has nothing else).

The plan's ``aggregation`` picks the ResultAggregator strategy and its options; under the
``continue`` failure policy ``min_ok`` says how many contributing steps must have succeeded.
The ResultAggregatorActor answers a plan's ``aggregate_plan`` with :func:`aggregate_reply`,
apart from the actor that schedules steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from capabilities.aggregation.result_aggregator import Aggregate, AggregationError, Outcome
from capabilities.routing.plan import Plan, PlanError, PlanStep
from common import messages as m


@dataclass(frozen=True)
class PlanOutcome:
    aggregate: Aggregate
    result: dict  # the plan task's result: value, strategy, detail, failed, plan, steps

    @property
    def summary(self) -> str:
        failed = self.aggregate.failed
        note = f" ({len(failed)} failed: {', '.join(failed)})" if failed else ""
        return f"Done: {len(self.result['steps'])} steps, combined by {self.aggregate.strategy}{note}."


def step_value(step: PlanStep, result: Any) -> Any:
    """What a step that succeeded contributes to the aggregate, by its kind."""
    if step.kind == "workflow" and isinstance(result, dict) and isinstance(result.get("outputs"), dict):
        return result["outputs"]
    return result


def combine(plan: Plan, results: dict[str, Any], errors: dict[str, str], children: dict[str, str], aggregator,
            *, min_ok: int | None = None) -> PlanOutcome:
    """Aggregate the plan's results (raises AggregationError when they cannot be combined)."""
    leaves = [s for s in plan.steps if s.kind != "intermediate"] or list(plan.steps)
    outcomes = [Outcome(source=s.id, ok=s.id in results, value=step_value(s, results.get(s.id)),
                        error=errors.get(s.id, "")) for s in leaves]
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


def aggregate_reply(msg: m.AggregatePlan, aggregator) -> m.PlanAggregated:
    """The ``plan_aggregated`` answer to ``aggregate_plan``: the combined result and the user's
    summary, or ``ok`` false with why the results could not be combined."""
    reply = {"task_id": msg["task_id"], "tenant_id": msg["tenant_id"]}
    try:
        outcome = combine(Plan.from_dict(msg["plan"]), msg["results"], msg["errors"], msg["children"], aggregator,
                          min_ok=msg.get("min_ok"))
    except (AggregationError, PlanError) as exc:
        return m.plan_aggregated(**reply, ok=False, error_type="capability_failed",
                                 error=f"The steps' results could not be combined: {exc}")
    return m.plan_aggregated(**reply, ok=True, result=outcome.result,
                             message=f"{outcome.summary}\n{m.preview(outcome.aggregate.value)}")
