"""Slack, WhatsApp, DingTalk, WeCom and Matrix through Flora, beside the same message through ``system.ask``.

One Flora (multiprocTCPBase, the deterministic fake model ``tests.support.fake_llm:respond``,
memory off) with the five channels pointed at the tests' local servers
(tests/support/work_chat_servers.py), and its HTTP API on 127.0.0.1. For each channel,
``--warmup`` untimed messages then ``--requests`` sequential ones, latency p50/p99, from the
signed call to the webhook route (or, for Matrix, the message put on the homeserver) until
Flora's answer arrives at the service's local server: the signature check (and for WeCom the
AES decryption), recording, the ChannelActor's hand-over, InteractionActor → AgentActor →
ExecutionActor and back, rendering, the sender thread's call. ``raw ask``: the same
``user_input`` asked straight of the InteractionActor; what a channel adds is the difference.

    .venv/bin/python bench/work_channels.py [--requests 50] [--warmup 5] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import httpx  # noqa: E402
import uvicorn  # noqa: E402

import main  # noqa: E402
from api.app import create_app  # noqa: E402
from bench.channels import summary, through_ask  # noqa: E402
from tests.channels.test_dingtalk import SECRET as DT_SECRET, callback as dt_callback, signed as dt_signed  # noqa: E402
from tests.channels.test_slack import SIGNING_SECRET, event as slack_event, signed as slack_signed  # noqa: E402
from tests.channels.test_webhooks import _free_port  # noqa: E402
from tests.channels.test_wecom import ENV as WC_ENV, WECOM, event_call, text_message  # noqa: E402
from tests.channels.test_whatsapp import APP_SECRET, VERIFY, change, signed as wa_signed, text  # noqa: E402
from tests.support.work_chat_servers import (  # noqa: E402
    MATRIX_TOKEN, MATRIX_USER, PHONE_ID, SLACK_TOKEN, WHATSAPP_TOKEN, DingTalkAPI, MatrixHomeserver, SlackAPI,
    WeComAPI, WhatsAppAPI,
)

TIMEOUT_S = 30
SEQUENCE = itertools.count()  # message numbers: a repeated key would be dropped as a redelivery
ENV = {"FLORA_BENCH_SL_TOKEN": SLACK_TOKEN, "FLORA_BENCH_SL_SECRET": SIGNING_SECRET,
       "FLORA_BENCH_WA_TOKEN": WHATSAPP_TOKEN, "FLORA_BENCH_WA_SECRET": APP_SECRET, "FLORA_BENCH_WA_VERIFY": VERIFY,
       "FLORA_BENCH_DT_SECRET": DT_SECRET, "FLORA_BENCH_MX_TOKEN": MATRIX_TOKEN,
       **{f"FLORA_BENCH_{k}": v for k, v in WC_ENV.items()}}


def config(data_dir: str, servers: dict) -> dict:
    wecom = {**WECOM, "api_base": servers["wecom"].url, "allow": [], "users": {"bench": "bench"},
             **{key: f"FLORA_BENCH_{WECOM[key]}" for key in ("corp_secret_env", "token_env", "encoding_aes_key_env")}}
    return {
        "data_dir": data_dir,
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": TIMEOUT_S},
        "memory": {"enabled": False},
        "channels": {
            "slack": {"type": "slack", "api_base": servers["slack"].url, "bot_token_env": "FLORA_BENCH_SL_TOKEN",
                      "signing_secret_env": "FLORA_BENCH_SL_SECRET", "users": {"UBENCH": "bench"}},
            "whatsapp": {"type": "whatsapp", "api_base": servers["whatsapp"].url, "phone_number_id": PHONE_ID,
                         "access_token_env": "FLORA_BENCH_WA_TOKEN", "app_secret_env": "FLORA_BENCH_WA_SECRET",
                         "verify_token_env": "FLORA_BENCH_WA_VERIFY", "users": {"4900": "bench"}},
            "dingtalk": {"type": "dingtalk", "api_base": servers["dingtalk"].url,
                         "app_secret_env": "FLORA_BENCH_DT_SECRET", "users": {"bench": "bench"}},
            "wecom": wecom,
            "matrix": {"type": "matrix", "api_base": servers["matrix"].url, "user_id": MATRIX_USER,
                       "access_token_env": "FLORA_BENCH_MX_TOKEN", "sync_timeout_s": 10,
                       "users": {"@bench:hs.test": "bench"}},
        },
    }


def timed(server, chat: str, send, count: int) -> list[float]:
    """``send(i)`` puts message i in (i unique over the run); the seconds until the service's server got the answer."""
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
    """channel -> (its local server, the chat answers go to, send(i))."""
    run = time.time_ns()

    def slack(i):
        body, headers = slack_signed(slack_event("hello", channel="DBENCH", user="UBENCH", ts=f"{run}.{i}"),
                                     at=time.time())
        api.post("/v1/channels/slack/webhook", content=body.encode(), headers=headers).raise_for_status()

    def whatsapp(i):
        body, headers = wa_signed(change(text("hello", wamid=f"wamid.{run}.{i}", sender="4900")))
        api.post("/v1/channels/whatsapp/webhook", content=body.encode(), headers=headers).raise_for_status()

    def dingtalk(i):
        payload = dt_callback("hello", base=servers["dingtalk"].url, msg_id=f"msg{run}.{i}", chat="cidBENCH",
                              staff="bench", expires_in_s=time.time() - 1_700_000_000 + 5400)
        body, headers = dt_signed(payload, at=time.time())
        api.post("/v1/channels/dingtalk/webhook", content=body.encode(), headers=headers).raise_for_status()

    def wecom(i):
        body, headers, query = event_call(text_message("hello", msg_id=f"{run}{i}", sender="bench"))
        api.post("/v1/channels/wecom/webhook", content=body.encode(), headers=headers, params=query).raise_for_status()

    def matrix(i):
        servers["matrix"].say("!bench:hs.test", "@bench:hs.test", "hello", event_id=f"${run}.{i}")

    return {"slack": (servers["slack"], "DBENCH", slack), "whatsapp": (servers["whatsapp"], "4900", whatsapp),
            "dingtalk": (servers["dingtalk"], "cidBENCH", dingtalk), "wecom": (servers["wecom"], "bench", wecom),
            "matrix": (servers["matrix"], "!bench:hs.test", matrix)}


def main_(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    os.environ.update(ENV)
    data_dir = tempfile.mkdtemp(prefix="flora-bench-work-channels-")
    results: dict = {}
    try:
        with SlackAPI() as slack, WhatsAppAPI() as whatsapp, DingTalkAPI() as dingtalk, WeComAPI() as wecom, \
                MatrixHomeserver() as matrix:
            servers = {"slack": slack, "whatsapp": whatsapp, "dingtalk": dingtalk, "wecom": wecom, "matrix": matrix}
            flora = main.start_flora(config(data_dir, servers))
            port = _free_port()
            server = uvicorn.Server(uvicorn.Config(create_app(flora), host="127.0.0.1", port=port,
                                                   log_level="warning", access_log=False))
            thread = threading.Thread(target=server.run, daemon=True)
            thread.start()
            try:
                while not server.started:
                    time.sleep(0.05)
                with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=TIMEOUT_S) as api:
                    channels = senders(api, servers)
                    for name, (service, chat, send) in channels.items():
                        timed(service, chat, send, args.warmup)
                        results[name] = summary(timed(service, chat, send, args.requests))
                    through_ask(flora, args.warmup)
                    raw = summary(through_ask(flora, args.requests))
            finally:
                server.should_exit = True
                thread.join(timeout=10)
                flora.shutdown()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    report = {"channels": {name: {**row, "ratio_p50": row["p50_ms"] / raw["p50_ms"],
                                  "ratio_p99": row["p99_ms"] / raw["p99_ms"]} for name, row in results.items()},
              "system_ask": raw}
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{'path':<34}{'p50 ms':>10}{'p99 ms':>10}{'n':>6}{'p50 x':>8}{'p99 x':>8}")
    for name, row in report["channels"].items():
        print(f"{name + ' -> answer at its server':<34}{row['p50_ms']:>10.1f}{row['p99_ms']:>10.1f}{row['n']:>6}"
              f"{row['ratio_p50']:>8.2f}{row['ratio_p99']:>8.2f}")
    print(f"{'system.ask (InteractionActor)':<34}{raw['p50_ms']:>10.1f}{raw['p99_ms']:>10.1f}{raw['n']:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
