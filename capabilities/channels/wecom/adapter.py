"""WeCom (企业微信) through a self-built application's callback and its message API (httpx, ``cryptography``).

In: WeCom checks the callback URL once with a GET (``msg_signature``, ``timestamp``,
``nonce``, ``echostr``): the signature is checked and the decrypted ``echostr`` answered as
plain text. Events come by POST as XML whose ``Encrypt`` holds the real message, sealed with
the EncodingAESKey for our CorpID (:mod:`.crypto`); a wrong ``msg_signature``, a message
that does not decrypt or is for another CorpID is refused. A ``text`` message is a message
(keyed by its ``MsgId``, the sender's userid is the chat); a ``template_card_event`` is a
press on one of Flora's button cards (keyed by card and sender, so the press counts once).
The call is answered with an empty body: the answer goes through the API. An XML body with a
document type declaration is refused unread.

Out: ``POST /cgi-bin/message/send`` with an ``access_token`` from ``/cgi-bin/gettoken``, kept
until shortly before it expires and fetched again when WeCom says it expired (40014, 42001).
Text as ``markdown`` of at most 2048 bytes a message; buttons as a ``button_interaction``
template card (at most 6 buttons; the text's short end as its sub-title, a longer text goes
first as markdown). Errcodes 45009 (frequency limit), -1 (busy) and server errors are retried.
"""

from __future__ import annotations

import threading
import time
import uuid
import xml.etree.ElementTree as ET
from typing import Any

import httpx

from capabilities.channels import http, render
from capabilities.channels.model import (
    Button, DeliveryError, Inbound, MalformedUpdate, Outbound, Unauthorized, parse_button,
)
from capabilities.channels.wecom import crypto

MARKDOWN_MAX_BYTES = 2048
MAX_CARD_BUTTONS = 6
MAX_CARD_TITLE = 26
MAX_CARD_SUBTITLE = 112
MAX_BUTTON_TEXT = 10
TOKEN_MARGIN_S = 300
TOKEN_EXPIRED = frozenset({40014, 42001})
RETRYABLE = frozenset({-1, 45009}) | TOKEN_EXPIRED


class WeComAdapter:
    type = "wecom"

    def __init__(self, *, base_url: str, corp_id: str, agent_id: int, corp_secret: str, token: str,
                 encoding_aes_key: str, timeout_s: float = 30.0):
        self._base = base_url
        self._corp_id, self._agent_id, self._corp_secret = corp_id, agent_id, corp_secret
        self._token = token
        self._key = crypto.aes_key(encoding_aes_key)
        self._client = httpx.Client(timeout=timeout_s)
        self._access, self._access_until = "", 0.0
        self._access_lock = threading.Lock()

    # -- in ---------------------------------------------------------------------------
    def webhook(self, body: str, headers: dict[str, str], *, method: str = "POST",
                query: dict[str, str] | None = None) -> tuple[int, str, list[Inbound]]:
        query = query or {}
        if method.upper() == "GET":
            echostr = query.get("echostr", "")
            crypto.check_signature(self._token, query, echostr)
            return 200, crypto.decrypt(self._key, echostr, self._corp_id), []
        if method.upper() != "POST":
            raise MalformedUpdate(f"this channel's webhook takes GET and POST, not {method}")
        encrypted = _field(_xml(body), "Encrypt")
        crypto.check_signature(self._token, query, encrypted)
        return 200, "", self.parse(crypto.decrypt(self._key, encrypted, self._corp_id))

    def parse(self, message: str) -> list[Inbound]:
        """A decrypted callback message as Flora's inbound messages ([] for kinds Flora does not answer)."""
        root = _xml(message)
        kind, sender = root.findtext("MsgType", ""), root.findtext("FromUserName", "")
        if not sender:
            raise MalformedUpdate("a WeCom message without FromUserName")
        if kind == "text":
            return [Inbound(key=_field(root, "MsgId"), chat_id=sender,
                            sender_id=sender, text=root.findtext("Content", ""))]
        if kind == "event" and root.findtext("Event") == "template_card_event":
            action = parse_button(root.findtext("EventKey", ""))
            card = root.findtext("TaskId", "")
            return [] if action is None else [Inbound(key=f"card:{card}:{sender}", chat_id=sender, sender_id=sender,
                                                      action=action)]
        return []

    # -- out --------------------------------------------------------------------------
    def render(self, out: Outbound) -> list[dict]:
        """The message/send bodies for ``out``: markdown pieces, a button card for the buttons."""
        pieces = render.fit(render.prepare(out.text), MARKDOWN_MAX_BYTES, lambda p: p, _utf8_len) if out.text.strip() \
            else []
        buttons = [b for row in out.buttons for b in row][:MAX_CARD_BUTTONS]
        if not buttons:
            return [self._markdown(out.chat_id, p) for p in pieces or ["…"]]
        subtitle = pieces.pop() if pieces and len(pieces[-1]) <= MAX_CARD_SUBTITLE else ""
        title = (subtitle or (pieces[0] if pieces else "")).strip().split("\n", 1)[0].lstrip("#* ") or "Flora"
        return [self._markdown(out.chat_id, p) for p in pieces] + [self._card(out.chat_id, title, subtitle, buttons)]

    def _markdown(self, chat: str, text: str) -> dict:
        return {"touser": chat, "chat_id": chat, "msgtype": "markdown", "agentid": self._agent_id,
                "markdown": {"content": text}}

    def _card(self, chat: str, title: str, subtitle: str, buttons: list[Button]) -> dict:
        card: dict[str, Any] = {
            "card_type": "button_interaction", "task_id": f"flora-{uuid.uuid4().hex}",
            "main_title": {"title": _cut(title, MAX_CARD_TITLE)},
            "button_list": [{"text": _cut(b.label, MAX_BUTTON_TEXT), "style": 1 if i == 0 else 2, "key": b.data}
                            for i, b in enumerate(buttons)]}
        if subtitle:
            card["sub_title_text"] = subtitle
        return {"touser": chat, "chat_id": chat, "msgtype": "template_card", "agentid": self._agent_id,
                "template_card": card}

    def send(self, body: dict) -> None:
        token = self._access_token()
        response = http.post(self._client, f"{self._base}/cgi-bin/message/send", "message/send",
                             params={"access_token": token}, json={k: v for k, v in body.items() if k != "chat_id"})
        errcode, errmsg = _answer(response, "message/send")
        if errcode in TOKEN_EXPIRED:
            with self._access_lock:
                self._access_until = 0.0  # the next attempt fetches a new one
        if errcode != 0:
            raise DeliveryError(f"message/send: {errcode} {errmsg}", retryable=errcode in RETRYABLE,
                                retry_after=http.retry_after(response))

    def _access_token(self) -> str:
        with self._access_lock:
            if self._access and time.monotonic() < self._access_until:
                return self._access
            try:
                response = self._client.get(f"{self._base}/cgi-bin/gettoken",
                                            params={"corpid": self._corp_id, "corpsecret": self._corp_secret})
            except httpx.HTTPError as exc:
                raise DeliveryError(f"gettoken: {type(exc).__name__}: {exc}") from None
            errcode, errmsg = _answer(response, "gettoken")
            if errcode != 0:
                raise DeliveryError(f"gettoken: {errcode} {errmsg}", retryable=errcode in RETRYABLE)
            data = response.json()
            self._access = str(data["access_token"])
            self._access_until = time.monotonic() + float(data.get("expires_in", 7200)) - TOKEN_MARGIN_S
            return self._access

    def acknowledge(self, inbound: Inbound) -> None:
        """A card press is acknowledged by the webhook's 200; nothing more to send."""

    def close(self) -> None:
        self._client.close()


def _xml(text: str) -> ET.Element:
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise MalformedUpdate("an XML body with a document type declaration is refused")
    try:
        return ET.fromstring(text)
    except ET.ParseError as exc:
        raise MalformedUpdate(f"the body is not XML: {exc}") from None


def _field(root: ET.Element, name: str) -> str:
    value = root.findtext(name)
    if not value:
        raise MalformedUpdate(f"the XML has no {name}")
    return value


def _answer(response: httpx.Response, what: str) -> tuple[int, str]:
    if response.status_code != 200:
        raise http.refused(response, what)
    try:
        data = response.json()
        return int(data.get("errcode", 0)), str(data.get("errmsg", ""))
    except (ValueError, AttributeError, TypeError):
        raise DeliveryError(f"{what} answered {response.text[:200]!r}, not JSON") from None


def _utf8_len(text: str) -> int:
    return len(text.encode())


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
