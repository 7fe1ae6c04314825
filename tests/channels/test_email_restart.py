"""E-mail across a crash: a mail fetched and recorded but neither marked seen nor answered
(what a kill -9 between the fetch and the reply leaves) is answered once after the restart,
though the mailbox hands it over again, and then marked seen. Each test starts its own Flora
(one actor system per process at a time, so not beside test_email_flow's)."""

from __future__ import annotations

import main
from capabilities.channels.email import EmailAdapter
from capabilities.channels.service import ChannelService
from common.tasks.sqlite_store import SQLiteTaskStore
from config import load_config
from tests.channels.test_email_flow import (  # noqa: F401  (fixtures)
    credentials, dovecot, mail_config, smtp, text_of, wait_until,
)
from tests.support.mail_servers import mail


def test_a_mail_recorded_before_a_crash_is_answered_once_after_the_restart(credentials, dovecot, smtp, tmp_path):
    config = load_config(mail_config(tmp_path, dovecot.port, smtp.port), env={})
    crashed = mail("alice@people.test", "tell me a joke after the crash", message_id="<crash-1@people.test>")
    dovecot.deliver(crashed)
    # what the poller did before the crash: the mail fetched and recorded, \Seen not set yet
    store = SQLiteTaskStore(config.sqlite_path)
    service = ChannelService("mail", config.channels["mail"], store, tenant_id="default")
    adapter = EmailAdapter(address="flora@flora.test", smtp=config.channels["mail"].smtp)
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


def test_an_answer_kept_but_not_sent_is_sent_once_after_the_restart_without_running_again(
        credentials, dovecot, smtp, tmp_path):
    config = mail_config(tmp_path, dovecot.port, smtp.port, retry={"max_attempts": 1})
    smtp.refuse_next = 1
    before = len(smtp.mails_to("bob@people.test"))
    flora = main.start_flora(config)
    try:
        dovecot.deliver(mail("bob@people.test", "delete file path=once.txt", message_id="<once@people.test>"))
        store = SQLiteTaskStore(flora.config.sqlite_path)
        wait_until(lambda: store.channel_deliveries("default", "mail", ref="once@people.test"),
                   what="the refused send was never recorded")
        assert store.channel_deliveries("default", "mail", ref="once@people.test")[0].state == "failed"
        assert store.get_channel_message("default", "mail", "once@people.test").state == "replied"
        assert dovecot.flags()["<once@people.test>"] is True
    finally:
        flora.shutdown()
    tasks_before = len(store.list_tasks("default", user_id="bob"))
    flora = main.start_flora(config)
    try:
        question = smtp.wait_for("bob@people.test", before + 1)[before]
        assert 'Reply "yes"' in text_of(question) and question["In-Reply-To"] == "<once@people.test>"
        wait_until(lambda: store.get_channel_message("default", "mail", "once@people.test").state == "answered",
                   what="the kept answer was never marked answered")
        assert len(store.list_tasks("default", user_id="bob")) == tasks_before  # not run again
        assert len(smtp.mails_to("bob@people.test")) == before + 1
    finally:
        flora.shutdown()
        store.close()
