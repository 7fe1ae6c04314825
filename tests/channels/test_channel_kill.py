"""Every channel type survives its ChannelActor being killed mid-conversation: while the
service refuses the reply (HTTP 500, SMTP 451) and the outbox is retrying it, the actor's
process is killed with SIGKILL; its supervisor starts a new one, which sends the pending reply
once the service answers again — exactly once — and serves the next message.

Each case runs its own Flora against the type's local server (Telegram's Bot API, Discord,
Feishu, Slack, WhatsApp, DingTalk, WeCom, a Matrix homeserver; dovecot and an SMTP server for
e-mail). The actor's process is found as the one process holding a connection to that server:
a poller's long poll (Telegram, Matrix, IMAP) or the sender's kept-alive connection after a
refused send (the webhook types). Webhook calls go to the channel's supervisor address, as the
HTTP API's route sends them.
"""

from __future__ import annotations

import json
import os
import signal
import time
from contextlib import ExitStack
from typing import Any, Callable

import pytest

import main
from capabilities.channels.plugin import default_catalogue
from common.messages import channel_update
from common.status import collect_status
from common.tasks.sqlite_store import SQLiteTaskStore
from tests.channels.test_dingtalk import SECRET as DT_SECRET, callback as dt_callback, signed as dt_signed
from tests.channels.test_slack import SIGNING_SECRET, event as slack_event, signed as slack_signed
from tests.channels.test_webhooks import ENCRYPT_KEY, PUBLIC_HEX, VERIFICATION, dc_command, encrypted, fs_message
from tests.channels.test_webhooks import signed as dc_signed
from tests.channels.test_wecom import ENV as WC_ENV, WECOM, event_call, text_message
from tests.channels.test_whatsapp import APP_SECRET, VERIFY, change, signed as wa_signed, text as wa_text
from tests.support.connections import pids_talking_to
from tests.support.chat_servers import DISCORD_TOKEN, FEISHU_APP, DiscordAPI, FeishuAPI
from tests.support.mail_servers import PASSWORD, USER, Dovecot, SMTPSink, mail
from tests.support.telegram_server import TOKEN as TG_TOKEN, BotAPI
from tests.support.waiting import wait_until
from tests.support.work_chat_servers import (
    MATRIX_TOKEN, MATRIX_USER, PHONE_ID, SLACK_TOKEN, WHATSAPP_TOKEN, DingTalkAPI, MatrixHomeserver, SlackAPI,
    WeComAPI, WhatsAppAPI,
)
from tests.tools.local_http import Reply
from tests.channels.test_email_flow import mail_config, text_of

NAME = "ch"
REFUSALS = 10_000  # more than the actor can try before the kill


class Case:
    """One channel type in the kill test: its local server, its settings, how a person writes
    to it and what it sent back to that person's chat."""

    kind = ""
    env: dict[str, str] = {}

    def __init__(self, server: Any):
        self.server = server
        self._count = 0

    def settings(self) -> dict:
        raise NotImplementedError

    @property
    def port(self) -> int:
        return self.server.server.port

    def refuse_sends(self) -> None:
        self.server.fail_next(*[Reply.json({"error": "busy"}, 500)] * REFUSALS)

    def accept_sends(self) -> None:
        self.server.stop_failing()

    def say(self, flora, text: str) -> str:
        """``text`` from the person to Flora; the message's key in the channel's records."""
        raise NotImplementedError

    def replies(self) -> list[str]:
        """What went to the person's chat, in order, as text."""
        return [json.dumps(s, ensure_ascii=False) for s in self.server.sent if s.get("chat_id") == self.chat]

    def next_id(self) -> int:
        self._count += 1
        return self._count

    def _webhook(self, flora, body: str, headers: dict, query: dict | None = None) -> None:
        update = channel_update(channel=NAME, body=body, headers=headers, method="POST", query=query or {})
        ack = flora.system.ask(flora.channels[NAME], update, 30)
        assert ack and ack.get("status") == 200, ack


class TelegramCase(Case):
    kind, chat, env = "telegram", "91", {"FLORA_TEST_TG_TOKEN": TG_TOKEN}

    def settings(self):
        return {"type": "telegram", "mode": "polling", "api_base": self.server.url, "token_env": "FLORA_TEST_TG_TOKEN",
                "poll_timeout_s": 1, "users": {"7": "alice"}}

    def refuse_sends(self):
        self.server.fail_next(REFUSALS, status=500)

    def say(self, flora, text):
        return str(self.server.add_message(text, chat_id=int(self.chat), user_id=7)["update_id"])

    def replies(self):
        return [s["text"] for s in self.server.sent if str(s.get("chat_id")) == self.chat]


class DiscordCase(Case):
    kind, chat, env = "discord", "900", {"FLORA_TEST_DC_TOKEN": DISCORD_TOKEN, "FLORA_TEST_DC_KEY": PUBLIC_HEX}

    def settings(self):
        return {"type": "discord", "api_base": self.server.url, "token_env": "FLORA_TEST_DC_TOKEN",
                "public_key_env": "FLORA_TEST_DC_KEY", "users": {"501": "alice"}}

    def say(self, flora, text):
        key = f"80{self.next_id()}"
        call = dc_signed(dc_command(key, text, channel=self.chat))
        self._webhook(flora, call["content"].decode(), {k.lower(): v for k, v in call["headers"].items()})
        return key


class FeishuCase(Case):
    kind, chat = "feishu", "oc_kill"
    env = {"FLORA_TEST_FS_ID": FEISHU_APP["app_id"], "FLORA_TEST_FS_SECRET": FEISHU_APP["app_secret"],
           "FLORA_TEST_FS_VERIFY": VERIFICATION, "FLORA_TEST_FS_ENCRYPT": ENCRYPT_KEY}

    def settings(self):
        return {"type": "feishu", "api_base": self.server.url, "app_id_env": "FLORA_TEST_FS_ID",
                "app_secret_env": "FLORA_TEST_FS_SECRET", "verification_token_env": "FLORA_TEST_FS_VERIFY",
                "encrypt_key_env": "FLORA_TEST_FS_ENCRYPT", "allow": ["*"]}

    def say(self, flora, text):
        key = f"om_kill{self.next_id()}"
        body, headers = encrypted(fs_message(key, text, chat=self.chat))
        self._webhook(flora, body.decode(), {k.lower(): v for k, v in headers.items()})
        return key


class SlackCase(Case):
    kind, chat = "slack", "D900"
    env = {"FLORA_TEST_SL_TOKEN": SLACK_TOKEN, "FLORA_TEST_SL_SECRET": SIGNING_SECRET}

    def settings(self):
        return {"type": "slack", "api_base": self.server.url, "bot_token_env": "FLORA_TEST_SL_TOKEN",
                "signing_secret_env": "FLORA_TEST_SL_SECRET", "users": {"U2147483697": "alice"}}

    def say(self, flora, text):
        ts = f"1700000100.{self.next_id():06d}"
        body, headers = slack_signed(slack_event(text, channel=self.chat, ts=ts), at=time.time())
        self._webhook(flora, body, headers)
        return f"{self.chat}:{ts}"


class WhatsAppCase(Case):
    kind, chat = "whatsapp", "4915112345678"
    env = {"FLORA_TEST_WA_TOKEN": WHATSAPP_TOKEN, "FLORA_TEST_WA_SECRET": APP_SECRET, "FLORA_TEST_WA_VERIFY": VERIFY}

    def settings(self):
        return {"type": "whatsapp", "api_base": self.server.url, "phone_number_id": PHONE_ID,
                "access_token_env": "FLORA_TEST_WA_TOKEN", "app_secret_env": "FLORA_TEST_WA_SECRET",
                "verify_token_env": "FLORA_TEST_WA_VERIFY", "users": {self.chat: "alice"}}

    def say(self, flora, text):
        key = f"wamid.kill{self.next_id()}"
        body, headers = wa_signed(change(wa_text(text, wamid=key, sender=self.chat)))
        self._webhook(flora, body, headers)
        return key


class DingTalkCase(Case):
    kind, chat, env = "dingtalk", "cidKILL", {"FLORA_TEST_DT_SECRET": DT_SECRET}

    def settings(self):
        return {"type": "dingtalk", "api_base": self.server.url, "app_secret_env": "FLORA_TEST_DT_SECRET",
                "users": {"manager42": "alice"}}

    def say(self, flora, text):
        key = f"msgKill{self.next_id()}"
        payload = dt_callback(text, base=self.server.url, msg_id=key, chat=self.chat,
                              expires_in_s=5400 + time.time() - 1_700_000_000)
        body, headers = dt_signed(payload, at=time.time())
        self._webhook(flora, body, headers)
        return key


class WeComCase(Case):
    kind, chat = "wecom", "zhangsan"
    env = {f"FLORA_TEST_{k}": v for k, v in WC_ENV.items()}

    def settings(self):
        return {**WECOM, "api_base": self.server.url, "allow": [], "users": {self.chat: "alice"},
                **{key: f"FLORA_TEST_{WECOM[key]}" for key in ("corp_secret_env", "token_env", "encoding_aes_key_env")}}

    def say(self, flora, text):
        key = f"72400000000{self.next_id():05d}"
        body, headers, query = event_call(text_message(text, msg_id=key, sender=self.chat))
        self._webhook(flora, body, headers, query)
        return key


class MatrixCase(Case):
    kind, chat, env = "matrix", "!kill:hs.test", {"FLORA_TEST_MX_TOKEN": MATRIX_TOKEN}

    def settings(self):
        return {"type": "matrix", "api_base": self.server.url, "user_id": MATRIX_USER,
                "access_token_env": "FLORA_TEST_MX_TOKEN", "sync_timeout_s": 1, "users": {"@alice:hs.test": "alice"}}

    def refuse_sends(self):  # its /sync goes on, or the person's message would not come in
        self.server.fail_next(*[Reply.json({"errcode": "M_UNKNOWN", "error": "busy"}, 500)] * REFUSALS,
                              only="/send/")

    def say(self, flora, text):
        key = f"$kill{self.next_id()}"
        self.server.say(self.chat, "@alice:hs.test", text, event_id=key)
        return key

    def replies(self):
        return [s["body"] for s in self.server.sent if s["chat_id"] == self.chat]


class EmailCase(Case):
    kind, chat, env = "email", "alice@people.test", {"FLORA_TEST_MAIL_USER": USER, "FLORA_TEST_MAIL_PASSWORD": PASSWORD}

    def __init__(self, servers: tuple[Dovecot, SMTPSink]):
        super().__init__(servers)
        self.imap, self.smtp = servers

    def settings(self):
        return mail_config("", self.imap.port, self.smtp.port)["channels"]["mail"]

    @property
    def port(self):
        return self.imap.port  # the poller's IMAP connection

    def refuse_sends(self):
        with self.smtp._cond:
            self.smtp.refuse_next = REFUSALS

    def accept_sends(self):
        with self.smtp._cond:
            self.smtp.refuse_next = 0

    def say(self, flora, text):
        key = f"kill-{self.next_id()}-{time.time_ns()}@people.test"
        self.imap.deliver(mail(self.chat, text, message_id=f"<{key}>"))
        return key

    def replies(self):
        return [text_of(m) for m in self.smtp.mails_to(self.chat)]


def _servers(kind: str, stack: ExitStack) -> Any:
    made: dict[str, Callable[[], Any]] = {
        "telegram": BotAPI, "discord": DiscordAPI, "feishu": FeishuAPI, "slack": SlackAPI, "whatsapp": WhatsAppAPI,
        "dingtalk": DingTalkAPI, "wecom": WeComAPI, "matrix": MatrixHomeserver,
        "email": lambda: (stack.enter_context(Dovecot()), SMTPSink())}
    return stack.enter_context(made[kind]()) if kind != "email" else made[kind]()


CASES = {case.kind: case for case in (TelegramCase, DiscordCase, FeishuCase, SlackCase, WhatsAppCase, DingTalkCase,
                                      WeComCase, MatrixCase, EmailCase)}


@pytest.fixture(params=list(CASES))
def case(request, monkeypatch):
    kind = request.param
    with ExitStack() as stack:
        servers = _servers(kind, stack)
        if kind == "email":
            stack.enter_context(servers[1])
        made = CASES[kind](servers)
        for name, value in made.env.items():
            monkeypatch.setenv(name, value)  # the actor processes read them at start
        yield made


def test_a_channel_actor_killed_mid_conversation_is_started_again_and_the_reply_arrives_once(case, tmp_path):
    settings = {**case.settings(), "retry": {"max_attempts": 20, "backoff_s": 0.3, "backoff_max_s": 0.3}}
    flora = main.start_flora({
        "data_dir": str(tmp_path),
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 30, "execution_pool_size": 2},
        "memory": {"enabled": False},
        "channels": {NAME if case.kind != "email" else "mail": settings}})
    channel = NAME if case.kind != "email" else "mail"
    store = SQLiteTaskStore(flora.config.sqlite_path)
    try:
        case.refuse_sends()  # the reply cannot go out yet: the conversation is under way
        key = case.say(flora, "tell me a joke before the kill")
        wait_until(lambda: any(d.attempts >= 2 for d in store.channel_deliveries("default", channel, ref=key)),
                   timeout=30, what="the reply was never tried")
        [channel_pid] = wait_until(lambda: pids_talking_to(case.port), what="no process talks to the service")
        os.kill(channel_pid, signal.SIGKILL)
        case.accept_sends()  # the service answers again; the dead actor cannot
        wait_until(lambda: case.replies(), timeout=30, what="the reply never arrived after the kill")
        assert channel_pid not in pids_talking_to(case.port)
        case.say(flora, "tell me a joke after the kill")  # the new actor takes messages, too
        wait_until(lambda: len(case.replies()) >= 2, timeout=30, what="the message after the kill was not answered")
        # a second copy of the first reply would have gone out before the second: the new actor
        # sends what the outbox holds at its start, and the old one is dead
        assert [("before the kill" in r, "after the kill" in r) for r in case.replies()] == \
            [(True, False), (False, True)], case.replies()
        assert [d.state for d in store.channel_deliveries("default", channel, ref=key)] == ["delivered"]
        assert collect_status(flora.config)["channels"][channel]["state"] == "running"
    finally:
        flora.shutdown()
        store.close()


def test_every_installed_channel_type_has_a_kill_case():
    assert set(CASES) == set(default_catalogue().types())
