"""DingTalk through an enterprise robot's HTTP callback and its conversation's session webhook (httpx).

In: DingTalk POSTs each message a person sends the robot (a direct chat, or an @mention in a
group) to Flora's webhook route, with headers ``timestamp`` (milliseconds) and ``sign``:
base64 of HMAC-SHA256 with the app secret over ``"{timestamp}\\n{app secret}"``. A call
without a matching sign, or stamped more than an hour from now (DingTalk's own rule), is
refused. A ``text`` message is a message, keyed by its ``msgId``; its ``sessionWebhook`` is
where the answer goes, and is accepted only on DingTalk's host (the ``api_base``), so a
call cannot make Flora post elsewhere.

Out: a POST of a ``markdown`` message (5000 characters at most) to the session webhook; with
buttons, an ``actionCard`` whose buttons are ``dtmd://dingtalkclient/sendMessage`` links:
pressing one sends its data into the chat as the person's own message, which comes back as
the action it stands for (robot callbacks carry no button presses of their own). A session
webhook lives about 90 minutes (``sessionWebhookExpiredTime``): the adapter keeps each
conversation's latest one, so a notification reaches a chat that wrote within that time; an
expired one is a failure that is not retried (DingTalk would refuse it again). DingTalk
answers ``errcode`` 0 for success; 130101 (sending too fast) and server errors are retried.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import urllib.parse
from typing import Any

import httpx

from capabilities.channels import http, render
from capabilities.channels.model import (
    DeliveryError, Inbound, MalformedUpdate, Outbound, Unauthorized, parse_button, post_only,
)

DINGTALK_LIMIT = 5000  # characters of a markdown message's text
SIGN_WINDOW_S = 3600
RATE_LIMITED = 130101
SEND_MESSAGE_LINK = "dtmd://dingtalkclient/sendMessage?content="


class DingTalkAdapter:
    type = "dingtalk"

    def __init__(self, *, base_url: str, app_secret: str, timeout_s: float = 30.0, clock=time.time):
        self._base = base_url
        self._secret = app_secret
        self._clock = clock
        self._client = httpx.Client(timeout=timeout_s)
        self._sessions: dict[str, tuple[str, float]] = {}  # conversation -> (session webhook, expires at, s)
        self._lock = threading.Lock()

    # -- in ---------------------------------------------------------------------------
    def webhook(self, body: str, headers: dict[str, str], *, method: str = "POST",
                query: dict[str, str] | None = None) -> tuple[int, dict, list[Inbound]]:
        post_only(method)
        self.verify(headers)
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise MalformedUpdate(f"the callback is not JSON: {exc}") from None
        return 200, {}, self.parse(data)

    def verify(self, headers: dict[str, str]) -> None:
        if not self._secret:
            raise Unauthorized("no app secret is set: callbacks cannot be checked")
        timestamp = headers.get("timestamp", "")
        http.check_fresh(timestamp, self._clock(), window_s=SIGN_WINDOW_S, unit=0.001)
        digest = hmac.new(self._secret.encode(), f"{timestamp}\n{self._secret}".encode(), hashlib.sha256).digest()
        http.check_signature(headers.get("sign", ""), base64.b64encode(digest).decode())

    def parse(self, data: Any) -> list[Inbound]:
        if not isinstance(data, dict) or "msgId" not in data or "conversationId" not in data:
            raise MalformedUpdate(f"not a DingTalk robot callback: {str(data)[:200]!r}")
        if data.get("msgtype") != "text":
            return []  # a picture, a file, a voice note: nothing to answer
        try:
            content = str(data["text"]["content"]).strip()
            sender = str(data.get("senderStaffId") or data["senderId"])
            chat, webhook = str(data["conversationId"]), str(data["sessionWebhook"])
        except (KeyError, TypeError) as exc:
            raise MalformedUpdate(f"DingTalk message {data.get('msgId')} lacks {exc}") from None
        if not webhook.startswith(self._base + "/"):
            raise MalformedUpdate(f"the session webhook {webhook[:80]!r} is not on {self._base}")
        expires = float(data.get("sessionWebhookExpiredTime") or 0) / 1000 or self._clock() + 5400
        with self._lock:
            self._sessions[chat] = (webhook, expires)
        thread = {"session_webhook": webhook, "expires": expires}
        group = str(data.get("conversationType", "2")) != "1"  # "1": one to one, "2": a group
        action = parse_button(content)
        if action is not None:
            return [Inbound(key=str(data["msgId"]), chat_id=chat, sender_id=sender, action=action, thread=thread,
                            group=group)]
        return [Inbound(key=str(data["msgId"]), chat_id=chat, sender_id=sender, text=content, thread=thread,
                        group=group)]

    # -- out --------------------------------------------------------------------------
    def render(self, out: Outbound) -> list[dict]:
        """The session-webhook bodies for ``out``: markdown pieces, an actionCard for the buttons."""
        webhook, expires = out.thread.get("session_webhook", ""), float(out.thread.get("expires", 0))
        with self._lock:  # the conversation's latest session outlives the one the message came with
            latest = self._sessions.get(out.chat_id, ("", 0.0))
        if latest[1] > expires:
            webhook, expires = latest
        target = {"chat_id": out.chat_id, "url": webhook, "expires": expires}
        pieces = render.plain(out.text, DINGTALK_LIMIT) or ["…"]
        bodies = [{**target, "msgtype": "markdown", "markdown": {"title": _title(p), "text": p}} for p in pieces]
        buttons = [b for row in out.buttons for b in row]
        if buttons:
            last = bodies.pop()["markdown"]
            bodies.append({**target, "msgtype": "actionCard", "actionCard": {
                "title": last["title"], "text": last["text"], "btnOrientation": "1" if len(buttons) <= 2 else "0",
                "btns": [{"title": b.label, "actionURL": SEND_MESSAGE_LINK + urllib.parse.quote(b.data)}
                         for b in buttons]}})
        return bodies

    def send(self, body: dict) -> None:
        if not body["url"] or body["expires"] < self._clock():
            raise DeliveryError("no live session webhook for this conversation: DingTalk robots answer within "
                                "about 90 minutes of a person's last message", retryable=False)
        payload = {k: v for k, v in body.items() if k not in ("chat_id", "url", "expires")}
        response = http.post(self._client, body["url"], "sessionWebhook", json=payload)
        if response.status_code != 200:
            raise http.refused(response, "sessionWebhook")
        try:
            data = response.json()
        except ValueError:
            raise DeliveryError(f"sessionWebhook answered {response.text[:200]!r}, not JSON") from None
        if data.get("errcode", 0) != 0:
            raise DeliveryError(f"sessionWebhook: {data.get('errcode')} {data.get('errmsg', '')}",
                                retryable=data.get("errcode") == RATE_LIMITED,
                                retry_after=1.0 if data.get("errcode") == RATE_LIMITED else None)

    def acknowledge(self, inbound: Inbound) -> None:
        """A button press is the person's own message; nothing to acknowledge."""

    def close(self) -> None:
        self._client.close()


def _title(text: str) -> str:
    """The title a notification shows: the first line, plain, short."""
    first = text.strip().split("\n", 1)[0].lstrip("#* ").strip()
    return (first[:30] + "…") if len(first) > 30 else (first or "Flora")
