"""The channel model's plain classes: configuration errors that name the key, who may talk and
as whom, messages turned into user_input, replies and notifications turned into what is sent
(buttons included), and the Deliverer's retries against a local Bot API server."""

from __future__ import annotations

import pytest

import main
from agents.node import StartupError
from capabilities.channels.delivery import Deliverer
from capabilities.channels.model import Inbound, MalformedUpdate, Outbound, parse_button
from capabilities.channels.service import ChannelService
from capabilities.channels.adapters import ChannelSetupError, build_adapter, check_credentials
from capabilities.channels.telegram import TelegramAdapter
from config import ConfigError, load_config
from tests.support.telegram_server import TOKEN, BotAPI

TG = {"type": "telegram", "mode": "polling", "token_env": "TG_TOKEN", "users": {"7": "alice"}, "allow": ["8"]}


def channel(**overrides):
    return load_config({"channels": {"tg": {**TG, **overrides}}}, env={}).channels["tg"]


class ListAdapter:
    """Parses what a test hands it: a list of inbound dicts."""

    def parse(self, raw):
        if not isinstance(raw, list):
            raise MalformedUpdate("not a list")
        return [Inbound(**item) for item in raw]


# -- configuration ---------------------------------------------------------------------
@pytest.mark.parametrize("settings, key", [
    ({"type": "pigeon"}, "channels.tg.type"),
    ({"mode": "polling", "type": "discord", "token_env": "A", "public_key_env": "B"}, "mode"),
    ({"token_env": ""}, "token_env"),
    ({"mode": "webhook"}, "webhook_secret_env"),
    ({"api_base": "ftp://x"}, "channels.tg.api_base"),
    ({"retry": {"max_attempts": 0}}, "channels.tg.retry.max_attempts"),
    ({"colour": "blue"}, "channels.tg.colour"),
])
def test_bad_channel_config_fails_naming_the_key(settings, key):
    with pytest.raises(ConfigError) as raised:
        load_config({"channels": {"tg": {**TG, **settings}}}, env={})
    assert key in str(raised.value)


def test_a_feishu_channel_needs_its_verification_token_or_encrypt_key():
    feishu = {"type": "feishu", "app_id_env": "A", "app_secret_env": "S"}
    with pytest.raises(ConfigError, match="channels.fs: .*verification_token_env"):
        load_config({"channels": {"fs": feishu}}, env={})
    load_config({"channels": {"fs": {**feishu, "encrypt_key_env": "E"}}}, env={})


def test_a_bad_channel_name_is_refused():
    with pytest.raises(ConfigError, match="channel name"):
        load_config({"channels": {"Tele Gram": TG}}, env={})


def test_a_missing_credential_fails_at_start_naming_the_key_and_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("TG_TOKEN", raising=False)
    config = load_config({"data_dir": str(tmp_path), "channels": {"tg": TG}}, env={})
    with pytest.raises(ChannelSetupError, match="channels.tg.token_env: environment variable TG_TOKEN is not set"):
        check_credentials(config, env={})
    with pytest.raises(StartupError, match="channels.tg.token_env"):
        main.start_flora(config)


def test_a_discord_public_key_must_be_an_ed25519_key():
    config = load_config({"channels": {"dc": {"type": "discord", "token_env": "T", "public_key_env": "K"}}}, env={})
    with pytest.raises(ChannelSetupError, match="channels.dc.public_key_env"):
        check_credentials(config, env={"T": "x", "K": "abcd"})


def test_a_disabled_channel_needs_no_credentials():
    config = load_config({"channels": {"tg": {**TG, "enabled": False}}}, env={})
    check_credentials(config, env={})


def test_credentials_come_from_the_named_variables():
    adapter = build_adapter("tg", channel(api_base="http://127.0.0.1:9"), env={"TG_TOKEN": "123:abc"})
    assert isinstance(adapter, TelegramAdapter) and adapter._url == "http://127.0.0.1:9/bot123:abc"
    adapter.close()


# -- who may talk ------------------------------------------------------------------------
def test_mapped_senders_are_their_flora_user_allowed_ones_are_named_by_the_channel(store):
    service = ChannelService("tg", channel(), store, tenant_id="acme")
    assert service.flora_user("7") == "alice"
    assert service.flora_user("8") == "tg:8"
    assert service.flora_user("9") is None
    assert ChannelService("tg", channel(allow=["*"]), store, tenant_id="acme").flora_user("9") == "tg:9"


def test_new_messages_are_recorded_and_a_stranger_is_recorded_as_refused(store):
    service = ChannelService("tg", channel(), store, tenant_id="acme")
    fresh = service.receive(ListAdapter(), [{"key": "1", "chat_id": "42", "sender_id": "7", "text": "hi"},
                                            {"key": "2", "chat_id": "42", "sender_id": "666", "text": "psst"}])
    assert [r.message_key for r in fresh] == ["1"]
    assert store.get_channel_message("acme", "tg", "2").state == "refused"
    assert service.receive(ListAdapter(), [{"key": "1", "chat_id": "42", "sender_id": "7", "text": "hi"}]) == []
    with pytest.raises(MalformedUpdate):
        service.receive(ListAdapter(), {"not": "a list"})


def test_a_message_becomes_user_input_with_its_channel_and_user(store):
    service = ChannelService("tg", channel(), store, tenant_id="acme")
    [record] = service.receive(ListAdapter(), [{"key": "5", "chat_id": "42", "sender_id": "7", "text": "hi"}])
    msg = service.user_input(record)
    assert (msg["user_id"], msg["tenant_id"], msg["channel"], msg["content"], msg["msg_id"]) == \
        ("alice", "acme", "tg:42", "hi", "ch_tg_5")


def test_buttons_become_an_approval_or_an_option(store):
    service = ChannelService("tg", channel(), store, tenant_id="acme")
    yes, pick = service.receive(ListAdapter(), [
        {"key": "6", "chat_id": "42", "sender_id": "7", "action": parse_button("a:y:task_1")},
        {"key": "7", "chat_id": "42", "sender_id": "7", "action": parse_button("o:2")}])
    approve = service.user_input(yes)
    assert (approve["task_id"], approve["approve"], approve["content"]) == ("task_1", True, "")
    assert service.user_input(pick)["content"] == "2"
    assert parse_button("a:n:task_1") == {"approve": False, "task_id": "task_1"}
    assert parse_button("something else") is None and parse_button("o:") is None


# -- what is sent ------------------------------------------------------------------------
def recorded(service):
    return service.receive(ListAdapter(), [{"key": "r", "chat_id": "42", "sender_id": "7", "text": "x"}])[0]


def test_an_approval_question_gets_yes_and_no_buttons(store):
    service = ChannelService("tg", channel(), store, tenant_id="acme")
    out = service.outbound(recorded(service), {"message_type": "task_paused", "msg_id": "m", "task_id": "task_9",
                                               "message": "Delete notes.txt?", "missing_parameters": [],
                                               "pause_kind": "waiting_approval"})
    assert out.kind == "question" and out.chat_id == "42"
    assert [[b.data for b in row] for row in out.buttons] == [["a:y:task_9", "a:n:task_9"]]


def test_a_clarification_gets_a_button_per_option_two_a_row(store):
    service = ChannelService("tg", channel(), store, tenant_id="acme")
    options = [{"id": str(i), "label": f"choice {i}"} for i in range(1, 4)] + [{"id": "x" * 80, "label": "too long"}]
    out = service.outbound(recorded(service), {"message_type": "clarification", "msg_id": "m",
                                               "message": "Which one?", "options": options})
    assert [[b.label for b in row] for row in out.buttons] == [["choice 1", "choice 2"], ["choice 3"]]


def test_an_error_is_marked_and_a_parameter_question_has_no_buttons(store):
    service = ChannelService("tg", channel(), store, tenant_id="acme")
    record = recorded(service)
    error = service.outbound(record, {"message_type": "task_error", "msg_id": "m", "error_type": "internal",
                                      "message": "It broke.", "retryable": True})
    assert error.text == "⚠️ It broke." and error.buttons == []
    question = service.outbound(record, {"message_type": "task_paused", "msg_id": "m", "task_id": "t",
                                         "message": "Which city?", "missing_parameters": [],
                                         "pause_kind": "waiting_parameters"})
    assert question.text == "Which city?" and question.buttons == []


def test_a_notification_goes_to_the_chat_its_channel_names(store):
    service = ChannelService("tg", channel(), store, tenant_id="acme")
    note = {"notification_id": "note_1", "tenant_id": "acme", "user_id": "alice", "message": "⏰ Reminder: tea",
            "kind": "loop_run_completed", "channel": "tg:42"}
    out = service.notification(note)
    assert (out.chat_id, out.text, out.kind, out.ref) == ("42", "⏰ Reminder: tea", "notification", "note_1")
    assert service.notification({**note, "channel": "dc:42"}) is None
    assert service.notification({**note, "channel": ""}) is None


# -- delivery ------------------------------------------------------------------------------
@pytest.fixture
def bot():
    with BotAPI() as api:
        yield api


def deliverer(bot, store, sleeps, **retry):
    settings = channel(retry={"max_attempts": 4, "backoff_s": 0.5, "backoff_max_s": 1.0, **retry})
    return Deliverer(TelegramAdapter(base_url=bot.url, token=TOKEN), store, tenant_id="acme", channel="tg",
                     retry=settings.retry, sleep=sleeps.append)


def test_a_429_waits_the_retry_after_it_names(bot, store):
    sleeps: list[float] = []
    bot.fail_next(2, status=429, retry_after=3)
    assert deliverer(bot, store, sleeps).deliver(Outbound(chat_id="42", text="hi", ref="r1"))
    assert sleeps == [3.0, 3.0] and len(bot.sent) == 1
    [record] = store.channel_deliveries("acme", "tg", ref="r1")
    assert (record.state, record.attempts) == ("delivered", 3)


def test_server_errors_back_off_doubling_up_to_the_cap_then_fail_and_are_recorded(bot, store):
    sleeps: list[float] = []
    bot.fail_next(10, status=500)
    assert not deliverer(bot, store, sleeps).deliver(Outbound(chat_id="42", text="hi", ref="r2"))
    assert sleeps == [0.5, 1.0, 1.0]
    [record] = store.channel_deliveries("acme", "tg", ref="r2")
    assert record.state == "failed" and record.attempts == 4 and "500" in record.error


def test_an_adapter_that_raises_on_an_answer_counts_as_a_failed_try_and_the_entry_is_retried(bot, store):
    sleeps: list[float] = []
    sender = deliverer(bot, store, sleeps)
    real_send, calls = sender._adapter.send, []

    def send_once_broken(body):
        calls.append(body)
        if len(calls) == 1:
            raise AttributeError("'str' object has no attribute 'get'")  # an answer the adapter misread
        real_send(body)

    sender._adapter.send = send_once_broken
    assert sender.deliver(Outbound(chat_id="42", text="hi", ref="r9"))
    assert sleeps == [0.5] and len(bot.sent) == 1
    [record] = store.channel_deliveries("acme", "tg", ref="r9")
    assert (record.state, record.attempts) == ("delivered", 2)


def test_a_refusal_that_would_repeat_is_not_retried(bot, store):
    sleeps: list[float] = []
    out = Outbound(chat_id="42", text="", ref="r3")
    bot.fail_next(1, status=403)
    assert not deliverer(bot, store, sleeps).deliver(out)
    assert sleeps == [] and store.channel_deliveries("acme", "tg", ref="r3")[0].attempts == 1


def test_a_long_reply_goes_out_in_pieces_with_the_buttons_on_the_last(bot, store):
    from capabilities.channels.model import Button

    text = "\n\n".join("word " * 300 for _ in range(5))
    out = Outbound(chat_id="42", text=text, ref="r4", buttons=[[Button("Yes", "a:y:t")]])
    assert deliverer(bot, store, []).deliver(out)
    assert len(bot.sent) > 1 and all(len(s["text"]) <= 4096 for s in bot.sent)
    assert ["reply_markup" in s for s in bot.sent] == [False] * (len(bot.sent) - 1) + [True]


def test_channels_refuse_an_actor_system_that_runs_only_inside_asks():
    with pytest.raises(ConfigError, match="channels: chat channels need a multiprocess actor system"):
        load_config({"actors": {"system_base": "simpleSystemBase"}, "channels": {"tg": TG}}, env={})
    load_config({"actors": {"system_base": "simpleSystemBase"}, "channels": {"tg": {**TG, "enabled": False}}},
                env={})


def test_a_paused_loop_runs_approval_notification_gets_buttons(store):
    from common.tasks.models import TaskRecord

    store.create_task(TaskRecord(task_id="run_1", tenant_id="acme", user_id="alice", content="delete x",
                                 state="waiting_approval"))
    service = ChannelService("tg", channel(), store, tenant_id="acme")
    note = {"notification_id": "note_2", "tenant_id": "acme", "user_id": "alice", "kind": "loop_run_paused",
            "message": "Loop task loop_1 (delete x) is waiting for you", "channel": "tg:42", "task_id": "run_1"}
    assert [[b.data for b in row] for row in service.notification(note).buttons] == [["a:y:run_1", "a:n:run_1"]]
    store.transition("acme", "run_1", "cancelled")
    assert service.notification(note).buttons == []


def test_the_notification_desk_pushes_a_chats_notification_to_its_channel_once(store):
    from agents.coordination.notification_desk import NotificationDesk
    from common.tasks.models import Notification

    desk = NotificationDesk(store, default_tenant="acme", channels={"tg": "tg-actor"})
    mine = store.add_notification(Notification(notification_id="n1", tenant_id="acme", user_id="alice",
                                               message="hi", kind="loop_run_completed", channel="tg:42"))
    other = store.add_notification(Notification(notification_id="n2", tenant_id="acme", user_id="alice",
                                                message="hi", kind="loop_run_completed", channel="http"))
    assert desk.recipients({**mine.to_dict(), "message_type": "notification"}) == ["tg-actor"]
    assert desk.recipients({**other.to_dict(), "message_type": "notification"}) == []
    assert [n.notification_id for n in store.notifications("acme", "alice")] == ["n2"]  # pushed ones are read


def test_markdown_telegram_cannot_parse_goes_out_again_as_plain_text(bot):
    adapter = TelegramAdapter(base_url=bot.url, token=TOKEN)
    try:
        adapter.send({"chat_id": "42", "text": "1\\. price: 3.50", "parse_mode": "MarkdownV2"})
    finally:
        adapter.close()
    assert bot.sent == [{"chat_id": "42", "text": "1. price: 3.50"}]


def test_every_rendering_of_a_mixed_reply_is_markdown_v2_telegram_accepts():
    from capabilities.channels.telegram.render import telegram
    from tests.support.telegram_server import markdown_v2_problem

    reply = ("# Results (draft)\n**Total**: 1,234.5 (+3%) — see [report](https://x.org/r?id=1&v=2).\n"
             "- item_one {a}\n- item #2 = done!\n> note: ~approx~\n| k | v |\n|---|---|\n| a.b | 1 |\n"
             "```python\nprint('`hi`', a\\b)\n```\nEnd with `code.` and _it_ and ~~gone~~.")
    for piece in telegram(reply * 20):
        assert markdown_v2_problem(piece) is None, piece


def test_a_polling_telegram_channel_refuses_webhook_calls_even_without_a_secret_header():
    from capabilities.channels.model import Unauthorized

    adapter = TelegramAdapter(base_url="http://127.0.0.1:9", token=TOKEN)
    try:
        with pytest.raises(Unauthorized, match="polls"):
            adapter.webhook('{"update_id": 1, "message": {}}', {})
    finally:
        adapter.close()


def test_the_telegram_poller_moves_its_offset_only_past_updates_it_recorded():
    import threading

    from capabilities.channels.model import MalformedUpdate
    from capabilities.channels.telegram import UpdatePoller

    recorded, store_up = [], [True]

    def receive(update):
        if update.get("bad"):
            raise MalformedUpdate("not a message")
        if not store_up[0]:
            raise OSError("the store is down")
        recorded.append(update["update_id"])

    poller = UpdatePoller(None, timeout_s=1, receive=receive, stop=threading.Event())
    assert poller.take([{"update_id": 5}, {"update_id": 6, "bad": True}, "junk"], None) == 7  # skipped, not stuck
    store_up[0] = False
    assert poller.take([{"update_id": 7}, {"update_id": 8}], 7) == 7  # not recorded: asked for again
    store_up[0] = True
    assert poller.take([{"update_id": 7}, {"update_id": 8}], 7) == 9 and recorded == [5, 7, 8]
