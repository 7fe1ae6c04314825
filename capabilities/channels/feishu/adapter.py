"""Feishu/Lark through its event subscription callback and message API (httpx, ``cryptography``).

In: Feishu POSTs events to Flora's webhook route. The ``url_verification`` challenge is
answered; with an encrypt key the body is ``{"encrypt": ...}`` (AES-256-CBC, key SHA-256 of
the encrypt key, IV the first 16 bytes) and ``X-Lark-Signature`` (SHA-256 of timestamp +
nonce + encrypt key + body) is checked; the verification token, when configured, must
match. An adapter with neither secret refuses every call (it cannot tell Feishu from a forger);
configuration and start make sure one is set. ``im.message.receive_v1`` is a person's message (text messages; the event's
``message_id`` is the key, so a redelivered event is one message); ``card.action.trigger`` is a
button pressed on one of Flora's cards. Out: ``POST /open-apis/im/v1/messages`` with a
``tenant_access_token`` from ``/open-apis/auth/v3/tenant_access_token/internal``, kept until
shortly before it expires; rich text as ``post``, a message with buttons as an interactive card.

httpx rather than lark-oapi: three endpoints and one decryption, called from the channel
actor's threads; lark-oapi brings its own client, token cache and event dispatcher that
would stand beside Flora's rather than in it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from typing import Any

import httpx
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from capabilities.channels import render
from capabilities.channels.feishu.render import FEISHU_LIMIT, feishu as feishu_posts
from capabilities.channels.model import (
    CredentialsRefused,
    DeliveryError, Inbound, MalformedUpdate, Outbound, Unauthorized, parse_button, post_only,
)

TOKEN_MARGIN_S = 300  # a tenant_access_token is renewed this long before it expires


class FeishuAdapter:
    type = "feishu"

    def __init__(self, *, base_url: str, app_id: str, app_secret: str, verification_token: str = "",
                 encrypt_key: str = "", timeout_s: float = 30.0):
        self._base = base_url
        self._app = {"app_id": app_id, "app_secret": app_secret}
        self._verification = verification_token
        self._encrypt_key = encrypt_key
        self._client = httpx.Client(timeout=timeout_s)
        self._token, self._token_until = "", 0.0
        self._token_lock = threading.Lock()

    # -- in ---------------------------------------------------------------------------
    def webhook(self, body: str, headers: dict[str, str], *, method: str = "POST",
                query: dict[str, str] | None = None) -> tuple[int, dict, list[Inbound]]:
        post_only(method)
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise MalformedUpdate(f"the event is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise MalformedUpdate("the event is not a JSON object")
        if not (self._encrypt_key or self._verification):
            raise Unauthorized("no verification token or encrypt key is set: events cannot be checked")
        if self._encrypt_key:
            if "encrypt" not in data:
                raise Unauthorized("an encrypt key is configured but the event is not encrypted")
            inner = decrypt(self._encrypt_key, str(data["encrypt"]))
            if inner.get("type") != "url_verification":  # events are signed; the URL check is not
                if "x-lark-signature" not in headers:
                    raise Unauthorized("the event carries no X-Lark-Signature")
                self._check_signature(body, headers)
            data = inner
        token = data.get("token") if "token" in data else (data.get("header") or {}).get("token")
        if self._verification and not hmac.compare_digest(str(token or ""), self._verification):
            raise Unauthorized("the event's verification token does not match")
        if data.get("type") == "url_verification":
            return 200, {"challenge": data.get("challenge", "")}, []
        return 200, {}, self.parse(data)

    def _check_signature(self, body: str, headers: dict[str, str]) -> None:
        signed = (headers.get("x-lark-request-timestamp", "") + headers.get("x-lark-request-nonce", "")
                  + self._encrypt_key + body)
        if not hmac.compare_digest(hashlib.sha256(signed.encode()).hexdigest(), headers["x-lark-signature"]):
            raise Unauthorized("the event's X-Lark-Signature does not match")

    def parse(self, data: dict) -> list[Inbound]:
        try:
            header, event = data["header"], data["event"]
            kind = header["event_type"]
            if kind == "im.message.receive_v1":
                message = event["message"]
                if message.get("message_type") != "text":
                    return []
                text = json.loads(message["content"]).get("text", "")
                return [Inbound(key=message["message_id"], chat_id=message["chat_id"],
                                sender_id=event["sender"]["sender_id"]["open_id"], text=text,
                                group=message.get("chat_type", "group") != "p2p")]
            if kind == "card.action.trigger":
                action = parse_button(str((event["action"].get("value") or {}).get("flora", "")))
                if action is None:
                    return []
                return [Inbound(key=header["event_id"], chat_id=event["context"]["open_chat_id"],
                                sender_id=event["operator"]["open_id"], action=action)]
        except (KeyError, TypeError, json.JSONDecodeError) as exc:
            raise MalformedUpdate(f"the Feishu event lacks {exc}") from None
        return []

    # -- out --------------------------------------------------------------------------
    def render(self, out: Outbound) -> list[dict]:
        posts = feishu_posts(out.text) or feishu_posts("…")
        bodies = [{"chat_id": out.chat_id, "msg_type": "post", "content": json.dumps(p, ensure_ascii=False)}
                  for p in posts]
        if out.buttons:  # the last piece as a card, with the buttons under its text
            card = {"config": {"wide_screen_mode": True}, "elements": [
                {"tag": "markdown", "content": render.split_text(render.prepare(out.text), FEISHU_LIMIT)[-1]
                 if out.text.strip() else "…"},
                {"tag": "action", "actions": [
                    {"tag": "button", "text": {"tag": "plain_text", "content": b.label},
                     "type": "danger" if b.data.startswith("a:n:") else "primary", "value": {"flora": b.data}}
                    for row in out.buttons for b in row]}]}
            bodies[-1] = {"chat_id": out.chat_id, "msg_type": "interactive", "content": json.dumps(card, ensure_ascii=False)}
        return bodies

    def send(self, body: dict) -> None:
        payload = {"receive_id": body["chat_id"], "msg_type": body["msg_type"], "content": body["content"]}
        response = self._post("/open-apis/im/v1/messages", payload, params={"receive_id_type": "chat_id"},
                              headers={"Authorization": f"Bearer {self.tenant_token()}"})
        _check(response, "send message")

    def tenant_token(self) -> str:
        """The tenant_access_token, fetched when there is none or it is about to expire."""
        with self._token_lock:
            if self._token and time.monotonic() < self._token_until:
                return self._token
            response = self._post("/open-apis/auth/v3/tenant_access_token/internal", self._app)
            data = _check(response, "tenant_access_token")
            self._token = data["tenant_access_token"]
            self._token_until = time.monotonic() + max(0, int(data.get("expire", 0)) - TOKEN_MARGIN_S)
            return self._token

    def _post(self, path: str, body: dict, **kwargs: Any) -> httpx.Response:
        try:
            return self._client.post(self._base + path, json=body, **kwargs)
        except httpx.HTTPError as exc:
            raise DeliveryError(f"{path}: {type(exc).__name__}: {exc}") from None

    def acknowledge(self, inbound: Inbound) -> None:
        """A card button press was acknowledged in the callback's own answer."""

    def close(self) -> None:
        self._client.close()


def decrypt(encrypt_key: str, encrypted: str) -> dict:
    """An encrypted event body: AES-256-CBC, key SHA-256(encrypt key), IV its first 16 bytes."""
    try:
        raw = base64.b64decode(encrypted)
        decryptor = Cipher(algorithms.AES(hashlib.sha256(encrypt_key.encode()).digest()),
                           modes.CBC(raw[:16])).decryptor()
        padded = decryptor.update(raw[16:]) + decryptor.finalize()
        plain = padded[:-padded[-1]]
        return json.loads(plain.decode("utf-8"))
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        raise Unauthorized(f"the event does not decrypt with the encrypt key: {exc}") from None


def _check(response: httpx.Response, what: str) -> dict:
    try:
        data = response.json()
    except ValueError:
        data = {}
    if response.status_code == 200 and isinstance(data, dict) and data.get("code") == 0:
        return data
    if response.status_code == 429 or (isinstance(data, dict) and data.get("code") == 99991400):
        reset = response.headers.get("x-ogw-ratelimit-reset")
        raise DeliveryError(f"{what}: rate limited", retry_after=float(reset) if reset else 1.0)
    message = data.get("msg", response.text[:200]) if isinstance(data, dict) else response.text[:200]
    if response.status_code == 401:
        raise CredentialsRefused(f"{what}: HTTP 401 {message}: Feishu refuses the app's credentials")
    raise DeliveryError(f"{what}: HTTP {response.status_code} {message}", retryable=response.status_code >= 500)
