"""Local servers speaking the Discord REST and Feishu open-platform endpoints Flora uses.

Discord: ``POST /channels/{id}/messages`` with ``Authorization: Bot <token>`` (content of at
most 2000 characters, at most 5 action rows). Feishu: ``POST
/open-apis/auth/v3/tenant_access_token/internal`` (app id and secret checked; counts how often
a token was fetched) and ``POST /open-apis/im/v1/messages?receive_id_type=chat_id`` with that
token. Both record what was sent; ``wait_sent`` waits for it. Every server here (and in
``work_chat_servers``) can be told to answer its next calls with scripted failures
(``fail_next``) until ``stop_failing``.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from tests.tools.local_http import LocalHTTPServer, Reply, Request

DISCORD_TOKEN = "discord-bot-token"
FEISHU_APP = {"app_id": "cli_test", "app_secret": "feishu-secret"}


class _Recorder:
    def __init__(self):
        self._cond = threading.Condition()
        self.sent: list[dict] = []
        self.failures: list[tuple[str, Reply]] = []  # (part of the path it applies to, the reply)
        self.calls = 0
        self.server = LocalHTTPServer(self.handle)

    @property
    def url(self) -> str:
        return self.server.url

    def __enter__(self):
        self.server.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.__exit__(*exc)

    def record(self, item: dict) -> None:
        with self._cond:
            self.sent.append(item)
            self._cond.notify_all()

    def wait_sent(self, count: int, timeout: float = 20.0, *, chat_id: str | None = None) -> list[dict]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                sent = [s for s in self.sent if chat_id is None or s["chat_id"] == chat_id]
                if len(sent) >= count:
                    return sent
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(sent)} message(s) sent after {timeout}s, wanted {count}: {sent}")
                self._cond.wait(left)

    def fail_next(self, *replies: Reply, only: str = "") -> None:
        """Answer the next calls with these replies (a 429 with Retry-After, a 503...), in order;
        with ``only``, just the calls whose path contains it (a homeserver's sends, not its /sync)."""
        with self._cond:
            self.failures.extend((only, reply) for reply in replies)

    def stop_failing(self) -> None:
        """Answer normally again, whatever ``fail_next`` queued."""
        with self._cond:
            self.failures.clear()

    def handle(self, request: Request) -> Reply:
        with self._cond:
            self.calls += 1
            index = next((i for i, (only, _) in enumerate(self.failures) if only in request.path), None)
            failure = self.failures.pop(index)[1] if index is not None else None
        return failure if failure is not None else self.answer(request)

    def answer(self, request: Request) -> Reply:
        raise NotImplementedError


class DiscordAPI(_Recorder):
    def answer(self, request: Request) -> Reply:
        parts = request.path.strip("/").split("/")
        if request.method != "POST" or len(parts) != 3 or parts[0] != "channels" or parts[2] != "messages":
            return Reply.json({"message": "404: Not Found", "code": 0}, 404)
        if request.headers.get("authorization") != f"Bot {DISCORD_TOKEN}":
            return Reply.json({"message": "401: Unauthorized", "code": 0}, 401)
        body = request.json()
        content = body.get("content", "")
        if not content or len(content) > 2000 or len(body.get("components", [])) > 5:
            return Reply.json({"message": "Invalid Form Body", "code": 50035}, 400)
        self.record({"chat_id": parts[1], **body})
        return Reply.json({"id": str(len(self.sent)), "channel_id": parts[1], "content": content})


class FeishuAPI(_Recorder):
    def __init__(self):
        super().__init__()
        self.tokens_issued = 0

    def answer(self, request: Request) -> Reply:
        if request.path == "/open-apis/auth/v3/tenant_access_token/internal":
            if request.json() != FEISHU_APP:
                return Reply.json({"code": 10014, "msg": "app secret invalid"})
            self.tokens_issued += 1
            return Reply.json({"code": 0, "msg": "ok", "tenant_access_token": f"t-{self.tokens_issued}",
                               "expire": 7200})
        if request.path == "/open-apis/im/v1/messages":
            if request.headers.get("authorization") != f"Bearer t-{self.tokens_issued}" or not self.tokens_issued:
                return Reply.json({"code": 99991663, "msg": "Invalid access token for authorization."}, 400)
            if request.query.get("receive_id_type") != ["chat_id"]:
                return Reply.json({"code": 230001, "msg": "invalid receive_id_type"}, 400)
            body = request.json()
            content = json.loads(body["content"])  # content is a JSON string
            if body["msg_type"] not in ("post", "interactive", "text"):
                return Reply.json({"code": 230001, "msg": "invalid msg_type"}, 400)
            self.record({"chat_id": body["receive_id"], "msg_type": body["msg_type"], "content": content})
            return Reply.json({"code": 0, "msg": "success", "data": {"message_id": f"om_{len(self.sent)}"}})
        return Reply.json({"code": 404, "msg": "not found"}, 404)
