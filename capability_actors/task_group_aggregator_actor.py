"""TaskGroupAggregatorActor: runs plans. A child of the AgentActor, created on the first plan.

It keeps its own pool of ExecutionActors (children, created as plans need them, up to
``planning.max_workers``; one that dies is replaced on demand and its steps are retried),
so a wide plan never queues behind the AgentActor's single requests and vice versa. Its
TaskGroupService decides; this actor moves messages, and turns a retry's delay into a
``wakeupAfter`` (never a sleep: the steps of other plans keep coming in meanwhile).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from thespian.actors import ChildActorExited, PoisonMessage, WakeupMessage

from agents.base import FloraActor
from capability_actors.task_group import Dispatch, Report, Retry
from capability_actors.task_group_service import TaskGroupService
from common import messages as m


@dataclass
class _Worker:
    address: Any
    in_flight: dict[str, dict] = field(default_factory=dict)  # by the step's task id


class TaskGroupAggregatorActor(FloraActor):
    role = "task_group"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.service: TaskGroupService | None = None
        self.workers: list[_Worker] = []
        self.agent: Any = None  # the AgentActor: plans' results go back to it

    def handlers(self):
        return {"run_plan": self.on_run_plan, "subtask_result": self.on_step_reply,
                "task_paused": self.on_step_reply, "configured": self.on_worker_configured}

    def configured(self, message, sender):
        rt = self.runtime
        self.config_message = message["config"]
        optimizer = None if rt.config.planning.parallelism == "fixed" else \
            rt.registry.get_capability("parallel_optimization", None)
        self.service = TaskGroupService(store=rt.store, events=rt.events, registry=rt.registry, config=rt.config,
                                        optimizer=optimizer)

    def on_run_plan(self, message, sender):
        self.agent = sender
        self._act(self.service.on_run_plan(m.validate(message)))

    def on_step_reply(self, message, sender):
        self._worker(sender).in_flight.pop(message.get("task_id"), None)
        self._act(self.service.on_step_reply(m.validate(message)))

    def on_worker_configured(self, message, sender):
        """An ExecutionActor is ready; work sent before this was held by it meanwhile."""

    def _act(self, actions) -> None:
        for action in actions:
            if isinstance(action, Dispatch):
                worker = self._pick()
                for msg in action.messages:
                    worker.in_flight[msg["task_id"]] = msg
                    self.send(worker.address, msg)
            elif isinstance(action, Retry):
                self.wakeupAfter(action.delay_s, payload={"task_id": action.task_id, "step": action.step_id})
            elif isinstance(action, Report) and self.agent is not None:
                self.send(self.agent, action.message)

    def _pick(self) -> _Worker:
        """An idle ExecutionActor, a new one while the pool may grow, else the least busy."""
        idle = [w for w in self.workers if not w.in_flight]
        if idle:
            return idle[0]
        if len(self.workers) < self.runtime.config.planning.max_workers:
            from capability_actors.execution_actor import ExecutionActor

            wanted = self.runtime.config.actors.execution_node
            address = self.createActor(ExecutionActor, targetActorRequirements={"node": wanted} if wanted else None)
            self.send(address, m.configure(config=self.config_message, role="execution"))
            self.workers.append(_Worker(address))
            return self.workers[-1]
        return min(self.workers, key=lambda w: len(w.in_flight))

    def _worker(self, address: Any) -> _Worker:
        return next((w for w in self.workers if w.address == address), _Worker(None))

    def on_system_message(self, message, sender):
        if isinstance(message, WakeupMessage) and isinstance(message.payload, dict) and self.service is not None:
            self._act(self.service.on_retry(message.payload["task_id"], message.payload["step"]))
        elif isinstance(message, ChildActorExited):
            lost = self._worker(message.childAddress)
            if lost.address is None:
                return
            self.workers.remove(lost)
            self.log.warning("ExecutionActor exited with %d step(s) in flight", len(lost.in_flight))
            for msg in lost.in_flight.values():
                self._act(self.service.on_lost(msg, "the execution process exited"))
        elif isinstance(message, PoisonMessage) and isinstance(message.poisonMessage, dict):
            self._worker(sender).in_flight.pop(message.poisonMessage.get("task_id"), None)
            self._act(self.service.on_lost(message.poisonMessage, str(message.details)[-300:]))
