"""Deliverer: an outbound message sent through a channel adapter, retried, and recorded.

A send that fails temporarily is tried again up to ``retry.max_attempts`` times in all: a
429's ``retry_after`` is waited out as asked, other failures back off from ``backoff_s``
doubling to ``backoff_max_s``. A failure the same call would get again (a 400, a 403) is
not retried. Every outbound message ends as one ``ChannelDelivery`` record, ``sent`` or
``failed`` with the reason. It runs on the channel actor's sender thread, where waiting
holds up nobody but the channel's own queue of sends.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

from common import messages as m
from common.tasks.models import ChannelDelivery
from common.tasks.store import TaskStore
from capabilities.channels.model import DeliveryError, Outbound

log = logging.getLogger("flora.channels.delivery")


class Deliverer:
    def __init__(self, adapter: Any, store: TaskStore, *, tenant_id: str, channel: str, retry: Any,
                 sleep: Callable[[float], None] = time.sleep):
        self._adapter = adapter
        self._store = store
        self._tenant = tenant_id
        self._channel = channel
        self._retry = retry
        self._sleep = sleep

    def deliver(self, out: Outbound) -> bool:
        """Send ``out`` (each of its pieces in order); True when all went out. Recorded either way."""
        record = ChannelDelivery(tenant_id=self._tenant, channel=self._channel, delivery_id=m.new_id("dlv"),
                                 target=out.chat_id, kind=out.kind, ref=out.ref, state="sent")
        for body in self._adapter.render(out):
            attempts, error = self._send(body)
            record.attempts += attempts
            if error is not None:
                record.state, record.error = "failed", str(error)
                log.warning("channel %s: %s to %s failed after %d attempt(s): %s", self._channel, out.kind,
                            out.chat_id, record.attempts, error)
                break
        self._store.record_channel_delivery(record)
        return record.state == "sent"

    def _send(self, body: dict) -> tuple[int, DeliveryError | None]:
        """One piece, with retries: the attempts it took, and the last error if it never went out."""
        wait = self._retry.backoff_s
        attempt = 0
        while True:
            attempt += 1
            try:
                self._adapter.send(body)
                log.info("channel %s: sent to %s (attempt %d)", self._channel, body.get("chat_id", ""), attempt)
                return attempt, None
            except DeliveryError as exc:
                if not exc.retryable or attempt >= self._retry.max_attempts:
                    return attempt, exc
                pause = exc.retry_after if exc.retry_after is not None else wait
                log.info("channel %s: send failed (%s); trying again in %.2f s", self._channel, exc, pause)
                self._sleep(pause)
                wait = min(wait * 2, self._retry.backoff_max_s)
