"""Watching an e-mail channel's mailbox over IMAP (``imapclient``).

:class:`PollSchedule` is the Idle/Active state machine, a plain class with an injected clock:
idle, the mailbox is looked at every ``poll_interval_idle`` seconds; a mail makes it active,
looked at every ``poll_interval_active`` seconds until ``active_timeout`` seconds pass without
mail, then idle again. People answer in bursts; this answers the second mail of a
conversation quickly without polling a quiet mailbox every few seconds.

:class:`MailPoller` runs on the channel actor's poller thread: log in, send the IMAP ID
(RFC 2971) where the server offers it, select the mailbox, then over and over fetch the unseen
mails (``BODY.PEEK[]``, which leaves them unseen), hand each to ``receive`` (which parses and
**records it in the store**) and only then set ``\\Seen``. A crash between the two finds the
mail unseen at the next start, fetches it again, finds it recorded and does not answer twice.
Between looks it waits with IMAP IDLE where the server offers it (the server says when mail
comes; the schedule's interval is then only how often to look anyway), else for the
schedule's interval. A dropped connection (the server restarted) is logged and reconnected
after a backoff.
"""

from __future__ import annotations

import imaplib
import logging
import threading
import time
from typing import Any, Callable

from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientError

from capabilities.channels.model import MalformedUpdate

log = logging.getLogger("flora.channels.email")

IDLE, ACTIVE = "idle", "active"
IDLE_RENEW_S = 25 * 60  # RFC 2177: re-issue IDLE before the server's 30-minute cut-off
WAIT_SLICE_S = 0.5  # how often a wait looks at the stop flag
RECONNECT_BACKOFF_S = (0.5, 30.0)  # after a lost connection: first wait, longest wait
FETCH_BATCH = 20  # mails fetched per round trip


class PollSchedule:
    def __init__(self, *, idle_s: float, active_s: float, active_timeout_s: float,
                 clock: Callable[[], float] = time.monotonic):
        self.idle_s, self.active_s, self.active_timeout_s = idle_s, active_s, active_timeout_s
        self._clock = clock
        self.state = IDLE
        self._last_mail = 0.0

    def mail_arrived(self) -> None:
        if self.state == IDLE:
            log.info("email: mail came; looking every %.0f s for %.0f s", self.active_s, self.active_timeout_s)
        self.state, self._last_mail = ACTIVE, self._clock()

    def interval(self) -> float:
        """Seconds until the next look; an active schedule that has waited ``active_timeout``
        without mail goes idle first."""
        if self.state == ACTIVE and self._clock() - self._last_mail >= self.active_timeout_s:
            self.state = IDLE
            log.info("email: no mail for %.0f s; looking every %.0f s again", self.active_timeout_s, self.idle_s)
        return self.active_s if self.state == ACTIVE else self.idle_s


class MailPoller:
    """``receive(raw)`` parses and records one fetched mail (``{"uid", "uidvalidity", "body"}``);
    it raises MalformedUpdate for a mail to skip, anything else to leave the mail unseen."""

    def __init__(self, settings: Any, *, username: str, password: str, receive: Callable[[dict], Any],
                 stop: threading.Event, schedule: PollSchedule | None = None):
        self._settings = settings
        self._username, self._password = username, password
        self._receive = receive
        self._stop = stop
        self.schedule = schedule or PollSchedule(idle_s=settings.poll_interval_idle,
                                                 active_s=settings.poll_interval_active,
                                                 active_timeout_s=settings.active_timeout)
        self.uses_idle = False  # set once connected: the server offers IDLE and the channel may use it
        self.server_id: dict | None = None  # what the server answered to ID

    def run(self) -> None:
        wait = RECONNECT_BACKOFF_S[0]
        while not self._stop.is_set():
            try:
                with self._connect() as client:
                    wait = RECONNECT_BACKOFF_S[0]
                    self._watch(client)
            except (IMAPClientError, imaplib.IMAP4.error, OSError, EOFError) as exc:
                if self._stop.is_set():
                    return
                log.warning("email: IMAP %s:%s failed (%s: %s); connecting again in %.1f s",
                            self._settings.imap.host, self._settings.imap.port, type(exc).__name__, exc, wait)
                self._stop.wait(wait)
                wait = min(wait * 2, RECONNECT_BACKOFF_S[1])

    def _connect(self) -> IMAPClient:
        server = self._settings.imap
        client = IMAPClient(server.host, port=server.port, ssl=server.security == "ssl",
                            ssl_context=server.tls_context() if server.security == "ssl" else None,
                            timeout=server.timeout_s)
        try:
            if server.security == "starttls":
                client.starttls(server.tls_context())
            client.login(self._username, self._password)
            capabilities = client.capabilities()
            if self._settings.imap_id and b"ID" in capabilities:
                self.server_id = client.id_(dict(self._settings.imap_id))
            self.uses_idle = self._settings.imap_idle and b"IDLE" in capabilities
            log.info("email: logged in to %s:%s as %s (IDLE %s)", server.host, server.port, self._username,
                     "used" if self.uses_idle else "not used")
        except BaseException:
            client.shutdown()
            raise
        return client

    def _watch(self, client: IMAPClient) -> None:
        selected = client.select_folder(self._settings.mailbox)
        uidvalidity = int(selected.get(b"UIDVALIDITY", 0))
        while not self._stop.is_set():
            if self.fetch_new(client, uidvalidity):
                self.schedule.mail_arrived()
            self._wait(client)

    def fetch_new(self, client: IMAPClient, uidvalidity: int) -> int:
        """Record and mark seen every unseen mail; how many there were."""
        client.noop()  # the server brings the selected mailbox up to date (dovecot does not for a SEARCH)
        uids = sorted(client.search(["UNSEEN"]))
        for start in range(0, len(uids), FETCH_BATCH):
            batch = uids[start:start + FETCH_BATCH]
            fetched = client.fetch(batch, ["BODY.PEEK[]"])
            for uid in batch:
                body = fetched.get(uid, {}).get(b"BODY[]")
                if body is None:
                    continue  # expunged meanwhile
                try:
                    self._receive({"uid": uid, "uidvalidity": uidvalidity, "body": body})
                except MalformedUpdate as exc:
                    log.warning("email: skipped mail uid %s: %s", uid, exc)
                except (IMAPClientError, OSError):
                    raise
                except Exception:  # not recorded (the store is down, say): left unseen, it comes again
                    log.exception("email: could not record mail uid %s; it stays unseen", uid)
                    return len(uids)
                client.add_flags([uid], [b"\\Seen"])  # recorded (or skipped for good): now read
        return len(uids)

    def _wait(self, client: IMAPClient) -> None:
        interval = self.schedule.interval()
        deadline = time.monotonic() + interval
        if not self.uses_idle:
            self._stop.wait(interval)
            return
        client.idle()
        try:
            renew = time.monotonic() + IDLE_RENEW_S
            while not self._stop.is_set():
                now = time.monotonic()
                if now >= min(deadline, renew):
                    return
                responses = client.idle_check(timeout=min(WAIT_SLICE_S, deadline - now))
                if any(len(r) > 1 and r[1] in (b"EXISTS", b"RECENT") for r in responses):
                    return
        finally:
            client.idle_done()
