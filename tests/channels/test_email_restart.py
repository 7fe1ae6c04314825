"""E-mail across a crash: a mail fetched and recorded but neither marked seen nor answered is
answered once after the restart, though the mailbox hands it over again, and then marked seen;
every Flora process killed with kill -9 while the answer cannot go out loses nothing and
answers once; an answer kept but not sent is sent after a restart without running again. Each test starts its own Flora
(one actor system per process at a time, so not beside test_email_flow's)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import main
from capabilities.channels.email import EmailAdapter
from capabilities.channels.service import ChannelService
from common.tasks.sqlite_store import SQLiteTaskStore
from config import load_config
from tests.channels.test_email_flow import (  # noqa: F401  (fixtures)
    credentials, dovecot, mail_config, smtp, text_of,
)
from tests.support.flora_process import marked_env, marked_pids
from tests.support.mail_servers import mail
from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]


def test_a_mail_recorded_before_a_crash_is_answered_once_after_the_restart(credentials, dovecot, smtp, tmp_path):
    config = load_config(mail_config(tmp_path, dovecot.port, smtp.port), env={})
    crashed = mail("alice@people.test", "tell me a joke after the crash", message_id="<crash-1@people.test>")
    dovecot.deliver(crashed)
    # what the poller did before the crash: the mail fetched and recorded, \Seen not set yet
    store = SQLiteTaskStore(config.sqlite_path)
    service = ChannelService("mail", config.channels["mail"], store, tenant_id="default")
    adapter = EmailAdapter(address="flora@flora.test", smtp=config.channels["mail"].smtp,
                           trusted_authserv_ids=config.channels["mail"].trusted_authserv_ids)
    assert len(service.receive(adapter, {"uid": 1, "uidvalidity": 1, "body": crashed.as_bytes()})) == 1
    assert dovecot.flags()["<crash-1@people.test>"] is False
    before = len(smtp.mails_to("alice@people.test"))
    flora = main.start_flora(config)
    try:
        smtp.wait_for("alice@people.test", before + 1)
        wait_until(lambda: dovecot.flags()["<crash-1@people.test>"], what="the mail was never marked seen")
        dovecot.deliver(mail("alice@people.test", "and a second joke"))
        answers = smtp.wait_for("alice@people.test", before + 2)[before:]
        assert ["after the crash" in text_of(a) for a in answers] == [True, False]
        assert store.get_channel_message("default", "mail", "crash-1@people.test").state == "answered"
    finally:
        flora.shutdown()
        store.close()


def test_an_answer_pending_in_the_outbox_is_sent_once_after_the_restart_without_running_again(
        credentials, dovecot, smtp, tmp_path):
    config = mail_config(tmp_path, dovecot.port, smtp.port, retry={"max_attempts": 5, "backoff_s": 30})
    smtp.refuse_next = 1  # and the next try is far away
    before = len(smtp.mails_to("bob@people.test"))
    flora = main.start_flora(config)
    try:
        dovecot.deliver(mail("bob@people.test", "delete file path=once.txt", message_id="<once@people.test>"))
        store = SQLiteTaskStore(flora.config.sqlite_path)
        wait_until(lambda: [d.attempts for d in store.channel_deliveries("default", "mail", ref="once@people.test")]
                   == [1], what="the refused send was never recorded")
        assert store.channel_deliveries("default", "mail", ref="once@people.test")[0].state == "pending"
        assert store.get_channel_message("default", "mail", "once@people.test").state == "answered"  # in the outbox
        assert dovecot.flags()["<once@people.test>"] is True
    finally:
        flora.shutdown()
    tasks_before = len(store.list_tasks("default", user_id="bob"))
    flora = main.start_flora(config)
    try:
        question = smtp.wait_for("bob@people.test", before + 1)[before]
        assert 'Reply "yes"' in text_of(question) and question["In-Reply-To"] == "<once@people.test>"
        wait_until(lambda: store.channel_deliveries("default", "mail", ref="once@people.test")[0].state
                   == "delivered", what="the kept answer was never marked delivered")
        assert len(store.list_tasks("default", user_id="bob")) == tasks_before  # not run again
        assert len(smtp.mails_to("bob@people.test")) == before + 1
    finally:
        flora.shutdown()
        store.close()


def test_kill_9_between_fetch_and_reply_loses_nothing_and_answers_once(credentials, dovecot, smtp, tmp_path):
    config = mail_config(tmp_path, dovecot.port, smtp.port, retry={"max_attempts": 20, "backoff_s": 0.2,
                                                                  "backoff_max_s": 0.2})
    (tmp_path / "config.json").write_text(json.dumps(config))
    env, mark = marked_env()
    smtp.refuse_next, refused_before = 10_000, smtp.refused  # the answer cannot go out yet
    before = len(smtp.mails_to("alice@people.test"))
    first = subprocess.Popen([sys.executable, "-m", "tests.support.flora_process", str(tmp_path / "config.json"),
                              "nobody"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    store = SQLiteTaskStore(tmp_path / "flora.db")
    try:
        ready, _, _ = select.select([first.stdout], [], [], 60)
        assert ready and first.stdout.readline().strip() == "READY", "Flora did not start"
        dovecot.deliver(mail("alice@people.test", "tell me a joke before the kill", message_id="<kill-1@people.test>"))
        wait_until(lambda: smtp.refused > refused_before, timeout=30, what="Flora never tried to answer")
        assert dovecot.flags()["<kill-1@people.test>"] is True  # fetched, recorded, marked seen; not answered
    finally:
        for _ in range(50):  # the Flora process and every actor process it forked
            pids = marked_pids(mark)
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        first.wait()
        smtp.refuse_next = 0
    assert marked_pids(mark) == [] and smtp.mails_to("alice@people.test")[before:] == []
    flora = main.start_flora(config)
    try:
        smtp.wait_for("alice@people.test", before + 1)
        dovecot.deliver(mail("alice@people.test", "and a joke after it"))
        answers = smtp.wait_for("alice@people.test", before + 2)[before:]
        assert ["before the kill" in text_of(a) for a in answers] == [True, False]
        assert store.get_channel_message("default", "mail", "kill-1@people.test").state == "answered"
    finally:
        flora.shutdown()
        store.close()
