"""WeCom (企业微信): msg_signature and the AES-256-CBC envelope (built here with an independent
PKCS#7 implementation), the GET echostr handshake, text messages and button-card presses,
markdown within 2048 bytes, and message/send with its access_token against a local server."""

from __future__ import annotations

import base64
import hashlib
import os
import struct

import pytest
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from capabilities.channels.adapters import ChannelSetupError, build_adapter, check_credentials
from capabilities.channels.delivery import Deliverer
from capabilities.channels.model import Button, MalformedUpdate, Outbound, Unauthorized, approve_data
from capabilities.channels.wecom import WeComAdapter
from config import ConfigError, load_config
from tests.support.work_chat_servers import WECOM_AGENT, WECOM_CORP, WeComAPI
from tests.tools.local_http import Reply

AES_KEY = base64.b64encode(bytes(range(32))).decode().rstrip("=")  # 43 characters
TOKEN = "wecom-callback-token"
CORP = WECOM_CORP["corpid"]
WECOM = {"type": "wecom", "corp_id": CORP, "agent_id": WECOM_AGENT, "corp_secret_env": "WC_SECRET",
         "token_env": "WC_TOKEN", "encoding_aes_key_env": "WC_AES", "allow": ["*"]}
ENV = {"WC_SECRET": WECOM_CORP["corpsecret"], "WC_TOKEN": TOKEN, "WC_AES": AES_KEY}


def seal(message: str, corp: str = CORP, key_text: str = AES_KEY) -> str:
    key = base64.b64decode(key_text + "=")
    raw = os.urandom(16) + struct.pack(">I", len(message.encode())) + message.encode() + corp.encode()
    padder = padding.PKCS7(256).padder()
    padded = padder.update(raw) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    return base64.b64encode(encryptor.update(padded) + encryptor.finalize()).decode()


def query_for(encrypted: str, token: str = TOKEN, **extra) -> dict:
    timestamp, nonce = "1700000000", "1372623149"
    sign = hashlib.sha1("".join(sorted([token, timestamp, nonce, encrypted])).encode()).hexdigest()
    return {"msg_signature": sign, "timestamp": timestamp, "nonce": nonce, **extra}


def event_call(message: str, **kwargs) -> tuple[str, dict, dict]:
    encrypted = seal(message, **kwargs)
    body = (f"<xml><ToUserName><![CDATA[{CORP}]]></ToUserName><AgentID><![CDATA[{WECOM_AGENT}]]></AgentID>"
            f"<Encrypt><![CDATA[{encrypted}]]></Encrypt></xml>")
    return body, {"content-type": "text/xml"}, query_for(encrypted)


def text_message(content: str, msg_id: str = "7240000000000001", sender: str = "zhangsan") -> str:
    return (f"<xml><ToUserName><![CDATA[{CORP}]]></ToUserName><FromUserName><![CDATA[{sender}]]></FromUserName>"
            f"<CreateTime>1700000000</CreateTime><MsgType><![CDATA[text]]></MsgType>"
            f"<Content><![CDATA[{content}]]></Content><MsgId>{msg_id}</MsgId><AgentID>{WECOM_AGENT}</AgentID></xml>")


@pytest.fixture
def adapter():
    made = WeComAdapter(base_url="http://127.0.0.1:9", corp_id=CORP, agent_id=WECOM_AGENT, corp_secret="s",
                        token=TOKEN, encoding_aes_key=AES_KEY)
    yield made
    made.close()


def test_the_echostr_handshake_is_answered_decrypted_only_when_signed(adapter):
    echostr = seal("5927782489442352469")
    assert adapter.webhook("", {}, method="GET", query={**query_for(echostr), "echostr": echostr}) == (
        200, "5927782489442352469", [])
    with pytest.raises(Unauthorized, match="msg_signature"):
        adapter.webhook("", {}, method="GET", query={**query_for(echostr, token="guess"), "echostr": echostr})


def test_a_sealed_text_message_is_one_inbound_message(adapter):
    body, headers, query = event_call(text_message("你好 Flora"))
    status, answer, [inbound] = adapter.webhook(body, headers, query=query)
    assert (status, answer) == (200, "")
    assert (inbound.key, inbound.chat_id, inbound.sender_id, inbound.text) == (
        "7240000000000001", "zhangsan", "zhangsan", "你好 Flora")


def test_a_wrong_signature_another_key_or_another_corp_is_refused(adapter):
    body, headers, query = event_call(text_message("hi"))
    with pytest.raises(Unauthorized, match="msg_signature"):
        adapter.webhook(body.replace("<Encrypt><![CDATA[", "<Encrypt><![CDATA[A"), headers, query=query)
    other_key = base64.b64encode(bytes(range(1, 33))).decode().rstrip("=")
    for sealed in (event_call(text_message("hi"), key_text=other_key), event_call(text_message("hi"), corp="wwOTHER")):
        with pytest.raises(Unauthorized):
            adapter.webhook(sealed[0], sealed[1], query=sealed[2])


def test_xml_with_a_doctype_is_refused_unread(adapter):
    with pytest.raises(MalformedUpdate, match="document type"):
        adapter.webhook('<!DOCTYPE x [<!ENTITY a "aaaa">]><xml><Encrypt>&a;</Encrypt></xml>', {},
                        query=query_for("x"))


def test_a_button_card_press_is_its_action_once(adapter):
    press = (f"<xml><ToUserName><![CDATA[{CORP}]]></ToUserName><FromUserName><![CDATA[zhangsan]]></FromUserName>"
             f"<CreateTime>1700000001</CreateTime><MsgType><![CDATA[event]]></MsgType>"
             f"<Event><![CDATA[template_card_event]]></Event><EventKey><![CDATA[{approve_data('task_9', True)}]]>"
             f"</EventKey><TaskId><![CDATA[flora-abc]]></TaskId><CardType><![CDATA[button_interaction]]></CardType>"
             f"<AgentID>{WECOM_AGENT}</AgentID></xml>")
    body, headers, query = event_call(press)
    [inbound] = adapter.webhook(body, headers, query=query)[2]
    assert inbound.action == {"approve": True, "task_id": "task_9"} and inbound.key == "card:flora-abc:zhangsan"


def test_markdown_is_cut_at_2048_bytes_and_buttons_come_as_a_card(adapter):
    long_chinese = "\n\n".join(["这是一段很长的回答。" * 40] * 6)
    bodies = adapter.render(Outbound(chat_id="zhangsan", text=long_chinese))
    assert len(bodies) > 1 and all(len(b["markdown"]["content"].encode()) <= 2048 for b in bodies)
    buttons = [[Button("✅ Yes", approve_data("task_9", True)), Button("❌ No", approve_data("task_9", False))]]
    [card] = adapter.render(Outbound(chat_id="zhangsan", text="Delete notes.txt?", buttons=buttons))
    template = card["template_card"]
    assert template["main_title"]["title"] == "Delete notes.txt?" and template["sub_title_text"] == "Delete notes.txt?"
    assert [(b["text"], b["key"]) for b in template["button_list"]] == [("✅ Yes", "a:y:task_9"), ("❌ No", "a:n:task_9")]


def test_an_expired_token_is_fetched_again_and_busy_answers_are_retried(store):
    sleeps: list[float] = []
    with WeComAPI() as api:
        config = load_config({"channels": {"wc": {**WECOM, "api_base": api.url}}}, env={})
        adapter = build_adapter("wc", config.channels["wc"], env=ENV)
        deliver = Deliverer(adapter, store, tenant_id="acme", channel="wc", retry=config.channels["wc"].retry,
                            sleep=sleeps.append).deliver
        assert deliver(Outbound(chat_id="zhangsan", text="**first**", ref="r1"))
        api.expire_token()
        api.fail_next(Reply.json({"errcode": 45009, "errmsg": "api freq out of limit"}))
        assert deliver(Outbound(chat_id="zhangsan", text="second", ref="r2"))
        assert api.tokens_issued == 2 and [s["markdown"]["content"] for s in api.sent] == ["**first**", "second"]
        assert sleeps == [0.5, 1.0]


def test_a_wecom_channel_needs_its_corp_agent_and_a_valid_aes_key():
    with pytest.raises(ConfigError, match="agent_id"):
        load_config({"channels": {"wc": {**WECOM, "agent_id": 0}}}, env={})
    config = load_config({"channels": {"wc": WECOM}}, env={})
    with pytest.raises(ChannelSetupError, match="channels.wc.encoding_aes_key_env: an EncodingAESKey is 43"):
        check_credentials(config, env={**ENV, "WC_AES": "too-short"})
    check_credentials(config, env=ENV)
