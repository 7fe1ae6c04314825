"""Telegram across restarts: an update recorded before a crash is answered once after it
(Telegram's redelivery of it included), and a reply kept but not sent is sent after a restart
without running its task again. Each test starts its own Flora (one actor system per process
at a time, so not beside test_telegram_flow's)."""

from __future__ import annotations

import time

import main
from capabilities.channels.service import ChannelService
from capabilities.channels.telegram import TelegramAdapter
from common.tasks.sqlite_store import SQLiteTaskStore
from config import load_config
from tests.channels.test_telegram_flow import ALICE, bot, channel_config, token  # noqa: F401  (fixtures)
from tests.support.telegram_server import TOKEN


def test_a_message_recorded_before_a_crash_is_answered_once_after_the_restart(bot, tmp_path):
    config = load_config(channel_config(tmp_path, bot.url), env={})
    update = bot.add_message("tell me a joke after the crash", chat_id=77, user_id=ALICE)
    # what the poller did before the crash: the update recorded, the offset not moved on
    store = SQLiteTaskStore(config.sqlite_path)
    service = ChannelService("tg", config.channels["tg"], store, tenant_id="default")
    adapter = TelegramAdapter(base_url=bot.url, token=TOKEN)
    assert len(service.receive(adapter, update)) == 1
    adapter.close()
    flora = main.start_flora(config)
    try:
        sent = bot.wait_sent(1, chat_id=77)
        bot.wait_confirmed()  # Telegram's redelivery was read too
        bot.add_message("and a second one", chat_id=77, user_id=ALICE)
        sent = bot.wait_sent(2, chat_id=77)
        assert ["after the crash" in s["text"] for s in sent] == [True, False]
        assert store.get_channel_message("default", "tg", str(update["update_id"])).state == "answered"
    finally:
        flora.shutdown()
        store.close()


def test_a_reply_pending_in_the_outbox_is_sent_after_the_restart_without_running_again(bot, tmp_path):
    config = channel_config(tmp_path, bot.url, max_attempts=5, backoff_s=30)  # the next try is far away
    bot.fail_next(1, status=500)
    flora = main.start_flora(config)
    try:
        update = bot.add_message("delete file path=once.txt", chat_id=78, user_id=ALICE)
        store = SQLiteTaskStore(flora.config.sqlite_path)
        key = str(update["update_id"])
        deadline = time.monotonic() + 20
        while [(d.state, d.attempts) for d in store.channel_deliveries("default", "tg", ref=key)] != [("pending", 1)]:
            assert time.monotonic() < deadline, "the failed send was never recorded as pending"
            time.sleep(0.05)
        assert store.pending_channel_deliveries("default", "tg")[0].payload["chat_id"] == "78"
    finally:
        flora.shutdown()
    tasks_before = len(store.list_tasks("default", user_id="alice"))
    flora = main.start_flora(config)
    try:
        question = bot.wait_sent(1, chat_id=78, timeout=10)[0]  # now, not after the 30 s backoff
        assert "reply_markup" in question  # the approval question, with its buttons
        assert len(store.list_tasks("default", user_id="alice")) == tasks_before  # not run again
        deadline = time.monotonic() + 5
        while store.channel_deliveries("default", "tg", ref=key)[0].state != "delivered":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert store.count_channel_deliveries("default", "tg") == {"delivered": 1}
    finally:
        flora.shutdown()
        store.close()
