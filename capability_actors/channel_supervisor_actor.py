"""ChannelSupervisorActor: the parent of a node's ChannelActors, which starts one again when
its process dies.

It creates a ChannelActor per enabled channel and configures it; the death of one reaches it
as ``ChildActorExited``, and it makes another after a backoff (``RESTART_BACKOFF_S``, doubling
per death in a row, reset once a child lived ``STABLE_AFTER_S``); the new one resumes from
what the store holds (open messages, the outbox, the service's own offsets). Meanwhile the
channel's state reads ``retrying``.

Its address is what the rest of Flora knows a channel by, so a restart changes nothing for
them: the HTTP API's webhook calls (``channel_update``) and the InteractionActor's
notifications come here and go on to the channel's current actor; each ``channel_ack`` goes
back to the caller that waits longest for that channel (an actor answers in order). A caller
whose channel died before answering gets a 503, which makes the service send the call again.
Replies to messages go straight to the ChannelActor that sent them.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from thespian.actors import ChildActorExited, WakeupMessage

from agents.base import FloraActor
from capability_actors.channel_actor import ChannelActor
from common import messages as m
from common.cluster import current_node
from common.tasks.models import CHANNEL_RETRYING, ChannelState

RESTART_BACKOFF_S = (0.5, 30.0)  # the first wait before a new ChannelActor, and the longest
STABLE_AFTER_S = 60.0  # a child that lived this long starts the next restart from the first wait


class ChannelSupervisorActor(FloraActor):
    role = "channel_supervisor"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.wire: dict = {}
        self.interaction: Any = None
        self.children: dict[str, Any] = {}  # channel name -> its ChannelActor now
        self.waiting: dict[str, deque] = {}  # channel name -> webhook callers waiting for its ack
        self.deaths: dict[str, int] = {}  # channel name -> deaths in a row
        self.born: dict[str, float] = {}

    def handlers(self):
        return {"channel_update": self.on_update, "channel_ack": self.on_ack, "notification": self.on_notification}

    def configured(self, message, sender):
        self.wire = message["config"]
        self.interaction = message.get("interaction")
        for name, settings in self.runtime.config.channels.items():
            if settings.enabled:
                self._spawn(name)

    def _spawn(self, name: str) -> None:
        child = self.createActor(ChannelActor)
        self.children[name] = child
        self.born[name] = time.monotonic()
        self.send(child, m.configure(config=self.wire, interaction=self.interaction, channel=name, role="channel"))

    def on_update(self, message, sender):
        m.validate(message)  # a malformed call is refused here, before anyone waits for its ack
        name = message["channel"]
        child = self.children.get(name)
        if child is None:
            self.send(sender, m.channel_ack(channel=name, status=503, body={"error": f"channel {name} is restarting"}))
            return
        self.waiting.setdefault(name, deque()).append(sender)
        self.send(child, message)

    def on_ack(self, message, sender):
        name = message.get("channel", "")
        callers = self.waiting.get(name)
        if sender != self.children.get(name) or not callers:
            self.log.info("channel %s: an acknowledgement nobody waits for", name)
            return
        self.send(callers.popleft(), message)

    def on_notification(self, message, sender):
        m.validate(message)
        if sender != self.interaction:  # notifications come from the InteractionActor, nowhere else
            self.log.warning("ignored a notification from %s", sender)
            return
        name = str(message.get("channel") or "").partition(":")[0]
        child = self.children.get(name)
        if child is not None:
            self.send(child, message)

    def on_unhandled(self, message, sender):
        if isinstance(message, dict) and message.get("message_type") in ("configured", "task_error") \
                and sender in self.children.values():
            if message["message_type"] == "task_error":
                self.log.error("a ChannelActor refused its configuration: %s", message.get("message"))
            return
        super().on_unhandled(message, sender)

    def on_system_message(self, message, sender):
        if isinstance(message, ChildActorExited):
            name = next((n for n, a in self.children.items() if a == message.childAddress), None)
            if name is None:
                return
            del self.children[name]
            for caller in self.waiting.pop(name, deque()):
                self.send(caller, m.channel_ack(channel=name, status=503,
                                                body={"error": f"channel {name} is restarting"}))
            lived = time.monotonic() - self.born.get(name, 0.0)
            self.deaths[name] = 1 if lived >= STABLE_AFTER_S else self.deaths.get(name, 0) + 1
            wait = min(RESTART_BACKOFF_S[0] * 2 ** (self.deaths[name] - 1), RESTART_BACKOFF_S[1])
            self.log.warning("channel %s: its actor exited; starting another in %.1f s", name, wait)
            self._record(name)
            self.wakeupAfter(wait, payload=name)
        elif isinstance(message, WakeupMessage) and isinstance(message.payload, str) \
                and message.payload not in self.children:
            self._spawn(message.payload)

    def _record(self, name: str) -> None:
        try:
            self.runtime.store.put_channel_state(ChannelState(channel=name, state=CHANNEL_RETRYING,
                                                              detail="its actor is being started again",
                                                              node=current_node(self.runtime.config.actors.node)))
        except Exception:  # the store unreachable: the log says it already
            self.log.exception("channel %s: could not record its state", name)
