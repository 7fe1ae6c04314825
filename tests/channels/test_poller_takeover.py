"""Two real Flora nodes, one poller: two ``main.py --api`` processes in one convention on the
real Redis, both configured with the same Telegram bot (polling, against the local Bot API).
Exactly one node holds the bot's lease and polls; when that node's whole process family is
killed with SIGKILL, the other takes the lease over within 15 s and answers a message sent
after the kill, once. The measured takeover is printed (``pytest -s``)."""

from __future__ import annotations

import os
import signal
import time

import pytest
import redis

from agents.actor_system import free_port
from tests.actors.test_nodes import node_config
from tests.api.conftest import start_server, stop_server
from tests.conftest import REDIS_URL
from tests.support.connections import pids_talking_to
from tests.support.flora_process import marked_pids
from tests.support.telegram_server import TOKEN, BotAPI
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(600)

TOKEN_ENV = "FLORA_TEST_TAKEOVER_TOKEN"
ALICE = 7
TAKEOVER_S = 15.0


def kill_family(mark: str) -> None:
    """SIGKILL every process of a node (its main process, Thespian admin, actors), again until
    none is left (one may be forked while the others die)."""
    def gone() -> bool:
        for pid in marked_pids(mark):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return not marked_pids(mark)
    wait_until(gone, timeout=10, what="the node's processes survive SIGKILL")


def texts_to(bot: BotAPI, chat: int) -> list[str]:
    return [s["text"] for s in bot.sent if str(s.get("chat_id")) == str(chat)]


def test_the_other_node_takes_over_a_killed_pollers_bot_within_15_s_and_answers_once(tmp_path, redis_prefix,
                                                                                         monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)  # the node processes inherit it
    lease_key = f"{redis_prefix}:poller:tg"
    watch = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    leader = free_port()
    with BotAPI() as bot:
        channels = {"tg": {"type": "telegram", "mode": "polling", "api_base": bot.url, "token_env": TOKEN_ENV,
                           "poll_timeout_s": 1, "users": {str(ALICE): "alice"}}}
        nodes = {}
        try:
            for name, port in (("A", leader), ("B", free_port())):
                nodes[name] = start_server(tmp_path / name, extra={**node_config(redis_prefix, name, port, leader),
                                                                   "channels": channels})
            holder = wait_until(lambda: watch.get(lease_key), timeout=30, what="no node took the bot's lease")
            polling = holder.split(":", 1)[0]
            [other] = set(nodes) - {polling}
            # exactly one polls: across several long polls, only the holder's processes talk to the bot
            polls_before = sum(1 for r in bot.server.requests if r.path.endswith("/getUpdates"))
            talkers: set[int] = set()

            def polled_a_while() -> bool:
                talkers.update(pids_talking_to(bot.server.port))
                return sum(1 for r in bot.server.requests if r.path.endswith("/getUpdates")) >= polls_before + 4
            wait_until(polled_a_while, timeout=30, what="the bot was not polled")
            assert talkers and talkers <= set(marked_pids(nodes[polling].mark))
            assert not talkers & set(marked_pids(nodes[other].mark))

            bot.add_message("before the kill", chat_id=71, user_id=ALICE)
            wait_until(lambda: texts_to(bot, 71), timeout=30, what="the first message was not answered")

            killed_at = time.monotonic()
            kill_family(nodes[polling].mark)
            bot.add_message("after the kill", chat_id=72, user_id=ALICE)
            taken = wait_until(lambda: (watch.get(lease_key) or "").startswith(f"{other}:"), timeout=TAKEOVER_S + 5,
                               what="the other node never took the lease")
            lease_s = time.monotonic() - killed_at
            wait_until(lambda: texts_to(bot, 72), timeout=30, what="the message after the kill was not answered")
            answered_s = time.monotonic() - killed_at
            print(f"\ntakeover: lease taken by node {other} {lease_s:.1f} s after the kill, "
                  f"the message sent after the kill answered {answered_s:.1f} s after it")
            assert taken and lease_s <= TAKEOVER_S
            assert answered_s <= TAKEOVER_S + 5  # the lease, then one long poll and the fake model's answer
            # once each: the new poller reads from Telegram's offset and the store drops what it recorded
            polls_after = sum(1 for r in bot.server.requests if r.path.endswith("/getUpdates"))
            wait_until(lambda: sum(1 for r in bot.server.requests if r.path.endswith("/getUpdates")) >= polls_after + 3,
                       timeout=30, what="the new poller stopped polling")
            assert [len(texts_to(bot, 71)), len(texts_to(bot, 72))] == [1, 1]
            assert set(pids_talking_to(bot.server.port)) <= set(marked_pids(nodes[other].mark))
        finally:
            for server in nodes.values():
                stop_server(server)
            watch.close()
