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
after a backoff. A mail over ``max_fetch_bytes`` is fetched as its header and text part only
(:func:`fetch_outline`); its other parts are described from its BODYSTRUCTURE, not downloaded.
"""

from __future__ import annotations

import imaplib
import logging
import threading
import time
from typing import Any, Callable

from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientError, LoginError

from capabilities.channels.model import CredentialsRefused, MalformedUpdate

log = logging.getLogger("flora.channels.email")

IDLE, ACTIVE = "idle", "active"
IDLE_RENEW_S = 25 * 60  # RFC 2177: re-issue IDLE before the server's 30-minute cut-off
WAIT_SLICE_S = 0.5  # how often a wait looks at the stop flag
RECONNECT_BACKOFF_S = (0.5, 30.0)  # after a lost connection: first wait, longest wait
FETCH_BATCH = 20  # mails fetched per round trip


def fetch_outline(client: IMAPClient, uid: int, structure: Any) -> dict:
    """A mail too big to fetch whole: its header and its text part only (as one small mail),
    and what its other parts are (``attachments``: name, type, size) from its BODYSTRUCTURE."""
    leaves = list(_leaves(structure, ""))
    text = next((leaf for leaf in leaves if leaf["type"] == "text/plain" and not leaf["attachment"]), None)
    text = text or next((leaf for leaf in leaves if leaf["type"] == "text/html" and not leaf["attachment"]), None)
    attachments = [{"name": leaf["name"], "type": leaf["type"], "size": leaf["size"]} for leaf in leaves
                   if leaf is not text]
    if text is not None and not structure.is_multipart:  # one big text: nothing to leave out (it is cut later)
        return {"body": client.fetch([uid], ["BODY.PEEK[]"]).get(uid, {}).get(b"BODY[]")}
    items = ["BODY.PEEK[HEADER]"]
    if text is not None:
        items += [f"BODY.PEEK[{text['section']}.MIME]", f"BODY.PEEK[{text['section']}]"]
    got = client.fetch([uid], items).get(uid, {})
    header = got.get(b"BODY[HEADER]")
    if header is None:
        return {"body": None}  # expunged meanwhile
    kept = b"".join(line for line in _header_fields(header) if not line.lower().startswith((b"content-", b"mime-")))
    if text is None:  # attachments only
        return {"body": kept + b"\r\n", "attachments": attachments}
    mime, content = (got.get(f"BODY[{text['section']}{k}]".encode()) for k in (".MIME", ""))
    if mime is None or content is None:
        return {"body": None}
    body = kept + b"MIME-Version: 1.0\r\n" + mime.rstrip(b"\r\n") + b"\r\n\r\n" + content
    return {"body": body, "attachments": attachments}


def _header_fields(header: bytes) -> list[bytes]:
    """A header block as its fields, each with its folded continuation lines."""
    fields: list[bytes] = []
    for line in header.splitlines(keepends=True):
        if line.strip() == b"":
            continue
        if line[:1] in (b" ", b"\t") and fields:
            fields[-1] += line
        else:
            fields.append(line)
    return fields


def _leaves(structure: Any, prefix: str):
    """Each single part of a BODYSTRUCTURE: section, type, name, size (decoded, about), attachment."""
    if structure.is_multipart:
        for i, part in enumerate(structure[0], start=1):
            yield from _leaves(part, f"{prefix}.{i}" if prefix else str(i))
        return
    kind = f"{_s(structure[0])}/{_s(structure[1])}".lower()
    params = _pairs(structure[2])
    size = int(structure[6] or 0)
    if _s(structure[5]).lower() == "base64":
        size = size * 3 // 4
    extension = {"text": 9, "message": 11}.get(_s(structure[0]).lower(), 8)
    disposition = structure[extension] if len(structure) > extension else None
    disposition_kind, disposition_params = "", {}
    if isinstance(disposition, tuple) and disposition:
        disposition_kind, disposition_params = _s(disposition[0]).lower(), _pairs(disposition[1])
    name = disposition_params.get("filename") or params.get("name") or "(unnamed)"
    yield {"section": prefix or "1", "type": kind, "name": name, "size": size,
           "attachment": disposition_kind == "attachment" or not kind.startswith("text/")}


def _pairs(values: Any) -> dict:
    if not isinstance(values, (tuple, list)):
        return {}
    return {_s(values[i]).lower(): _s(values[i + 1]) for i in range(0, len(values) - 1, 2)}


def _s(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")


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
            try:
                client.login(self._username, self._password)
            except LoginError as exc:  # a wrong password stays wrong: the channel stops, not loops
                raise CredentialsRefused(f"IMAP {server.host}:{server.port} refused the login of "
                                         f"{self._username}: {exc}") from None
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
            sizes = client.fetch(batch, ["RFC822.SIZE", "BODYSTRUCTURE"])
            limit = self._settings.max_fetch_bytes
            whole = [uid for uid in batch if sizes.get(uid, {}).get(b"RFC822.SIZE", 0) <= limit]
            fetched = client.fetch(whole, ["BODY.PEEK[]"]) if whole else {}
            for uid in batch:
                if uid in whole:
                    raw = {"body": fetched.get(uid, {}).get(b"BODY[]")}
                elif uid in sizes:
                    raw = fetch_outline(client, uid, sizes[uid][b"BODYSTRUCTURE"])
                else:
                    continue  # expunged meanwhile
                if raw.get("body") is None:
                    continue
                try:
                    self._receive({"uid": uid, "uidvalidity": uidvalidity, **raw})
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
