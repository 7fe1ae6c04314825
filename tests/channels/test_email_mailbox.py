"""MailPoller against a real dovecot on loopback (tests/support/mail_servers.py): IDLE used
where the server offers it and polling where it does not, the IMAP ID sent after login, a
mail marked seen only once recorded, a malformed mail skipped and logged, and the server
restarted mid-poll survived."""

from __future__ import annotations

import logging
import re
import threading
import time

import pytest

from capabilities.channels.email import EmailAdapter
from capabilities.channels.email.mailbox import MailPoller
from config import load_config
from tests.support.mail_servers import PASSWORD, USER, Dovecot, mail
from tests.support.waiting import wait_until


@pytest.fixture
def dovecot():
    with Dovecot() as server:
        yield server


def settings(port: int, **channel):
    config = {"actors": {"system_base": "multiprocTCPBase"}, "channels": {"mail": {
        "type": "email", "address": "flora@flora.test", "username_env": "U", "password_env": "P",
        "imap": {"host": "127.0.0.1", "port": port, "security": "plain"},
        "smtp": {"host": "127.0.0.1", "port": 25, "security": "plain"},
        "trusted_authserv_ids": ["mx.flora.test"], **channel}}}
    return load_config(config, env={}).channels["mail"]


class Watching:
    """A MailPoller on a thread of the test, recording what it receives."""

    def __init__(self, port: int, receive=None, **channel):
        self.received: list[dict] = []
        self.parsed: list = []
        self._adapter = EmailAdapter(address="flora@flora.test", smtp=None)
        self._cond = threading.Condition()
        self.stop = threading.Event()
        self.poller = MailPoller(settings(port, **channel), username=USER, password=PASSWORD,
                                 receive=receive or self._receive, stop=self.stop)
        self.thread = threading.Thread(target=self.poller.run, daemon=True)

    def _receive(self, raw: dict) -> None:
        inbounds = self._adapter.parse(raw)  # MalformedUpdate goes to the poller, as in the channel
        with self._cond:
            self.received.append(raw)
            self.parsed += inbounds
            self._cond.notify_all()

    def wait(self, count: int, timeout: float = 20.0) -> list:
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.parsed) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(self.parsed)} of {count} mail(s) received"
                self._cond.wait(left)
            return list(self.parsed)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=10)
        assert not self.thread.is_alive()


def test_idle_is_used_when_offered_so_a_mail_comes_long_before_the_idle_interval(dovecot):
    with Watching(dovecot.port, poll_interval_idle=600, poll_interval_active=600) as watching:
        wait_until(lambda: watching.poller.uses_idle, what="the poller never used IDLE")
        dovecot.deliver(mail("alice@people.test", "are you there?"))
        started = time.monotonic()
        [inbound] = watching.wait(1, timeout=60)
        assert inbound.text == "are you there?" and time.monotonic() - started < 60  # not the 600 s interval


def test_without_idle_the_mailbox_is_polled_at_the_schedule_s_interval():
    with Dovecot(idle=False) as server, Watching(server.port, poll_interval_idle=0.3) as watching:
        server.deliver(mail("alice@people.test", "polled"))
        assert watching.wait(1)[0].text == "polled"
        assert watching.poller.uses_idle is False
        wait_until(lambda: watching.poller.schedule.state == "active", what="the mail did not make it active")


def test_imap_id_is_sent_after_login(dovecot):
    with Watching(dovecot.port, imap_id={"name": "Flora-test", "version": "9.9"}) as watching:
        wait_until(lambda: watching.poller.server_id is not None, what="no ID answer")
        wait_until(lambda: "Flora-test" in dovecot.log(), what=dovecot.log())
    assert 'version="9.9"' in dovecot.log() or "version=9.9" in dovecot.log()


def test_a_mail_is_marked_seen_only_after_it_is_recorded(dovecot):
    failing = {"left": 2, "seen_while_failing": []}
    holder: list[Watching] = []

    def receive(raw):
        if failing["left"]:
            failing["seen_while_failing"].append(dovecot.flags()["<keep@people.test>"])
            failing["left"] -= 1
            raise RuntimeError("the store is down")
        holder[0]._receive(raw)

    dovecot.deliver(mail("alice@people.test", "keep me", message_id="<keep@people.test>"))
    watching = Watching(dovecot.port, receive=receive, poll_interval_idle=0.2, poll_interval_active=0.2)
    holder.append(watching)
    with watching:
        assert watching.wait(1)[0].key == "keep@people.test"
        wait_until(lambda: dovecot.flags()["<keep@people.test>"], what="never marked seen")
    assert failing["seen_while_failing"] == [False, False]  # fetched twice, not recorded: left unseen


def test_a_malformed_mail_is_skipped_logged_and_marked_seen_and_the_next_is_read(dovecot, caplog):
    caplog.set_level(logging.WARNING, logger="flora.channels.email")
    dovecot.deliver(b"Message-ID: <bad@people.test>\r\nSubject: no sender\r\n\r\nwho wrote this?\r\n")
    dovecot.deliver(mail("alice@people.test", "a proper one"))
    with Watching(dovecot.port) as watching:
        assert [i.text for i in watching.wait(1)] == ["a proper one"]
        wait_until(lambda: dovecot.flags().get("<bad@people.test>"), what="the malformed mail stays unseen")
    assert any("skipped mail" in r.getMessage() and "no sender" in r.getMessage() for r in caplog.records)


def test_the_imap_server_restarted_mid_poll_is_survived(dovecot, caplog):
    caplog.set_level(logging.WARNING, logger="flora.channels.email")
    with Watching(dovecot.port, poll_interval_idle=0.5) as watching:
        dovecot.deliver(mail("alice@people.test", "before", message_id="<before@people.test>"))
        watching.wait(1)
        # seen first: a restart between recording and \Seen would hand "before" over again
        # (which the channel's store drops; this test's receiver keeps all it gets)
        wait_until(lambda: dovecot.flags()["<before@people.test>"], what="never marked seen")
        dovecot.restart()
        dovecot.deliver(mail("alice@people.test", "after the restart"))
        assert [i.text for i in watching.wait(2, timeout=60)] == ["before", "after the restart"]
    assert any("connecting again" in r.getMessage() for r in caplog.records)


def test_a_big_mail_is_fetched_as_its_text_with_its_attachments_listed_not_loaded(dovecot):
    big = mail("alice@people.test", "the figures are attached", message_id="<big@people.test>")
    big.add_attachment(b"\x00" * 300_000, maintype="application", subtype="pdf", filename="figures.pdf")
    big.add_attachment(b"a,b\n" * 10_000, maintype="text", subtype="csv", filename="rows.csv")
    only = mail("alice@people.test", "", message_id="<only@people.test>")
    only.set_content(b"\x01" * 200_000, maintype="image", subtype="png", disposition="attachment",
                     filename="photo.png")
    dovecot.deliver(big)
    dovecot.deliver(only)
    with Watching(dovecot.port, max_fetch_bytes=50_000) as watching:
        first, second = watching.wait(2)
    assert max(len(raw["body"]) for raw in watching.received) < 10_000  # the attachments never came over
    assert first.key == "big@people.test" and first.text.startswith("the figures are attached\n")
    listed = {name: (kind, float(kb)) for name, kind, kb in re.findall(r"- (\S+) \((\S+), about ([\d.]+) KB\)",
                                                                        first.text + second.text)}
    assert {name: kind for name, (kind, _) in listed.items()} == {
        "figures.pdf": "application/pdf", "rows.csv": "text/csv", "photo.png": "image/png"}
    for name, size in (("figures.pdf", 300_000), ("rows.csv", 40_000), ("photo.png", 200_000)):
        assert abs(listed[name][1] * 1024 - size) < size * 0.05, (name, listed[name])
    assert second.text.startswith("Attachments (not opened):")
    assert first.thread["subject"] == "Hello Flora"
