"""WhatsApp Business Cloud API: the GET verification handshake, X-Hub-Signature-256 on events,
text and interactive (button and list) replies within WhatsApp's limits, and the retries of
/messages against a local Graph API server."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from capabilities.channels.adapters import build_adapter
from capabilities.channels.delivery import Deliverer
from capabilities.channels.model import Button, MalformedUpdate, Outbound, Unauthorized, approve_data, option_data
from capabilities.channels.whatsapp import WhatsAppAdapter
from config import ConfigError, load_config
from tests.support.work_chat_servers import PHONE_ID, WHATSAPP_TOKEN, WhatsAppAPI
from tests.tools.local_http import Reply

APP_SECRET, VERIFY = "whatsapp-app-secret", "a-verify-token"
WHATSAPP = {"type": "whatsapp", "phone_number_id": PHONE_ID, "access_token_env": "WA_TOKEN",
            "app_secret_env": "WA_SECRET", "verify_token_env": "WA_VERIFY", "allow": ["*"]}
ENV = {"WA_TOKEN": WHATSAPP_TOKEN, "WA_SECRET": APP_SECRET, "WA_VERIFY": VERIFY}


def signed(payload: dict, secret: str = APP_SECRET) -> tuple[str, dict]:
    body = json.dumps(payload)
    return body, {"x-hub-signature-256": "sha256=" + hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest(),
                  "content-type": "application/json"}


def change(*messages: dict, number: str = PHONE_ID, statuses: list | None = None) -> dict:
    value = {"messaging_product": "whatsapp", "metadata": {"display_phone_number": "15550001111",
                                                           "phone_number_id": number},
             "contacts": [{"profile": {"name": "Alice"}, "wa_id": "4915112345678"}], "messages": list(messages)}
    if statuses is not None:
        value = {"messaging_product": "whatsapp", "metadata": value["metadata"], "statuses": statuses}
    return {"object": "whatsapp_business_account", "entry": [{"id": "WABA1", "changes": [
        {"field": "messages", "value": value}]}]}


def text(body: str, wamid: str = "wamid.HBgLMTU1", sender: str = "4915112345678") -> dict:
    return {"from": sender, "id": wamid, "timestamp": "1700000000", "type": "text", "text": {"body": body}}


@pytest.fixture
def adapter():
    made = WhatsAppAdapter(base_url="http://127.0.0.1:9", phone_number_id=PHONE_ID, access_token=WHATSAPP_TOKEN,
                           app_secret=APP_SECRET, verify_token=VERIFY)
    yield made
    made.close()


def test_the_verification_handshake_echoes_the_challenge_for_the_right_token_only(adapter):
    query = {"hub.mode": "subscribe", "hub.verify_token": VERIFY, "hub.challenge": "1158201444"}
    assert adapter.webhook("", {}, method="GET", query=query) == (200, "1158201444", [])
    with pytest.raises(Unauthorized, match="verification token"):
        adapter.webhook("", {}, method="GET", query={**query, "hub.verify_token": "guess"})
    with pytest.raises(Unauthorized):
        adapter.webhook("", {}, method="GET", query={"hub.challenge": "1"})


def test_a_signed_text_message_is_one_inbound_message_keyed_by_its_wamid(adapter):
    status, body, [inbound] = adapter.webhook(*signed(change(text("hello flora"))))
    assert (status, body) == (200, {})
    assert (inbound.key, inbound.chat_id, inbound.sender_id, inbound.text) == (
        "wamid.HBgLMTU1", "4915112345678", "4915112345678", "hello flora")


@pytest.mark.parametrize("tamper", ["body", "secret", "missing"])
def test_an_event_whose_signature_does_not_check_out_is_refused(adapter, tamper):
    body, headers = signed(change(text("hello")), secret="forged" if tamper == "secret" else APP_SECRET)
    if tamper == "body":
        body = body.replace("hello", "delete everything")
    if tamper == "missing":
        headers.pop("x-hub-signature-256")
    with pytest.raises(Unauthorized, match="signature"):
        adapter.webhook(body, headers)


def test_statuses_other_numbers_and_images_are_not_answered(adapter):
    assert adapter.webhook(*signed(change(statuses=[{"id": "wamid.1", "status": "read"}])))[2] == []
    assert adapter.webhook(*signed(change(text("hi"), number="999")))[2] == []
    image = {"from": "4915112345678", "id": "wamid.img", "type": "image", "image": {"id": "m1"}}
    assert adapter.webhook(*signed(change(image)))[2] == []


def test_a_pressed_reply_button_and_list_row_are_their_actions(adapter):
    button = {"from": "4915112345678", "id": "wamid.b", "type": "interactive", "interactive": {
        "type": "button_reply", "button_reply": {"id": approve_data("task_1", False), "title": "❌ No"}}}
    row = {"from": "4915112345678", "id": "wamid.r", "type": "interactive", "interactive": {
        "type": "list_reply", "list_reply": {"id": option_data("paris"), "title": "Paris"}}}
    pressed = adapter.webhook(*signed(change(button, row)))[2]
    assert [i.action for i in pressed] == [{"approve": False, "task_id": "task_1"}, {"option": "paris"}]


def test_a_body_that_is_no_event_is_malformed(adapter):
    with pytest.raises(MalformedUpdate):
        adapter.webhook(*signed({"object": "page"}))
    with pytest.raises(MalformedUpdate):
        adapter.webhook(*signed(change({"id": "wamid.x", "type": "text"})))


def test_up_to_three_buttons_are_reply_buttons_with_short_titles(adapter):
    out = Outbound(chat_id="4915112345678", text="**Delete** notes.txt?", buttons=[
        [Button("✅ Yes, delete it right now please", approve_data("task_1", True)),
         Button("❌ No", approve_data("task_1", False))]])
    [body] = adapter.render(out)
    interactive = body["interactive"]
    assert interactive["type"] == "button" and interactive["body"]["text"] == "*Delete* notes.txt?"
    assert [b["reply"]["title"] for b in interactive["action"]["buttons"]] == ["✅ Yes, delete it ri…", "❌ No"]


def test_more_options_become_a_list_and_a_long_text_goes_before_the_buttons(adapter):
    options = [[Button(f"City number {i} with a long name", option_data(f"c{i}"))] for i in range(12)]
    bodies = adapter.render(Outbound(chat_id="49", text="Which one?\n\n" + "more words " * 150, buttons=options))
    assert [b["type"] for b in bodies] == ["text", "interactive"]
    listed = bodies[-1]["interactive"]
    rows = listed["action"]["sections"][0]["rows"]
    assert listed["type"] == "list" and len(rows) == 10
    assert all(len(r["title"]) <= 24 and r["description"].startswith("City number") for r in rows)


def deliverer(api, store, sleeps):
    config = load_config({"channels": {"wa": {**WHATSAPP, "api_base": api.url,
                                              "retry": {"max_attempts": 5, "backoff_s": 0.5}}}}, env={})
    settings = config.channels["wa"]
    return Deliverer(build_adapter("wa", settings, env=ENV), store, tenant_id="acme", channel="wa",
                     retry=settings.retry, sleep=sleeps.append)


def test_rate_limits_and_server_errors_are_retried_then_the_long_reply_goes_out_in_pieces(store):
    sleeps: list[float] = []
    with WhatsAppAPI() as api:
        api.fail_next(Reply(429, b'{"error": {"code": 130429, "message": "Rate limit hit"}}', {"Retry-After": "4"}),
                      Reply(400, b'{"error": {"code": 131056, "message": "pair rate limit"}}'),
                      Reply.text("bad gateway", 502), Reply.json({"error": "upstream busy"}, 503))
        out = Outbound(chat_id="4915112345678", text="\n\n".join("paragraph " * 100 for _ in range(10)), ref="r1")
        assert deliverer(api, store, sleeps).deliver(out)
        # the Retry-After asked; a rate limit without one: 1 s; the backoff, doubled for each 5xx (a
        # proxy's text, an error that is not the Graph API's object)
        assert sleeps == [4.0, 1.0, 2.0, 4.0]
        assert len(api.sent) >= 2 and all(len(s["text"]["body"]) <= 4096 for s in api.sent)


def test_a_bad_token_is_not_retried_and_the_message_waits_for_good_credentials(store):
    from capabilities.channels.model import CredentialsRefused

    sleeps: list[float] = []
    with WhatsAppAPI() as api:
        config = load_config({"channels": {"wa": {**WHATSAPP, "api_base": api.url}}}, env={})
        adapter = build_adapter("wa", config.channels["wa"], env={**ENV, "WA_TOKEN": "expired"})
        with pytest.raises(CredentialsRefused):
            Deliverer(adapter, store, tenant_id="acme", channel="wa", retry=config.channels["wa"].retry,
                      sleep=sleeps.append).deliver(Outbound(chat_id="49", text="hi", ref="r2"))
        assert sleeps == [] and api.calls == 1
    [record] = store.channel_deliveries("acme", "wa")
    assert record.state == "pending" and "Invalid OAuth" in record.error


def test_a_whatsapp_channel_needs_its_number_and_its_secrets():
    with pytest.raises(ConfigError, match="phone_number_id"):
        load_config({"channels": {"wa": {**WHATSAPP, "phone_number_id": ""}}}, env={})
    with pytest.raises(ConfigError, match="app_secret_env"):
        load_config({"channels": {"wa": {**WHATSAPP, "app_secret_env": ""}}}, env={})
