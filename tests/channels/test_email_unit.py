"""The e-mail channel's plain parts: the Idle/Active schedule on an injected clock, a mail
read as Flora's inbound message (sender, key, quoted text cut, attachments listed, the task a
reply answers), an answer written as a threaded mail, and the channel's configuration."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage

import pytest

from capabilities.channels.email import EmailAdapter, html_to_text, strip_quoted
from capabilities.channels.email.mailbox import ACTIVE, IDLE, PollSchedule
from capabilities.channels.model import Button, MalformedUpdate, Outbound
from capabilities.channels.adapters import ChannelSetupError, build_adapter, check_credentials
from capabilities.channels.email.settings import MailServer
from config import ConfigError, load_config
from tests.support.mail_servers import mail

TASK = "task_0123456789abcdef"


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_schedule_goes_active_on_mail_and_idle_after_active_timeout_without_mail():
    clock = Clock()
    schedule = PollSchedule(idle_s=60, active_s=5, active_timeout_s=300, clock=clock)
    assert (schedule.state, schedule.interval()) == (IDLE, 60)
    schedule.mail_arrived()
    assert (schedule.state, schedule.interval()) == (ACTIVE, 5)
    clock.now += 299.9
    assert (schedule.state, schedule.interval()) == (ACTIVE, 5)
    schedule.mail_arrived()  # another mail: the 300 s start again from here
    clock.now += 299.9
    assert schedule.interval() == 5
    clock.now += 0.1
    assert (schedule.interval(), schedule.state) == (60, IDLE)
    clock.now += 10_000
    assert (schedule.interval(), schedule.state) == (60, IDLE)


def test_an_active_timeout_of_zero_goes_back_to_idle_at_the_next_look():
    clock = Clock()
    schedule = PollSchedule(idle_s=30, active_s=2, active_timeout_s=0, clock=clock)
    schedule.mail_arrived()
    assert schedule.interval() == 30 and schedule.state == IDLE


def adapter() -> EmailAdapter:
    return EmailAdapter(address="Flora@Flora.test", smtp=MailServer(host="127.0.0.1", port=25, security="plain"))


def parsed(message: EmailMessage | bytes, uid: int = 7):
    body = message if isinstance(message, bytes) else message.as_bytes()
    return adapter().parse({"uid": uid, "uidvalidity": 42, "body": body})


def test_a_mail_becomes_an_inbound_message_from_its_lower_cased_sender_keyed_by_its_message_id():
    [inbound] = parsed(mail("Alice <Alice@People.test>", "What is the weather?", message_id="<m1@people.test>"))
    assert (inbound.key, inbound.sender_id, inbound.chat_id) == ("m1@people.test", "alice@people.test",
                                                                 "alice@people.test")
    assert inbound.text == "What is the weather?" and inbound.task_id == ""
    assert inbound.thread == {"message_id": "<m1@people.test>", "references": [], "subject": "Hello Flora"}


def test_a_mail_without_message_id_is_keyed_by_uidvalidity_and_uid():
    raw = b"From: bob@people.test\r\nSubject: hi\r\n\r\nhello\r\n"
    assert parsed(raw, uid=9)[0].key == "uid:42:9"


def test_a_mail_without_a_sender_address_is_malformed():
    with pytest.raises(MalformedUpdate, match="no sender"):
        parsed(b"Subject: nobody\r\n\r\nwho am I\r\n")
    with pytest.raises(MalformedUpdate):
        adapter().parse({"uid": 1, "body": "not bytes"})


def test_flora_s_own_and_automatic_mails_are_not_read():
    assert parsed(mail("flora@flora.test", "my own")) == []
    vacation = mail("alice@people.test", "I am away")
    vacation["Auto-Submitted"] = "auto-replied"
    assert parsed(vacation) == []


def test_the_quoted_previous_message_and_the_signature_are_cut_from_a_reply():
    text = ("yes, go ahead\n\nOn Tue, 24 Nov 2026 at 13:00, Flora <flora@flora.test>\nwrote:\n"
            "> Delete notes.txt?\n> Reply yes or no\n")
    assert strip_quoted(text) == "yes, go ahead"
    assert strip_quoted("fine\n> quoted\nand this\n-- \nAlice, Sales") == "fine\nand this"
    assert strip_quoted("ok\n-----Original Message-----\nFrom: Flora") == "ok"


def test_an_html_only_mail_is_read_as_text_without_its_quoted_block():
    message = EmailMessage()
    message["From"], message["Subject"] = "alice@people.test", "hi"
    message.set_content("<html><body><p>Tell me a <b>joke</b></p><blockquote>old stuff</blockquote></body></html>",
                        subtype="html")
    assert parsed(message)[0].text == "Tell me a joke"
    assert html_to_text("a<br>b&amp;c<style>x{}</style>") == "a\nb&c"


def test_attachments_are_listed_with_name_type_and_size_not_loaded():
    message = mail("alice@people.test", "see the report")
    message.add_attachment(b"x" * 2048, maintype="application", subtype="pdf", filename="report.pdf")
    text = parsed(message)[0].text
    assert text.startswith("see the report\n")
    assert "- report.pdf (application/pdf, 2.0 KB)" in text and "xxxx" not in text


def test_a_very_long_mail_is_cut_to_what_a_user_input_may_hold_and_says_so():
    from common import messages as m

    [inbound] = parsed(mail("alice@people.test", "word " * 40_000))
    assert inbound.text.endswith("more characters not read]")
    m.validate(m.user_input(user_id="alice", content=inbound.text))


def test_a_reply_to_a_question_mail_answers_its_task_and_a_reply_to_an_answer_does_not():
    flora = adapter()
    question = flora.render(Outbound(chat_id="alice@people.test", text="Delete notes.txt?", kind="question",
                                     task_id=TASK, thread={"message_id": "<m1@people.test>", "subject": "delete"}))[0]
    answer = flora.render(Outbound(chat_id="alice@people.test", text="Done."))[0]
    assert flora.task_answered(question["message_id"], "Re: delete") == TASK
    assert flora.task_answered(answer["message_id"], f"Re: delete [{TASK}]") == ""
    assert flora.task_answered("", f"Re: delete [{TASK}]") == TASK  # a client that dropped In-Reply-To
    assert flora.task_answered("<other@people.test>", "Re: delete") == ""
    reply = mail("alice@people.test", "yes", in_reply_to=question["message_id"])
    assert parsed(reply)[0].task_id == TASK


def test_an_answer_is_a_threaded_mail_with_plain_text_and_html():
    out = Outbound(chat_id="alice@people.test", text="**Sunny**, 21 °C", kind="reply",
                   thread={"message_id": "<m2@people.test>", "references": ["<m0@people.test>"],
                           "subject": "Re: RE: weather"})
    body = adapter().render(out)[0]
    message = email.message_from_bytes(adapter().message(body).as_bytes(), policy=email.policy.default)
    assert message["Subject"] == "Re: weather" and message["To"] == "alice@people.test"
    assert message["In-Reply-To"] == "<m2@people.test>"
    assert message["References"].split() == ["<m0@people.test>", "<m2@people.test>"]
    assert message["From"] == "flora@flora.test" and message["Auto-Submitted"] == "auto-replied"
    assert message.get_body(("plain",)).get_content().strip() == "**Sunny**, 21 °C"
    assert "<b>Sunny</b>" in message.get_body(("html",)).get_content()


def test_a_question_says_how_to_answer_in_words_and_names_its_task_in_the_subject():
    buttons = [[Button("✅ Yes", f"a:y:{TASK}"), Button("❌ No", f"a:n:{TASK}")]]
    body = adapter().render(Outbound(chat_id="a@people.test", text="Delete it?", kind="question", task_id=TASK,
                                     buttons=buttons, thread={"message_id": "<m3@x>", "subject": "delete"}))[0]
    assert body["subject"] == f"Re: delete [{TASK}]" and body["message_id"].startswith(f"<flora.q.{TASK}.")
    assert 'Reply "yes" to go ahead or "no" to cancel.' in body["text"]
    note = adapter().render(Outbound(chat_id="a@people.test", text="Reminder: stretch", kind="notification"))[0]
    assert note["subject"] == "Reminder: stretch" and note["in_reply_to"] == ""


def email_config(**channel) -> dict:
    base = {"type": "email", "address": "flora@flora.test", "username_env": "U", "password_env": "P",
            "imap": {"host": "imap.flora.test"}, "smtp": {"host": "smtp.flora.test"},
            "trusted_authserv_ids": ["mx.flora.test"]}
    return {"actors": {"system_base": "multiprocTCPBase"}, "channels": {"mail": {**base, **channel}}}


def test_the_email_config_has_columba_s_defaults_and_usual_ports():
    settings = load_config(email_config(users={"Alice@People.test": "alice"}), env={}).channels["mail"]
    assert (settings.poll_interval_idle, settings.poll_interval_active, settings.active_timeout) == (60, 5, 300)
    assert (settings.imap.port, settings.imap.security, settings.smtp.port, settings.smtp.security) == (
        993, "ssl", 587, "starttls")
    assert settings.mode == "polling" and settings.users == {"alice@people.test": "alice"}
    assert settings.imap_id == {"name": "Flora", "version": "1"}


@pytest.mark.parametrize("change, key", [({"address": "flora"}, "address"), ({"imap": {}}, "imap.host"),
                                         ({"password_env": ""}, "password_env"), ({"mode": "webhook"}, "mode"),
                                         ({"poll_interval_active": 0}, "poll_interval_active")])
def test_a_bad_email_config_fails_naming_the_key(change, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(email_config(**change), env={})


def test_email_credentials_come_from_the_environment_variables_the_config_names():
    config = load_config(email_config(), env={})
    with pytest.raises(ChannelSetupError, match="channels.mail.password_env: environment variable P is not set"):
        check_credentials(config, env={"U": "flora"})
    check_credentials(config, env={"U": "flora", "P": "secret"})
    built = build_adapter("mail", config.channels["mail"], env={"U": "flora", "P": "secret"})
    assert isinstance(built, EmailAdapter) and built.address == "flora@flora.test"


def test_a_call_to_an_email_channel_s_webhook_is_refused_as_malformed():
    with pytest.raises(MalformedUpdate, match="no webhook"):
        adapter().webhook("{}", {})


def test_a_mail_in_an_unknown_charset_is_malformed():
    raw = (b"From: alice@people.test\r\nMessage-ID: <cs@people.test>\r\nMIME-Version: 1.0\r\n"
           b"Content-Type: text/plain; charset=no-such-charset\r\n\r\nhello\r\n")
    with pytest.raises(MalformedUpdate, match="cs@people.test"):
        parsed(raw)
