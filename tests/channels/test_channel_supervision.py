"""A bot token Telegram refuses stops the channel with a clear status instead of polling
forever. (A ChannelActor killed mid-conversation, for every channel type: test_channel_kill.py.)"""

from __future__ import annotations

import re

import main
from common.status import collect_status, health_report, render_prometheus, render_text
from tests.channels.test_telegram_flow import TOKEN_ENV, bot, channel_config, token  # noqa: F401  (fixtures)
from tests.support.waiting import wait_until


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
