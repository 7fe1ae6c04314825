"""Local servers speaking the Slack Web API, the WhatsApp Business Cloud API, DingTalk's
session webhook, WeCom's application message API and a Matrix homeserver's client-server API
as Flora uses them.

Slack: ``POST /chat.postMessage`` with ``Authorization: Bearer <bot token>``; HTTP 200 with
``ok: false`` and Slack's error names for refusals (``invalid_auth``, ``channel_not_found``,
``invalid_blocks`` when a section's text passes 3000 characters, an actions block holds more
than 25 elements, a button's text passes 75 characters or two share an action_id).
WhatsApp: ``POST /{phone_number_id}/messages`` with the access token; Graph API errors
(``{"error": {"code": ...}}``) for a text body over 4096 characters, an interactive body over
1024, more than 3 reply buttons or a title over 20 characters, more than 10 list rows or a
row title over 24. Both can be told to answer the next calls with scripted failures
(``fail_next``: a 429 with Retry-After, a 503), and record what they accepted.
"""

from __future__ import annotations

import threading
import time
import urllib.parse

from tests.support.chat_servers import _Recorder
from tests.tools.local_http import Reply, Request

SLACK_TOKEN = "xoxb-test-token"
WHATSAPP_TOKEN = "EAAG-test-token"
PHONE_ID = "106540352242922"


class SlackAPI(_Recorder):
    def answer(self, request: Request) -> Reply:
        if request.method != "POST" or request.path != "/chat.postMessage":
            return Reply.json({"ok": False, "error": "unknown_method"}, 404)
        if request.headers.get("authorization") != f"Bearer {SLACK_TOKEN}":
            return Reply.json({"ok": False, "error": "invalid_auth"})
        body = request.json()
        if not str(body.get("channel", "")).startswith(("C", "D", "G")):
            return Reply.json({"ok": False, "error": "channel_not_found"})
        if not body.get("text") and not body.get("blocks"):
            return Reply.json({"ok": False, "error": "no_text"})
        if not _valid_blocks(body.get("blocks", [])):
            return Reply.json({"ok": False, "error": "invalid_blocks"})
        self.record({"chat_id": body["channel"], **body})
        return Reply.json({"ok": True, "channel": body["channel"], "ts": f"1700000000.{len(self.sent):06d}"})


def _valid_blocks(blocks: list) -> bool:
    if len(blocks) > 50:
        return False
    for block in blocks:
        if block.get("type") == "section" and len(block["text"]["text"]) > 3000:
            return False
        if block.get("type") == "actions":
            elements = block.get("elements", [])
            ids = [e.get("action_id") for e in elements]
            if not elements or len(elements) > 25 or len(set(ids)) != len(ids):
                return False
            if any(len(e["text"]["text"]) > 75 or len(e.get("value", "")) > 2000 for e in elements):
                return False
    return True


class DingTalkAPI(_Recorder):
    """A robot's session webhook: ``POST /robot/sendBySession?session=<conversation>``; errcode
    40035 for a markdown text over 5000 characters or an actionCard without buttons."""

    def answer(self, request: Request) -> Reply:
        session = request.query.get("session", [""])[0]
        if request.method != "POST" or request.path != "/robot/sendBySession" or not session:
            return Reply.json({"errcode": 300001, "errmsg": "session not found"})
        body = request.json()
        if body.get("msgtype") == "markdown":
            ok = 0 < len(body["markdown"]["text"]) <= 5000 and body["markdown"].get("title")
        elif body.get("msgtype") == "actionCard":
            card = body["actionCard"]
            ok = card.get("btns") and all(b["title"] and b["actionURL"] for b in card["btns"]) and card["title"]
        else:
            ok = False
        if not ok:
            return Reply.json({"errcode": 40035, "errmsg": "invalid message"})
        self.record({"chat_id": session, **body})
        return Reply.json({"errcode": 0, "errmsg": "ok"})


WECOM_CORP = {"corpid": "ww1234567890abcdef", "corpsecret": "wecom-app-secret"}
WECOM_AGENT = 1000002


class WeComAPI(_Recorder):
    """``GET /cgi-bin/gettoken`` (corp id and secret checked) and ``POST /cgi-bin/message/send``
    with the current token (42001 once ``expire_token`` was called; 40058 for a markdown over
    2048 bytes, a card without 1 to 6 buttons or a reused task_id)."""

    def __init__(self):
        super().__init__()
        self.tokens_issued = 0
        self._expired = False
        self._task_ids: set[str] = set()

    def expire_token(self) -> None:
        self._expired = True

    def answer(self, request: Request) -> Reply:
        if request.path == "/cgi-bin/gettoken":
            if {k: v[0] for k, v in request.query.items()} != WECOM_CORP:
                return Reply.json({"errcode": 40001, "errmsg": "invalid credential"})
            self.tokens_issued += 1
            self._expired = False
            return Reply.json({"errcode": 0, "errmsg": "ok", "access_token": f"wt-{self.tokens_issued}",
                               "expires_in": 7200})
        if request.method != "POST" or request.path != "/cgi-bin/message/send":
            return Reply.json({"errcode": 404, "errmsg": "not found"}, 404)
        if request.query.get("access_token") != [f"wt-{self.tokens_issued}"] or self._expired:
            return Reply.json({"errcode": 42001, "errmsg": "access_token expired"})
        body = request.json()
        if body.get("agentid") != WECOM_AGENT or not body.get("touser"):
            return Reply.json({"errcode": 40056, "errmsg": "invalid agentid"})
        if body["msgtype"] == "markdown":
            ok = 0 < len(body["markdown"]["content"].encode()) <= 2048
        elif body["msgtype"] == "template_card":
            card = body["template_card"]
            ok = (card["card_type"] == "button_interaction" and 1 <= len(card["button_list"]) <= 6
                  and card["task_id"] not in self._task_ids)
            self._task_ids.add(card["task_id"])
        else:
            ok = False
        if not ok:
            return Reply.json({"errcode": 40058, "errmsg": "invalid parameter"})
        self.record({"chat_id": body["touser"], **body})
        return Reply.json({"errcode": 0, "errmsg": "ok", "msgid": f"m{len(self.sent)}"})


class WhatsAppAPI(_Recorder):
    def answer(self, request: Request) -> Reply:
        if request.method != "POST" or request.path != f"/{PHONE_ID}/messages":
            return _graph_error(100, "Unsupported post request", 400)
        if request.headers.get("authorization") != f"Bearer {WHATSAPP_TOKEN}":
            return _graph_error(190, "Invalid OAuth access token", 401)
        body = request.json()
        if body.get("messaging_product") != "whatsapp" or not body.get("to"):
            return _graph_error(100, "Invalid parameter", 400)
        problem = _whatsapp_problem(body)
        if problem:
            return _graph_error(131009, problem, 400)
        self.record({"chat_id": body["to"], **body})
        return Reply.json({"messaging_product": "whatsapp", "contacts": [{"input": body["to"], "wa_id": body["to"]}],
                           "messages": [{"id": f"wamid.out{len(self.sent)}"}]})


def _whatsapp_problem(body: dict) -> str:
    if body.get("type") == "text":
        return "" if 0 < len(body["text"]["body"]) <= 4096 else "text.body: 1 to 4096 characters"
    if body.get("type") != "interactive":
        return "type: text or interactive"
    interactive = body["interactive"]
    if not 0 < len(interactive["body"]["text"]) <= 1024:
        return "interactive.body.text: 1 to 1024 characters"
    if interactive["type"] == "button":
        buttons = interactive["action"]["buttons"]
        if not 0 < len(buttons) <= 3 or any(len(b["reply"]["title"]) > 20 for b in buttons):
            return "buttons: 1 to 3, titles of at most 20 characters"
        return ""
    rows = [r for s in interactive["action"]["sections"] for r in s["rows"]]
    if len(interactive["action"]["button"]) > 20 or not 0 < len(rows) <= 10:
        return "list: a button of at most 20 characters and 1 to 10 rows"
    if any(len(r["title"]) > 24 or len(r.get("description", "")) > 72 for r in rows):
        return "rows: titles of at most 24 characters, descriptions of at most 72"
    return ""


def _graph_error(code: int, message: str, status: int) -> Reply:
    return Reply.json({"error": {"message": message, "type": "OAuthException", "code": code}}, status)


MATRIX_TOKEN = "syt_flora_token"
MATRIX_USER = "@flora:hs.test"


class MatrixHomeserver(_Recorder):
    """``GET /_matrix/client/v3/sync`` (``since`` is the count of events already given; waits up
    to ``timeout`` ms for new ones), ``POST /rooms/{id}/join``, ``PUT
    /rooms/{id}/send/m.room.message/{txnId}`` (one event per transaction id: a repeated PUT
    returns the same event and records nothing). ``say`` puts a person's message in a room,
    ``invite`` an invitation; Flora's sends appear in the timeline too, as a real server's would."""

    def __init__(self):
        super().__init__()
        self.timeline: list[tuple[str, dict]] = []  # (room, event)
        self.invites: list[str] = []
        self.joined: list[str] = []
        self._txns: dict[str, str] = {}
        self._news = threading.Condition()

    def say(self, room: str, sender: str, body: str, *, event_id: str, ts_ms: float | None = None,
            kind: str = "m.room.message", msgtype: str = "m.text") -> None:
        event = {"type": kind, "event_id": event_id, "sender": sender,
                 "origin_server_ts": int(time.time() * 1000 if ts_ms is None else ts_ms),
                 "content": {"msgtype": msgtype, "body": body}}
        with self._news:
            self.timeline.append((room, event))
            self._news.notify_all()

    def invite(self, room: str) -> None:
        with self._news:
            self.invites.append(room)
            self._news.notify_all()

    def answer(self, request: Request) -> Reply:
        if request.headers.get("authorization") != f"Bearer {MATRIX_TOKEN}":
            return Reply.json({"errcode": "M_UNKNOWN_TOKEN", "error": "Unknown access token"}, 401)
        parts = request.path.removeprefix("/_matrix/client/v3/").split("/")
        if request.method == "GET" and parts == ["sync"]:
            return self._sync(request)
        if request.method == "POST" and len(parts) == 3 and parts[0] == "rooms" and parts[2] == "join":
            room = urllib.parse.unquote(parts[1])
            self.joined.append(room)
            with self._news:
                self.invites = [r for r in self.invites if r != room]
            return Reply.json({"room_id": room})
        if request.method == "PUT" and len(parts) == 5 and parts[0] == "rooms" and parts[2:4] == ["send",
                                                                                                  "m.room.message"]:
            room, txn = urllib.parse.unquote(parts[1]), urllib.parse.unquote(parts[4])
            if txn in self._txns:
                return Reply.json({"event_id": self._txns[txn]})
            content = request.json()
            if not content.get("body") or len(request.body) > 65536:
                return Reply.json({"errcode": "M_TOO_LARGE", "error": "event too large"}, 413)
            event_id = f"$flora{len(self._txns)}"
            self._txns[txn] = event_id
            self.record({"chat_id": room, "txn_id": txn, **content})
            self.say(room, MATRIX_USER, content["body"], event_id=event_id)
            return Reply.json({"event_id": event_id})
        return Reply.json({"errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"}, 404)

    def _sync(self, request: Request) -> Reply:
        since = int(request.query.get("since", ["0"])[0])
        deadline = time.monotonic() + int(request.query.get("timeout", ["0"])[0]) / 1000
        with self._news:
            while len(self.timeline) <= since and not self.invites and time.monotonic() < deadline:
                self._news.wait(min(0.05, max(0.0, deadline - time.monotonic())))
            events, invites = self.timeline[since:], list(self.invites)
        rooms: dict = {"join": {}, "invite": {room: {"invite_state": {"events": []}} for room in invites}}
        for room, event in events:
            rooms["join"].setdefault(room, {"timeline": {"events": []}})["timeline"]["events"].append(event)
        return Reply.json({"next_batch": str(since + len(events)), "rooms": rooms})
