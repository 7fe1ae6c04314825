"""AgentActor: the back end for one tenant. It plans and dispatches; its TaskCoordinator
decides. ExecutionActors are its children: several, so work runs in parallel, each
recreated when it dies (its in-flight work is reported failed to the user)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from thespian.actors import ChildActorExited, PoisonMessage

from agents.base import FloraActor
from agents.coordination.task_coordinator import TaskCoordinator
from capabilities.cognition.intent_router import IntentRouter
from capabilities.routing.task_router import TaskRouter
from common import messages as m


@dataclass
class Worker:
    """An ExecutionActor and the messages it has not answered yet (addresses are not
    hashable, so workers are kept in a list)."""

    address: Any
    in_flight: dict[str, dict] = field(default_factory=dict)  # by task_id


class AgentActor(FloraActor):
    role = "agent"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.coordinator: TaskCoordinator | None = None
        self.workers: list[Worker] = []
        self.reply_to: dict[str, Any] = {}  # msg_id -> who waits for the reply
        self.frontend: Any = None
        self.scheduler: Any = None  # the LoopSchedulerActor

    def handlers(self):
        return {"agent_task": self.on_request, "resume_task": self.on_request, "run_task": self.on_request,
                "task_completed": self.on_loop_reply, "task_error": self.on_loop_reply,
                "analysis_result": self.on_worker_reply, "task_paused": self.on_worker_reply,
                "subtask_result": self.on_worker_reply, "heartbeat": self.on_heartbeat,
                "status_request": self.on_status_request}

    def configured(self, message, sender):
        self.agent_id = message.get("role", "agent")
        rules = IntentRouter(TaskRouter(self.runtime.registry))  # no model here: the AgentActor never blocks
        self.scheduler = message.get("scheduler")
        self.coordinator = TaskCoordinator(self.runtime.store, self.runtime.events, rules=rules,
                                           agent_id=self.agent_id,
                                           loops=self.runtime.loops if self.scheduler is not None else None)
        self.config_message = message["config"]
        for _ in range(self.runtime.config.actors.execution_pool_size):
            self._add_worker()

    def _add_worker(self) -> None:
        from capability_actors.execution_actor import ExecutionActor

        address = self.createActor(ExecutionActor)
        self.send(address, m.configure(config=self.config_message, role="execution"))
        self.workers.append(Worker(address))

    def on_request(self, message, sender):
        try:
            m.validate(message)
        except m.ProtocolError as exc:
            self.reply_error(sender, message, exc.error_type, str(exc))
            return
        kind = message["message_type"]
        if kind != "run_task":  # a run's replies go to the LoopSchedulerActor by task_id
            self.frontend = sender
            self.reply_to[message["msg_id"]] = message.get("reply_to") or sender
        if kind == "agent_task":
            outs = self.coordinator.on_agent_task(message)
        elif kind == "resume_task":
            outs = self.coordinator.on_resume_task(message)
        else:
            outs = self.coordinator.on_run_task(message)
        self._send_all(outs)

    def on_loop_reply(self, message, sender):
        """The LoopSchedulerActor's answer to a user's loop operation."""
        if sender == self.scheduler:
            self._send_all([("reply", message)])

    def on_worker_reply(self, message, sender):
        self._worker(sender).in_flight.pop(message.get("task_id"), None)
        kind = message["message_type"]
        if kind == "analysis_result":
            outs = self.coordinator.on_analysis(message)
        elif kind == "task_paused":
            outs = self.coordinator.on_task_paused(message)
        else:
            outs = self.coordinator.on_subtask_result(message)
        self._send_all(outs)

    def on_heartbeat(self, message, sender):
        self.send(sender, m.heartbeat_ack(seq=message["seq"], role=self.role))

    def on_status_request(self, message, sender):
        self.send(sender, m.status_reply(status={"workers": len(self.workers),
                                                 "in_flight": sum(len(w.in_flight) for w in self.workers)}))

    def _send_all(self, outs) -> None:
        for destination, msg in outs:
            if destination == "worker":
                worker = min(self.workers, key=lambda w: len(w.in_flight))
                worker.in_flight[msg["task_id"]] = msg
                self.send(worker.address, msg)
            elif destination == "loops":
                self.send(self.scheduler, msg)
            else:
                # one reply per user message; after a restart the front end is the fallback
                to = self.reply_to.pop(msg["msg_id"], None) or self.frontend
                if to is not None:
                    self.send(to, msg)

    def _worker(self, address: Any) -> Worker:
        return next((w for w in self.workers if w.address == address), Worker(None))

    def on_system_message(self, message, sender):
        if isinstance(message, ChildActorExited) and self._worker(message.childAddress).address is not None:
            lost = self._worker(message.childAddress)
            self.workers.remove(lost)
            self.log.warning("ExecutionActor exited with %d task(s) in flight; replacing it", len(lost.in_flight))
            self._add_worker()
            for msg in lost.in_flight.values():
                self._send_all(self.coordinator.on_worker_lost(msg, "the execution process exited"))
        elif isinstance(message, PoisonMessage):
            poisoned = message.poisonMessage
            if isinstance(poisoned, dict):
                self._worker(sender).in_flight.pop(poisoned.get("task_id"), None)
            self._send_all(self.coordinator.on_worker_lost(message.poisonMessage, str(message.details)[-300:]))
