"""TaskGroupAggregatorActor: runs plans. A child of the AgentActor, created on the first plan.

It keeps its own pool of ExecutionActors (children, created as plans need them, up to
``planning.max_workers``; one that dies is replaced on demand and its steps are retried),
so a wide plan never queues behind the AgentActor's single requests and vice versa. A plan
whose steps have all ended goes to its ResultAggregatorActor (a child, created with the first
such plan) to be combined, so a slow combination (a model's summary) holds up no other
plan's steps; one that dies with plans in hand is replaced and they are sent again, once,
before those plans fail. Its TaskGroupService decides; this actor moves messages, and turns a
retry's delay into a ``wakeupAfter`` (never a sleep: the steps of other plans keep coming in
meanwhile).
"""

from __future__ import annotations

from typing import Any

from thespian.actors import ChildActorExited, PoisonMessage, WakeupMessage

from agents.base import FloraActor
from capability_actors.execution_actor import create_execution_actor
from capability_actors.execution_pool import ExecutionPool
from capability_actors.result_aggregator_actor import ResultAggregatorActor
from capability_actors.task_group_actions import Aggregate, Dispatch, Report, Retry
from capability_actors.task_group_service import TaskGroupService
from common import messages as m


class TaskGroupAggregatorActor(FloraActor):
    role = "task_group"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.service: TaskGroupService | None = None
        self.pool: ExecutionPool | None = None
        self.agent: Any = None  # the AgentActor: plans' results go back to it
        self.aggregator: Any = None  # the ResultAggregatorActor

    def handlers(self):
        return {"run_plan": self.on_run_plan, "subtask_result": self.on_step_reply,
                "task_paused": self.on_step_reply, "plan_aggregated": self.on_aggregated,
                "configured": self.on_worker_configured}

    def configured(self, message, sender):
        rt = self.runtime
        self.config_message = message["config"]
        self.pool = ExecutionPool(rt.config.planning.max_workers)  # grows as plans need it
        optimizer = None if rt.config.planning.parallelism == "fixed" else \
            rt.registry.get_capability("parallel_optimization", None)
        self.service = TaskGroupService(store=rt.store, events=rt.events, registry=rt.registry, config=rt.config,
                                        optimizer=optimizer)

    def on_run_plan(self, message, sender):
        self.agent = sender
        self._act(self.service.on_run_plan(m.validate(message)))

    def on_step_reply(self, message, sender):
        self.pool.answered(sender, message.get("task_id"))
        self._act(self.service.on_step_reply(m.validate(message)))

    def on_aggregated(self, message, sender):
        self._act(self.service.on_aggregated(m.validate(message)))

    def on_worker_configured(self, message, sender):
        for batch in self.pool.ready(sender, message.get("node", "")):
            self._send_batch(batch)

    def _act(self, actions) -> None:
        for action in actions:
            if isinstance(action, Dispatch):
                self._send_batch(action.messages)
            elif isinstance(action, Retry):
                self.wakeupAfter(action.delay_s, payload={"task_id": action.task_id, "step": action.step_id})
            elif isinstance(action, Aggregate):
                self._aggregate(action.message)
            elif isinstance(action, Report) and self.agent is not None:
                self.send(self.agent, action.message)

    def _aggregate(self, msg: dict) -> None:
        if self.aggregator is None:
            self.aggregator = self.createActor(ResultAggregatorActor)
            self.send(self.aggregator, m.configure(config=self.config_message, role="result_aggregator"))
        self.send(self.aggregator, msg)

    def _send_batch(self, batch: list[dict]) -> None:
        """To one ExecutionActor: an idle one, else a new one while the pool may grow (it holds
        the batch until it is configured), else the least busy."""
        worker = self.pool.idle()
        if worker is None and self.pool.has_room():
            worker = self.pool.add(create_execution_actor(self, self.config_message))
        worker = self.pool.assign(batch, worker)
        for msg in batch if worker is not None else ():
            self.send(worker.address, msg)

    def on_system_message(self, message, sender):
        if isinstance(message, WakeupMessage) and isinstance(message.payload, dict) and self.service is not None:
            self._act(self.service.on_retry(message.payload["task_id"], message.payload["step"]))
        elif isinstance(message, ChildActorExited) and self.aggregator is not None \
                and message.childAddress == self.aggregator:
            self.log.warning("ResultAggregatorActor exited; the plans it held go to a new one")
            self.aggregator = None
            self._act(self.service.on_aggregation_lost("the aggregating process exited"))
        elif isinstance(message, PoisonMessage) and isinstance(message.poisonMessage, dict) \
                and message.poisonMessage.get("message_type") == "aggregate_plan":
            self._act(self.service.on_aggregation_lost(str(message.details)[-300:],
                                                       task_id=message.poisonMessage["task_id"]))
        elif isinstance(message, ChildActorExited) and self.pool.find(message.childAddress) is not None:
            lost = self.pool.remove(self.pool.find(message.childAddress))
            self.log.warning("ExecutionActor exited with %d step(s) in flight", len(lost))
            for msg in lost:
                self._act(self.service.on_lost(msg, "the execution process exited"))
        elif isinstance(message, PoisonMessage) and isinstance(message.poisonMessage, dict):
            self.pool.answered(sender, message.poisonMessage.get("task_id"))
            self._act(self.service.on_lost(message.poisonMessage, str(message.details)[-300:]))
