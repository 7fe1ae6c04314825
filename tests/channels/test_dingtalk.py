"""DingTalk: the robot callback's sign (HMAC-SHA256 over timestamp and secret, one-hour
window), messages answered through their session webhook (on DingTalk's host only), ActionCard
buttons whose press comes back as its action, and retries against a local session webhook."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import urllib.parse

import pytest

from capabilities.channels.adapters import build_adapter
from capabilities.channels.dingtalk import DingTalkAdapter
from capabilities.channels.dingtalk.adapter import DINGTALK_LIMIT, SEND_MESSAGE_LINK
from capabilities.channels.delivery import Deliverer
from capabilities.channels.model import Button, MalformedUpdate, Outbound, Unauthorized, approve_data
from config import load_config
from tests.support.work_chat_servers import DingTalkAPI
from tests.tools.local_http import Reply

SECRET = "dingtalk-app-secret"
NOW = 1_700_000_000.0
DINGTALK = {"type": "dingtalk", "app_secret_env": "DT_SECRET", "allow": ["*"]}


def signed(payload: dict, *, secret: str = SECRET, at: float = NOW) -> tuple[str, dict]:
    timestamp = str(int(at * 1000))
    sign = base64.b64encode(hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256).digest())
    return json.dumps(payload), {"timestamp": timestamp, "sign": sign.decode(), "content-type": "application/json"}


def callback(content: str, *, base: str, msg_id: str = "msgA1", chat: str = "cidGROUP1", staff: str = "manager42",
             expires_in_s: float = 5400) -> dict:
    return {"msgtype": "text", "text": {"content": f" {content}"}, "msgId": msg_id, "createAt": int(NOW * 1000),
            "conversationType": "2", "conversationId": chat, "senderId": "$:LWCP_v1:$abc", "senderNick": "Alice",
            "senderStaffId": staff, "chatbotUserId": "$:LWCP_v1:$bot", "isAdmin": False,
            "sessionWebhook": f"{base}/robot/sendBySession?session={chat}",
            "sessionWebhookExpiredTime": int((NOW + expires_in_s) * 1000)}


@pytest.fixture
def adapter():
    made = DingTalkAdapter(base_url="http://127.0.0.1:9", app_secret=SECRET, clock=lambda: NOW)
    yield made
    made.close()


def test_a_signed_callback_is_a_message_that_remembers_its_session(adapter):
    status, body, [inbound] = adapter.webhook(*signed(callback("hello flora", base="http://127.0.0.1:9")))
    assert (status, body) == (200, {})
    assert (inbound.key, inbound.chat_id, inbound.sender_id, inbound.text) == (
        "msgA1", "cidGROUP1", "manager42", "hello flora")
    assert inbound.thread["session_webhook"] == "http://127.0.0.1:9/robot/sendBySession?session=cidGROUP1"


@pytest.mark.parametrize("how", ["secret", "stale", "missing"])
def test_a_callback_whose_sign_does_not_check_out_is_refused(adapter, how):
    body, headers = signed(callback("hi", base="http://127.0.0.1:9"), secret="guess" if how == "secret" else SECRET,
                           at=NOW - 3601 if how == "stale" else NOW)
    if how == "missing":
        del headers["sign"]
    with pytest.raises(Unauthorized):
        adapter.webhook(body, headers)


def test_a_session_webhook_off_dingtalk_s_host_is_refused(adapter):
    with pytest.raises(MalformedUpdate, match="not on"):
        adapter.webhook(*signed(callback("hi", base="http://attacker.test")))


def test_pictures_are_not_answered_and_a_body_that_is_no_callback_is_malformed(adapter):
    picture = {**callback("x", base="http://127.0.0.1:9"), "msgtype": "picture"}
    assert adapter.webhook(*signed(picture))[2] == []
    with pytest.raises(MalformedUpdate):
        adapter.webhook(*signed({"hello": "world"}))


def test_buttons_are_an_action_card_whose_press_comes_back_as_the_action(adapter):
    [inbound] = adapter.webhook(*signed(callback("delete notes", base="http://127.0.0.1:9")))[2]
    out = Outbound(chat_id=inbound.chat_id, text="## Delete notes.txt?", thread=inbound.thread,
                   buttons=[[Button("✅ Yes", approve_data("task_1", True)), Button("❌ No", approve_data("task_1", False))]])
    [card] = adapter.render(out)
    assert card["msgtype"] == "actionCard" and card["actionCard"]["title"] == "Delete notes.txt?"
    yes = card["actionCard"]["btns"][0]["actionURL"]
    assert yes.startswith(SEND_MESSAGE_LINK)
    pressed = urllib.parse.unquote(yes.removeprefix(SEND_MESSAGE_LINK))
    [press] = adapter.webhook(*signed(callback(pressed, base="http://127.0.0.1:9", msg_id="msgA2")))[2]
    assert press.action == {"approve": True, "task_id": "task_1"} and press.text == ""


def test_a_long_answer_is_split_within_the_markdown_limit(adapter):
    [inbound] = adapter.webhook(*signed(callback("report", base="http://127.0.0.1:9")))[2]
    bodies = adapter.render(Outbound(chat_id=inbound.chat_id, text="\n\n".join(["word " * 300] * 10),
                                     thread=inbound.thread))
    assert len(bodies) > 1 and all(len(b["markdown"]["text"]) <= DINGTALK_LIMIT for b in bodies)


def deliverer(adapter, store, sleeps):
    return Deliverer(adapter, store, tenant_id="acme", channel="dt",
                     retry=load_config({"channels": {"dt": DINGTALK}}, env={}).channels["dt"].retry,
                     sleep=sleeps.append)


def test_sending_too_fast_and_server_errors_are_retried_then_the_answer_arrives(store):
    sleeps: list[float] = []
    with DingTalkAPI() as api:
        config = load_config({"channels": {"dt": {**DINGTALK, "api_base": api.url}}}, env={})
        adapter = build_adapter("dt", config.channels["dt"], env={"DT_SECRET": SECRET})
        adapter._clock = lambda: NOW
        [inbound] = adapter.webhook(*signed(callback("hi", base=api.url)))[2]
        api.fail_next(Reply.json({"errcode": 130101, "errmsg": "send too fast"}), Reply.text("oops", 500))
        assert deliverer(adapter, store, sleeps).deliver(Outbound(chat_id=inbound.chat_id, text="**hello**",
                                                                  thread=inbound.thread, ref="r1"))
        assert sleeps == [1.0, 1.0] and api.sent[0]["markdown"]["text"] == "**hello**"


def test_a_notification_uses_the_conversation_s_latest_session_and_fails_once_it_expired(store):
    sleeps: list[float] = []
    with DingTalkAPI() as api:
        adapter = DingTalkAdapter(base_url=api.url, app_secret=SECRET, clock=lambda: NOW)
        adapter.webhook(*signed(callback("hi", base=api.url, expires_in_s=60)))
        assert deliverer(adapter, store, sleeps).deliver(Outbound(chat_id="cidGROUP1", text="reminder", ref="n1"))
        adapter._clock = lambda: NOW + 61
        assert not deliverer(adapter, store, sleeps).deliver(Outbound(chat_id="cidGROUP1", text="later", ref="n2"))
        assert not deliverer(adapter, store, sleeps).deliver(Outbound(chat_id="cidOTHER", text="never", ref="n3"))
        assert len(api.sent) == 1 and sleeps == []
    failed = [d for d in store.channel_deliveries("acme", "dt") if d.state == "failed"]
    assert len(failed) == 2 and all("session webhook" in d.error for d in failed)
