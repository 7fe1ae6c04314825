"""A Telegram ChannelActor killed with SIGKILL mid-conversation is started again by its
supervisor, which resumes from the store: the reply still arrives, once; and a bot token
Telegram refuses stops the channel with a clear status instead of polling forever. Each test
starts its own Flora (one actor system per process at a time)."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path
from urllib.parse import urlsplit

import main
from common.status import collect_status, health_report, render_prometheus, render_text
from common.tasks.sqlite_store import SQLiteTaskStore
from tests.channels.test_telegram_flow import ALICE, TOKEN_ENV, bot, channel_config, token  # noqa: F401  (fixtures)
from tests.support.waiting import wait_until


def _socket_inodes_to(port: int) -> set[str]:
    """The inodes of this machine's TCP sockets connected to local ``port``."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[2].rsplit(":", 1)[1], 16) == port and fields[3] == "01":  # ESTABLISHED
                inodes.add(fields[9])
    return inodes


def pids_talking_to(port: int) -> list[int]:
    """This user's processes with a connection open to local ``port``: the channel's poller
    holds one to the Bot API server, and nothing else of Flora talks to it."""
    inodes, found = _socket_inodes_to(port), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            links = [os.readlink(fd) for fd in (entry / "fd").iterdir()]
        except (PermissionError, FileNotFoundError, ProcessLookupError):
            continue
        if any(link.startswith("socket:[") and link[8:-1] in inodes for link in links):
            found.append(int(entry.name))
    return found


def test_a_channel_actor_killed_mid_conversation_is_started_again_and_the_reply_arrives_once(bot, tmp_path):
    config = channel_config(tmp_path, bot.url, max_attempts=20, backoff_s=0.3, backoff_max_s=0.3)
    flora = main.start_flora(config)
    store = SQLiteTaskStore(flora.config.sqlite_path)
    try:
        port = urlsplit(bot.url).port
        wait_until(lambda: len(pids_talking_to(port)) == 1, timeout=20, what="the poller never connected")
        [channel_pid] = pids_talking_to(port)
        bot.fail_next(10_000, status=500)  # the reply cannot go out yet: the conversation is under way
        update = bot.add_message("tell me a joke before the kill", chat_id=91, user_id=ALICE)
        key = str(update["update_id"])
        wait_until(lambda: any(d.attempts >= 2 for d in store.channel_deliveries("default", "tg", ref=key)),
                   timeout=20, what="the reply was never tried")
        os.kill(channel_pid, signal.SIGKILL)
        bot.stop_failing()  # Telegram answers again; the dead actor's sender cannot
        sent = bot.wait_sent(1, chat_id=91, timeout=20)  # from the ChannelActor started in its place
        assert "before the kill" in sent[0]["text"]
        assert channel_pid not in pids_talking_to(port)
        bot.add_message("and one after it", chat_id=91, user_id=ALICE)  # the new actor polls, too
        sent = bot.wait_sent(2, chat_id=91, timeout=20)
        time.sleep(0.5)  # a second copy of the first reply would have gone out by now
        sent = [s for s in bot.sent if s.get("chat_id") in (91, "91")]
        assert ["before the kill" in s["text"] for s in sent] == [True, False]
        assert [d.state for d in store.channel_deliveries("default", "tg", ref=key)] == ["delivered"]
        assert collect_status(flora.config)["channels"]["tg"]["state"] == "running"
    finally:
        flora.shutdown()
        store.close()


def test_a_bot_token_telegram_refuses_stops_the_channel_with_a_clear_status(bot, tmp_path, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "999:not-the-token")
    flora = main.start_flora(channel_config(tmp_path, bot.url))
    try:
        wait_until(lambda: collect_status(flora.config)["channels"]["tg"]["state"].startswith("stopped"), timeout=20,
                   what="the channel never noticed the refused token")
        status = collect_status(flora.config)
        assert status["channels"]["tg"]["state"] == "stopped: bad credentials"
        assert re.search(r"^channel\s+tg\s+stopped: bad credentials", render_text(status), re.M)
        assert 'flora_channel_up{channel="tg",state="stopped: bad credentials"} 0' in render_prometheus(status)
        health = health_report("ok", [], None, status["channels"])
        assert health["status"] == "degraded" and "channel tg is stopped: bad credentials" in health["reasons"]
    finally:
        flora.shutdown()
