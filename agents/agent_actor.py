"""AgentActor: the back end for one tenant. It plans and dispatches; its TaskCoordinator
decides. ExecutionActors are its children: several, so work runs in parallel, each
recreated when it dies (its in-flight work is retried after a back-off or reported failed,
by ``actors.retry_max_attempts``). Its WorkQueue holds tasks beyond the concurrency limits.
It tells the RouterActor which children it has (``agent_children``) whenever they change, so
that they are ended if this actor's process is killed outright."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from thespian.actors import ActorExitRequest, ChildActorExited, PoisonMessage, WakeupMessage

from agents.base import FloraActor
from agents.coordination.task_coordinator import TaskCoordinator
from agents.coordination.work_queue import RetryPolicy, WorkQueue
from capability_actors.execution_actor import create_execution_actor
from capability_actors.execution_pool import ExecutionPool, Worker, unplaced_beats
from capabilities.cognition.intent_router import IntentRouter
from capabilities.routing.task_planner import TaskPlanner
from capabilities.routing.task_router import TaskRouter
from common import messages as m
from common.cluster import current_node
from common.tasks.limits import Admission, Limits, open_slots


class AgentActor(FloraActor):
    role = "agent"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.coordinator: TaskCoordinator | None = None
        self.pool: ExecutionPool | None = None
        self.reply_to: dict[str, Any] = {}  # msg_id -> who waits for the reply
        self.frontend: Any = None
        self.scheduler: Any = None  # the LoopSchedulerActor
        self.group: Any = None  # the TaskGroupAggregatorActor that runs plans, created on the first
        self.router: Any = None

    def handlers(self):
        return {"agent_task": self.on_request, "resume_task": self.on_request, "run_task": self.on_request,
                "task_completed": self.on_loop_reply, "task_error": self.on_loop_reply,
                "analysis_result": self.on_worker_reply, "task_paused": self.on_worker_reply,
                "subtask_result": self.on_worker_reply, "heartbeat": self.on_heartbeat,
                "configured": self.on_worker_configured, "plan_result": self.on_group_reply,
                "status_request": self.on_status_request, "reply_chunk": self.on_reply_chunk}

    def configured(self, message, sender):
        self.agent_id = message.get("role", "agent")
        rules = IntentRouter(TaskRouter(self.runtime.registry))  # no model here: the AgentActor never blocks
        self.scheduler = message.get("scheduler")
        self.router = message.get("router")
        self.coordinator = TaskCoordinator(self.runtime.store, self.runtime.events, rules=rules,
                                           agent_id=self.agent_id, node=current_node(self.runtime.config.actors.node),
                                           loops=self.runtime.loops if self.scheduler is not None else None,
                                           queue=self._work_queue(), tenant_id=self._tenant(),
                                           planner=TaskPlanner(self.runtime.registry, None,
                                                               max_steps=self.runtime.config.planning.max_steps),
                                           registry=self.runtime.registry)
        self.config_message = message["config"]
        self.pool = ExecutionPool(self.runtime.config.actors.execution_pool_size,
                                  unplaced_beats=unplaced_beats(self.runtime.config.actors.heartbeat_interval_s))
        for _ in range(self.pool.size):
            self._add_worker()
        self._report_children()
        self._send_all(self.coordinator.resume_queued())  # queued work outlives a restart

    def _tenant(self) -> str:
        """The tenant this AgentActor serves: its role is ``<tenant>@<node>``."""
        tenant, at, _ = self.agent_id.rpartition("@")
        return tenant if at else self.runtime.config.default_tenant

    def _work_queue(self) -> WorkQueue:
        config = self.runtime.config
        limits = Limits.from_config(config.limits)
        admission = None if limits.unlimited else Admission(self.runtime.store, open_slots(config), limits)
        return WorkQueue(self.runtime.store, self.runtime.events, admission, agent_id=self.agent_id,
                         retry=RetryPolicy.from_config(config.actors))

    def _add_worker(self) -> None:
        self.pool.add(create_execution_actor(self, self.config_message))

    def on_worker_configured(self, message, sender):
        for batch in self.pool.ready(sender, message.get("node", "")):
            self._dispatch(*batch)

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

    def on_group_reply(self, message, sender):
        """A plan task's result or question, from the TaskGroupAggregatorActor."""
        if sender == self.group:
            self._send_all(self.coordinator.on_plan_reply(m.validate(message)))

    def on_worker_reply(self, message, sender):
        if self.group is not None and sender == self.group:
            self.on_group_reply(message, sender)
            return
        self.pool.answered(sender, message.get("task_id"))
        kind = message["message_type"]
        if kind == "analysis_result":
            outs = self.coordinator.on_analysis(message)
        elif kind == "task_paused":
            outs = self.coordinator.on_task_paused(message)
        else:
            outs = self.coordinator.on_subtask_result(message)
        self._send_all(outs)

    def on_reply_chunk(self, message, sender):
        """A piece of a reply a worker is writing: on to whoever waits for it."""
        if self.pool.find(sender) is not None:
            self._send_all(self.coordinator.on_reply_chunk(m.validate(message)))

    def on_heartbeat(self, message, sender):
        self.send(sender, m.heartbeat_ack(seq=message["seq"], role=self.role))
        live = message.get("nodes")
        own = current_node(self.runtime.config.actors.node)
        for worker, reason in self.pool.to_replace(None if live is None else set(live), own):
            self._replace_worker(worker, reason, stop=True)
        if self.pool.missing():
            if not self.pool.any_ready():
                self.log.warning("no node accepts ExecutionActors yet (actors.execution_node=%r); %d task(s) wait",
                                 self.runtime.config.actors.execution_node, len(self.pool.backlog))
            for _ in range(self.pool.missing()):
                self._add_worker()
            self._report_children()

    def on_status_request(self, message, sender):
        self.send(sender, m.status_reply(status={
            "workers": self.pool.snapshot(),
            "waiting_for_a_worker": len(self.pool.backlog),
            "queued": self.coordinator.queue.queue_lengths(self._tenant()),
            "running": self.coordinator.queue.running_counts(self._tenant())}))

    def _dispatch(self, msg: dict) -> None:
        """To the least busy ExecutionActor that is ready; held until one is."""
        worker = self.pool.assign([msg])
        if worker is not None:
            self.send(worker.address, msg)

    def _send_all(self, outs) -> None:
        for destination, msg in outs:
            if destination == "worker":
                self._dispatch(msg)
            elif destination == "loops":
                self.send(self.scheduler, msg)
            elif destination == "group":
                self._to_group(msg)
            elif destination == "wakeup":  # a retry's back-off: never sleep in an actor
                self.wakeupAfter(timedelta(seconds=msg["delay_s"]), payload=msg["payload"])
            elif destination == "chunk":  # more of a reply comes: the asker stays
                to = self.reply_to.get(msg["msg_id"]) or self.frontend
                if to is not None:
                    self.send(to, msg)
            elif destination == "notify":  # kept in the store; pushed to subscribers through the front end
                if self.frontend is not None:
                    self.send(self.frontend, msg)
            else:
                # one reply per user message; after a restart the front end is the fallback
                to = self.reply_to.pop(msg["msg_id"], None) or self.frontend
                if to is not None:
                    self.send(to, msg)

    def _to_group(self, msg: dict) -> None:
        """To the TaskGroupAggregatorActor, created (with its own ExecutionActors) on first use."""
        if self.group is None:
            from capability_actors.task_group_aggregator_actor import TaskGroupAggregatorActor

            self.group = self.createActor(TaskGroupAggregatorActor)
            self.send(self.group, m.configure(config=self.config_message, role="task_group"))
            self._report_children()
        self.send(self.group, msg)

    def _report_children(self) -> None:
        if self.router is not None:
            children = [w.address for w in self.pool.workers] + ([self.group] if self.group is not None else [])
            self.send(self.router, m.agent_children(children=children))

    def _replace_worker(self, lost: Worker, reason: str, *, stop: bool = False) -> None:
        """A worker is gone (exited, its node died, never placed): make another and settle
        what it had in flight."""
        lost_work = self.pool.remove(lost)
        if stop:
            self.send(lost.address, ActorExitRequest())  # in case it lives on, cut off
        if lost.ready:
            self.log.warning("ExecutionActor lost (%s) with %d task(s) in flight; replacing it", reason,
                             len(lost.in_flight))
            self._add_worker()
        self._report_children()
        # one never placed (no node takes ExecutionActors yet) is asked for again at the next heartbeat
        for msg in lost_work:
            self._send_all(self.coordinator.on_worker_lost(msg, reason))

    def on_system_message(self, message, sender):
        if isinstance(message, ChildActorExited) and self.pool.find(message.childAddress) is not None:
            self._replace_worker(self.pool.find(message.childAddress), "the execution process exited")
        elif isinstance(message, ChildActorExited) and message.childAddress == self.group:
            self.log.warning("the TaskGroupAggregatorActor exited; the next plan starts another")
            self.group = None
            self._report_children()
        elif isinstance(message, PoisonMessage):
            poisoned = message.poisonMessage
            if isinstance(poisoned, dict):
                self.pool.answered(sender, poisoned.get("task_id"))
            # the receiver raised on it twice: reported, never retried (WorkQueue's docstring says why)
            self._send_all(self.coordinator.on_poisoned(poisoned, message.details))
        elif isinstance(message, WakeupMessage) and self.coordinator is not None:
            self._send_all(self.coordinator.on_wakeup(message.payload))
