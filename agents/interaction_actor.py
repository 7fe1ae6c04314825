"""InteractionActor: the one entry point for users (``system.ask``, the CLI, the HTTP API).

Every message that is not from an AgentActor is treated as user input and answered: a
malformed one with a ``task_error`` that says what is wrong. Clients may also ``subscribe``
to a user's notifications (loop runs' results, pushed to them as they come) or fetch them
(``notifications_request``); the LoopSchedulerActor sends them here as ``notification``. Its InteractionCoordinator
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
    HANDLES = frozenset({"user_input", "route_reply", "notification", "subscribe", "notifications_request",
                         *m.REPLY_TYPES})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.coordinator: InteractionCoordinator | None = None
        self.router: Any = None
        self.agents: dict[str, Any] = {}  # tenant -> AgentActor address
        self.queued: dict[str, list[dict]] = {}  # tenant -> messages waiting for a route
        self.askers: dict[str, Any] = {}  # msg_id -> who asked
        self.subscribers: dict[tuple[str, str], list[Any]] = {}  # (tenant, user) -> addresses to push to
        self.scheduler: Any = None

    def configured(self, message, sender):
        rt = self.runtime
        conversation = rt.registry.get_capability("conversation_manager")
        self.coordinator = InteractionCoordinator(conversation, default_tenant=rt.config.default_tenant,
                                                  reply_timeout_s=rt.config.actors.ask_timeout_s)
        self.sweep_s = min(SWEEP_INTERVAL_S, rt.config.actors.ask_timeout_s / 2)
        self.wakeupAfter(self.sweep_s)
        self.router = message.get("router")
        self.scheduler = message.get("scheduler")
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
        elif kind == "notification" and sender == self.scheduler:
            self.push(message)
        elif kind in ("subscribe", "notifications_request"):
            self.on_notifications(message, sender)
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

    def on_notifications(self, message, sender) -> None:
        try:
            m.validate(message)
        except m.ProtocolError as exc:
            self.send(sender, m.task_error(msg_id=m.new_id("msg"), error_type=exc.error_type, message=str(exc),
                                           field=exc.field))
            return
        tenant = message.get("tenant_id") or self.runtime.config.default_tenant
        user = message["user_id"]
        if message["message_type"] == "subscribe":
            listeners = self.subscribers.setdefault((tenant, user), [])
            if sender not in listeners:
                listeners.append(sender)
            mark = True
        else:
            mark = message.get("mark_read", True)
        store = self.runtime.store
        notes = store.notifications(tenant, user, unread_only=not message.get("all", False))
        if mark:
            store.mark_notifications_read(tenant, user, [n.notification_id for n in notes])
        self.send(sender, m.notifications_reply(user_id=user, notifications=[n.to_dict() for n in notes]))

    def push(self, note: dict) -> None:
        """Send a notification to the user's subscribers; with none it waits in the store."""
        listeners = self.subscribers.get((note["tenant_id"], note["user_id"]), [])
        for address in listeners:
            self.send(address, note)
        if listeners:
            self.runtime.store.mark_notifications_read(note["tenant_id"], note["user_id"], [note["notification_id"]])

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
