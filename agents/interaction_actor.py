"""InteractionActor: the one entry point for users (``system.ask``, the CLI, the HTTP API).

Every message that is not from an AgentActor is treated as user input and answered: a
malformed one with a ``task_error`` that says what is wrong. Its InteractionCoordinator
decides; this actor only moves messages: to the tenant's AgentActor (found through the
RouterActor and cached) and back to whoever asked.
"""

from __future__ import annotations

from typing import Any

from thespian.actors import ActorSystemMessage, PoisonMessage, WakeupMessage

from agents.base import FloraActor
from agents.coordination.interaction_coordinator import InteractionCoordinator
from common import messages as m

SWEEP_INTERVAL_S = 1.0


class InteractionActor(FloraActor):
    role = "interaction"
    # what arrives here: users' messages, the back end's replies, the router's answer
    HANDLES = frozenset({"user_input", "route_reply", *m.REPLY_TYPES})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.coordinator: InteractionCoordinator | None = None
        self.router: Any = None
        self.agents: dict[str, Any] = {}  # tenant -> AgentActor address
        self.queued: dict[str, list[dict]] = {}  # tenant -> messages waiting for a route
        self.askers: dict[str, Any] = {}  # msg_id -> who asked

    def configured(self, message, sender):
        rt = self.runtime
        conversation = rt.registry.get_capability("conversation_manager")
        self.coordinator = InteractionCoordinator(conversation, default_tenant=rt.config.default_tenant,
                                                  reply_timeout_s=rt.config.actors.ask_timeout_s)
        self.sweep_s = min(SWEEP_INTERVAL_S, rt.config.actors.ask_timeout_s / 2)
        self.wakeupAfter(self.sweep_s)
        self.router = message.get("router")
        if message.get("agent") is not None:
            self.agents[rt.config.default_tenant] = message["agent"]

    def receiveMessage(self, message, sender):
        kind = message.get("message_type") if isinstance(message, dict) else None
        if isinstance(message, ActorSystemMessage) or kind == "configure":
            super().receiveMessage(message, sender)
        elif self.coordinator is None:
            self.reply_error(sender, message, "unavailable", "Flora is starting; try again shortly", retryable=True)
        elif kind == "route_reply" and sender == self.router:
            self.on_route_reply(message)
        elif kind in m.REPLY_TYPES and sender in self.agents.values():
            self._dispatch(self.coordinator.on_backend_reply(message), None)
        else:  # anything else is a user's message, well-formed or not
            self._dispatch(self.coordinator.on_user_input(message), sender)

    def _dispatch(self, outs, sender) -> None:
        for destination, msg in outs:
            if destination == "reply":
                to = self.askers.pop(msg["msg_id"], None) or sender
                if to is not None:
                    self.send(to, msg)
                continue
            self.askers[msg["msg_id"]] = sender
            agent = self.agents.get(msg["tenant_id"])
            if agent is not None:
                self.send(agent, msg)
            else:
                self.queued.setdefault(msg["tenant_id"], []).append(msg)
                if len(self.queued[msg["tenant_id"]]) == 1:
                    self.send(self.router, m.route_request(tenant_id=msg["tenant_id"]))

    def on_route_reply(self, message) -> None:
        self.agents[message["tenant_id"]] = message["agent"]
        for msg in self.queued.pop(message["tenant_id"], []):
            self.send(message["agent"], msg)

    def on_system_message(self, message, sender):
        if isinstance(message, WakeupMessage) and self.coordinator is not None:
            # one periodic sweep rather than a timer per message: Thespian scans its timers on every send
            self._dispatch(self.coordinator.expire_overdue(), None)
            self.wakeupAfter(self.sweep_s)
        elif isinstance(message, PoisonMessage) and isinstance(message.poisonMessage, dict):
            failed = message.poisonMessage
            # the AgentActor failed on it: forget the cached route so a new one is asked for
            self.agents = {t: a for t, a in self.agents.items() if a != sender}
            self._dispatch(self.coordinator.expire(failed.get("msg_id", ""), "Flora's back end failed on this "
                                                   "message; please try again."), None)
