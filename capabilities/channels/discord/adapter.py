"""Discord through its HTTP interactions endpoint and REST API (httpx, ``cryptography``).

In: Discord POSTs each interaction to Flora's webhook route, signed with the application's
Ed25519 key (``X-Signature-Ed25519`` over ``X-Signature-Timestamp`` + the body); a signed
interaction whose timestamp is more than five minutes away from now (``MAX_AGE_S``) is refused,
so a recorded interaction cannot be played again later; a PING is
answered with a PONG, a slash command (``/flora text: ...``, the text in its first string
option) is acknowledged at once with the question quoted, a button press (a message
component) with a silent deferred update. Out: ``POST /channels/{id}/messages`` with
``Authorization: Bot <token>``, buttons as an action row of components.

Interactions rather than the gateway: no long-lived websocket per node, the same shape as the
other webhooks (recorded, then acknowledged), and a local server can stand in for Discord in
tests; the cost is that people talk to Flora through its slash command, not in free messages.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import httpx
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from capabilities.channels import render
from capabilities.channels.model import (
    CredentialsRefused,
    DeliveryError, Inbound, MalformedUpdate, Outbound, Unauthorized, parse_button, post_only,
)

log = logging.getLogger("flora.channels.discord")

PING, APPLICATION_COMMAND, MESSAGE_COMPONENT = 1, 2, 3
PONG, CHANNEL_MESSAGE_WITH_SOURCE, DEFERRED_UPDATE_MESSAGE = 1, 4, 6
BUTTONS_PER_ROW = 5
STYLE_PRIMARY, STYLE_SECONDARY, STYLE_DANGER = 1, 2, 4
DISCORD_LIMIT = 2000  # characters of a message's content
MAX_AGE_S = 300  # an interaction signed longer ago than this (or this far ahead) is refused


class DiscordAdapter:
    type = "discord"

    def __init__(self, *, base_url: str, token: str, public_key: bytes, timeout_s: float = 30.0,
                 clock=time.time):
        self._base = base_url
        self._clock = clock
        self._key = Ed25519PublicKey.from_public_bytes(public_key)
        self._client = httpx.Client(timeout=timeout_s, headers={"Authorization": f"Bot {token}"})

    # -- in ---------------------------------------------------------------------------
    def webhook(self, body: str, headers: dict[str, str], *, method: str = "POST",
                query: dict[str, str] | None = None) -> tuple[int, dict, list[Inbound]]:
        post_only(method)
        signature, timestamp = headers.get("x-signature-ed25519", ""), headers.get("x-signature-timestamp", "")
        try:
            self._key.verify(bytes.fromhex(signature), timestamp.encode() + body.encode())
        except (InvalidSignature, ValueError):
            raise Unauthorized("the interaction's Ed25519 signature does not verify") from None
        try:
            age = self._clock() - int(timestamp)
        except ValueError:
            raise Unauthorized("the interaction's X-Signature-Timestamp is not a number of seconds") from None
        if abs(age) > MAX_AGE_S:
            raise Unauthorized(f"the interaction was signed {int(age)} s ago; more than {MAX_AGE_S} s is refused")
        try:
            interaction = json.loads(body)
        except json.JSONDecodeError as exc:
            raise MalformedUpdate(f"the interaction is not JSON: {exc}") from None
        if not isinstance(interaction, dict):
            raise MalformedUpdate("the interaction is not a JSON object")
        kind = interaction.get("type")
        if kind == PING:
            return 200, {"type": PONG}, []
        inbounds = self.parse(interaction)
        if kind == MESSAGE_COMPONENT:
            return 200, {"type": DEFERRED_UPDATE_MESSAGE}, inbounds
        text = inbounds[0].text if inbounds else ""
        quoted = "> " + text.replace("\n", "\n> ") if text else "…"
        return 200, {"type": CHANNEL_MESSAGE_WITH_SOURCE, "data": {"content": quoted[:DISCORD_LIMIT]}}, inbounds

    def parse(self, interaction: Any) -> list[Inbound]:
        try:
            key, kind = str(interaction["id"]), interaction["type"]
            chat = str(interaction["channel_id"])
            user = (interaction.get("member") or {}).get("user") or interaction["user"]
            sender = str(user["id"])
            data = interaction.get("data") or {}
            group = bool(interaction.get("guild_id"))  # a server's channel; a DM has no guild
            if kind == MESSAGE_COMPONENT:
                action = parse_button(str(data.get("custom_id", "")))
                return [Inbound(key=key, chat_id=chat, sender_id=sender, action=action, group=group)] if action else []
            if kind == APPLICATION_COMMAND:
                texts = [o["value"] for o in data.get("options", []) if isinstance(o.get("value"), str)]
                return [Inbound(key=key, chat_id=chat, sender_id=sender, text=texts[0] if texts else "", group=group)]
        except (KeyError, TypeError) as exc:
            raise MalformedUpdate(f"the Discord interaction lacks {exc}") from None
        return []

    # -- out --------------------------------------------------------------------------
    def render(self, out: Outbound) -> list[dict]:
        bodies = [{"chat_id": out.chat_id, "content": piece} for piece in render.plain(out.text, DISCORD_LIMIT) or ["…"]]
        buttons = [b for row in out.buttons for b in row]
        if buttons:
            styles = {"a:y:": STYLE_PRIMARY, "a:n:": STYLE_DANGER}
            bodies[-1]["components"] = [
                {"type": 1, "components": [{"type": 2, "style": styles.get(b.data[:4], STYLE_SECONDARY),
                                            "label": b.label[:80], "custom_id": b.data}
                                           for b in buttons[i:i + BUTTONS_PER_ROW]]}
                for i in range(0, min(len(buttons), 25), BUTTONS_PER_ROW)]
        return bodies

    def send(self, body: dict) -> None:
        payload = {k: v for k, v in body.items() if k != "chat_id"}
        try:
            response = self._client.post(f"{self._base}/channels/{body['chat_id']}/messages", json=payload)
        except httpx.HTTPError as exc:
            raise DeliveryError(f"create message: {type(exc).__name__}: {exc}") from None
        if response.status_code in (200, 201):
            return
        try:
            data = response.json()
        except ValueError:
            data = {}
        if response.status_code == 401:  # a 403 is one channel's missing permission, not the token's
            raise CredentialsRefused(f"create message: HTTP 401 {response.text[:200]}: Discord refuses the bot token")
        if response.status_code == 429:
            retry_after = data.get("retry_after") if isinstance(data, dict) else None
            raise DeliveryError("create message: rate limited",
                                retry_after=float(retry_after or response.headers.get("retry-after") or 1))
        raise DeliveryError(f"create message: HTTP {response.status_code} {response.text[:200]}",
                            retryable=response.status_code >= 500)

    def acknowledge(self, inbound: Inbound) -> None:
        """A button press was acknowledged in the webhook's own answer."""

    def close(self) -> None:
        self._client.close()
