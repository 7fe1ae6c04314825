"""InteractionActor: the one entry point for users (``system.ask``, the CLI, the HTTP API).

Every message that is not from an AgentActor is treated as user input and answered: a
malformed one with a ``task_error`` that says what is wrong. Clients may also ``subscribe``
to a user's notifications (loop runs' results, pushed to them as they come) or fetch them
(``notifications_request``); the LoopSchedulerActor (loop runs) and the AgentActors (tasks that
waited in a queue) send them here as ``notification``. Its InteractionCoordinator
decides; this actor only moves messages: to the tenant's AgentActor (found through the
RouterActor and cached) and back to whoever asked. When the RouterActor reports that an
AgentActor was replaced, the messages still waiting for the dead one are answered at once
with a retryable ``task_error`` instead of waiting out their timeout. With long-term memory
it talks to the node's MemoryActor too: recall before new work, turns to distil after a
reply, a person's questions about their memories, and clients' ``memory_request``
(the HTTP API's ``/v1/memories``), whose answers go back to whoever asked. A ChannelActor
(any of its types) is a client like any other; notifications for one of its chats
are pushed to it.
"""

from __future__ import annotations

import threading

from typing import Any

from thespian.actors import ActorSystemMessage, PoisonMessage, WakeupMessage

from agents.base import FloraActor
from agents.coordination.agent_routes import AgentRoutes
from agents.coordination.interaction_coordinator import InteractionCoordinator
from agents.coordination.notification_desk import NotificationDesk
from common.accounts.linking import AccountLinks
from common.accounts.store import open_link_store
from capabilities.cognition.personas import PersonaBook
from capabilities.context.conversation_log import ConversationLog
from capabilities.secrets import SecretMasker
from common import messages as m

SWEEP_INTERVAL_S = 1.0
AGENT_REPLACED = ("Flora's back end for your messages stopped and was restarted before answering this one; "
                  "please send it again.")


class InteractionActor(FloraActor):
    role = "interaction"
    # what arrives here: users' messages, the back end's replies, the router's answer
    HANDLES = frozenset({"user_input", "route_reply", "notification", "subscribe", "notifications_request",
                         "reply_chunk", "memory_request", "memory_reply", *m.REPLY_TYPES})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.coordinator: InteractionCoordinator | None = None
        self.routes: AgentRoutes | None = None
        self.notifications: NotificationDesk | None = None
        self.askers: dict[str, Any] = {}  # msg_id -> who asked
        self.scheduler: Any = None
        self.memory: Any = None  # the MemoryActor
        self.memory_askers: dict[str, Any] = {}  # request_id of a client's memory_request -> the client

    def configured(self, message, sender):
        rt = self.runtime
        conversation = rt.registry.get_capability("conversation_manager")
        # the example bank's vectors (a few seconds the first time, then from the disk cache),
        # beside the first messages rather than in their way
        threading.Thread(target=rt.registry.get_capability, args=("semantic_reader", None),
                         name="semantic-reader-warm-up", daemon=True).start()
        self.memory = message.get("memory")
        self.coordinator = InteractionCoordinator(conversation, default_tenant=rt.config.default_tenant,
                                                  reply_timeout_s=rt.config.actors.ask_timeout_s,
                                                  log=ConversationLog(rt.store, secrets=SecretMasker.from_registry(
                                                      rt.registry)),
                                                  memory_store=rt.store if self.memory is not None else None,
                                                  personas=PersonaBook.from_config(rt.config), events=rt.events,
                                                  store=rt.store)
        self.notifications = NotificationDesk(rt.store, default_tenant=rt.config.default_tenant,
                                              channels=message.get("channels"),
                                              links=AccountLinks(open_link_store(rt.config)))
        self.sweep_s = min(SWEEP_INTERVAL_S, rt.config.actors.ask_timeout_s / 2)
        self.wakeupAfter(self.sweep_s)
        self.routes = AgentRoutes(message.get("router"))
        self.scheduler = message.get("scheduler")
        if message.get("agent") is not None:
            self.routes.agents[rt.config.default_tenant] = message["agent"]
            if self.routes.router is not None:  # to hear when it is replaced
                self._send_all([self.routes.watch(rt.config.default_tenant)])

    def receiveMessage(self, message, sender):
        kind = message.get("message_type") if isinstance(message, dict) else None
        kind = kind if isinstance(kind, str) else None  # a forged message_type may be anything, even unhashable
        if isinstance(message, ActorSystemMessage) or kind == "configure":
            super().receiveMessage(message, sender)
        elif self.coordinator is None:
            self.reply_error(sender, message, "unavailable", "Flora is starting; try again shortly", retryable=True)
        elif kind == "route_reply" and sender == self.routes.router:
            if self.routes.replaced(message):
                self._dispatch(self.coordinator.expire_tenant(message["tenant_id"], AGENT_REPLACED), None)
            self._send_all(self.routes.learned(message))
        elif kind in m.REPLY_TYPES and self.routes.is_agent(sender):
            self._dispatch(self.coordinator.on_backend_reply(message), None)
        elif kind == "reply_chunk" and self.routes.is_agent(sender):
            if self.coordinator.is_waiting(message.get("msg_id", "")):  # more comes: the asker stays
                to = self.askers.get(message["msg_id"])
                if to is not None:
                    self.send(to, message)
        elif kind == "notification" and (sender == self.scheduler or self.routes.is_agent(sender)):
            for address, note in self.notifications.deliveries(message):
                self.send(address, note)
        elif kind in ("subscribe", "notifications_request"):
            self.send(sender, self.notifications.on_request(message, sender))
        elif kind == "memory_reply" and sender == self.memory:
            asker = self.memory_askers.pop(message.get("request_id") or "", None)
            if asker is not None:
                to, request_id = asker
                self.send(to, {**message, "request_id": request_id} if request_id else
                          {k: v for k, v in message.items() if k != "request_id"})
            else:
                self._dispatch(self.coordinator.on_memory_reply(message), None)
        elif kind == "memory_request":
            self._memory_request(message, sender)
        else:  # anything else is a user's message, well-formed or not
            self._dispatch(self.coordinator.on_user_input(message), sender)

    def _memory_request(self, message, sender) -> None:
        """A client's request about one person's memories (the HTTP API checked who asks)."""
        try:
            m.validate(message)
            if message["op"] not in ("list", "forget", "clear", "recall", "search"):
                raise m.ProtocolError(f"memory_request op {message['op']!r} is not for clients", field="op")
        except m.ProtocolError as exc:
            self.send(sender, m.memory_reply(op=str(message.get("op", "")), request_id=message.get("request_id"),
                                             error=f"malformed memory_request: {exc}"))
            return
        if self.memory is None:
            self.send(sender, m.memory_reply(op=message["op"], request_id=message.get("request_id"),
                                             error="memory is off (memory.enabled: false)"))
            return
        request_id = m.new_id("mem")  # ours: a client's own id could collide with a user message's
        self.memory_askers[request_id] = (sender, message.get("request_id"))
        self.send(self.memory, {**message, "request_id": request_id})

    def _dispatch(self, outs, sender) -> None:
        for destination, msg in outs:
            if destination == "memory":  # a recall or a question about memories answers this sender later
                if msg.get("request_id") and sender is not None:
                    self.askers[msg["request_id"]] = sender
                if self.memory is not None:
                    self.send(self.memory, msg)
                continue
            if destination == "reply":
                to = self.askers.pop(msg["msg_id"], None) or sender
                if to is not None:
                    self.send(to, msg)
                continue
            if destination == "notify":  # a reply that came too late for its asker: kept, and pushed
                for address, note in self.notifications.deliveries(msg):
                    self.send(address, note)
                continue
            if sender is not None:  # None: work that waited for its memories; its asker is known
                self.askers[msg["msg_id"]] = sender
            self._send_all(self.routes.send(msg["tenant_id"], msg))

    def _send_all(self, sends) -> None:
        for address, msg in sends:
            self.send(address, msg)

    def on_system_message(self, message, sender):
        if isinstance(message, WakeupMessage) and self.coordinator is not None:
            # one periodic sweep rather than a timer per message: Thespian scans its timers on every send
            self._dispatch(self.coordinator.expire_overdue(), None)
            self.wakeupAfter(self.sweep_s)
        elif isinstance(message, PoisonMessage) and isinstance(message.poisonMessage, dict):
            failed = message.poisonMessage
            # the AgentActor failed on it: forget the cached route so a new one is asked for
            self.routes.forget(sender)
            self._dispatch(self.coordinator.expire(failed.get("msg_id", ""), "Flora's back end failed on this "
                                                   "message; please try again."), None)
