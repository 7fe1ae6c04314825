"""A local server speaking the Telegram Bot API endpoints Flora uses, over real HTTP.

``/bot<token>/getUpdates`` (long polling: waits up to ``timeout`` seconds for an update; an
``offset`` confirms every update below it, as Telegram does), ``sendMessage`` (refuses text
over 4096 characters, checks ``reply_markup``), ``answerCallbackQuery``. A wrong token gets
401. Tests queue updates (``add_message``, ``press_button``, ``add_raw``), read what was sent
(``sent``, ``wait_sent``), and make ``sendMessage`` answer 429 with ``retry_after`` or 500
the next N times (``fail_next``).
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from typing import Any

from tests.tools.local_http import LocalHTTPServer, Reply, Request

TOKEN = "123456:TEST-token"
MAX_POLL_S = 2.0  # a test server need not hold a poll as long as Telegram's 50 s


def markdown_v2_problem(text: str) -> str | None:
    """What Telegram would refuse in ``text`` as MarkdownV2 (a reserved character left
    unescaped, an entity left open), else None. Code, pre and link URLs are taken out first."""
    rest = re.sub(r"```(?:\\.|[^\\])*?```", "", text, flags=re.S)
    rest = re.sub(r"`(?:\\.|[^`\\\n])*`", "", rest)
    if "`" in rest.replace("\\`", ""):
        return "can't find end of the entity starting with '`'"
    rest = re.sub(r"\[((?:\\.|[^\]\\])*)\]\((?:\\.|[^)\\])*\)", r"\1", rest)
    rest = re.sub(r"^>", "", rest, flags=re.M)  # a quote
    rest = re.sub(r"\\.", "", rest)
    for char in "[]()>#+-=|{}.!":
        if char in rest:
            return f"Character '{char}' is reserved and must be escaped with the preceding '\\'"
    for mark in "*_~":
        if rest.count(mark) % 2:
            return f"can't find end of the entity starting with '{mark}'"
    return None


class BotAPI:
    def __init__(self, token: str = TOKEN):
        self.token = token
        self._cond = threading.Condition()
        self._ids = itertools.count(1000)
        self._message_ids = itertools.count(1)
        self.updates: list[dict] = []  # not confirmed yet
        self.sent: list[dict] = []  # sendMessage bodies accepted
        self.send_times: list[float] = []
        self.refused: list[tuple[float, int]] = []  # (when, status) of sendMessage calls answered with an error
        self.callback_answers: list[str] = []
        self.polls = 0
        self._failures: list[tuple[int, float]] = []  # (status, retry_after) for the next sendMessage calls
        self.server = LocalHTTPServer(self.handle)
        # answers go out as written (headers, then body): without this, Nagle's algorithm holds the
        # body back until the client's delayed ACK (~40 ms), which a latency benchmark would count
        self.server._server.RequestHandlerClass.disable_nagle_algorithm = True

    # -- what tests do ----------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.server.url

    def __enter__(self) -> "BotAPI":
        self.server.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._cond:
            self.updates.clear()
            self._cond.notify_all()
        self.server.__exit__(*exc)

    def next_id(self) -> int:
        """A new update id, above every earlier one (Telegram's ids only grow)."""
        return next(self._ids)

    def add_raw(self, update: dict) -> dict:
        with self._cond:
            self.updates.append(update)
            self._cond.notify_all()
        return update

    def add_message(self, text: str, *, chat_id: int = 42, user_id: int = 7, update_id: int | None = None) -> dict:
        update_id = next(self._ids) if update_id is None else update_id
        return self.add_raw({"update_id": update_id, "message": {
            "message_id": update_id, "date": int(time.time()), "text": text,
            "chat": {"id": chat_id, "type": "private"}, "from": {"id": user_id, "is_bot": False, "first_name": "T"}}})

    def press_button(self, data: str, *, chat_id: int = 42, user_id: int = 7) -> dict:
        update_id = next(self._ids)
        return self.add_raw({"update_id": update_id, "callback_query": {
            "id": f"cbq{update_id}", "data": data, "from": {"id": user_id, "is_bot": False, "first_name": "T"},
            "message": {"message_id": 1, "date": int(time.time()), "chat": {"id": chat_id, "type": "private"}}}})

    def fail_next(self, times: int, status: int = 429, retry_after: float = 1) -> None:
        with self._cond:
            self._failures += [(status, retry_after)] * times

    def stop_failing(self) -> None:
        """Answer sendMessage normally again, whatever ``fail_next`` queued."""
        with self._cond:
            self._failures.clear()

    def wait_sent(self, count: int, timeout: float = 20.0, *, chat_id: int | None = None) -> list[dict]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                sent = [s for s in self.sent if chat_id is None or str(s["chat_id"]) == str(chat_id)]
                if len(sent) >= count:
                    return sent
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(sent)} message(s) sent after {timeout}s, wanted {count}: {sent}")
                self._cond.wait(left)

    def wait_confirmed(self, timeout: float = 10.0) -> None:
        """Until every queued update was confirmed by a later getUpdates offset."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.updates:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"updates never confirmed: {self.updates}")
                self._cond.wait(left)

    # -- the API ----------------------------------------------------------------------
    def handle(self, request: Request) -> Reply:
        prefix = f"/bot{self.token}/"
        if not request.path.startswith(prefix):
            return Reply.json({"ok": False, "error_code": 401, "description": "Unauthorized"}, 401)
        method = request.path[len(prefix):]
        if method == "getUpdates":
            return self._get_updates(request)
        body = request.json() if request.body else {}
        if method == "sendMessage":
            return self._send_message(body)
        if method == "answerCallbackQuery":
            with self._cond:
                self.callback_answers.append(body["callback_query_id"])
                self._cond.notify_all()
            return Reply.json({"ok": True, "result": True})
        return Reply.json({"ok": False, "error_code": 404, "description": "Not Found"}, 404)

    def _get_updates(self, request: Request) -> Reply:
        offset = int(request.query.get("offset", ["0"])[0])
        timeout = min(float(request.query.get("timeout", ["0"])[0]), MAX_POLL_S)
        deadline = time.monotonic() + timeout
        with self._cond:
            self.polls += 1
            if offset:
                self.updates = [u for u in self.updates if not isinstance(u.get("update_id"), int)
                                or u["update_id"] >= offset]
                self._cond.notify_all()
            while not self.updates and (left := deadline - time.monotonic()) > 0:
                self._cond.wait(left)
            return Reply.json({"ok": True, "result": list(self.updates)})

    def _send_message(self, body: dict) -> Reply:
        with self._cond:
            if self._failures:
                status, retry_after = self._failures.pop(0)
                self.refused.append((time.monotonic(), status))
                if status == 429:
                    return Reply.json({"ok": False, "error_code": 429, "description": "Too Many Requests: retry "
                                       f"after {retry_after}", "parameters": {"retry_after": retry_after}}, 429)
                return Reply.json({"ok": False, "error_code": status, "description": "Internal Server Error"}, status)
        text = body.get("text")
        if not isinstance(text, str) or not text or "chat_id" not in body:
            return Reply.json({"ok": False, "error_code": 400, "description": "Bad Request: message text is empty"}, 400)
        if len(text) > 4096:
            return Reply.json({"ok": False, "error_code": 400, "description": "Bad Request: message is too long"}, 400)
        if body.get("parse_mode") == "MarkdownV2":
            problem = markdown_v2_problem(text)
            if problem:
                return Reply.json({"ok": False, "error_code": 400,
                                   "description": f"Bad Request: can't parse entities: {problem}"}, 400)
        markup = body.get("reply_markup")
        if markup is not None:
            keyboard = markup.get("inline_keyboard")
            if not isinstance(keyboard, list) or not all(
                    isinstance(b.get("text"), str) and len(b.get("callback_data", "").encode()) <= 64
                    for row in keyboard for b in row):
                return Reply.json({"ok": False, "error_code": 400, "description": "Bad Request: bad keyboard"}, 400)
        with self._cond:
            self.sent.append(body)
            self.send_times.append(time.monotonic())
            self._cond.notify_all()
        return Reply.json({"ok": True, "result": {"message_id": next(self._message_ids), "date": int(time.time()),
                                                  "chat": {"id": body["chat_id"]}, "text": text}})
