"""Matrix: /sync batches taken in order with the since token (not moved past what was not
recorded), history before the start left alone, invitations joined, own and encrypted events
not answered, numbered choices, and idempotent sends (one event per transaction id) with
M_LIMIT_EXCEEDED waited out, against a local homeserver."""

from __future__ import annotations

import threading
import time

import pytest

from capabilities.channels.adapters import build_adapter, build_poller
from capabilities.channels.delivery import Deliverer
from capabilities.channels.matrix import MatrixAdapter, SyncPoller
from capabilities.channels.model import Button, MalformedUpdate, Outbound, approve_data
from config import ConfigError, load_config
from tests.support.waiting import wait_until
from tests.support.work_chat_servers import MATRIX_TOKEN, MATRIX_USER, MatrixHomeserver
from tests.tools.local_http import Reply

ROOM, ALICE = "!abc:hs.test", "@alice:hs.test"
MATRIX = {"type": "matrix", "user_id": MATRIX_USER, "access_token_env": "MX_TOKEN", "allow": ["*"]}


@pytest.fixture
def hs():
    with MatrixHomeserver() as server:
        yield server


@pytest.fixture
def adapter(hs):
    made = MatrixAdapter(base_url=hs.url, user_id=MATRIX_USER, access_token=MATRIX_TOKEN)
    yield made
    made.close()


def event(body: str, *, sender: str = ALICE, event_id: str = "$e1", kind: str = "m.room.message",
          msgtype: str = "m.text") -> dict:
    return {"type": kind, "event_id": event_id, "sender": sender, "room_id": ROOM, "origin_server_ts": 1,
            "content": {"msgtype": msgtype, "body": body}}


def test_a_text_message_is_one_inbound_message(adapter):
    [inbound] = adapter.parse(event("hello flora"))
    assert (inbound.key, inbound.chat_id, inbound.sender_id, inbound.text) == ("$e1", ROOM, ALICE, "hello flora")


@pytest.mark.parametrize("made", [event("echo", sender=MATRIX_USER), event("a notice", msgtype="m.notice"),
                                  event("", kind="m.room.encrypted"), event("", kind="m.reaction")])
def test_own_messages_notices_reactions_and_encrypted_events_are_not_answered(adapter, made):
    assert adapter.parse(made) == []


def test_an_event_without_an_id_is_malformed(adapter):
    with pytest.raises(MalformedUpdate):
        adapter.parse({"type": "m.room.message", "room_id": ROOM})


def test_choices_are_numbered_and_a_reply_with_the_number_is_the_choice(adapter):
    out = Outbound(chat_id=ROOM, text="Delete notes.txt?", buttons=[
        [Button("✅ Yes", approve_data("task_7", True)), Button("❌ No", approve_data("task_7", False))]])
    [body] = adapter.render(out)
    assert body["content"]["body"].endswith("1. ✅ Yes\n2. ❌ No\n(reply with the number)")
    [chosen] = adapter.parse(event(" 1 ", event_id="$e2"))
    assert chosen.action == {"approve": True, "task_id": "task_7"}
    assert adapter.parse(event("1", event_id="$e3"))[0].text == "1"  # answered once; now it is just text


def test_the_poller_takes_new_messages_joins_invites_and_skips_history(hs, adapter):
    now = time.time()
    hs.say(ROOM, ALICE, "an old message", event_id="$old", ts_ms=(now - 3600) * 1000)
    hs.say(ROOM, ALICE, "while Flora restarted", event_id="$recent", ts_ms=(now - 60) * 1000)
    hs.invite("!new:hs.test")
    received, stop = [], threading.Event()
    poller = SyncPoller(adapter, timeout_s=1, catch_up_s=600, auto_join=True, receive=received.append, stop=stop)
    thread = threading.Thread(target=poller.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: [e["event_id"] for e in received] == ["$recent"], timeout=10)
        hs.say(ROOM, ALICE, "and now", event_id="$new", ts_ms=(now - 7200) * 1000)  # after start: taken anyway
        wait_until(lambda: [e["event_id"] for e in received] == ["$recent", "$new"], timeout=10)
        assert hs.joined == ["!new:hs.test"] and received[1]["room_id"] == ROOM
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive()


def test_since_does_not_move_past_an_event_that_was_not_recorded(adapter):
    batch = {"next_batch": "s2", "rooms": {"join": {ROOM: {"timeline": {"events": [
        event("first", event_id="$a"), event("second", event_id="$b")]}}}}}
    taken: list[str] = []

    def store_down_at_b(item):
        if item["event_id"] == "$b":
            raise ConnectionError("store unreachable")
        taken.append(item["event_id"])

    poller = SyncPoller(adapter, timeout_s=0, catch_up_s=0, auto_join=False, receive=store_down_at_b,
                        stop=threading.Event())
    assert poller.take(batch, "s1") == "s1" and taken == ["$a"]
    assert SyncPoller(adapter, timeout_s=0, catch_up_s=0, auto_join=False, receive=taken.append,
                      stop=threading.Event()).take(batch, "s1") == "s2"


def test_a_retried_send_is_one_event_and_a_rate_limit_is_waited_out(hs, store):
    sleeps: list[float] = []
    config = load_config({"channels": {"mx": {**MATRIX, "api_base": hs.url}}}, env={})
    adapter = build_adapter("mx", config.channels["mx"], env={"MX_TOKEN": MATRIX_TOKEN})
    hs.fail_next(Reply.json({"errcode": "M_LIMIT_EXCEEDED", "error": "Too many requests", "retry_after_ms": 2500},
                            429),
                 Reply.json({"errcode": "M_UNKNOWN", "error": "Internal error"}, 502))
    deliver = Deliverer(adapter, store, tenant_id="acme", channel="mx", retry=config.channels["mx"].retry,
                        sleep=sleeps.append).deliver
    assert deliver(Outbound(chat_id=ROOM, text="**hello**", ref="r1"))
    assert sleeps == [2.5, 1.0] and [s["body"] for s in hs.sent] == ["**hello**"]
    [body] = adapter.render(Outbound(chat_id=ROOM, text="once"))
    adapter.send(body)
    adapter.send(body)  # the same transaction again: the homeserver keeps one event
    assert [s["body"] for s in hs.sent] == ["**hello**", "once"]
    # a resend of one outbox entry (its answer lost) carries the transaction ids of the first try
    long = Outbound(chat_id=ROOM, text="x" * 40000, key="dlv_1")
    first, again = adapter.render(long), adapter.render(long)
    assert len(first) == 2 and [b["txn_id"] for b in first] == [b["txn_id"] for b in again]
    assert adapter.render(Outbound(chat_id=ROOM, text="x", key="dlv_2"))[0]["txn_id"] != first[0]["txn_id"]
    adapter.close()


def test_a_matrix_channel_polls_and_needs_its_homeserver_and_account():
    settings = load_config({"channels": {"mx": {**MATRIX, "api_base": "https://hs.test"}}}, env={}).channels["mx"]
    assert settings.mode == "polling"
    assert build_poller("mx", settings, adapter=None, receive=None, stop=None, env={}) is not None
    with pytest.raises(ConfigError, match="api_base"):
        load_config({"channels": {"mx": MATRIX}}, env={})
    with pytest.raises(ConfigError, match="user_id"):
        load_config({"channels": {"mx": {**MATRIX, "api_base": "https://hs.test", "user_id": "flora"}}}, env={})
    with pytest.raises(ConfigError, match="mode: matrix has no webhook"):
        load_config({"channels": {"mx": {**MATRIX, "api_base": "https://hs.test", "mode": "webhook"}}}, env={})
