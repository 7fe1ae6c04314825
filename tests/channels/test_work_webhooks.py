"""Slack, WhatsApp, DingTalk and WeCom end to end: a running Flora, its HTTP API's one webhook route, and local
servers for the services; Matrix through its /sync poller in the same Flora. A signed message is answered; a forged or replayed one is refused
before anything is recorded; a WhatsApp GET handshake is answered as plain text; an approval
question carries buttons and pressing Yes runs the task."""

from __future__ import annotations

import json
import os
import time
import urllib.parse

import pytest

import main
from common.tasks.sqlite_store import SQLiteTaskStore
from tests.support.http_api import http_api
from tests.channels.test_slack import SIGNING_SECRET, event, signed as slack_signed
from tests.channels.test_whatsapp import APP_SECRET, VERIFY, change, signed as wa_signed, text
from tests.channels.test_dingtalk import SECRET as DT_SECRET, callback as dt_callback, signed as dt_signed
from tests.channels.test_wecom import ENV as WC_ENV, WECOM, event_call, query_for, seal, text_message
from tests.support.work_chat_servers import (
    MATRIX_TOKEN, MATRIX_USER, PHONE_ID, SLACK_TOKEN, WHATSAPP_TOKEN, DingTalkAPI, MatrixHomeserver, SlackAPI,
    WeComAPI, WhatsAppAPI,
)

ENV = {"FLORA_TEST_SL_TOKEN": SLACK_TOKEN, "FLORA_TEST_SL_SECRET": SIGNING_SECRET,
       "FLORA_TEST_WA_TOKEN": WHATSAPP_TOKEN, "FLORA_TEST_WA_SECRET": APP_SECRET, "FLORA_TEST_WA_VERIFY": VERIFY,
       "FLORA_TEST_DT_SECRET": DT_SECRET, **{f"FLORA_TEST_{k}": v for k, v in WC_ENV.items()},
       "FLORA_TEST_MX_TOKEN": MATRIX_TOKEN}
ALICE_SLACK, ALICE_WA = "U2147483697", "4915112345678"


@pytest.fixture(scope="module")
def services():
    with SlackAPI() as slack, WhatsAppAPI() as whatsapp, DingTalkAPI() as dingtalk, WeComAPI() as wecom, \
            MatrixHomeserver() as matrix:
        yield {"slack": slack, "whatsapp": whatsapp, "dingtalk": dingtalk, "wecom": wecom, "matrix": matrix}


@pytest.fixture(scope="module")
def flora(services, tmp_path_factory):
    os.environ.update(ENV)
    config = {
        "data_dir": str(tmp_path_factory.mktemp("flora-work-webhooks")),
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 30, "execution_pool_size": 2},
        "memory": {"enabled": False},
        "capabilities": {"plugin_modules": ["tests.support.sample_plugins"]},
        "channels": {
            "sl": {"type": "slack", "api_base": services["slack"].url, "bot_token_env": "FLORA_TEST_SL_TOKEN",
                   "signing_secret_env": "FLORA_TEST_SL_SECRET", "users": {ALICE_SLACK: "alice"}},
            "wa": {"type": "whatsapp", "api_base": services["whatsapp"].url, "phone_number_id": PHONE_ID,
                   "access_token_env": "FLORA_TEST_WA_TOKEN", "app_secret_env": "FLORA_TEST_WA_SECRET",
                   "verify_token_env": "FLORA_TEST_WA_VERIFY", "users": {ALICE_WA: "alice"}},
            "dt": {"type": "dingtalk", "api_base": services["dingtalk"].url, "app_secret_env": "FLORA_TEST_DT_SECRET",
                   "users": {"manager42": "alice"}},
            "wc": {**WECOM, "api_base": services["wecom"].url, "allow": [], "users": {"zhangsan": "alice"},
                   **{key: f"FLORA_TEST_{WECOM[key]}" for key in ("corp_secret_env", "token_env",
                                                                  "encoding_aes_key_env")}},
            "mx": {"type": "matrix", "api_base": services["matrix"].url, "user_id": MATRIX_USER,
                   "access_token_env": "FLORA_TEST_MX_TOKEN", "sync_timeout_s": 1, "users": {"@alice:hs.test": "alice"}},
        },
    }
    running = main.start_flora(config)
    yield running
    running.shutdown()
    for name in ENV:
        os.environ.pop(name, None)


@pytest.fixture(scope="module")
def api(flora):
    with http_api(flora) as client:
        yield client


@pytest.fixture
def store(flora):
    opened = SQLiteTaskStore(flora.config.sqlite_path)
    yield opened
    opened.close()


def slack_post(api, body: str, *, form: bool = False, at: float | None = None, secret: str = SIGNING_SECRET):
    raw, headers = slack_signed(body, at=time.time() if at is None else at, form=form, secret=secret)
    return api.post("/v1/channels/sl/webhook", content=raw.encode(), headers=headers)


def test_a_signed_slack_message_is_answered_in_its_channel(api, services):
    response = slack_post(api, event("tell me a joke on slack", channel="D100", ts="1700000001.000100", user=ALICE_SLACK))
    assert response.status_code == 200 and response.json() == {}
    [sent] = services["slack"].wait_sent(1, chat_id="D100")
    assert "you said" in sent["text"] and "joke on slack" in sent["text"]


def test_a_forged_or_replayed_slack_call_is_refused_and_nothing_recorded(api, store):
    forged = slack_post(api, event("delete everything", channel="D101", ts="1700000002.000100"), secret="guess")
    replayed = slack_post(api, event("delete everything", channel="D101", ts="1700000003.000100"),
                          at=time.time() - 600)
    assert (forged.status_code, replayed.status_code) == (401, 401)
    assert store.get_channel_message("default", "sl", "D101:1700000002.000100") is None
    assert store.get_channel_message("default", "sl", "D101:1700000003.000100") is None


def test_slack_url_verification_through_the_route(api):
    handshake = json.dumps({"type": "url_verification", "challenge": "c-123", "token": "x"})
    assert slack_post(api, handshake).json() == {"challenge": "c-123"}


def test_a_slack_approval_has_block_kit_buttons_and_pressing_yes_runs_the_task(api, services):
    slack_post(api, event("delete file path=s.txt", channel="C200", ts="1700000004.000100", user=ALICE_SLACK))
    question = services["slack"].wait_sent(1, chat_id="C200")[0]
    buttons = question["blocks"][-1]["elements"]
    assert [b["text"]["text"] for b in buttons] == ["✅ Yes", "❌ No"]
    payload = {"type": "block_actions", "trigger_id": "trig.1", "user": {"id": ALICE_SLACK},
               "channel": {"id": "C200"}, "actions": [{"action_id": buttons[0]["action_id"],
                                                      "value": buttons[0]["value"], "type": "button"}]}
    pressed = slack_post(api, urllib.parse.urlencode({"payload": json.dumps(payload)}), form=True)
    assert pressed.status_code == 200
    done = services["slack"].wait_sent(2, chat_id="C200")[1]
    assert "deleted" in done["text"] and "s.txt" in done["text"]


def test_the_whatsapp_handshake_is_answered_as_plain_text_only_with_the_right_token(api):
    query = {"hub.mode": "subscribe", "hub.verify_token": VERIFY, "hub.challenge": "1158201444"}
    answered = api.get("/v1/channels/wa/webhook", params=query)
    assert answered.status_code == 200 and answered.text == "1158201444"
    assert answered.headers["content-type"].startswith("text/plain")
    assert api.get("/v1/channels/wa/webhook", params={**query, "hub.verify_token": "no"}).status_code == 401


def test_a_signed_whatsapp_message_is_answered_and_an_unsigned_one_refused(api, services, store):
    raw, headers = wa_signed(change(text("hello from whatsapp", wamid="wamid.e2e1", sender=ALICE_WA)))
    assert api.post("/v1/channels/wa/webhook", content=raw.encode(), headers=headers).status_code == 200
    [sent] = services["whatsapp"].wait_sent(1, chat_id=ALICE_WA)
    assert sent["type"] == "text" and "hello from whatsapp" in sent["text"]["body"]
    raw, _ = wa_signed(change(text("unsigned", wamid="wamid.e2e2", sender=ALICE_WA)))
    assert api.post("/v1/channels/wa/webhook", content=raw.encode(),
                    headers={"content-type": "application/json"}).status_code == 401
    assert store.get_channel_message("default", "wa", "wamid.e2e2") is None


def test_a_whatsapp_approval_has_reply_buttons_and_pressing_yes_runs_the_task(api, services):
    raw, headers = wa_signed(change(text("delete file path=w.txt", wamid="wamid.e2e3", sender="4917000000001")))
    api.post("/v1/channels/wa/webhook", content=raw.encode(), headers=headers)
    raw, headers = wa_signed(change(text("delete file path=w.txt", wamid="wamid.e2e4", sender=ALICE_WA)))
    api.post("/v1/channels/wa/webhook", content=raw.encode(), headers=headers)
    question = services["whatsapp"].wait_sent(2, chat_id=ALICE_WA)[1]
    buttons = question["interactive"]["action"]["buttons"]
    assert [b["reply"]["title"] for b in buttons] == ["✅ Yes", "❌ No"]
    press = {"from": ALICE_WA, "id": "wamid.e2e5", "type": "interactive",
             "interactive": {"type": "button_reply", "button_reply": buttons[0]["reply"]}}
    raw, headers = wa_signed(change(press))
    assert api.post("/v1/channels/wa/webhook", content=raw.encode(), headers=headers).status_code == 200
    done = services["whatsapp"].wait_sent(3, chat_id=ALICE_WA)[2]
    assert "deleted" in done["text"]["body"] and "w.txt" in done["text"]["body"]
    assert services["whatsapp"].wait_sent(0, chat_id="4917000000001") == []  # the stranger got nothing


def test_a_signed_dingtalk_message_is_answered_through_its_session_webhook(api, services, store):
    base = services["dingtalk"].url
    raw, headers = dt_signed(dt_callback("hello from dingtalk", base=base, msg_id="msgE1", chat="cidE2E",
                                         expires_in_s=5400 + time.time() - 1_700_000_000), at=time.time())
    assert api.post("/v1/channels/dt/webhook", content=raw.encode(), headers=headers).status_code == 200
    [sent] = services["dingtalk"].wait_sent(1, chat_id="cidE2E")
    assert sent["msgtype"] == "markdown" and "hello from dingtalk" in sent["markdown"]["text"]
    raw, headers = dt_signed(dt_callback("forged", base=base, msg_id="msgE3", chat="cidE2E"), secret="guess",
                             at=time.time())
    assert api.post("/v1/channels/dt/webhook", content=raw.encode(), headers=headers).status_code == 401
    assert store.get_channel_message("default", "dt", "msgE3") is None


def test_wecom_s_echostr_handshake_and_a_sealed_message_through_the_route(api, services, store):
    echostr = seal("echo-4242")
    answered = api.get("/v1/channels/wc/webhook", params={**query_for(echostr), "echostr": echostr})
    assert answered.status_code == 200 and answered.text == "echo-4242"
    body, headers, query = event_call(text_message("你好 from wecom", msg_id="7240000000000099"))
    accepted = api.post("/v1/channels/wc/webhook", content=body.encode(), headers=headers, params=query)
    assert accepted.status_code == 200 and accepted.text == ""
    [sent] = services["wecom"].wait_sent(1, chat_id="zhangsan")
    assert sent["msgtype"] == "markdown" and "你好 from wecom" in sent["markdown"]["content"]
    forged = api.post("/v1/channels/wc/webhook", content=body.replace("<Encrypt><![CDATA[", "<Encrypt><![CDATA[A")
                      .encode(), headers=headers, params=query)
    assert forged.status_code == 401


def test_a_matrix_message_is_answered_and_a_numbered_choice_approves(flora, services):
    hs = services["matrix"]
    hs.say("!room1:hs.test", "@alice:hs.test", "hello from matrix", event_id="$m1")
    [answer] = hs.wait_sent(1, chat_id="!room1:hs.test")
    assert "hello from matrix" in answer["body"]
    hs.say("!room2:hs.test", "@alice:hs.test", "delete file path=m.txt", event_id="$m2")
    question = hs.wait_sent(1, chat_id="!room2:hs.test")[0]
    assert question["body"].endswith("1. ✅ Yes\n2. ❌ No\n(reply with the number)")
    hs.say("!room2:hs.test", "@alice:hs.test", "1", event_id="$m3")
    done = hs.wait_sent(2, chat_id="!room2:hs.test")[1]
    assert "deleted" in done["body"] and "m.txt" in done["body"]
    hs.say("!room1:hs.test", "@mallory:hs.test", "hello", event_id="$m4")
    hs.say("!room1:hs.test", "@alice:hs.test", "still there?", event_id="$m5")
    assert ["still there" in s["body"] for s in hs.wait_sent(2, chat_id="!room1:hs.test")] == [False, True]
