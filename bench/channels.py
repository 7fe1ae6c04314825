"""Every channel type through Flora, beside the same message through ``system.ask`` in the same run.

One Flora (multiprocTCPBase, the deterministic fake model ``tests.support.fake_llm:respond``,
memory off) with one channel of each type pointed at the tests' local servers, and its HTTP
API on 127.0.0.1. For each channel ``--warmup`` untimed messages, then ``--requests``
sequential ones (``--mail-requests`` for e-mail), latency p50/p99 and the ratio to
``system.ask``:

- telegram: an update put on a local server speaking the Bot API (tests/support/telegram_server.py)
  until Flora's ``sendMessage`` for it arrives there: the poller's ``getUpdates`` long poll,
  recording the update, the ChannelActor's hand-over, InteractionActor → AgentActor →
  ExecutionActor and back, MarkdownV2 rendering, the sender thread's ``sendMessage``.
- discord, feishu, slack, whatsapp, dingtalk, wecom: a signed call to the HTTP API's
  ``/v1/channels/<name>/webhook`` (the signature check; Feishu's and WeCom's decryption)
  until the answer arrives at the service's local server (tests/support/chat_servers.py,
  work_chat_servers.py).
- matrix: a message put on the local homeserver until Flora's ``PUT`` of the answer (its
  ``/sync`` long poll, then as above).
- e-mail: a mail appended to a real dovecot mailbox (tests/support/mail_servers.py) until
  Flora's answer arrives at a local SMTP server (aiosmtpd), on three channels of their own
  mailbox each: ``push`` (the server offers IMAP IDLE), ``active`` (no IDLE: polled every
  ``poll_interval_active``, kept active) and ``idle`` (no IDLE: polled every
  ``poll_interval_idle``, ``active_timeout: 0``). Polling adds up to one interval.
- system.ask: the same ``user_input`` asked straight of the InteractionActor with
  ``flora.system.ask`` in this process: what a channel adds is the difference.

Everything talks to 127.0.0.1; Flora and the servers are stopped at the end whatever happens.

    .venv/bin/python bench/channels.py [--requests 50] [--mail-requests 20] [--warmup 5] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from contextlib import ExitStack  # noqa: E402

import httpx  # noqa: E402

import main  # noqa: E402
from bench.pipeline import percentile  # noqa: E402
from common import messages as m  # noqa: E402
from tests.channels.test_dingtalk import SECRET as DT_SECRET, callback as dt_callback, signed as dt_signed  # noqa: E402
from tests.channels.test_slack import SIGNING_SECRET, event as slack_event, signed as slack_signed  # noqa: E402
from tests.channels.test_webhooks import (  # noqa: E402
    ENCRYPT_KEY, PUBLIC_HEX, VERIFICATION, dc_command, encrypted, fs_message, signed as dc_signed,
)
from tests.channels.test_wecom import ENV as WC_ENV, WECOM, event_call, text_message  # noqa: E402
from tests.channels.test_whatsapp import APP_SECRET, VERIFY, change, signed as wa_signed, text  # noqa: E402
from tests.support.chat_servers import DISCORD_TOKEN, FEISHU_APP, DiscordAPI, FeishuAPI  # noqa: E402
from tests.support.mail_servers import PASSWORD, RECEIVING_SERVER, USER, Dovecot, SMTPSink, mail  # noqa: E402
from tests.support.http_api import http_api  # noqa: E402
from tests.support.telegram_server import TOKEN, BotAPI  # noqa: E402
from tests.support.work_chat_servers import (  # noqa: E402
    MATRIX_TOKEN, MATRIX_USER, PHONE_ID, SLACK_TOKEN, WHATSAPP_TOKEN, DingTalkAPI, MatrixHomeserver, SlackAPI,
    WeComAPI, WhatsAppAPI,
)

TIMEOUT_S = 30
TOKEN_ENV = "FLORA_BENCH_TELEGRAM_TOKEN"
CHAT, SENDER = 4200, 7
MAIL_USER_ENV, MAIL_PASSWORD_ENV = "FLORA_BENCH_MAIL_USER", "FLORA_BENCH_MAIL_PASSWORD"
# channel -> (the server offers IDLE, poll_interval_idle, poll_interval_active, active_timeout)
MAIL_CHANNELS = {"mail-push": (True, 60.0, 5.0, 300.0), "mail-active": (False, 2.0, 0.5, 3600.0),
                 "mail-idle": (False, 2.0, 0.5, 0.0)}
SEQUENCE = itertools.count()  # message numbers: a repeated key would be dropped as a redelivery
ENV = {TOKEN_ENV: TOKEN, MAIL_USER_ENV: USER, MAIL_PASSWORD_ENV: PASSWORD,
       "FLORA_BENCH_DC_TOKEN": DISCORD_TOKEN, "FLORA_BENCH_DC_KEY": PUBLIC_HEX,
       "FLORA_BENCH_FS_ID": FEISHU_APP["app_id"], "FLORA_BENCH_FS_SECRET": FEISHU_APP["app_secret"],
       "FLORA_BENCH_FS_VERIFY": VERIFICATION, "FLORA_BENCH_FS_ENCRYPT": ENCRYPT_KEY,
       "FLORA_BENCH_SL_TOKEN": SLACK_TOKEN, "FLORA_BENCH_SL_SECRET": SIGNING_SECRET,
       "FLORA_BENCH_WA_TOKEN": WHATSAPP_TOKEN, "FLORA_BENCH_WA_SECRET": APP_SECRET, "FLORA_BENCH_WA_VERIFY": VERIFY,
       "FLORA_BENCH_DT_SECRET": DT_SECRET, "FLORA_BENCH_MX_TOKEN": MATRIX_TOKEN,
       **{f"FLORA_BENCH_{k}": v for k, v in WC_ENV.items()}}
# the services answered over HTTP: channel -> its local server
HTTP_SERVICES = {"discord": DiscordAPI, "feishu": FeishuAPI, "slack": SlackAPI, "whatsapp": WhatsAppAPI,
                 "dingtalk": DingTalkAPI, "wecom": WeComAPI, "matrix": MatrixHomeserver}


def mail_channel(name: str, imap_port: int, smtp_port: int) -> dict:
    _, idle_s, active_s, timeout_s = MAIL_CHANNELS[name]
    return {"type": "email", "address": f"{name}@flora.bench", "username_env": MAIL_USER_ENV,
            "password_env": MAIL_PASSWORD_ENV, "imap": {"host": "127.0.0.1", "port": imap_port, "security": "plain"},
            "smtp": {"host": "127.0.0.1", "port": smtp_port, "security": "plain"},
            "users": {f"{name}@people.bench": "bench"}, "trusted_authserv_ids": [RECEIVING_SERVER],
            "poll_interval_idle": idle_s,
            "poll_interval_active": active_s, "active_timeout": timeout_s}


def config(data_dir: str, api_url: str, mailboxes: dict | None = None, smtp_port: int = 0,
           servers: dict | None = None) -> dict:
    channels = {name: mail_channel(name, server.port, smtp_port) for name, server in (mailboxes or {}).items()}
    return {
        "data_dir": data_dir,
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": TIMEOUT_S},
        "memory": {"enabled": False},
        "channels": {"telegram": {"type": "telegram", "mode": "polling", "api_base": api_url,
                                  "token_env": TOKEN_ENV, "poll_timeout_s": 10, "users": {str(SENDER): "bench"}},
                     **channels, **http_channels(servers or {})},
    }


def http_channels(servers: dict) -> dict:
    """The settings of the channels whose services are the local HTTP servers in ``servers``."""
    url = {name: server.url for name, server in servers.items()}
    made = {
        "discord": lambda: {"type": "discord", "api_base": url["discord"], "token_env": "FLORA_BENCH_DC_TOKEN",
                            "public_key_env": "FLORA_BENCH_DC_KEY", "users": {"501": "bench"}},
        "feishu": lambda: {"type": "feishu", "api_base": url["feishu"], "app_id_env": "FLORA_BENCH_FS_ID",
                           "app_secret_env": "FLORA_BENCH_FS_SECRET", "verification_token_env": "FLORA_BENCH_FS_VERIFY",
                           "encrypt_key_env": "FLORA_BENCH_FS_ENCRYPT", "users": {"ou_bench": "bench"}},
        "slack": lambda: {"type": "slack", "api_base": url["slack"], "bot_token_env": "FLORA_BENCH_SL_TOKEN",
                          "signing_secret_env": "FLORA_BENCH_SL_SECRET", "users": {"UBENCH": "bench"}},
        "whatsapp": lambda: {"type": "whatsapp", "api_base": url["whatsapp"], "phone_number_id": PHONE_ID,
                             "access_token_env": "FLORA_BENCH_WA_TOKEN", "app_secret_env": "FLORA_BENCH_WA_SECRET",
                             "verify_token_env": "FLORA_BENCH_WA_VERIFY", "users": {"4900": "bench"}},
        "dingtalk": lambda: {"type": "dingtalk", "api_base": url["dingtalk"], "app_secret_env": "FLORA_BENCH_DT_SECRET",
                             "users": {"bench": "bench"}},
        "wecom": lambda: {**WECOM, "api_base": url["wecom"], "allow": [], "users": {"bench": "bench"},
                          **{key: f"FLORA_BENCH_{WECOM[key]}"
                             for key in ("corp_secret_env", "token_env", "encoding_aes_key_env")}},
        "matrix": lambda: {"type": "matrix", "api_base": url["matrix"], "user_id": MATRIX_USER,
                           "access_token_env": "FLORA_BENCH_MX_TOKEN", "sync_timeout_s": 10,
                           "users": {"@bench:hs.test": "bench"}},
    }
    return {name: made[name]() for name in servers}


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


def timed(server, chat: str, send, count: int) -> list[float]:
    """``send(i)`` puts message i in (i unique over the run); the seconds until the service's
    local server got the answer."""
    latencies = []
    for _ in range(count):
        i = next(SEQUENCE)
        before = len([s for s in server.sent if s["chat_id"] == chat])
        started = time.monotonic()
        send(i)
        server.wait_sent(before + 1, timeout=TIMEOUT_S, chat_id=chat)
        latencies.append(time.monotonic() - started)
    return latencies


def senders(api: httpx.Client, servers: dict) -> dict:
    """channel -> (its local server, the chat answers go to, send(i)): a signed call to the
    channel's webhook route, or for Matrix a message on the homeserver."""
    run = time.time_ns()

    def post(name: str, body, headers: dict, query: dict | None = None) -> None:
        api.post(f"/v1/channels/{name}/webhook", content=body if isinstance(body, bytes) else body.encode(),
                 headers=headers, params=query or {}).raise_for_status()

    def discord(i):
        call = dc_signed(dc_command(f"{run}{i}", "hello", channel="900"))
        post("discord", call["content"], call["headers"])

    def feishu(i):
        post("feishu", *encrypted(fs_message(f"om_{run}_{i}", "hello", chat="oc_bench", sender="ou_bench")))

    def slack(i):
        post("slack", *slack_signed(slack_event("hello", channel="DBENCH", user="UBENCH", ts=f"{run}.{i}"),
                                    at=time.time()))

    def whatsapp(i):
        post("whatsapp", *wa_signed(change(text("hello", wamid=f"wamid.{run}.{i}", sender="4900"))))

    def dingtalk(i):
        payload = dt_callback("hello", base=servers["dingtalk"].url, msg_id=f"msg{run}.{i}", chat="cidBENCH",
                              staff="bench", expires_in_s=time.time() - 1_700_000_000 + 5400)
        post("dingtalk", *dt_signed(payload, at=time.time()))

    def wecom(i):
        post("wecom", *event_call(text_message("hello", msg_id=f"{run}{i}", sender="bench")))

    def matrix(i):
        servers["matrix"].say("!bench:hs.test", "@bench:hs.test", "hello", event_id=f"${run}.{i}")

    chats = {"discord": "900", "feishu": "oc_bench", "slack": "DBENCH", "whatsapp": "4900", "dingtalk": "cidBENCH",
             "wecom": "bench", "matrix": "!bench:hs.test"}
    send = {"discord": discord, "feishu": feishu, "slack": slack, "whatsapp": whatsapp, "dingtalk": dingtalk,
            "wecom": wecom, "matrix": matrix}
    return {name: (servers[name], chats[name], send[name]) for name in servers}


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
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--mail-requests", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    os.environ.update(ENV)
    data_dir = tempfile.mkdtemp(prefix="flora-bench-channels-")
    mailboxes = {name: Dovecot(idle=spec[0]) for name, spec in MAIL_CHANNELS.items()}
    rows: dict[str, dict] = {}
    try:
        with ExitStack() as stack:
            bot, smtp = stack.enter_context(BotAPI()), stack.enter_context(SMTPSink())
            servers = {name: stack.enter_context(made()) for name, made in HTTP_SERVICES.items()}
            for server in mailboxes.values():
                server.start()
            flora = main.start_flora(config(data_dir, bot.url, mailboxes, smtp.port, servers))
            try:
                with http_api(flora, TIMEOUT_S) as api:
                    through_telegram(bot, args.warmup)
                    rows["telegram"] = summary(through_telegram(bot, args.requests))
                    for name, (service, chat, send) in senders(api, servers).items():
                        timed(service, chat, send, args.warmup)
                        rows[name] = summary(timed(service, chat, send, args.requests))
                    for name, server in mailboxes.items():
                        through_mail(name, server, smtp, min(args.warmup, 2))
                        rows[name] = summary(through_mail(name, server, smtp, args.mail_requests))
                    through_ask(flora, args.warmup)
                    raw = summary(through_ask(flora, args.requests))
            finally:
                flora.shutdown()
    finally:
        for server in mailboxes.values():
            server.close()
        shutil.rmtree(data_dir, ignore_errors=True)
    report = {"channels": {name: {**row, "ratio_p50": row["p50_ms"] / raw["p50_ms"],
                                  "ratio_p99": row["p99_ms"] / raw["p99_ms"]} for name, row in rows.items()},
              "system_ask": raw, "load": os.getloadavg()}
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{'channel: message -> answer at its server':<46}{'p50 ms':>9}{'p99 ms':>9}{'n':>5}{'p50 x':>8}{'p99 x':>8}")
    for name, row in report["channels"].items():
        print(f"{describe(name):<46}{row['p50_ms']:>9.1f}{row['p99_ms']:>9.1f}{row['n']:>5}"
              f"{row['ratio_p50']:>8.2f}{row['ratio_p99']:>8.2f}")
    print(f"{'system.ask (InteractionActor)':<46}{raw['p50_ms']:>9.1f}{raw['p99_ms']:>9.1f}{raw['n']:>5}")
    print("load average: " + " ".join(f"{x:.1f}" for x in report["load"]))
    return 0


def describe(name: str) -> str:
    if name not in MAIL_CHANNELS:
        return name
    idle, idle_s, active_s, _ = MAIL_CHANNELS[name]
    return f"e-mail ({name[5:]}: " + ("IMAP IDLE)" if idle else
                                      f"polled every {active_s if name == 'mail-active' else idle_s:g} s)")


if __name__ == "__main__":
    sys.exit(main_())
