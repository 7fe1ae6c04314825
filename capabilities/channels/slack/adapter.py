"""Slack through the Events API and the Web API (httpx).

In: Slack POSTs to Flora's webhook route both the Events API's events (JSON) and, when the
app's Interactivity Request URL is the same route, button presses (a form with a ``payload``
field). Every call is signed: ``X-Slack-Signature`` is ``v0=`` + HMAC-SHA256 with the app's
signing secret over ``v0:{X-Slack-Request-Timestamp}:{body}``, and a call stamped more than
five minutes from now is refused, so a recorded call cannot be played again. The
``url_verification`` handshake is answered with its challenge (after the same check). A
``message`` (a direct message) or ``app_mention`` (in a channel) is a person's message; its
key is ``<channel>:<ts>``, which Slack's retries and the two events of one mention share, so
a message is handled once. Bots' messages and edits (``bot_id``, a ``subtype``) are not
answered: two bots never talk to each other forever. A ``block_actions`` payload is a
button pressed on one of Flora's messages.

Out: ``chat.postMessage`` with the bot token; the text as mrkdwn in a section block (3000
characters at most a message), buttons in an ``actions`` block under the last one (at most 25
a block, labels cut to 75 characters), in the thread the person wrote in. Slack answers HTTP
200 with ``ok: false`` for most refusals; ``ratelimited`` and server errors are tried again,
after ``Retry-After`` where given, the rest (``channel_not_found``, ``invalid_auth``) not.

httpx rather than slack_sdk/bolt: one endpoint and one signature, called from the channel
actor's threads; bolt brings its own app, listener threads and HTTP server.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import time
import urllib.parse
from typing import Any

import httpx

from capabilities.channels import http
from capabilities.channels.model import (
    DeliveryError, Inbound, MalformedUpdate, Outbound, Unauthorized, parse_button, post_only,
)
from capabilities.channels.slack.render import escape, mrkdwn

log = logging.getLogger("flora.channels.slack")

BUTTONS_PER_BLOCK = 25
MAX_BUTTON_TEXT = 75
RETRYABLE_ERRORS = frozenset({"ratelimited", "internal_error", "fatal_error", "service_unavailable",
                              "request_timeout"})
_MENTION = re.compile(r"^\s*<@[A-Z0-9]+>\s*")


class SlackAdapter:
    type = "slack"

    def __init__(self, *, base_url: str, bot_token: str, signing_secret: str, timeout_s: float = 30.0,
                 clock=time.time):
        self._base = base_url
        self._secret = signing_secret.encode()
        self._clock = clock
        self._client = httpx.Client(timeout=timeout_s, headers={"Authorization": f"Bearer {bot_token}"})

    # -- in ---------------------------------------------------------------------------
    def webhook(self, body: str, headers: dict[str, str], *, method: str = "POST",
                query: dict[str, str] | None = None) -> tuple[int, dict, list[Inbound]]:
        post_only(method)
        self.verify(body, headers)
        if headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            payload = urllib.parse.parse_qs(body).get("payload", [""])[0]
            try:
                return 200, {}, self.parse_interaction(json.loads(payload))
            except json.JSONDecodeError as exc:
                raise MalformedUpdate(f"the interaction payload is not JSON: {exc}") from None
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise MalformedUpdate(f"the event is not JSON: {exc}") from None
        if isinstance(data, dict) and data.get("type") == "url_verification":
            return 200, {"challenge": str(data.get("challenge", ""))}, []
        return 200, {}, self.parse(data)

    def verify(self, body: str, headers: dict[str, str]) -> None:
        """Unauthorized unless the call carries Slack's signature of this body, made just now."""
        if not self._secret:
            raise Unauthorized("no signing secret is set: calls cannot be checked")
        timestamp = headers.get("x-slack-request-timestamp", "")
        http.check_fresh(timestamp, self._clock())
        expected = "v0=" + hmac.new(self._secret, f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
        http.check_signature(headers.get("x-slack-signature", ""), expected)

    def parse(self, data: Any) -> list[Inbound]:
        """An Events API callback as Flora's inbound messages ([] for events Flora does not answer)."""
        if not isinstance(data, dict) or data.get("type") != "event_callback" or not isinstance(data.get("event"), dict):
            raise MalformedUpdate(f"not an Events API callback: {str(data)[:200]!r}")
        event = data["event"]
        if event.get("type") not in ("message", "app_mention") or event.get("subtype") or event.get("bot_id"):
            return []
        try:
            channel, user, ts = str(event["channel"]), str(event["user"]), str(event["ts"])
        except KeyError as exc:
            raise MalformedUpdate(f"Slack event {data.get('event_id')} lacks {exc}") from None
        text = _MENTION.sub("", str(event.get("text", "")), count=1)
        thread = {"thread_ts": str(event["thread_ts"])} if event.get("thread_ts") else {}
        group = event.get("channel_type", "im" if channel.startswith("D") else "channel") != "im"
        return [Inbound(key=f"{channel}:{ts}", chat_id=channel, sender_id=user, text=text, thread=thread,
                        group=group)]

    def parse_interaction(self, payload: Any) -> list[Inbound]:
        """A ``block_actions`` payload (a button pressed) as the action it stands for."""
        if not isinstance(payload, dict) or payload.get("type") != "block_actions":
            return []
        try:
            action = payload["actions"][0]
            user = str(payload["user"]["id"])
            channel = str((payload.get("channel") or {}).get("id") or payload["container"]["channel_id"])
            key = f"action:{payload['trigger_id']}"
        except (KeyError, IndexError, TypeError) as exc:
            raise MalformedUpdate(f"a Slack block_actions payload lacks {exc}") from None
        pressed = parse_button(str(action.get("value", "")))
        return [] if pressed is None else [Inbound(key=key, chat_id=channel, sender_id=user, action=pressed)]

    # -- out --------------------------------------------------------------------------
    def render(self, out: Outbound) -> list[dict]:
        """The chat.postMessage bodies for ``out``: mrkdwn pieces, the buttons under the last."""
        pieces = mrkdwn(out.text) or [escape("(empty reply)")]
        bodies = [{"channel": out.chat_id, "text": piece,
                   "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": piece}}]} for piece in pieces]
        buttons = [b for row in out.buttons for b in row]
        for start in range(0, len(buttons), BUTTONS_PER_BLOCK):
            bodies[-1]["blocks"].append({"type": "actions", "elements": [
                _button(b, start + i) for i, b in enumerate(buttons[start:start + BUTTONS_PER_BLOCK])]})
        if out.thread.get("thread_ts"):
            for body in bodies:
                body["thread_ts"] = out.thread["thread_ts"]
        for body in bodies:
            body["chat_id"] = out.chat_id  # for the delivery log; Slack ignores unknown fields
        return bodies

    def send(self, body: dict) -> None:
        response = http.post(self._client, f"{self._base}/chat.postMessage", "chat.postMessage",
                             json={k: v for k, v in body.items() if k != "chat_id"})
        if response.status_code != 200:
            raise http.refused(response, "chat.postMessage")
        try:
            data = response.json()
        except ValueError:
            raise DeliveryError(f"chat.postMessage answered {response.text[:200]!r}, not JSON") from None
        if not data.get("ok"):
            error = str(data.get("error", "unknown"))
            raise DeliveryError(f"chat.postMessage: {error}", retryable=error in RETRYABLE_ERRORS,
                                retry_after=http.retry_after(response))

    def acknowledge(self, inbound: Inbound) -> None:
        """A button press is acknowledged by the webhook's 200; nothing more to send."""

    def close(self) -> None:
        self._client.close()


def _button(button, index: int) -> dict:
    label = button.label if len(button.label) <= MAX_BUTTON_TEXT else button.label[:MAX_BUTTON_TEXT - 1] + "…"
    element = {"type": "button", "text": {"type": "plain_text", "text": label, "emoji": True},
               "value": button.data, "action_id": f"flora_{index}"}
    if button.data.startswith("a:y:"):
        element["style"] = "primary"
    elif button.data.startswith("a:n:"):
        element["style"] = "danger"
    return element
