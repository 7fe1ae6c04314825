"""What every Flora actor shares: a ``configure`` step and a dispatch table.

``receiveMessage`` looks the message type up in ``handlers()`` and calls the handler;
Thespian's own messages (wake-ups, exits, poison) go to ``on_system_message``. Work that arrives
before ``configure`` is held and handled right after it. A dict of
a type the actor does not handle, or one its validator refuses (``ProtocolError``), gets a
``task_error`` back instead of an exception, so a stray, malformed or forged message never
takes an actor down; a second ``configure`` is refused, so a forged one cannot rewire an
actor. Every line logged while a message is
handled carries the actor's role, address and node and the message's ``tenant_id``,
``task_id`` and ``msg_id`` (:mod:`common.log_context`).
"""

from __future__ import annotations

import functools
import gc
import logging
from typing import Any, Callable

from thespian.actors import Actor, ActorExitRequest, ActorSystemMessage, ChildActorExited

from common import log_context, spans
from common import messages as m
from common.cluster import current_node
from common.logging_setup import configure_process_logging
from common.runtime import Runtime

Handler = Callable[[dict, Any], None]
MAX_EARLY_MESSAGES = 1000


def _in_log_context(receive: Callable[[Any, Any, Any], None]) -> Callable[[Any, Any, Any], None]:
    """``receive`` with the actor and the message's ids in the log context while it runs."""
    if getattr(receive, "_in_log_context", False):
        return receive

    @functools.wraps(receive)
    def receiveMessage(self: "FloraActor", message: Any, sender: Any) -> None:
        if spans.enabled():  # the whole handling, its log context too
            with spans.span(f"handler.{self.role}.{_kind(message)}"):
                _receive_in_context(self, receive, message, sender)
        else:
            _receive_in_context(self, receive, message, sender)

    receiveMessage._in_log_context = True  # type: ignore[attr-defined]
    return receiveMessage


def _receive_in_context(actor: "FloraActor", receive, message: Any, sender: Any) -> None:
    with log_context.bound(actor=actor.role, actor_addr=str(actor.myAddress),
                           node=current_node(actor.runtime.config.actors.node) if actor.runtime else None,
                           **log_context.message_fields(message)):
        receive(actor, message, sender)


def _kind(message: Any) -> str:
    kind = message.get("message_type") if isinstance(message, dict) else type(message).__name__
    return kind if isinstance(kind, str) else "?"


class FloraActor(Actor):
    role = "actor"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.runtime: Runtime | None = None
        self.exiting = False  # once asked to exit, children that exit are not replaced
        self._early: list[tuple[Any, Any]] = []
        self.log = logging.getLogger(f"flora.actor.{self.role}")

    def handlers(self) -> dict[str, Handler]:
        return {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "receiveMessage" in cls.__dict__:  # an actor that routes some messages itself logs the same way
            cls.receiveMessage = _in_log_context(cls.__dict__["receiveMessage"])

    @_in_log_context
    def receiveMessage(self, message: Any, sender: Any) -> None:
        if isinstance(message, ActorSystemMessage):
            if isinstance(message, ActorExitRequest):
                self.exiting = True
            if not (self.exiting and isinstance(message, ChildActorExited)):
                self.on_system_message(message, sender)
            return
        kind = message.get("message_type") if isinstance(message, dict) else None
        kind = kind if isinstance(kind, str) else None  # a forged message_type may be anything, even unhashable
        if kind == "configure":
            self._configure(message, sender)
            return
        handler = self.handlers().get(kind) if isinstance(kind, str) else None
        if handler is None:
            self.on_unhandled(message, sender)
            return
        if self.runtime is None:
            # A new actor's first work can overtake its configure message (they come from
            # different senders): hold it until configured, within reason.
            if len(self._early) >= MAX_EARLY_MESSAGES:
                self.reply_error(sender, message, "unavailable", f"{self.role} is not configured yet", retryable=True)
            else:
                self._early.append((message, sender))
            return
        try:
            handler(message, sender)
        except m.ProtocolError as exc:  # a malformed or forged message: its sender's mistake, not a bug here
            self.reply_error(sender, message, "malformed_message", f"{self.role} refused {kind}: {exc}")

    def _configure(self, message: dict, sender: Any) -> None:
        try:
            m.validate(message)
        except m.ProtocolError as exc:
            self.reply_error(sender, message, "malformed_message", f"{self.role} refused configure: {exc}")
            return
        if self.runtime is not None:
            # wiring happens once, from whoever created the actor; a later configure (a stray
            # or forged one) would point this actor's replies somewhere else
            self.reply_error(sender, message, "conflict", f"{self.role} is configured already; a second configure is refused")
            return
        if self.runtime is None:
            # the actor's own process speaks as the actor between messages; main's process
            # (simpleSystemBase) stays main's
            log_context.claim_process(actor=self.role, actor_addr=str(self.myAddress))
            configure_process_logging(message["config"])
            self.runtime = Runtime.from_config(message["config"])
        self.configured(message, sender)
        # what start-up built (the registry, its plugins, the models' tables) lives as long as the
        # process: kept out of the collector's full sweeps, which would otherwise walk it all again
        # every so often in the middle of some message
        gc.freeze()
        self.send(sender, m.configured(role=self.role, node=current_node(self.runtime.config.actors.node)))
        early, self._early = self._early, []
        for held, held_sender in early:
            self.receiveMessage(held, held_sender)

    def configured(self, message: dict, sender: Any) -> None:
        """Hook: wire up after the runtime exists (addresses from the configure message)."""

    def on_system_message(self, message: ActorSystemMessage, sender: Any) -> None:
        """Hook for WakeupMessage, ChildActorExited, PoisonMessage, ActorExitRequest."""

    def on_unhandled(self, message: Any, sender: Any) -> None:
        kind = message.get("message_type") if isinstance(message, dict) else None
        kind = kind if isinstance(kind, str) else None
        if kind in m.REPLY_TYPES or kind == "configured":
            self.log.debug("ignoring %s with no one waiting", kind)
            return
        text = (f"{self.role} does not handle message_type {log_context.cut(kind)!r}" if kind
                else f"{self.role} expects a dict with 'message_type', got {type(message).__name__}")
        self.reply_error(sender, message, "unknown_message_type" if kind else "malformed_message", text)

    def reply_error(self, to: Any, about: Any, error_type: str, text: str, *, retryable: bool = False) -> None:
        msg_id = about.get("msg_id") if isinstance(about, dict) and isinstance(about.get("msg_id"), str) else None
        task_id = about.get("task_id") if isinstance(about, dict) and isinstance(about.get("task_id"), str) else None
        self.log.warning("%s: %s", error_type, text)
        self.send(to, m.task_error(msg_id=msg_id or m.new_id("msg"), error_type=error_type, message=text,
                                   retryable=retryable, task_id=task_id or None))
