"""ResultAggregatorActor: turns a finished plan's step results into the plan's answer.

A child of the TaskGroupAggregatorActor, created with the first plan that ends. Combining
can take a while (the ``summary`` reducer and the ``llm`` tie policy ask the model), and the
group actor must meanwhile keep dispatching other plans' steps, so the combining happens
here: ``aggregate_plan`` in, ``plan_aggregated`` out. What a leaf, a workflow and an
intermediate step contribute, and how the plan's strategy applies, is
:mod:`capability_actors.plan_outcome`; this actor only moves messages.

It never leaves a plan waiting: a plan or result it cannot combine, or a bug while
combining, is answered with ``ok`` false and the reason, and the plan fails with it.
"""

from __future__ import annotations

from agents.base import FloraActor
from capability_actors.plan_outcome import aggregate_reply
from common import messages as m


class ResultAggregatorActor(FloraActor):
    role = "result_aggregator"

    def handlers(self):
        return {"aggregate_plan": self.on_aggregate_plan}

    def on_aggregate_plan(self, message, sender):
        try:
            msg = m.validate(message)
        except m.ProtocolError as exc:
            self.reply_error(sender, message, "malformed_message", str(exc))
            return
        try:
            reply = aggregate_reply(msg, self.runtime.registry.get_capability("result_aggregation"))
        except Exception as exc:  # a bug: the plan fails with it instead of waiting forever
            self.log.exception("internal error aggregating task_id=%s", msg["task_id"])
            reply = m.plan_aggregated(task_id=msg["task_id"], tenant_id=msg["tenant_id"], ok=False,
                                      error_type="internal",
                                      error=f"Combining the steps' results failed: {type(exc).__name__}: {exc}")
        self.send(sender, reply)
