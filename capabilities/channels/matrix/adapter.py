"""Matrix through the client-server API (httpx): ``/sync`` long polling, ``m.room.message`` in
rooms without end-to-end encryption, sends with ``PUT .../send/m.room.message/{txnId}``.

In: the poller (:class:`SyncPoller`, a thread of the ChannelActor) calls ``GET
/_matrix/client/v3/sync`` with the ``since`` token of the last batch, waiting up to
``sync_timeout_s`` for news. Each ``m.room.message`` of ``msgtype`` ``m.text`` in a joined
room is a message, keyed by its ``event_id`` (a batch synced twice is one message each);
Flora's own messages, notices and other event types are not answered; an encrypted event
(``m.room.encrypted``) cannot be read and is logged. The ``since`` token moves on only once
the whole batch is recorded. At start, with no token yet, only messages of the last
``catch_up_s`` seconds are taken, so joining an old room does not answer its history.
Invitations are accepted (``auto_join``).

Out: ``PUT /_matrix/client/v3/rooms/{room}/send/m.room.message/{txnId}``, the transaction id
fixed when the message is rendered, so a retried send is the same event, never a second one.
Matrix has no buttons in plain messages: a question's choices are listed numbered, and a
reply that is just the number (or the choice's words) in that room is the choice. Rate
limits (``M_LIMIT_EXCEEDED``, 429, with ``retry_after_ms``) and server errors are retried.
"""

from __future__ import annotations

import logging
import threading
import time
import urllib.parse
import uuid
from typing import Any

import httpx

from capabilities.channels import http, render
from capabilities.channels.model import (
    CredentialsRefused,
    Button, ChannelError, DeliveryError, Inbound, MalformedUpdate, Outbound, parse_button,
)

log = logging.getLogger("flora.channels.matrix")

MATRIX_LIMIT = 30_000  # characters of a message's body, well inside an event's 64 KiB
POLL_ERROR_BACKOFF_S = (1.0, 30.0)
CLIENT = "/_matrix/client/v3"


class MatrixAdapter:
    type = "matrix"

    def __init__(self, *, base_url: str, user_id: str, access_token: str, timeout_s: float = 30.0):
        self._base = base_url + CLIENT
        self.user_id = user_id
        self._timeout = timeout_s
        self.headers = {"Authorization": f"Bearer {access_token}"}
        self._client = httpx.Client(timeout=timeout_s, headers=self.headers)
        self._choices: dict[str, list[Button]] = {}  # room -> the buttons of the last question asked there
        self._lock = threading.Lock()

    # -- in ---------------------------------------------------------------------------
    def webhook(self, body: str, headers: dict[str, str], *, method: str = "POST",
                query: dict[str, str] | None = None) -> tuple[int, dict, list[Inbound]]:
        raise MalformedUpdate("a matrix channel has no webhook: it syncs with its homeserver")

    def parse(self, event: Any) -> list[Inbound]:
        """One timeline event (with its ``room_id``) as Flora's inbound messages."""
        if not isinstance(event, dict) or not event.get("event_id") or not event.get("room_id"):
            raise MalformedUpdate(f"not a room event: {str(event)[:200]!r}")
        if event.get("type") == "m.room.encrypted":
            log.warning("room %s is encrypted; Flora reads rooms without end-to-end encryption only",
                        event["room_id"])
            return []
        content = event.get("content") or {}
        if event.get("type") != "m.room.message" or content.get("msgtype") != "m.text" \
                or event.get("sender") == self.user_id:
            return []
        room, text = str(event["room_id"]), str(content.get("body", ""))
        base = {"key": str(event["event_id"]), "chat_id": room, "sender_id": str(event.get("sender", ""))}
        chosen = self._chosen(room, text)
        return [Inbound(**base, action=chosen)] if chosen else [Inbound(**base, text=text)]

    def _chosen(self, room: str, text: str) -> dict | None:
        """The action of a reply that picks one of the last question's numbered choices, else None."""
        with self._lock:
            choices = self._choices.get(room) or []
        said = text.strip().lower()
        for number, button in enumerate(choices, 1):
            if said in (str(number), button.label.strip().lower()):
                with self._lock:
                    self._choices.pop(room, None)
                return parse_button(button.data)
        return None

    def sync(self, since: str | None, timeout_s: int, client: httpx.Client | None = None) -> dict:
        params: dict[str, Any] = {"timeout": timeout_s * 1000}
        if since:
            params["since"] = since
        try:
            response = (client or self._client).get(f"{self._base}/sync", params=params,
                                                     timeout=timeout_s + self._timeout)
        except httpx.HTTPError as exc:
            raise DeliveryError(f"sync: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise _refused(response, "sync")
        data = response.json()
        if not isinstance(data, dict) or not isinstance(data.get("next_batch"), str):
            raise DeliveryError(f"sync answered {str(data)[:200]!r} without next_batch")
        return data

    def join(self, room: str) -> None:
        response = http.post(self._client, f"{self._base}/rooms/{urllib.parse.quote(room, safe='')}/join", "join",
                             json={})
        if response.status_code != 200:
            raise _refused(response, "join")

    # -- out --------------------------------------------------------------------------
    def render(self, out: Outbound) -> list[dict]:
        """The send bodies for ``out``, each with its transaction id; the choices listed under the last."""
        pieces = render.plain(out.text, MATRIX_LIMIT) or ["…"]
        buttons = [b for row in out.buttons for b in row]
        if buttons:
            listed = "\n".join(f"{n}. {b.label}" for n, b in enumerate(buttons, 1))
            pieces[-1] += f"\n\n{listed}\n(reply with the number)"
            with self._lock:
                self._choices[out.chat_id] = buttons
        # one transaction id per piece of an outbox entry, the same on every try: a resend after
        # an answer was lost is taken by the homeserver as the message it already has
        key = out.key or uuid.uuid4().hex
        return [{"chat_id": out.chat_id, "txn_id": f"flora.{key}.{n}",
                 "content": {"msgtype": "m.text", "body": piece}} for n, piece in enumerate(pieces)]

    def send(self, body: dict) -> None:
        room = urllib.parse.quote(body["chat_id"], safe="")
        url = f"{self._base}/rooms/{room}/send/m.room.message/{urllib.parse.quote(body['txn_id'], safe='')}"
        try:
            response = self._client.put(url, json=body["content"])
        except httpx.HTTPError as exc:
            raise DeliveryError(f"send: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise _refused(response, "send")

    def acknowledge(self, inbound: Inbound) -> None:
        """A choice is the person's own message; nothing to acknowledge."""

    def close(self) -> None:
        self._client.close()


def _refused(response: httpx.Response, what: str) -> DeliveryError:
    """Matrix's errors: M_LIMIT_EXCEEDED waits ``retry_after_ms``; the rest as any HTTP refusal."""
    try:
        data = response.json()
    except ValueError:
        data = {}
    if response.status_code == 429 or data.get("errcode") == "M_LIMIT_EXCEEDED":
        wait = data.get("retry_after_ms")
        return DeliveryError(f"{what}: rate limited ({data.get('error', '')})",
                             retry_after=float(wait) / 1000 if wait else (http.retry_after(response) or 1.0))
    return http.refused(response, what, f"{data.get('errcode', '')} {data.get('error', '')}".strip())


class SyncPoller:
    """``/sync`` long polling on a thread of the ChannelActor. ``receive(event)`` records one
    event: MalformedUpdate skips it; anything else means it was not recorded, so ``since``
    stays and the batch comes again (its recorded events are then dropped as repeats)."""

    def __init__(self, adapter: MatrixAdapter, *, timeout_s: int, catch_up_s: float, auto_join: bool,
                 receive, stop, name: str = "matrix", clock=time.time):
        self._adapter, self._timeout_s, self._receive, self._stop = adapter, timeout_s, receive, stop
        self._catch_up_s, self._auto_join, self._name, self._clock = catch_up_s, auto_join, name, clock

    def run(self) -> None:
        since, wait, started = None, POLL_ERROR_BACKOFF_S[0], self._clock()
        with httpx.Client(headers=self._adapter.headers) as client:
            while not self._stop.is_set():
                try:
                    batch = self._adapter.sync(since, self._timeout_s if since else 0, client=client)
                except CredentialsRefused:
                    raise  # every sync would get the same answer: the channel stops
                except (ChannelError, httpx.HTTPError, ValueError) as exc:
                    log.warning("channel %s: sync failed (%s); trying again in %.0f s", self._name, exc, wait)
                    self._stop.wait(wait)
                    wait = min(wait * 2, POLL_ERROR_BACKOFF_S[1])
                    continue
                wait = POLL_ERROR_BACKOFF_S[0]
                since = self.take(batch, since, not_before_ms=None if since else (started - self._catch_up_s) * 1000)

    def take(self, batch: dict, since: str | None, *, not_before_ms: float | None = None) -> str | None:
        """Record the batch's messages (and join its invitations); the token to sync from next."""
        rooms = batch.get("rooms") or {}
        if self._auto_join:
            for room in (rooms.get("invite") or {}):
                try:
                    self._adapter.join(room)
                    log.info("channel %s: joined %s", self._name, room)
                except DeliveryError as exc:
                    log.warning("channel %s: could not join %s: %s", self._name, room, exc)
        for room, joined in (rooms.get("join") or {}).items():
            for event in ((joined or {}).get("timeline") or {}).get("events") or []:
                if not isinstance(event, dict):
                    continue
                if not_before_ms is not None and float(event.get("origin_server_ts") or 0) < not_before_ms:
                    continue  # history from before this start: not answered
                try:
                    self._receive({**event, "room_id": room})
                except MalformedUpdate as exc:
                    log.warning("channel %s: skipped a malformed event: %s", self._name, exc)
                except Exception:  # not recorded (the store is down): the batch comes again
                    log.exception("channel %s: could not record event %s", self._name, event.get("event_id"))
                    return since
        return batch["next_batch"]
