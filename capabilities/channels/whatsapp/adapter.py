"""WhatsApp through the Business Cloud API (Meta's Graph API, httpx).

In: Meta verifies the webhook once with a GET (``hub.mode=subscribe``, ``hub.verify_token``,
``hub.challenge``): the challenge is echoed as plain text when the token is the configured
one, refused otherwise. Events come by POST, signed: ``X-Hub-Signature-256`` is ``sha256=`` +
HMAC-SHA256 of the raw body with the app secret; an unsigned or wrongly signed call is
refused. Each change's ``messages`` are people's messages (a text, or a press on one of
Flora's reply buttons or list rows, ``interactive``), keyed by their ``wamid`` (a redelivery
repeats it); ``statuses`` (sent, delivered, read) and messages to another business number of
the same account are not Flora's to answer.

Out: ``POST /{phone_number_id}/messages`` with the access token. Text in messages of at most
4096 characters; buttons go with the last piece as an interactive message: up to three as
reply buttons (titles cut to 20 characters), more as a list (up to ten rows, titles of 24
characters with the whole label as the row's description). The body of an interactive
message holds 1024 characters, so a longer text goes first as text and the buttons follow
under a short line. Rate limits (HTTP 429, or Graph error codes 4, 80007, 130429, 131048,
131056) and server errors are tried again, after ``Retry-After`` where given.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from typing import Any

import httpx

from capabilities.channels import http
from capabilities.channels.model import Button, DeliveryError, Inbound, MalformedUpdate, Outbound, Unauthorized
from capabilities.channels.model import parse_button
from capabilities.channels.whatsapp.render import INTERACTIVE_BODY_LIMIT, whatsapp

log = logging.getLogger("flora.channels.whatsapp")

MAX_REPLY_BUTTONS = 3
MAX_BUTTON_TITLE = 20
MAX_LIST_ROWS = 10
MAX_ROW_TITLE = 24
MAX_ROW_DESCRIPTION = 72
LIST_BUTTON = "Choose"
RATE_LIMIT_CODES = frozenset({4, 80007, 130429, 131048, 131056})


class WhatsAppAdapter:
    type = "whatsapp"

    def __init__(self, *, base_url: str, phone_number_id: str, access_token: str, app_secret: str,
                 verify_token: str, timeout_s: float = 30.0):
        self._url = f"{base_url}/{phone_number_id}/messages"
        self._number = phone_number_id
        self._secret = app_secret.encode()
        self._verify_token = verify_token
        self._client = httpx.Client(timeout=timeout_s, headers={"Authorization": f"Bearer {access_token}"})

    # -- in ---------------------------------------------------------------------------
    def webhook(self, body: str, headers: dict[str, str], *, method: str = "POST",
                query: dict[str, str] | None = None) -> tuple[int, dict | str, list[Inbound]]:
        if method.upper() == "GET":
            return 200, self.handshake(query or {}), []
        if method.upper() != "POST":
            raise MalformedUpdate(f"this channel's webhook takes GET and POST, not {method}")
        self.verify(body, headers)
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise MalformedUpdate(f"the event is not JSON: {exc}") from None
        return 200, {}, self.parse(data)

    def handshake(self, query: dict[str, str]) -> str:
        """The challenge of Meta's GET verification, when its token is ours (Unauthorized if not)."""
        if not self._verify_token or query.get("hub.mode") != "subscribe":
            raise Unauthorized("not a webhook verification request")
        if not hmac.compare_digest(query.get("hub.verify_token", "").encode(), self._verify_token.encode()):
            raise Unauthorized("the verification token does not match")
        return query.get("hub.challenge", "")

    def verify(self, body: str, headers: dict[str, str]) -> None:
        if not self._secret:
            raise Unauthorized("no app secret is set: events cannot be checked")
        expected = "sha256=" + hmac.new(self._secret, body.encode(), hashlib.sha256).hexdigest()
        http.check_signature(headers.get("x-hub-signature-256", ""), expected)

    def parse(self, data: Any) -> list[Inbound]:
        if not isinstance(data, dict) or not isinstance(data.get("entry"), list):
            raise MalformedUpdate(f"not a WhatsApp webhook event: {str(data)[:200]!r}")
        inbounds = []
        try:
            for entry in data["entry"]:
                for change in entry.get("changes", []):
                    value = change.get("value") or {}
                    if change.get("field") != "messages" or \
                            str((value.get("metadata") or {}).get("phone_number_id", "")) != self._number:
                        continue
                    inbounds += [i for i in map(_message, value.get("messages", [])) if i is not None]
        except (AttributeError, KeyError, TypeError) as exc:
            raise MalformedUpdate(f"a WhatsApp event lacks {exc}") from None
        return inbounds

    # -- out --------------------------------------------------------------------------
    def render(self, out: Outbound) -> list[dict]:
        """The /messages bodies for ``out``: text pieces, the buttons with the last (see the module)."""
        buttons = [b for row in out.buttons for b in row]
        if not buttons:
            return [_text(out.chat_id, piece) for piece in whatsapp(out.text) or ["…"]]
        pieces = whatsapp(out.text)
        last = pieces.pop() if pieces and len(pieces[-1]) <= INTERACTIVE_BODY_LIMIT else "👇"
        if len(buttons) > MAX_LIST_ROWS:
            log.warning("a message to %s has %d options; WhatsApp shows the first %d", out.chat_id, len(buttons),
                        MAX_LIST_ROWS)
        return [_text(out.chat_id, piece) for piece in pieces] + [_interactive(out.chat_id, last, buttons)]

    def send(self, body: dict) -> None:
        response = http.post(self._client, self._url, "messages",
                             json={k: v for k, v in body.items() if k != "chat_id"})
        if response.status_code == 200:
            return
        try:
            error = response.json().get("error")
        except (ValueError, AttributeError):
            error = None
        if not isinstance(error, dict):  # a proxy's or an outage page's body, not the Graph API's
            error = {}
        if error.get("code") in RATE_LIMIT_CODES:
            raise DeliveryError(f"messages: rate limited ({error.get('message', '')})",
                                retry_after=http.retry_after(response) or 1.0)
        raise http.refused(response, "messages", str(error.get("message", "")) or response.text[:200])

    def acknowledge(self, inbound: Inbound) -> None:
        """A button press needs no answer of its own."""

    def close(self) -> None:
        self._client.close()


def _message(message: dict) -> Inbound | None:
    """One entry of ``messages`` as an Inbound; None for kinds Flora does not answer (images, reactions)."""
    sender, key = str(message["from"]), str(message["id"])
    if message.get("type") == "text":
        return Inbound(key=key, chat_id=sender, sender_id=sender, text=str(message["text"]["body"]))
    if message.get("type") == "interactive":
        interactive = message["interactive"]
        reply = interactive.get("button_reply") or interactive.get("list_reply") or {}
        action = parse_button(str(reply.get("id", "")))
        return None if action is None else Inbound(key=key, chat_id=sender, sender_id=sender, action=action)
    return None


def _text(chat: str, piece: str) -> dict:
    return {"messaging_product": "whatsapp", "recipient_type": "individual", "to": chat, "chat_id": chat,
            "type": "text", "text": {"body": piece, "preview_url": False}}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _interactive(chat: str, body: str, buttons: list[Button]) -> dict:
    if len(buttons) <= MAX_REPLY_BUTTONS:
        action = {"buttons": [{"type": "reply", "reply": {"id": b.data, "title": _cut(b.label, MAX_BUTTON_TITLE)}}
                              for b in buttons]}
        kind = "button"
    else:
        rows = [{"id": b.data, "title": _cut(b.label, MAX_ROW_TITLE),
                 **({"description": _cut(b.label, MAX_ROW_DESCRIPTION)} if len(b.label) > MAX_ROW_TITLE else {})}
                for b in buttons[:MAX_LIST_ROWS]]
        action = {"button": LIST_BUTTON, "sections": [{"title": "Options", "rows": rows}]}
        kind = "list"
    return {"messaging_product": "whatsapp", "recipient_type": "individual", "to": chat, "chat_id": chat,
            "type": "interactive", "interactive": {"type": kind, "body": {"text": body}, "action": action}}
