"""LoopSchedulerActor: keeps time for loop tasks and hands their runs to the AgentActors.

It keeps time with Thespian's ``wakeupAfter`` (``loops.tick_s``): no sleeping, no threads.
Its LoopCoordinator decides; this actor moves messages: runs to the tenant's AgentActor
(found through the RouterActor and cached), their results back in, notifications to the
InteractionActor, answers to a user's loop operations back to the AgentActor that asked.
"""

from __future__ import annotations

from typing import Any

from thespian.actors import WakeupMessage

from agents.base import FloraActor
from agents.coordination.agent_routes import AgentRoutes
from capabilities.loop.queues import QueueFactory
from capability_actors.loop_coordinator import LoopCoordinator
from common import messages as m


class LoopSchedulerActor(FloraActor):
    role = "loop_scheduler"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.coordinator: LoopCoordinator | None = None
        self.routes: AgentRoutes | None = None
        self.interaction: Any = None
        self.askers: dict[str, Any] = {}  # msg_id of a loop_command -> the AgentActor that asked

    def handlers(self):
        return {"loop_command": self.on_command, "loop_fire": self.on_fire, "route_reply": self.on_route_reply,
                "task_completed": self.on_result, "task_error": self.on_result, "task_paused": self.on_result,
                "status_request": self.on_status_request}

    def configured(self, message, sender):
        rt = self.runtime
        self.routes = AgentRoutes(message.get("router"))
        self.interaction = message.get("interaction")
        self.coordinator = LoopCoordinator(rt.loops, rt.store, QueueFactory.create(rt.config),
                                           default_tenant=rt.config.default_tenant)
        self.tick_s = rt.config.loops.tick_s
        self.wakeupAfter(self.tick_s)

    def on_command(self, message, sender):
        m.validate(message)
        self.askers[message["msg_id"]] = message.get("reply_to") or sender
        self._dispatch(self.coordinator.on_command(message))

    def on_fire(self, message, sender):
        self._dispatch(self.coordinator.on_fire(m.validate(message)))

    def on_result(self, message, sender):
        if not self.routes.is_agent(sender):  # only the AgentActors this scheduler handed runs to report them
            self.log.warning("ignoring %s from %s, not an AgentActor of this scheduler", message["message_type"], sender)
            return
        self._dispatch(self.coordinator.on_result(m.validate(message)))

    def on_route_reply(self, message, sender):
        if sender != self.routes.router:  # a route from anyone else would send runs wherever it says
            self.log.warning("ignoring route_reply from %s, not the RouterActor", sender)
            return
        for address, msg in self.routes.learned(m.validate(message)):
            self.send(address, msg)

    def on_status_request(self, message, sender):
        self.send(sender, m.status_reply(status={"runs_in_flight": len(self.coordinator.running)}))

    def on_system_message(self, message, sender):
        if isinstance(message, WakeupMessage) and self.coordinator is not None:
            try:
                self._dispatch(self.coordinator.tick())
            except Exception:  # a store or broker hiccup must not stop the clock
                self.log.exception("loop tick failed; trying again next tick")
            self.wakeupAfter(self.tick_s)

    def _dispatch(self, outs) -> None:
        for destination, msg in outs:
            if destination == "reply":
                to = self.askers.pop(msg["msg_id"], None)
                if to is not None:
                    self.send(to, msg)
            elif destination == "notify":
                if self.interaction is not None:
                    self.send(self.interaction, msg)
            else:
                for address, routed in self.routes.send(msg["tenant_id"], msg):
                    self.send(address, routed)
