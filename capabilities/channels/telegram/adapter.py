"""Telegram through the Bot API over HTTP (httpx): ``getUpdates`` long polling with an offset,
or a webhook whose ``X-Telegram-Bot-Api-Secret-Token`` header is checked; ``sendMessage``
with MarkdownV2 and an inline keyboard; ``answerCallbackQuery`` for button presses.

Plain httpx rather than python-telegram-bot: Flora needs four documented endpoints, called
from threads of an actor process, and python-telegram-bot is asyncio throughout (its own
event loop and update queue beside Thespian's); see docs/channels.md.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
from typing import Any

import httpx

from capabilities.channels.telegram.render import telegram as markdown_v2, tg_escape
from capabilities.channels.model import (
    CredentialsRefused,
    ChannelError, DeliveryError, Inbound, MalformedUpdate, Outbound, Unauthorized, parse_button, post_only,
)

log = logging.getLogger("flora.channels.telegram")

POLL_ERROR_BACKOFF_S = (1.0, 30.0)  # after a failed getUpdates: first wait, longest wait

SECRET_HEADER = "x-telegram-bot-api-secret-token"


class TelegramAdapter:
    type = "telegram"

    def __init__(self, *, base_url: str, token: str, webhook_secret: str = "", timeout_s: float = 30.0):
        self._url = f"{base_url}/bot{token}"
        self._secret = webhook_secret
        self._timeout = timeout_s
        self._client = httpx.Client(timeout=timeout_s)

    # -- in ---------------------------------------------------------------------------
    def parse(self, update: Any) -> list[Inbound]:
        """An update as Flora's inbound messages ([] for kinds Flora does not answer: edits,
        joins, stickers); MalformedUpdate when it is not an update at all."""
        if not isinstance(update, dict) or not isinstance(update.get("update_id"), int):
            raise MalformedUpdate(f"a Telegram update needs an integer update_id, got {str(update)[:200]!r}")
        key = str(update["update_id"])
        try:
            if "callback_query" in update:
                query = update["callback_query"]
                action = parse_button(str(query.get("data", "")))
                chat = query["message"]["chat"]["id"]
                if action is None:
                    return []
                return [Inbound(key=key, chat_id=str(chat), sender_id=str(query["from"]["id"]), action=action,
                                ack=str(query["id"]))]
            message = update.get("message")
            if message is None:
                return []
            text = message.get("text")
            if not isinstance(text, str):
                return []  # a photo, a sticker, a member joining: nothing to answer
            return [Inbound(key=key, chat_id=str(message["chat"]["id"]), sender_id=str(message["from"]["id"]),
                            text=text, group=message["chat"].get("type", "private") != "private")]
        except (KeyError, TypeError) as exc:
            raise MalformedUpdate(f"Telegram update {key} lacks {exc}") from None

    def webhook(self, body: str, headers: dict[str, str], *, method: str = "POST",
                query: dict[str, str] | None = None) -> tuple[int, dict, list[Inbound]]:
        """A webhook call: its secret header checked (Unauthorized), its update parsed."""
        post_only(method)
        if not self._secret:
            raise Unauthorized("this channel polls; it takes no webhook calls")
        if not hmac.compare_digest(headers.get(SECRET_HEADER, ""), self._secret):
            raise Unauthorized("the webhook's secret token header does not match")
        try:
            update = json.loads(body)
        except json.JSONDecodeError as exc:
            raise MalformedUpdate(f"the webhook body is not JSON: {exc}") from None
        return 200, {}, self.parse(update)

    def get_updates(self, offset: int | None, timeout_s: int, client: httpx.Client | None = None) -> list:
        """One long poll: the updates after ``offset`` (which acknowledges those before it)."""
        params: dict[str, Any] = {"timeout": timeout_s, "allowed_updates": json.dumps(["message", "callback_query"])}
        if offset is not None:
            params["offset"] = offset
        client = client or self._client
        response = client.get(f"{self._url}/getUpdates", params=params, timeout=timeout_s + self._timeout)
        result = _result(response, "getUpdates")
        if not isinstance(result, list):
            raise DeliveryError(f"getUpdates answered {str(result)[:200]!r}, not a list")
        return result

    # -- out --------------------------------------------------------------------------
    def render(self, out: Outbound) -> list[dict]:
        """The sendMessage bodies for ``out``: its text in MarkdownV2 pieces, the buttons on the last."""
        pieces = markdown_v2(out.text) or [tg_escape("(empty reply)")]
        bodies = [{"chat_id": out.chat_id, "text": piece, "parse_mode": "MarkdownV2"} for piece in pieces]
        if out.buttons:
            bodies[-1]["reply_markup"] = {"inline_keyboard": [
                [{"text": b.label, "callback_data": b.data} for b in row] for row in out.buttons]}
        return bodies

    def send(self, body: dict) -> None:
        """One sendMessage. Should Telegram refuse the MarkdownV2 (a rendering it cannot parse),
        the same text goes out once more as plain text, escapes undone: read, not lost."""
        try:
            _result(self._post("sendMessage", body), "sendMessage")
        except DeliveryError as exc:
            if body.get("parse_mode") != "MarkdownV2" or "can't parse entities" not in str(exc):
                raise
            log.warning("Telegram refused the MarkdownV2 of a message (%s); sending it as plain text", exc)
            plain = {k: v for k, v in body.items() if k != "parse_mode"}
            plain["text"] = re.sub(r"\\(.)", r"\1", body["text"])
            _result(self._post("sendMessage", plain), "sendMessage")

    def acknowledge(self, inbound: Inbound) -> None:
        if inbound.ack:
            _result(self._post("answerCallbackQuery", {"callback_query_id": inbound.ack}), "answerCallbackQuery")

    def _post(self, method: str, body: dict) -> httpx.Response:
        try:
            return self._client.post(f"{self._url}/{method}", json=body)
        except httpx.HTTPError as exc:
            raise DeliveryError(f"{method}: {type(exc).__name__}: {exc}") from None

    def close(self) -> None:
        self._client.close()


def _result(response: httpx.Response, method: str) -> Any:
    """The Bot API's ``result``; DeliveryError with ``retry_after`` for a 429, not retryable
    for a 4xx the same call will get again."""
    try:
        data = response.json()
    except ValueError:
        data = {}
    if response.status_code == 200 and isinstance(data, dict) and data.get("ok"):
        return data.get("result")
    described = data.get("description", response.text[:200]) if isinstance(data, dict) else response.text[:200]
    retry_after = None
    if isinstance(data, dict) and isinstance(data.get("parameters"), dict):
        retry_after = data["parameters"].get("retry_after")
    if response.status_code == 401:  # a 403 is one chat's (the bot was blocked), not the token's
        raise CredentialsRefused(f"{method}: HTTP 401 {described}: Telegram refuses the bot token")
    if response.status_code == 429:
        raise DeliveryError(f"{method}: rate limited ({described})", retry_after=float(retry_after or 1))
    raise DeliveryError(f"{method}: HTTP {response.status_code} {described}",
                        retryable=response.status_code >= 500)


class UpdatePoller:
    """Telegram long polling, on a thread of the ChannelActor. ``receive(update)`` records one
    update: MalformedUpdate skips it; anything else means it was not recorded, so the offset
    stays and Telegram sends it again. The offset moves past an update only once it is
    recorded — the next getUpdates acknowledges it."""

    def __init__(self, adapter: "TelegramAdapter", *, timeout_s: int, receive, stop, name: str = "telegram"):
        self._adapter, self._timeout_s, self._receive, self._stop, self._name = adapter, timeout_s, receive, stop, name

    def run(self) -> None:
        offset, wait = None, POLL_ERROR_BACKOFF_S[0]
        with httpx.Client() as client:
            while not self._stop.is_set():
                try:
                    updates = self._adapter.get_updates(offset, self._timeout_s, client=client)
                except CredentialsRefused:
                    raise  # every poll would get the same answer: the channel stops
                except (ChannelError, httpx.HTTPError) as exc:
                    log.warning("channel %s: getUpdates failed (%s); polling again in %.0f s", self._name, exc, wait)
                    self._stop.wait(wait)
                    wait = min(wait * 2, POLL_ERROR_BACKOFF_S[1])
                    continue
                wait = POLL_ERROR_BACKOFF_S[0]
                offset = self.take(updates, offset)

    def take(self, updates: list, offset: int | None) -> int | None:
        """Record each update, then move the offset past it; the offset to poll from next."""
        for update in updates:
            update_id = update.get("update_id") if isinstance(update, dict) else None
            try:
                self._receive(update)
            except MalformedUpdate as exc:
                log.warning("channel %s: skipped a malformed update: %s", self._name, exc)
            except Exception:  # not recorded (the store is down): not acknowledged either, it comes again
                log.exception("channel %s: could not record update %s", self._name, update_id)
                return offset
            if isinstance(update_id, int) and not isinstance(update_id, bool):
                offset = max(offset or 0, update_id + 1)
        return offset
