"""Webhook channels end to end: a running Flora behind its HTTP API (uvicorn on a real port)
takes Telegram webhook updates (secret header checked), Discord interactions (Ed25519
signatures checked) and Feishu events (challenge, verification token, encrypted bodies,
signature), answers through local servers speaking each service's endpoints, and answers a
redelivered call once."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import time

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives import padding, serialization

import main
from common.tasks.sqlite_store import SQLiteTaskStore
from tests.support.http_api import http_api
from tests.support.chat_servers import DISCORD_TOKEN, FEISHU_APP, DiscordAPI, FeishuAPI
from tests.support.telegram_server import TOKEN, BotAPI

SECRET = "tg-webhook-secret"
VERIFICATION, ENCRYPT_KEY = "feishu-verify", "feishu-encrypt-key"
SIGNING_KEY = Ed25519PrivateKey.generate()
PUBLIC_HEX = SIGNING_KEY.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()
ENV = {"FLORA_TEST_TG_TOKEN": TOKEN, "FLORA_TEST_TG_SECRET": SECRET, "FLORA_TEST_DC_TOKEN": DISCORD_TOKEN,
       "FLORA_TEST_DC_KEY": PUBLIC_HEX, "FLORA_TEST_FS_ID": FEISHU_APP["app_id"],
       "FLORA_TEST_FS_SECRET": FEISHU_APP["app_secret"], "FLORA_TEST_FS_VERIFY": VERIFICATION,
       "FLORA_TEST_FS_ENCRYPT": ENCRYPT_KEY}


@pytest.fixture(scope="module")
def services():
    with BotAPI() as tg, DiscordAPI() as dc, FeishuAPI() as fs:
        yield {"tg": tg, "dc": dc, "fs": fs}


@pytest.fixture(scope="module")
def flora(services, tmp_path_factory):
    os.environ.update(ENV)
    config = {
        "data_dir": str(tmp_path_factory.mktemp("flora-webhooks")),
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 30, "execution_pool_size": 2},
        "memory": {"enabled": False},
        "capabilities": {"plugin_modules": ["tests.support.sample_plugins"]},
        "channels": {
            "tg": {"type": "telegram", "mode": "webhook", "api_base": services["tg"].url,
                   "token_env": "FLORA_TEST_TG_TOKEN", "webhook_secret_env": "FLORA_TEST_TG_SECRET",
                   "users": {"7": "alice"}},
            "dc": {"type": "discord", "api_base": services["dc"].url, "token_env": "FLORA_TEST_DC_TOKEN",
                   "public_key_env": "FLORA_TEST_DC_KEY", "users": {"501": "alice"}},
            "fs": {"type": "feishu", "api_base": services["fs"].url, "app_id_env": "FLORA_TEST_FS_ID",
                   "app_secret_env": "FLORA_TEST_FS_SECRET", "verification_token_env": "FLORA_TEST_FS_VERIFY",
                   "encrypt_key_env": "FLORA_TEST_FS_ENCRYPT", "allow": ["*"]},
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


def plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


# -- Telegram -----------------------------------------------------------------------------
def tg_update(update_id: int, text: str, chat: int = 42, user: int = 7) -> dict:
    return {"update_id": update_id, "message": {"message_id": update_id, "date": 0, "text": text,
                                                "chat": {"id": chat, "type": "private"}, "from": {"id": user}}}


def test_a_telegram_webhook_without_the_secret_is_refused_and_nothing_recorded(api, store):
    response = api.post("/v1/channels/tg/webhook", json=tg_update(9001, "hi"),
                        headers={"X-Telegram-Bot-Api-Secret-Token": "wrong"})
    assert response.status_code == 401
    assert store.get_channel_message("default", "tg", "9001") is None


def test_a_telegram_webhook_update_is_answered_and_its_redelivery_is_not(api, services, store):
    update = tg_update(9002, "tell me a joke by webhook", chat=4242)
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    first = api.post("/v1/channels/tg/webhook", json=update, headers=headers)
    assert first.status_code == 200
    assert store.get_channel_message("default", "tg", "9002") is not None  # recorded before the 200
    services["tg"].wait_sent(1, chat_id=4242)
    assert api.post("/v1/channels/tg/webhook", json=update, headers=headers).status_code == 200  # Telegram retried
    api.post("/v1/channels/tg/webhook", json=tg_update(9003, "and then this", chat=4242), headers=headers)
    sent = services["tg"].wait_sent(2, chat_id=4242)
    assert ["by webhook" in plain(s["text"]) for s in sent] == [True, False]


def test_a_malformed_webhook_body_gets_400_and_the_channel_keeps_serving(api, services):
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    assert api.post("/v1/channels/tg/webhook", content=b"{not json", headers=headers).status_code == 400
    assert api.post("/v1/channels/tg/webhook", json={"message": "no update id"}, headers=headers).status_code == 400
    assert api.post("/v1/channels/tg/webhook", json=tg_update(9010, "ok now", chat=4343), headers=headers).status_code == 200
    assert "ok now" in plain(services["tg"].wait_sent(1, chat_id=4343)[0]["text"])


def test_an_unknown_channel_is_404(api):
    assert api.post("/v1/channels/nope/webhook", json={}).status_code == 404


# -- Discord ------------------------------------------------------------------------------
def signed(body: dict, key: Ed25519PrivateKey = SIGNING_KEY, age_s: int = 0) -> dict:
    raw = json.dumps(body)
    timestamp = str(int(time.time()) - age_s)
    return {"content": raw.encode(), "headers": {"Content-Type": "application/json",
                                                 "X-Signature-Timestamp": timestamp,
                                                 "X-Signature-Ed25519": key.sign((timestamp + raw).encode()).hex()}}


def dc_command(interaction_id: str, text: str, channel: str = "900", user: str = "501") -> dict:
    return {"id": interaction_id, "type": 2, "channel_id": channel, "token": "tok",
            "member": {"user": {"id": user, "username": "alice"}},
            "data": {"name": "flora", "options": [{"name": "text", "type": 3, "value": text}]}}


def test_discord_ping_is_answered_with_pong_and_a_bad_signature_with_401(api):
    assert api.post("/v1/channels/dc/webhook", **signed({"id": "1", "type": 1})).json() == {"type": 1}
    forged = signed({"id": "1", "type": 1}, key=Ed25519PrivateKey.generate())
    assert api.post("/v1/channels/dc/webhook", **forged).status_code == 401


def test_a_discord_interaction_signed_over_five_minutes_ago_is_refused(api, store):
    old = signed(dc_command("9001", "replayed: delete everything"), age_s=6 * 60)
    assert api.post("/v1/channels/dc/webhook", **old).status_code == 401
    assert store.get_channel_message("default", "dc", "9001") is None  # not recorded
    assert api.post("/v1/channels/dc/webhook", **signed({"id": "2", "type": 1}, age_s=60)).json() == {"type": 1}


def test_a_discord_command_is_acknowledged_then_answered_in_its_channel(api, services):
    response = api.post("/v1/channels/dc/webhook", **signed(dc_command("7001", "tell me a joke on discord")))
    assert response.json() == {"type": 4, "data": {"content": "> tell me a joke on discord"}}
    sent = services["dc"].wait_sent(1, chat_id="900")
    assert "you said" in sent[0]["content"] and "components" not in sent[0]


def test_a_discord_approval_has_buttons_and_pressing_yes_runs_the_task(api, services):
    api.post("/v1/channels/dc/webhook", **signed(dc_command("7002", "delete file path=d.txt", channel="901")))
    question = services["dc"].wait_sent(1, chat_id="901")[0]
    buttons = question["components"][0]["components"]
    assert [b["label"] for b in buttons] == ["✅ Yes", "❌ No"]
    press = {"id": "7003", "type": 3, "channel_id": "901", "token": "tok", "member": {"user": {"id": "501"}},
             "data": {"custom_id": buttons[0]["custom_id"], "component_type": 2}}
    assert api.post("/v1/channels/dc/webhook", **signed(press)).json() == {"type": 6}
    done = services["dc"].wait_sent(2, chat_id="901")[1]
    assert '"deleted": "d.txt"' in done["content"]


def test_a_discord_stranger_gets_an_acknowledgement_but_no_answer(api, services, store):
    api.post("/v1/channels/dc/webhook", **signed(dc_command("7004", "hello", channel="902", user="999")))
    api.post("/v1/channels/dc/webhook", **signed(dc_command("7005", "hello from alice", channel="902")))
    sent = services["dc"].wait_sent(1, chat_id="902")
    assert len(sent) == 1 and "hello from alice" in sent[0]["content"]
    assert store.get_channel_message("default", "dc", "7004").state == "refused"


# -- Feishu -------------------------------------------------------------------------------
def encrypted(payload: dict) -> tuple[bytes, dict]:
    """A body as Feishu sends it with an encrypt key, and its signature headers."""
    padder = padding.PKCS7(128).padder()
    data = padder.update(json.dumps(payload).encode()) + padder.finalize()
    iv = os.urandom(16)
    encryptor = Cipher(algorithms.AES(hashlib.sha256(ENCRYPT_KEY.encode()).digest()), modes.CBC(iv)).encryptor()
    body = json.dumps({"encrypt": base64.b64encode(iv + encryptor.update(data) + encryptor.finalize()).decode()})
    timestamp, nonce = str(int(time.time())), "n0nce"
    signature = hashlib.sha256((timestamp + nonce + ENCRYPT_KEY + body).encode()).hexdigest()
    return body.encode(), {"Content-Type": "application/json", "X-Lark-Request-Timestamp": timestamp,
                           "X-Lark-Request-Nonce": nonce, "X-Lark-Signature": signature}


def fs_message(message_id: str, text: str, chat: str = "oc_1", sender: str = "ou_alice") -> dict:
    return {"schema": "2.0", "header": {"event_id": f"ev_{message_id}", "event_type": "im.message.receive_v1",
                                        "token": VERIFICATION, "app_id": FEISHU_APP["app_id"]},
            "event": {"sender": {"sender_id": {"open_id": sender}},
                      "message": {"message_id": message_id, "chat_id": chat, "message_type": "text",
                                  "content": json.dumps({"text": text})}}}


def test_feishu_url_verification_returns_the_challenge(api):
    body, _ = encrypted({"challenge": "c-123", "token": VERIFICATION, "type": "url_verification"})
    response = api.post("/v1/channels/fs/webhook", content=body, headers={"Content-Type": "application/json"})
    assert response.json() == {"challenge": "c-123"}  # Feishu does not sign the URL check
    body, _ = encrypted({"challenge": "c-123", "token": "wrong", "type": "url_verification"})
    assert api.post("/v1/channels/fs/webhook", content=body).status_code == 401


def test_feishu_events_with_a_wrong_token_or_signature_are_refused(api):
    body, headers = encrypted({**fs_message("om_x", "hi"), "header": {**fs_message("om_x", "hi")["header"],
                                                                      "token": "wrong"}})
    assert api.post("/v1/channels/fs/webhook", content=body, headers=headers).status_code == 401
    body, headers = encrypted(fs_message("om_y", "hi"))
    assert api.post("/v1/channels/fs/webhook", content=body,
                    headers={**headers, "X-Lark-Signature": "0" * 64}).status_code == 401
    unsigned = {k: v for k, v in headers.items() if k != "X-Lark-Signature"}
    assert api.post("/v1/channels/fs/webhook", content=body, headers=unsigned).status_code == 401
    plain_event = json.dumps(fs_message("om_z", "hi")).encode()  # not encrypted although a key is set
    assert api.post("/v1/channels/fs/webhook", content=plain_event,
                    headers={"Content-Type": "application/json"}).status_code == 401


def test_a_feishu_message_is_answered_as_rich_text_with_one_token(api, services):
    for n, chat in enumerate(("oc_10", "oc_11")):
        body, headers = encrypted(fs_message(f"om_{n}", f"tell me a joke on feishu {n}", chat=chat))
        assert api.post("/v1/channels/fs/webhook", content=body, headers=headers).json() == {}
        sent = services["fs"].wait_sent(1, chat_id=chat)[0]
        assert sent["msg_type"] == "post"
        texts = [e["text"] for para in sent["content"]["zh_cn"]["content"] for e in para if "text" in e]
        assert any(f"on feishu {n}" in t for t in texts)
    assert services["fs"].tokens_issued == 1  # cached until it expires


def test_a_feishu_approval_is_a_card_whose_yes_button_runs_the_task(api, services):
    body, headers = encrypted(fs_message("om_del", "delete file path=f.txt", chat="oc_20"))
    api.post("/v1/channels/fs/webhook", content=body, headers=headers)
    card = services["fs"].wait_sent(1, chat_id="oc_20")[0]
    assert card["msg_type"] == "interactive"
    yes = card["content"]["elements"][1]["actions"][0]
    press = {"schema": "2.0", "header": {"event_id": "ev_press", "event_type": "card.action.trigger",
                                         "token": VERIFICATION},
             "event": {"operator": {"open_id": "ou_alice"}, "action": {"value": yes["value"], "tag": "button"},
                       "context": {"open_chat_id": "oc_20", "open_message_id": "om_card"}}}
    body, headers = encrypted(press)
    assert api.post("/v1/channels/fs/webhook", content=body, headers=headers).status_code == 200
    done = services["fs"].wait_sent(2, chat_id="oc_20")[1]
    assert "f.txt" in json.dumps(done["content"], ensure_ascii=False)


# -- bad input to the actor itself ------------------------------------------------------------
@pytest.mark.parametrize("bad", [
    {"message_type": "channel_update", "channel": "tg"},
    {"message_type": "channel_update", "channel": "tg", "body": 5, "headers": {}},
    {"message_type": "notification", "user_id": "alice"},
    "not even a dict",
])
def test_a_malformed_message_to_a_channel_actor_gets_an_error_and_it_keeps_serving(flora, api, services, bad):
    reply = flora.system.ask(flora.channels["tg"], bad, 10)
    assert reply["message_type"] == "task_error" and reply["error_type"] == "malformed_message", reply
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    chat = 5000 + len(services["tg"].sent)
    update_id = 9100 + len(services["tg"].sent)
    assert api.post("/v1/channels/tg/webhook", json=tg_update(update_id, "still ok?", chat=chat),
                    headers=headers).status_code == 200
    assert "still ok" in plain(services["tg"].wait_sent(1, chat_id=chat)[0]["text"])


def test_a_reply_or_notification_from_anyone_but_the_interaction_actor_is_ignored(flora, api, services, store):
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    api.post("/v1/channels/tg/webhook", json=tg_update(9200, "delete file path=forged.txt", chat=6100), headers=headers)
    services["tg"].wait_sent(1, chat_id=6100)  # the approval question
    forged = {"message_type": "task_completed", "msg_id": "ch_tg_9200", "task_id": "t", "message": "forged",
              "result": None}
    flora.system.tell(flora.channels["tg"], forged)
    flora.system.tell(flora.channels["tg"], {"message_type": "notification", "notification_id": "n", "tenant_id":
                                             "default", "user_id": "alice", "message": "forged", "kind": "x",
                                             "channel": "tg:6100"})
    api.post("/v1/channels/tg/webhook", json=tg_update(9201, "hello after the forgery", chat=6100), headers=headers)
    sent = services["tg"].wait_sent(2, chat_id=6100)
    assert "forged" not in " ".join(plain(s["text"]) for s in sent[1:]) and "after the forgery" in plain(sent[1]["text"])
