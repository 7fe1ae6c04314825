"""ChannelActor: one chat channel, one actor (docs/channels.md), whatever its type.

Its ChannelService decides and its adapter speaks the service's HTTP API; this actor moves
messages between them and the InteractionActor, like any other client of it:

- in, webhook mode: the HTTP API hands a call over as ``channel_update``; what came in is
  recorded in the store, then the call is answered (``channel_ack``), then it goes to Flora;
- in, polling (Telegram's ``getUpdates``, a mailbox over IMAP, Matrix ``/sync``): the
  channel's poller, on a thread, records each item and only then acknowledges it to the
  service (an offset moved on, a mail marked seen); the actor picks the recorded messages up
  on its next wake-up (``INBOX_TICK_S``) — an actor is never sent to from another thread;
- out: a reply (by ``msg_id``) or a notification for one of its chats is rendered and
  handed to a sender thread, which sends with retries (a 429's ``retry_after`` waited out)
  and records each send. Waiting there holds up nobody but this channel's queue of sends.

- out: a reply (by ``msg_id``) or a notification for one of its chats is rendered into the
  channel's durable outbox (:mod:`capabilities.channels.delivery`) and handed to a sender
  thread, which tries each entry when it is due (backoff, a 429's ``retry_after``) and
  records how it went. Waiting there holds up nobody but this channel's sends.

At start it picks up what its previous life left open: a message recorded but not answered
is handed to Flora again, a reply kept but not in the outbox is put there, and what the
outbox holds still pending is sent now. Its ChannelSupervisorActor starts it again when its
process dies.

Its state is recorded for operators (``--status``, ``/health``, ``/metrics``): ``running``;
``retrying`` while sends fail and back off; ``stopped: bad credentials`` once the service
refused its credentials (``CredentialsRefused``), which stops its poller and its sends (what
was pending stays so, for when the credentials are fixed) and is logged at ERROR.
"""

from __future__ import annotations

import heapq
import queue
import threading
import time
from typing import Any

from thespian.actors import ActorExitRequest, WakeupMessage

from agents.base import FloraActor
from capabilities.channels.delivery import Deliverer
from capabilities.channels.model import CredentialsRefused, DeliveryError, Inbound, MalformedUpdate, Unauthorized
from capabilities.channels.adapters import build_adapter, build_poller
from capabilities.channels.service import ChannelService
from common.accounts.linking import AccountLinks
from common.accounts.store import open_link_store
from common import messages as m
from common.cluster import current_node
from common.tasks.models import (
    CHANNEL_REPLIED, CHANNEL_RETRYING, CHANNEL_RUNNING, CHANNEL_STOPPED, DELIVERED, DELIVERY_PENDING, ChannelState,
)

INBOX_TICK_S = 0.005  # how often recorded messages from the poller are picked up while people talk
INBOX_IDLE_TICK_S = 0.25  # ...and once nothing came for IDLE_AFTER_S (an idle actor barely wakes)
IDLE_AFTER_S = 10.0


class ChannelActor(FloraActor):
    role = "channel"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.service: ChannelService | None = None
        self.adapter: Any = None
        self.interaction: Any = None
        self.supervisor: Any = None  # who configured it, and forwards it webhook calls and notifications
        self.pending: dict[str, Any] = {}  # msg_id -> the ChannelMessage it answers
        self.inbox: queue.Queue = queue.Queue()  # recorded messages from the poller thread
        self.outbox: queue.Queue = queue.Queue()  # (what, ...) for the sender thread
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._last_inbound = time.monotonic()
        self._state = ""

    def handlers(self):
        return {"channel_update": self.on_update, "notification": self.on_notification,
                **{kind: self.on_reply for kind in m.REPLY_TYPES}}

    def configured(self, message, sender):
        rt = self.runtime
        name = message.get("channel") or ""
        settings = rt.config.channels.get(name)
        if settings is None:
            raise m.ProtocolError(f"no channel {name!r} in the configuration", field="channel")
        self.interaction = message.get("interaction")
        self.supervisor = sender
        self.adapter = build_adapter(name, settings)
        self.service = ChannelService(name, settings, rt.store, tenant_id=settings.tenant or rt.config.default_tenant,
                                      links=AccountLinks(open_link_store(rt.config)))
        self.deliverer = Deliverer(self.adapter, rt.store, tenant_id=self.service.tenant_id, channel=name,
                                   retry=settings.retry)
        for record in self.service.open_messages():  # what a previous life left open
            if record.state == CHANNEL_REPLIED and record.reply is not None:
                if not self.service.has_delivery(record.message_key):
                    self.deliverer.enqueue(self.service.outbound(record, record.reply))
                self.service.answered(record)
            else:
                self._dispatch(record)
        for delivery in self.deliverer.pending():  # sent now, whatever backoff its last life had
            delivery.next_attempt_at = time.time()
            self.outbox.put(("out", delivery))
        self._start(self._send_forever, "sender")
        poller = build_poller(name, settings, self.adapter, self._receive, self._stop)
        if poller is not None:
            self._start(lambda: self._poll(name, settings), "poller")
            self.wakeupAfter(INBOX_TICK_S)
        self._set_state(CHANNEL_RUNNING)
        self.log.info("channel %s (%s, %s) started", name, settings.type, settings.mode)

    def _start(self, target, what: str) -> None:
        thread = threading.Thread(target=target, name=f"flora-channel-{self.service.name}-{what}", daemon=True)
        thread.start()
        self._threads.append(thread)

    # -- in -------------------------------------------------------------------------
    def on_update(self, message, sender):
        m.validate(message)
        try:
            status, body, inbounds = self.adapter.webhook(message["body"], message["headers"],
                                                          method=message.get("method", "POST"),
                                                          query=message.get("query") or {})
            fresh = self.service.record(inbounds)
        except Unauthorized as exc:
            self.log.warning("channel %s: refused a webhook call: %s", self.service.name, exc)
            self.send(sender, m.channel_ack(channel=self.service.name, status=401, body={"error": str(exc)}))
            return
        except MalformedUpdate as exc:
            self.log.warning("channel %s: skipped a webhook call: %s", self.service.name, exc)
            self.send(sender, m.channel_ack(channel=self.service.name, status=400, body={"error": str(exc)}))
            return
        self.send(sender, m.channel_ack(channel=self.service.name, status=status, body=body))  # recorded: acknowledge
        for record in fresh:
            self._dispatch(record)

    def _dispatch(self, record) -> None:
        reply = self.service.command(record)  # /link, /unlink, /whoami: answered here
        if reply is not None:
            self._answer(record, reply)
            return
        try:
            msg = self.service.user_input(record)
        except (MalformedUpdate, m.ProtocolError) as exc:
            self.log.warning("channel %s: message %s cannot go to Flora: %s", self.service.name,
                             record.message_key, exc)
            self.service.refused(record)
            return
        inbound = Inbound.from_dict(record.payload)
        if inbound.ack:
            self.outbox.put(("ack", inbound))
        self.pending[msg["msg_id"]] = record
        self.service.dispatched(record)
        self.send(self.interaction, msg)

    def on_reply(self, message, sender):
        if sender != self.interaction:  # replies come from where the messages went, nowhere else
            self.log.warning("channel %s: ignored a %s from %s", self.service.name, message.get("message_type"), sender)
            return
        record = self.pending.pop(message.get("msg_id", ""), None)
        if record is None:
            self.log.info("channel %s: a %s nobody here waits for", self.service.name, message.get("message_type"))
            return
        self._answer(record, message)

    def _answer(self, record, reply: dict) -> None:
        self.service.replied(record, reply)
        delivery = self.deliverer.enqueue(self.service.outbound(record, reply))
        self.service.answered(record)  # the outbox has it now: a restart sends it from there
        self.outbox.put(("out", delivery))

    def on_notification(self, message, sender):
        m.validate(message)
        if sender not in (self.interaction, self.supervisor):
            self.log.warning("channel %s: ignored a notification from %s", self.service.name, sender)
            return
        out = self.service.notification(message)
        if out is not None:
            self.outbox.put(("out", self.deliverer.enqueue(out)))

    # -- threads --------------------------------------------------------------------
    def _send_forever(self) -> None:
        """The sender thread: acknowledgements at once, outbox entries when they are due."""
        due: list[tuple[float, str, Any]] = []  # a heap of (next_attempt_at, delivery_id, entry)
        while True:
            timeout = max(0.0, due[0][0] - time.time()) if due else None
            try:
                job = self.outbox.get(timeout=timeout)
            except queue.Empty:
                job = ("due",)
            if job is None:
                return
            if job[0] == "ack":
                self._guarded(self.adapter.acknowledge, job[1])
            elif job[0] == "out":
                heapq.heappush(due, (job[1].next_attempt_at, job[1].delivery_id, job[1]))
            while due and due[0][0] <= time.time() and not self._stop.is_set():
                entry = self._guarded(self.deliverer.attempt, heapq.heappop(due)[2])
                if entry is not None and entry.state == DELIVERY_PENDING:
                    heapq.heappush(due, (entry.next_attempt_at, entry.delivery_id, entry))
                if entry is not None:
                    self._set_state(CHANNEL_RETRYING if entry.state == DELIVERY_PENDING
                                    else CHANNEL_RUNNING if entry.state == DELIVERED else self._state)

    def _poll(self, name: str, settings: Any) -> None:
        """Poll; with the shared Redis store (several nodes), only while this node holds the
        channel's lease (capabilities/channels/lease.py)."""
        config = self.runtime.config
        if config.store.backend != "redis":
            poller = build_poller(name, settings, self.adapter, self._receive, self._stop)
            self._guarded(poller.run)
            return
        import redis

        from capabilities.channels.lease import PollerLease

        def poll_until(lost: threading.Event) -> None:
            watched = _Either(self._stop, lost)
            self._guarded(build_poller(name, settings, self.adapter, self._receive, watched).run)

        client = redis.Redis.from_url(config.redis.url, decode_responses=True)
        holder = f"{current_node(config.actors.node)}:{m.new_id('poll')}"
        try:
            PollerLease(client, f"{config.loops.redis_prefix}:poller:{name}", holder).run_while_held(
                poll_until, self._stop)
        finally:
            client.close()

    def _guarded(self, work, *args):
        """``work(*args)`` on a thread: bad credentials stop the channel; other failures are
        logged (the store unreachable, say: what was open stays open for the next start)."""
        try:
            return work(*args)
        except CredentialsRefused as exc:
            self._credentials_refused(exc)
        except DeliveryError as exc:
            self.log.warning("channel %s: %s failed: %s", self.service.name, getattr(work, "__name__", work), exc)
        except Exception:
            self.log.exception("channel %s: %s failed", self.service.name, getattr(work, "__name__", work))
        return None

    def _credentials_refused(self, exc: CredentialsRefused) -> None:
        """Stop polling and sending; tell the operator (the log at ERROR, the recorded state)."""
        self._stop.set()
        self._set_state(CHANNEL_STOPPED, "bad credentials")
        self.log.error("channel %s stopped: the service refused its credentials (%s); fix them and restart "
                       "Flora, what is pending is sent then", self.service.name, exc)

    def _set_state(self, state: str, detail: str = "") -> None:
        """Record the channel's state for operators, when it changed (stopped stays stopped)."""
        if state == self._state or self._state == CHANNEL_STOPPED:
            return
        self._state = state
        try:
            self.runtime.store.put_channel_state(ChannelState(
                channel=self.service.name, state=state, detail=detail,
                node=current_node(self.runtime.config.actors.node)))
        except Exception:  # the store unreachable: the log still says it
            self.log.exception("channel %s: could not record its state %s", self.service.name, state)

    def _receive(self, raw) -> None:
        """One update or mail recorded (on a poller thread); the actor picks it up."""
        for record in self.service.receive(self.adapter, raw):
            self.inbox.put(record)

    def on_system_message(self, message, sender):
        if isinstance(message, WakeupMessage) and self.service is not None and not self._stop.is_set():
            while True:
                try:
                    record = self.inbox.get_nowait()
                except queue.Empty:
                    break
                self._dispatch(record)
                self._last_inbound = time.monotonic()
            idle = time.monotonic() - self._last_inbound > IDLE_AFTER_S
            self.wakeupAfter(INBOX_IDLE_TICK_S if idle else INBOX_TICK_S)
        elif isinstance(message, ActorExitRequest):
            self._stop.set()
            self.outbox.put(None)
            for thread in self._threads:
                thread.join(timeout=2.0)
            if self.adapter is not None:
                self.adapter.close()


class _Either:
    """A stop flag set when either of two events is: a poller stops when the channel stops or
    its node lost the lease."""

    def __init__(self, first: threading.Event, second: threading.Event):
        self._events = (first, second)

    def is_set(self) -> bool:
        return any(e.is_set() for e in self._events)

    def wait(self, timeout: float | None = None) -> bool:
        slice_s = 0.1
        waited = 0.0
        while not self.is_set() and (timeout is None or waited < timeout):
            self._events[0].wait(slice_s if timeout is None else min(slice_s, timeout - waited))
            waited += slice_s
        return self.is_set()

    def set(self) -> None:
        self._events[0].set()
