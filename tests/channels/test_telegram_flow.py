"""Telegram end to end: a running Flora (multiprocess actors, the scripted test model) polls a
local server speaking the Bot API, answers in the chat, asks approval questions with buttons,
delivers loop notifications to the chat the loop task was made in, refuses unknown senders,
honours 429 retry_after, and skips malformed updates while it keeps serving."""

from __future__ import annotations

import re
import time

import pytest

import main
from common.tasks.sqlite_store import SQLiteTaskStore
from tests.support.telegram_server import TOKEN, BotAPI

TOKEN_ENV = "FLORA_TEST_TELEGRAM_TOKEN"
ALICE, BOB, STRANGER = 7, 8, 666


def channel_config(data_dir, api_url: str, **retry) -> dict:
    return {
        "data_dir": str(data_dir),
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 30, "execution_pool_size": 2},
        "loops": {"tick_s": 0.2, "timezone": "Asia/Shanghai"},
        "memory": {"enabled": False},
        "capabilities": {"plugin_modules": ["tests.support.sample_plugins"]},
        "channels": {"tg": {"type": "telegram", "mode": "polling", "api_base": api_url, "token_env": TOKEN_ENV,
                            "poll_timeout_s": 1, "users": {str(ALICE): "alice", str(BOB): "bob"},
                            "retry": {"max_attempts": 4, "backoff_s": 0.05, **retry}}},
    }


@pytest.fixture(autouse=True)
def token(monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)


@pytest.fixture
def bot():
    with BotAPI() as api:
        yield api


@pytest.fixture(scope="module")
def module_bot():
    with BotAPI() as api:
        yield api


@pytest.fixture(scope="module")
def flora(module_bot, tmp_path_factory):
    import os

    os.environ[TOKEN_ENV] = TOKEN  # the actor processes read it at start
    running = main.start_flora(channel_config(tmp_path_factory.mktemp("flora-tg"), module_bot.url))
    yield running
    running.shutdown()
    del os.environ[TOKEN_ENV]


@pytest.fixture
def store(flora):
    opened = SQLiteTaskStore(flora.config.sqlite_path)
    yield opened
    opened.close()


def plain(text: str) -> str:
    """MarkdownV2 as the person reads it: escapes undone."""
    return re.sub(r"\\(.)", r"\1", text)


def next_chat(request) -> int:
    """A chat of each test's own, so what one test sends is not counted by another."""
    return 1000 + abs(hash(request.node.name)) % 100_000


def test_a_message_is_answered_in_its_chat_and_recorded(flora, module_bot, store, request):
    chat = next_chat(request)
    update = module_bot.add_message("tell me a joke", chat_id=chat, user_id=ALICE)
    sent = module_bot.wait_sent(1, chat_id=chat)
    assert sent[0]["parse_mode"] == "MarkdownV2" and "you said" in sent[0]["text"]
    key = str(update["update_id"])
    deadline = time.monotonic() + 10
    while [d.state for d in store.channel_deliveries("default", "tg", ref=key)] != ["delivered"]:
        assert time.monotonic() < deadline, store.channel_deliveries("default", "tg", ref=key)
        time.sleep(0.05)
    assert store.get_channel_message("default", "tg", key).state == "answered"
    assert store.get_channel_message("default", "tg", key).payload["sender_id"] == str(ALICE)


def test_an_approval_question_has_buttons_and_pressing_yes_runs_the_task(flora, module_bot, request):
    chat = next_chat(request)
    module_bot.add_message("delete file path=notes.txt", chat_id=chat, user_id=ALICE)
    question = module_bot.wait_sent(1, chat_id=chat)[0]
    buttons = question["reply_markup"]["inline_keyboard"][0]
    assert [b["callback_data"][:4] for b in buttons] == ["a:y:", "a:n:"]
    press = module_bot.press_button(buttons[0]["callback_data"], chat_id=chat, user_id=ALICE)
    done = module_bot.wait_sent(2, chat_id=chat)[1]
    assert '"deleted": "notes.txt"' in plain(done["text"]) and "reply_markup" not in done
    deadline = time.monotonic() + 10
    while press["callback_query"]["id"] not in module_bot.callback_answers:
        assert time.monotonic() < deadline, "the button press was never acknowledged"
        time.sleep(0.05)


def test_pressing_no_cancels_the_task(flora, module_bot, request):
    chat = next_chat(request)
    module_bot.add_message("delete file path=keep.txt", chat_id=chat, user_id=BOB)
    question = module_bot.wait_sent(1, chat_id=chat)[0]
    module_bot.press_button(question["reply_markup"]["inline_keyboard"][0][1]["callback_data"], chat_id=chat,
                            user_id=BOB)
    answer = module_bot.wait_sent(2, chat_id=chat)[1]
    assert answer["text"].startswith("⚠️") and "keep" not in answer.get("reply_markup", "")


def test_a_loop_tasks_notification_reaches_the_chat_it_was_made_in(flora, module_bot, request):
    chat = next_chat(request)
    module_bot.add_message("remind me in 3 seconds to stretch", chat_id=chat, user_id=ALICE)
    sent = module_bot.wait_sent(2, chat_id=chat, timeout=30)
    assert "Reminder: stretch" in plain(sent[1]["text"])
    # pushed to the chat, so read: it is not waiting among alice's unread notifications
    assert all("stretch" not in n["message"] for n in flora.notifications("alice"))


def test_an_unknown_sender_gets_nothing_and_is_recorded_as_refused(flora, module_bot, store, request):
    chat = next_chat(request)
    update = module_bot.add_message("give me the sales figures", chat_id=chat, user_id=STRANGER)
    module_bot.wait_confirmed()
    module_bot.add_message("hello there", chat_id=chat, user_id=ALICE)  # the same chat, a known sender
    sent = module_bot.wait_sent(1, chat_id=chat)
    assert len(sent) == 1 and "hello there" in sent[0]["text"]
    assert store.get_channel_message("default", "tg", str(update["update_id"])).state == "refused"
    assert store.channel_deliveries("default", "tg", ref=str(update["update_id"])) == []


def test_a_429_is_retried_after_the_seconds_it_asks_for(flora, module_bot, store, request):
    chat = next_chat(request)
    module_bot.fail_next(2, status=429, retry_after=1)
    update = module_bot.add_message("tell me a story", chat_id=chat, user_id=ALICE)
    module_bot.wait_sent(1, chat_id=chat)
    first_refusal = module_bot.refused[-2][0]
    assert module_bot.send_times[-1] - first_refusal >= 2.0  # two waits of retry_after = 1 s
    deadline = time.monotonic() + 10
    while [d.state for d in store.channel_deliveries("default", "tg", ref=str(update["update_id"]))] != ["delivered"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    delivery = store.channel_deliveries("default", "tg", ref=str(update["update_id"]))[0]
    assert delivery.attempts == 3


def test_malformed_and_foreign_updates_are_skipped_and_the_channel_keeps_serving(flora, module_bot, request):
    chat = next_chat(request)
    module_bot.add_raw({"update_id": module_bot.next_id(), "message": {"text": "no chat, no sender"}})
    module_bot.add_raw({"update_id": module_bot.next_id(), "edited_message": {"text": "an edit"}})
    module_bot.add_raw({"update_id": module_bot.next_id(), "callback_query": {"id": "x", "data": "not ours",
                                                                   "from": {"id": ALICE}, "message": {"chat": {"id": chat}}}})
    module_bot.add_message("still there?", chat_id=chat, user_id=ALICE)
    sent = module_bot.wait_sent(1, chat_id=chat)
    assert len(sent) == 1 and "still there" in sent[0]["text"]


def test_a_clarifications_options_are_buttons_and_pressing_one_picks_it(flora, module_bot, request):
    chat = next_chat(request)
    module_bot.add_message("please do the thing", chat_id=chat, user_id=ALICE)
    question = module_bot.wait_sent(1, chat_id=chat)[0]
    buttons = [b for row in question["reply_markup"]["inline_keyboard"] for b in row]
    assert buttons[-1]["text"].startswith("none of these")
    pick = next(b for b in buttons if b["text"].startswith("add_numbers"))
    module_bot.press_button(pick["callback_data"], chat_id=chat, user_id=ALICE)
    asked = plain(module_bot.wait_sent(2, chat_id=chat)[1]["text"])
    assert "(add_numbers)" in asked  # the picked capability asks for its numbers
