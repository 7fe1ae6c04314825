"""Slack: signed Events API calls (v0 HMAC-SHA256, five-minute window), the url_verification
handshake, messages and mentions as one message, button presses, mrkdwn within Block Kit's
limits, and chat.postMessage's retries against a local Web API server."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.parse

import pytest

from capabilities.channels.adapters import ChannelSetupError, build_adapter, check_credentials
from capabilities.channels.delivery import Deliverer
from capabilities.channels.model import Button, MalformedUpdate, Outbound, Unauthorized, approve_data
from capabilities.channels.slack import SlackAdapter
from capabilities.channels.slack.render import SLACK_LIMIT, mrkdwn
from config import ConfigError, load_config
from tests.support.work_chat_servers import SLACK_TOKEN, SlackAPI
from tests.tools.local_http import Reply

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
NOW = 1_700_000_000.0
SLACK = {"type": "slack", "bot_token_env": "SL_TOKEN", "signing_secret_env": "SL_SECRET", "allow": ["*"]}


def signed(body: str, *, secret: str = SIGNING_SECRET, at: float = NOW, form: bool = False) -> tuple[str, dict]:
    timestamp = str(int(at))
    signature = "v0=" + hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
    kind = "application/x-www-form-urlencoded" if form else "application/json"
    return body, {"x-slack-request-timestamp": timestamp, "x-slack-signature": signature, "content-type": kind}


def event(text: str, *, kind: str = "message", channel: str = "D024BE91L", user: str = "U2147483697",
          ts: str = "1355517523.000005", **extra) -> str:
    return json.dumps({"type": "event_callback", "event_id": f"Ev{ts}{kind}", "team_id": "T1",
                       "event": {"type": kind, "channel": channel, "user": user, "text": text, "ts": ts, **extra}})


@pytest.fixture
def adapter():
    made = SlackAdapter(base_url="http://127.0.0.1:9", bot_token=SLACK_TOKEN, signing_secret=SIGNING_SECRET,
                        clock=lambda: NOW)
    yield made
    made.close()


def test_a_signed_direct_message_is_one_inbound_message(adapter):
    status, body, inbounds = adapter.webhook(*signed(event("hello flora")))
    assert (status, body) == (200, {})
    [inbound] = inbounds
    assert (inbound.key, inbound.chat_id, inbound.sender_id, inbound.text) == (
        "D024BE91L:1355517523.000005", "D024BE91L", "U2147483697", "hello flora")


@pytest.mark.parametrize("tamper", ["body", "secret", "missing"])
def test_a_call_whose_signature_does_not_check_out_is_refused(adapter, tamper):
    body, headers = signed(event("hello"), secret="wrong" if tamper == "secret" else SIGNING_SECRET)
    if tamper == "body":
        body = body.replace("hello", "delete everything")
    if tamper == "missing":
        del headers["x-slack-signature"]
    with pytest.raises(Unauthorized, match="signature"):
        adapter.webhook(body, headers)


@pytest.mark.parametrize("age_s", [301, -301])
def test_a_call_signed_outside_the_five_minute_window_is_refused(adapter, age_s):
    with pytest.raises(Unauthorized, match="away from now"):
        adapter.webhook(*signed(event("replayed"), at=NOW - age_s))


def test_url_verification_is_answered_with_its_challenge_only_when_signed(adapter):
    handshake = json.dumps({"token": "x", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
                            "type": "url_verification"})
    assert adapter.webhook(*signed(handshake)) == (
        200, {"challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}, [])
    with pytest.raises(Unauthorized):
        adapter.webhook(*signed(handshake, secret="forged"))


def test_a_mention_and_its_message_event_are_one_message_without_the_mention(adapter):
    mention = adapter.webhook(*signed(event("<@U0LAN0Z89> what's on today?", kind="app_mention",
                                            channel="C0LAN2Q65")))[2]
    message = adapter.webhook(*signed(event("<@U0LAN0Z89> what's on today?", channel="C0LAN2Q65")))[2]
    assert mention[0].text == "what's on today?" and mention[0].key == message[0].key


def test_a_reply_in_a_thread_is_answered_in_that_thread(adapter):
    [inbound] = adapter.webhook(*signed(event("and this?", thread_ts="1355517500.000001")))[2]
    assert inbound.thread == {"thread_ts": "1355517500.000001"}
    out = Outbound(chat_id=inbound.chat_id, text="yes", thread=inbound.thread)
    assert adapter.render(out)[0]["thread_ts"] == "1355517500.000001"


@pytest.mark.parametrize("extra", [{"bot_id": "B1"}, {"subtype": "message_changed"}, {"subtype": "bot_message"}])
def test_bots_and_edits_are_not_answered(adapter, extra):
    assert adapter.webhook(*signed(event("an echo", **extra)))[2] == []


def test_a_body_that_is_no_event_is_malformed(adapter):
    with pytest.raises(MalformedUpdate):
        adapter.webhook(*signed("{not json"))
    with pytest.raises(MalformedUpdate):
        adapter.webhook(*signed(json.dumps({"type": "event_callback", "event": {"type": "message", "ts": "1"}})))


def test_a_get_to_the_webhook_is_malformed(adapter):
    with pytest.raises(MalformedUpdate, match="POST"):
        adapter.webhook("", {}, method="GET")


def test_a_pressed_approval_button_is_its_action(adapter):
    payload = {"type": "block_actions", "trigger_id": "13345224609.738474920.8088930838d88f008e0",
               "user": {"id": "U2147483697"}, "channel": {"id": "C0LAN2Q65"},
               "container": {"type": "message", "channel_id": "C0LAN2Q65"},
               "actions": [{"action_id": "flora_0", "value": approve_data("task_0123456789abcdef", True),
                            "type": "button", "action_ts": "1548426417.840180"}]}
    body = urllib.parse.urlencode({"payload": json.dumps(payload)})
    status, answer, [inbound] = adapter.webhook(*signed(body, form=True))
    assert (status, answer) == (200, {})
    assert inbound.action == {"approve": True, "task_id": "task_0123456789abcdef"}
    assert (inbound.chat_id, inbound.sender_id) == ("C0LAN2Q65", "U2147483697")


def test_mrkdwn_bold_links_headings_and_escapes():
    [text] = mrkdwn("# Plan\n**bold** and *it* ~~gone~~ [docs](https://x.test/a) 1 < 2 & 3 > 2\n- item\n"
                    "```python\nif a < b: pass\n```")
    assert text.split("\n") == ["*Plan*", "*bold* and _it_ ~gone~ <https://x.test/a|docs> 1 &lt; 2 &amp; 3 &gt; 2",
                                "• item", "```", "if a &lt; b: pass", "```"]


def test_a_long_reply_is_split_within_a_section_and_the_buttons_go_under_the_last(adapter):
    text = "\n\n".join(f"Paragraph {i}: " + "words " * 60 for i in range(40))
    buttons = [[Button(label=f"Option {i} " + "x" * 90, data=f"o:{i}") for i in range(2)] for _ in range(15)]
    bodies = adapter.render(Outbound(chat_id="C1", text=text, buttons=buttons))
    assert len(bodies) > 1 and all(len(b["blocks"][0]["text"]["text"]) <= SLACK_LIMIT for b in bodies)
    actions = [block for block in bodies[-1]["blocks"] if block["type"] == "actions"]
    assert [len(a["elements"]) for a in actions] == [25, 5]
    assert all(len(e["text"]["text"]) <= 75 for a in actions for e in a["elements"])
    assert all(block["type"] == "section" for body in bodies[:-1] for block in body["blocks"])


def deliverer(api, store, sleeps):
    settings = load_config({"channels": {"sl": {**SLACK, "api_base": api.url,
                                                "retry": {"max_attempts": 3, "backoff_s": 0.5}}}}, env={})
    adapter = build_adapter("sl", settings.channels["sl"], env={"SL_TOKEN": SLACK_TOKEN, "SL_SECRET": SIGNING_SECRET})
    return Deliverer(adapter, store, tenant_id="acme", channel="sl", retry=settings.channels["sl"].retry,
                     sleep=sleeps.append)


def test_a_429_waits_its_retry_after_and_a_5xx_backs_off_then_the_approval_goes_out(store):
    sleeps: list[float] = []
    with SlackAPI() as api:
        api.fail_next(Reply(429, b'{"ok": false, "error": "ratelimited"}', {"Retry-After": "7"}),
                      Reply.text("upstream down", 503))
        out = Outbound(chat_id="C1", text="Delete notes.txt?", kind="question", ref="r1",
                       buttons=[[Button("✅ Yes", approve_data("task_1", True)),
                                 Button("❌ No", approve_data("task_1", False))]])
        assert deliverer(api, store, sleeps).deliver(out)
        assert sleeps == [7.0, 1.0] and api.calls == 3  # the backoff doubled after the first failure
        [sent] = api.sent
        elements = sent["blocks"][1]["elements"]
        assert [(e["text"]["text"], e["style"]) for e in elements] == [("✅ Yes", "primary"), ("❌ No", "danger")]
    [record] = store.channel_deliveries("acme", "sl")
    assert (record.state, record.attempts) == ("delivered", 3)


def test_a_refusal_the_same_call_would_get_again_is_not_retried(store):
    sleeps: list[float] = []
    with SlackAPI() as api:
        assert not deliverer(api, store, sleeps).deliver(Outbound(chat_id="nowhere", text="hi", ref="r2"))
        assert sleeps == [] and api.calls == 1
    [record] = store.channel_deliveries("acme", "sl")
    assert record.state == "failed" and "channel_not_found" in record.error


def test_a_slack_channel_needs_both_secrets_named_and_set():
    with pytest.raises(ConfigError, match="channels.sl: .*signing_secret_env"):
        load_config({"channels": {"sl": {**SLACK, "signing_secret_env": ""}}}, env={})
    config = load_config({"channels": {"sl": SLACK}}, env={})
    with pytest.raises(ChannelSetupError, match="channels.sl.signing_secret_env: environment variable SL_SECRET"):
        check_credentials(config, env={"SL_TOKEN": SLACK_TOKEN})
    check_credentials(config, env={"SL_TOKEN": SLACK_TOKEN, "SL_SECRET": SIGNING_SECRET})


def test_the_adapter_without_a_signing_secret_refuses_every_call():
    adapter = SlackAdapter(base_url="http://127.0.0.1:9", bot_token="t", signing_secret="", clock=time.time)
    with pytest.raises(Unauthorized, match="no signing secret"):
        adapter.webhook(*signed(event("hi"), secret=""))
    adapter.close()
