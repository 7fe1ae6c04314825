"""The e-mail channel over TLS, against dovecot and aiosmtpd with a certificate of their own:
IMAP with TLS from the first byte and with STARTTLS, SMTP with STARTTLS and with TLS from the
first byte, each trusting the server through ``ca_file``; a certificate nobody vouches for is
refused, with a clear error."""

from __future__ import annotations

import logging

import pytest

from capabilities.channels.email import EmailAdapter
from capabilities.channels.model import DeliveryError, Outbound
from capabilities.channels.email.settings import MailServer
from tests.channels.test_email_mailbox import Watching
from tests.support.waiting import wait_until
from tests.support.mail_servers import PASSWORD, USER, Dovecot, SMTPSink, mail


@pytest.fixture(scope="module")
def dovecot():
    with Dovecot(tls=True) as server:
        yield server


@pytest.mark.parametrize("security", ["ssl", "starttls"])
def test_the_mailbox_is_read_over_tls(dovecot, security):
    port = dovecot.tls_port if security == "ssl" else dovecot.port
    imap = {"host": "localhost", "port": port, "security": security, "ca_file": dovecot.cert}
    with Watching(dovecot.port, imap=imap) as watching:
        dovecot.deliver(mail("alice@people.test", f"over {security}"))
        assert watching.wait(1)[0].text == f"over {security}"


def test_a_server_certificate_nobody_vouches_for_is_refused(dovecot, caplog):
    caplog.set_level(logging.WARNING, logger="flora.channels.email")
    imap = {"host": "localhost", "port": dovecot.tls_port, "security": "ssl"}  # no ca_file: the system's CAs
    with Watching(dovecot.port, imap=imap):
        wait_until(lambda: any("CERTIFICATE_VERIFY_FAILED" in r.getMessage() for r in caplog.records),
                   what="no certificate error logged")


@pytest.mark.parametrize("security", ["starttls", "ssl"])
def test_an_answer_is_sent_over_tls_with_a_login(dovecot, security):
    with SMTPSink(tls=security, cert=dovecot.cert, key=dovecot.cert.replace("cert.pem", "key.pem")) as sink:
        server = MailServer(host="localhost", port=sink.port, security=security, ca_file=dovecot.cert)
        adapter = EmailAdapter(address="flora@flora.test", smtp=server, username=USER, password=PASSWORD)
        for body in adapter.render(Outbound(chat_id="alice@people.test", text="over TLS")):
            adapter.send(body)
        [received] = sink.wait_for("alice@people.test")
        assert "over TLS" in received.get_body(("plain",)).get_content()
        assert sink.received[0]["login"] is True


def test_a_wrong_smtp_password_is_not_retried(dovecot):
    with SMTPSink(tls="starttls", cert=dovecot.cert, key=dovecot.cert.replace("cert.pem", "key.pem")) as sink:
        server = MailServer(host="localhost", port=sink.port, security="starttls", ca_file=dovecot.cert)
        adapter = EmailAdapter(address="flora@flora.test", smtp=server, username=USER, password="wrong")
        with pytest.raises(DeliveryError) as raised:
            adapter.send(adapter.render(Outbound(chat_id="alice@people.test", text="no"))[0])
        assert raised.value.retryable is False and "535" in str(raised.value)
        assert sink.received == []
