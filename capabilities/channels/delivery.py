"""Deliverer: a channel's durable outbox. Every outbound message — a reply, a question, an
approval, a notification (a loop run's, a queued task's result, an "interrupted" notice) — is
first recorded as a ``pending`` :class:`ChannelDelivery` holding what to send, then tried.

- ``enqueue`` records it; ``attempt`` tries the pieces not sent yet once each, in order, and
  records the outcome: ``delivered`` once the service acknowledged every piece (an adapter's
  ``send`` returns only on the service's success answer), ``pending`` with ``next_attempt_at``
  after a temporary failure, ``failed`` when the service refused it for good or it failed
  ``retry.max_attempts`` times. A 429's ``retry_after`` is waited out as asked; other failures
  back off from ``backoff_s`` doubling to ``backoff_max_s``.
- What is still ``pending`` after a restart (:meth:`pending`) is sent by the next life, from
  the first piece the service had not taken.
- :class:`CredentialsRefused` (the service refuses the channel's credentials) leaves the entry
  ``pending`` and propagates: the channel stops, and sends it once its credentials are fixed.
- Any other exception from the adapter (a bug: an answer it cannot read) counts as a failed
  try, logged with its traceback: the entry is retried and ends ``failed`` with the error,
  never dropped from the schedule unrecorded.

It runs on the channel actor's sender thread, where waiting holds up nobody but the
channel's own sends.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, replace
from typing import Any, Callable

from common import messages as m
from common.tasks.models import DELIVERED, DELIVERY_FAILED, DELIVERY_PENDING, ChannelDelivery
from common.tasks.store import TaskStore
from capabilities.channels.model import Button, CredentialsRefused, DeliveryError, Outbound

log = logging.getLogger("flora.channels.delivery")


class Deliverer:
    def __init__(self, adapter: Any, store: TaskStore, *, tenant_id: str, channel: str, retry: Any,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time):
        self._adapter = adapter
        self._store = store
        self._tenant = tenant_id
        self._channel = channel
        self._retry = retry
        self._sleep = sleep
        self._clock = clock

    def enqueue(self, out: Outbound) -> ChannelDelivery:
        """Record ``out`` as a pending entry of the outbox, due now."""
        now = self._clock()
        record = ChannelDelivery(tenant_id=self._tenant, channel=self._channel, delivery_id=m.new_id("dlv"),
                                 target=out.chat_id, kind=out.kind, ref=out.ref, state=DELIVERY_PENDING,
                                 payload=asdict(out), next_attempt_at=now, created_at=now, updated_at=now)
        return self._store.record_channel_delivery(record)

    def pending(self) -> list[ChannelDelivery]:
        """The channel's entries not delivered yet, oldest first (what a previous life left)."""
        return self._store.pending_channel_deliveries(self._tenant, self._channel)

    def attempt(self, record: ChannelDelivery) -> ChannelDelivery:
        """Try the pieces of ``record`` the service has not taken yet, once; the entry as recorded
        now. CredentialsRefused propagates, the entry left pending."""
        pieces = self._adapter.render(replace(outbound(record.payload), key=record.delivery_id))
        try:
            while record.pieces_sent < len(pieces):
                record.attempts += 1
                self._adapter.send(pieces[record.pieces_sent])
                record.pieces_sent += 1
                log.info("channel %s: sent %s %s to %s (piece %d/%d, attempt %d)", self._channel, record.kind,
                         record.delivery_id, record.target, record.pieces_sent, len(pieces), record.attempts)
            record.state, record.error, record.updated_at = DELIVERED, "", self._clock()
        except CredentialsRefused as exc:
            record.error, record.updated_at = str(exc), self._clock()
            self._save(record)
            raise
        except DeliveryError as exc:
            self._failed(record, exc)
        except Exception as exc:  # a bug rendering or reading an answer: the entry stays in the outbox's
            # schedule (and ends failed, with the error, for operators), instead of leaving it unseen
            log.exception("channel %s: sending %s raised", self._channel, record.delivery_id)
            self._failed(record, DeliveryError(f"{type(exc).__name__}: {exc}"))
        return self._save(record)

    def deliver(self, out: Outbound) -> bool:
        """Enqueue ``out`` and try it until it is delivered or failed, waiting between tries;
        True when it was delivered."""
        record = self.enqueue(out)
        while record.state == DELIVERY_PENDING:
            if record.attempts:
                self._sleep(max(0.0, record.next_attempt_at - record.updated_at))
            record = self.attempt(record)
        return record.state == DELIVERED

    def _failed(self, record: ChannelDelivery, exc: DeliveryError) -> None:
        record.error, record.updated_at = str(exc), self._clock()  # a backoff counts from the refusal
        failures = record.attempts - record.pieces_sent
        if not exc.retryable or failures >= self._retry.max_attempts:
            record.state = DELIVERY_FAILED
            log.warning("channel %s: %s %s to %s failed after %d attempt(s): %s", self._channel, record.kind,
                        record.delivery_id, record.target, record.attempts, exc)
            return
        pause = exc.retry_after if exc.retry_after is not None else \
            min(self._retry.backoff_s * 2 ** (failures - 1), self._retry.backoff_max_s)
        record.next_attempt_at = record.updated_at + pause
        log.info("channel %s: send of %s failed (%s); trying again in %.2f s", self._channel, record.delivery_id,
                 exc, pause)

    def _save(self, record: ChannelDelivery) -> ChannelDelivery:
        return self._store.record_channel_delivery(record)


def outbound(payload: dict) -> Outbound:
    """An Outbound from its recorded form (its buttons back as Buttons)."""
    fields = {k: payload[k] for k in Outbound.__dataclass_fields__ if k in payload}
    fields["buttons"] = [[Button(**b) for b in row] for row in fields.get("buttons") or []]
    return Outbound(**fields)
