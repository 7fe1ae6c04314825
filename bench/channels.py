"""A Telegram message through Flora's channel, beside the same message through ``system.ask``.

Two measurements in one run, on one Flora (multiprocTCPBase, the deterministic fake model
``tests.support.fake_llm:respond``, memory off), each ``--warmup`` untimed messages then
``--requests`` sequential ones, latency p50/p99:

- telegram: an update put on a local server speaking the Bot API (tests/support/telegram_server.py)
  until Flora's ``sendMessage`` for it arrives there: the poller's ``getUpdates`` long poll,
  recording the update, the ChannelActor's hand-over, InteractionActor → AgentActor →
  ExecutionActor and back, MarkdownV2 rendering, the sender thread's ``sendMessage``.
- raw ask: the same ``user_input`` asked straight of the InteractionActor with
  ``flora.system.ask`` in this process: what the channel adds is the difference.

Everything talks to 127.0.0.1; Flora is stopped at the end whatever happens.

    .venv/bin/python bench/channels.py [--requests 100] [--warmup 5] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import main  # noqa: E402
from bench.pipeline import percentile  # noqa: E402
from common import messages as m  # noqa: E402
from tests.support.telegram_server import TOKEN, BotAPI  # noqa: E402

TIMEOUT_S = 30
TOKEN_ENV = "FLORA_BENCH_TELEGRAM_TOKEN"
CHAT, SENDER = 4200, 7


def config(data_dir: str, api_url: str) -> dict:
    return {
        "data_dir": data_dir,
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": TIMEOUT_S},
        "memory": {"enabled": False},
        "channels": {"telegram": {"type": "telegram", "mode": "polling", "api_base": api_url,
                                  "token_env": TOKEN_ENV, "poll_timeout_s": 10, "users": {str(SENDER): "bench"}}},
    }


def summary(latencies: list[float]) -> dict:
    return {"p50_ms": statistics.median(latencies) * 1e3, "p99_ms": percentile(latencies, 99) * 1e3,
            "n": len(latencies)}


def through_telegram(bot: BotAPI, count: int) -> list[float]:
    latencies = []
    for _ in range(count):
        before = len(bot.sent)
        started = time.monotonic()
        bot.add_message("hello", chat_id=CHAT, user_id=SENDER)
        bot.wait_sent(before + 1, timeout=TIMEOUT_S)
        latencies.append(bot.send_times[before] - started)
    return latencies


def through_ask(flora, count: int) -> list[float]:
    latencies = []
    for _ in range(count):
        msg = m.user_input(user_id="bench", content="hello", channel=f"telegram:{CHAT + 1}")
        started = time.perf_counter()
        reply = flora.system.ask(flora.interaction, msg, TIMEOUT_S)
        latencies.append(time.perf_counter() - started)
        if not isinstance(reply, dict) or reply.get("message_type") != "chat_reply":
            raise RuntimeError(f"unexpected reply: {reply!r}")
    return latencies


def main_(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    os.environ[TOKEN_ENV] = TOKEN
    data_dir = tempfile.mkdtemp(prefix="flora-bench-channels-")
    try:
        with BotAPI() as bot:
            flora = main.start_flora(config(data_dir, bot.url))
            try:
                through_telegram(bot, args.warmup)
                through_ask(flora, args.warmup)
                telegram = summary(through_telegram(bot, args.requests))
                raw = summary(through_ask(flora, args.requests))
            finally:
                flora.shutdown()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    result = {"telegram_update_to_sendMessage": telegram, "system_ask": raw,
              "ratio_p50": telegram["p50_ms"] / raw["p50_ms"], "ratio_p99": telegram["p99_ms"] / raw["p99_ms"]}
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{'path':<34}{'p50 ms':>10}{'p99 ms':>10}{'n':>6}")
    for name, row in (("telegram update -> sendMessage", telegram), ("system.ask (InteractionActor)", raw)):
        print(f"{name:<34}{row['p50_ms']:>10.1f}{row['p99_ms']:>10.1f}{row['n']:>6}")
    print(f"ratio telegram / ask: p50 {result['ratio_p50']:.2f}x, p99 {result['ratio_p99']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
