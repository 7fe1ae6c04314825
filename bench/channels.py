"""A Telegram message and an e-mail through Flora's channels, beside the same message through ``system.ask``.

Two measurements in one run, on one Flora (multiprocTCPBase, the deterministic fake model
``tests.support.fake_llm:respond``, memory off), each ``--warmup`` untimed messages then
``--requests`` sequential ones, latency p50/p99:

- telegram: an update put on a local server speaking the Bot API (tests/support/telegram_server.py)
  until Flora's ``sendMessage`` for it arrives there: the poller's ``getUpdates`` long poll,
  recording the update, the ChannelActor's hand-over, InteractionActor → AgentActor →
  ExecutionActor and back, MarkdownV2 rendering, the sender thread's ``sendMessage``.
- e-mail: a mail appended to a real dovecot mailbox (tests/support/mail_servers.py) until
  Flora's answer arrives at a local SMTP server (aiosmtpd), ``--mail-requests`` of them, on
  three channels of their own mailbox each: ``idle push`` (the server offers IMAP IDLE),
  ``active`` (no IDLE: polled every ``poll_interval_active``, kept active) and ``idle``
  (no IDLE: polled every ``poll_interval_idle``, ``active_timeout: 0``). The intervals are
  printed beside the figures: polling adds up to one interval, half of it on average.
- raw ask: the same ``user_input`` asked straight of the InteractionActor with
  ``flora.system.ask`` in this process: what the channel adds is the difference.

Everything talks to 127.0.0.1; Flora and the mail servers are stopped at the end whatever happens.

    .venv/bin/python bench/channels.py [--requests 100] [--mail-requests 20] [--warmup 5] [--json]
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
from tests.support.mail_servers import PASSWORD, USER, Dovecot, SMTPSink, mail  # noqa: E402
from tests.support.telegram_server import TOKEN, BotAPI  # noqa: E402

TIMEOUT_S = 30
TOKEN_ENV = "FLORA_BENCH_TELEGRAM_TOKEN"
CHAT, SENDER = 4200, 7
MAIL_USER_ENV, MAIL_PASSWORD_ENV = "FLORA_BENCH_MAIL_USER", "FLORA_BENCH_MAIL_PASSWORD"
# channel -> (the server offers IDLE, poll_interval_idle, poll_interval_active, active_timeout)
MAIL_CHANNELS = {"mail-push": (True, 60.0, 5.0, 300.0), "mail-active": (False, 2.0, 0.5, 3600.0),
                 "mail-idle": (False, 2.0, 0.5, 0.0)}


def mail_channel(name: str, imap_port: int, smtp_port: int) -> dict:
    _, idle_s, active_s, timeout_s = MAIL_CHANNELS[name]
    return {"type": "email", "address": f"{name}@flora.bench", "username_env": MAIL_USER_ENV,
            "password_env": MAIL_PASSWORD_ENV, "imap": {"host": "127.0.0.1", "port": imap_port, "security": "plain"},
            "smtp": {"host": "127.0.0.1", "port": smtp_port, "security": "plain"},
            "users": {f"{name}@people.bench": "bench"}, "poll_interval_idle": idle_s,
            "poll_interval_active": active_s, "active_timeout": timeout_s,
            # the local dovecot adds no Authentication-Results: the bench's senders are taken as they say
            "require_sender_auth": False}


def config(data_dir: str, api_url: str, mailboxes: dict | None = None, smtp_port: int = 0) -> dict:
    channels = {name: mail_channel(name, server.port, smtp_port) for name, server in (mailboxes or {}).items()}
    return {
        "data_dir": data_dir,
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": TIMEOUT_S},
        "memory": {"enabled": False},
        "channels": {"telegram": {"type": "telegram", "mode": "polling", "api_base": api_url,
                                  "token_env": TOKEN_ENV, "poll_timeout_s": 10, "users": {str(SENDER): "bench"}},
                     **channels},
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


def through_mail(name: str, mailbox: Dovecot, smtp: SMTPSink, count: int) -> list[float]:
    person = f"{name}@people.bench"
    latencies = []
    for i in range(count):
        before = len(smtp.mails_to(person))
        message = mail(person, "hello", subject=f"bench {i}", to=f"{name}@flora.bench")
        started = time.monotonic()
        mailbox.deliver(message)
        smtp.wait_for(person, before + 1, timeout=TIMEOUT_S)
        latencies.append(smtp.received_at(person, before) - started)
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
    parser.add_argument("--mail-requests", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    os.environ[TOKEN_ENV] = TOKEN
    os.environ[MAIL_USER_ENV], os.environ[MAIL_PASSWORD_ENV] = USER, PASSWORD
    data_dir = tempfile.mkdtemp(prefix="flora-bench-channels-")
    mailboxes = {name: Dovecot(idle=spec[0]) for name, spec in MAIL_CHANNELS.items()}
    try:
        with BotAPI() as bot, SMTPSink() as smtp:
            for server in mailboxes.values():
                server.start()
            flora = main.start_flora(config(data_dir, bot.url, mailboxes, smtp.port))
            try:
                through_telegram(bot, args.warmup)
                through_ask(flora, args.warmup)
                for name, server in mailboxes.items():
                    through_mail(name, server, smtp, min(args.warmup, 2))
                telegram = summary(through_telegram(bot, args.requests))
                mails = {name: summary(through_mail(name, server, smtp, args.mail_requests))
                         for name, server in mailboxes.items()}
                raw = summary(through_ask(flora, args.requests))
            finally:
                flora.shutdown()
    finally:
        for server in mailboxes.values():
            server.close()
        shutil.rmtree(data_dir, ignore_errors=True)
    result = {"telegram_update_to_sendMessage": telegram, "system_ask": raw,
              "ratio_p50": telegram["p50_ms"] / raw["p50_ms"], "ratio_p99": telegram["p99_ms"] / raw["p99_ms"],
              "email": {name: {**row, "imap_idle": MAIL_CHANNELS[name][0],
                               "poll_interval_s": MAIL_CHANNELS[name][2 if name == "mail-active" else 1],
                               "ratio_p50": row["p50_ms"] / raw["p50_ms"]} for name, row in mails.items()}}
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{'path':<44}{'p50 ms':>10}{'p99 ms':>10}{'n':>6}")
    rows = [("telegram update -> sendMessage", telegram)]
    for name, row in result["email"].items():
        how = "IMAP IDLE" if row["imap_idle"] else f"polled every {row['poll_interval_s']:g} s"
        rows.append((f"e-mail -> SMTP ({name[5:]}: {how})", row))
    rows.append(("system.ask (InteractionActor)", raw))
    for name, row in rows:
        print(f"{name:<44}{row['p50_ms']:>10.1f}{row['p99_ms']:>10.1f}{row['n']:>6}")
    print(f"ratio telegram / ask: p50 {result['ratio_p50']:.2f}x, p99 {result['ratio_p99']:.2f}x")
    for name, row in result["email"].items():
        print(f"ratio {name} / ask: p50 {row['ratio_p50']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
