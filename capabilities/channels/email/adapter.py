"""E-mail through a mailbox: mails read over IMAP (:mod:`capabilities.channels.email.mailbox` polls),
answers sent over SMTP (stdlib ``smtplib``). This module is the adapter: a fetched mail as an
:class:`Inbound`, an :class:`Outbound` as a mail, and the send.

- who wrote: the ``From`` address, lower-cased (the channel's ``allow``/``users`` name addresses),
  taken as the sender's only when the receiving server's ``Authentication-Results`` shows it
  (:mod:`capabilities.channels.email.sender_auth`; ``require_sender_auth``, on by default): a mail
  that fails is parsed with the reason in ``Inbound.unverified``, and the channel refuses it;
- the key a redelivery repeats: the ``Message-ID``, else ``uid:<UIDVALIDITY>:<UID>``;
- what Flora reads: the plain-text part (else the HTML part as text), with the quoted previous
  message and the signature cut off, and each attachment listed (name, type, size), never its
  content;
- a question about a paused task goes out with a Message-ID that names the task
  (``<flora.q.<task_id>.<random>@domain>``) and the task in its subject (``[task_…]``): a reply
  to it (its ``In-Reply-To``, or the subject where a client drops that header) answers the task;
- answers are threaded (``In-Reply-To``, ``References``, ``Re:`` subject) and marked
  ``Auto-Submitted: auto-replied`` (RFC 3834), and Flora reads no auto-submitted mail, so two
  robots never answer each other forever.
"""

from __future__ import annotations

import email.errors
import email.policy
import email.utils
import html
import logging
import re
import smtplib
import uuid
from email.message import EmailMessage
from html.parser import HTMLParser
from typing import Any

from capabilities.channels.email import sender_auth
from capabilities.channels.email.render import email as mail_parts
from capabilities.channels.model import CredentialsRefused, DeliveryError, Inbound, MalformedUpdate, Outbound
from capabilities.cognition.rule_tables import table
from common.text import one_blank_line

log = logging.getLogger("flora.channels.email")

_FLORA_ID = re.compile(r"<flora\.(?:q\.(?P<task>task_[0-9a-f]+)|m)\.[0-9a-f]+@[^>]+>")
_SUBJECT_TASK = re.compile(r"\[(task_[0-9a-f]{16})\]")
_MAIL_WORDS = table("email")
_RE_PREFIX = _MAIL_WORDS["reply_prefix"]  # "Re: AW: 回复：" before a reply's subject
_QUOTE_HEADER = _MAIL_WORDS["quote_header"]  # "On … wrote:", "在…写道：": the quoted mail follows
MAX_REFERENCES = 20  # a long thread's References keep its latest ids
MAX_TEXT_CHARS = 90_000  # under a user_input's 100,000 characters, with room for the attachment list


class EmailAdapter:
    type = "email"

    def __init__(self, *, address: str, smtp: Any, username: str = "", password: str = "", smtp_auth: bool = True,
                 require_sender_auth: bool = True, trusted_authserv_ids: list[str] | tuple[str, ...] = ()):
        self.address = address.lower()
        self._require_auth = require_sender_auth
        self._trusted = list(trusted_authserv_ids)
        self.domain = self.address.rpartition("@")[2]
        self._smtp = smtp
        self._username, self._password, self._auth = username, password, smtp_auth

    # -- in ---------------------------------------------------------------------------
    def parse(self, raw: Any) -> list[Inbound]:
        """A fetched mail (``{"uid": int, "uidvalidity": int, "body": bytes}``, and for a big
        mail fetched as its text only ``attachments``: name, type, size of the rest) as Flora's
        inbound message; [] for Flora's own mails and automatic ones (bounces, vacation
        notices); MalformedUpdate when it is no mail a person can be answered at."""
        if not isinstance(raw, dict) or not isinstance(raw.get("body"), (bytes, bytearray)):
            raise MalformedUpdate(f"a fetched mail needs its bytes, got {str(raw)[:200]!r}")
        fallback = f"uid:{raw.get('uidvalidity', 0)}:{raw.get('uid', 0)}"
        try:
            mail = email.message_from_bytes(bytes(raw["body"]), policy=email.policy.default)
            sender = email.utils.parseaddr(str(mail.get("From", "")))[1].lower()
            message_id = str(mail.get("Message-ID", "")).strip()
            subject = str(mail.get("Subject", "")).strip()
            in_reply_to = str(mail.get("In-Reply-To", "")).strip()
            references = str(mail.get("References", "")).split()
        except (ValueError, TypeError, IndexError, email.errors.MessageError) as exc:  # headers past reading
            raise MalformedUpdate(f"mail {fallback}: unreadable headers ({exc})") from None
        if "@" not in sender:
            raise MalformedUpdate(f"mail {fallback}: no sender address in From: {mail.get('From', '')!r}")
        key = message_id.strip("<>") or fallback
        if sender == self.address or str(mail.get("Auto-Submitted", "no")).lower() != "no":
            log.info("email: skipped %s from %s: sent by a program, not a person", key, sender)
            return []
        try:
            body, attachments = strip_quoted(_text_of(mail)), _attachments(mail, raw.get("attachments") or [])
        except (ValueError, TypeError, LookupError, email.errors.MessageError) as exc:  # a broken MIME structure
            raise MalformedUpdate(f"mail {key}: its text cannot be read ({exc})") from None
        if len(body) > MAX_TEXT_CHARS:  # what a user_input may hold; the rest is said to be cut
            body = body[:MAX_TEXT_CHARS] + f"\n[… {len(body) - MAX_TEXT_CHARS:,} more characters not read]"
        text = "\n".join(filter(None, [body, attachments]))
        thread = {"message_id": message_id, "references": references[-MAX_REFERENCES:], "subject": subject}
        unverified = ""
        if self._require_auth:
            found = sender_auth.verdict(mail, self._trusted)
            unverified = "" if found.ok else found.reason
        return [Inbound(key=key, chat_id=sender, sender_id=sender, text=text,
                        task_id=self.task_answered(in_reply_to, subject), thread=thread, unverified=unverified)]

    def webhook(self, body: str, headers: dict[str, str], *, method: str = "POST",
                query: dict[str, str] | None = None) -> tuple[int, dict, list[Inbound]]:
        """Mail comes from the mailbox, never through the webhook route: a call there is refused."""
        raise MalformedUpdate("an email channel has no webhook: it reads its mailbox over IMAP")

    def task_answered(self, in_reply_to: str, subject: str) -> str:
        """The paused task a mail answers: the question it replies to names it; a mail that
        replies to none of Flora's may name it in its subject."""
        match = _FLORA_ID.search(in_reply_to) if self.domain in in_reply_to else None
        if match:
            return match.group("task") or ""
        tagged = _SUBJECT_TASK.search(subject)
        return tagged.group(1) if tagged else ""

    # -- out --------------------------------------------------------------------------
    def render(self, out: Outbound) -> list[dict]:
        """``out`` as one mail (a dict of its parts, kept as it is between retries)."""
        text = out.text or "(empty reply)"
        hint = _answer_hint(out)
        if hint:
            text = f"{text}\n\n{hint}"
        plain, rich = mail_parts(text)
        thread = out.thread or {}
        subject = _RE_PREFIX.sub("", thread.get("subject", "")).strip()
        subject = f"Re: {subject}" if subject else _first_line(out.text) or "Flora"
        if out.task_id and f"[{out.task_id}]" not in subject:
            subject = f"{subject} [{out.task_id}]"
        kind = f"q.{out.task_id}" if out.task_id else "m"
        parent = thread.get("message_id", "")
        references = [r for r in thread.get("references", []) if r != parent] + ([parent] if parent else [])
        return [{"chat_id": out.chat_id, "from": self.address, "to": out.chat_id, "subject": subject,
                 "message_id": f"<flora.{kind}.{uuid.uuid4().hex}@{self.domain}>", "in_reply_to": parent,
                 "references": references[-MAX_REFERENCES:], "text": plain, "html": rich,
                 "auto_submitted": "auto-generated" if out.kind == "notification" else "auto-replied"}]

    def message(self, body: dict) -> EmailMessage:
        mail = EmailMessage()
        mail["From"], mail["To"], mail["Subject"] = body["from"], body["to"], body["subject"]
        mail["Message-ID"] = body["message_id"]
        mail["Date"] = email.utils.formatdate(localtime=True)
        mail["Auto-Submitted"] = body.get("auto_submitted", "auto-replied")
        if body.get("in_reply_to"):
            mail["In-Reply-To"] = body["in_reply_to"]
        if body.get("references"):
            mail["References"] = " ".join(body["references"])
        mail.set_content(body["text"])
        mail.add_alternative(body["html"], subtype="html")
        return mail

    def send(self, body: dict) -> None:
        """One mail through the SMTP server. A refusal the server would repeat (5xx, a failed
        login) is not retried; a dropped connection or a 4xx is."""
        server = self._smtp
        try:
            if server.security == "ssl":
                smtp = smtplib.SMTP_SSL(server.host, server.port, timeout=server.timeout_s,
                                        context=server.tls_context())
            else:
                smtp = smtplib.SMTP(server.host, server.port, timeout=server.timeout_s)
            with smtp:
                if server.security == "starttls":
                    smtp.starttls(context=server.tls_context())
                if self._auth:
                    smtp.login(self._username, self._password)
                smtp.send_message(self.message(body))
            log.info("email: sent %s to %s", body["message_id"], body["to"])
        except smtplib.SMTPAuthenticationError as exc:
            raise CredentialsRefused(f"SMTP refused the login of {self._username}: {exc.smtp_code} "
                                     f"{exc.smtp_error!r}") from None
        except smtplib.SMTPRecipientsRefused as exc:
            codes = [code for code, _ in exc.recipients.values()]
            raise DeliveryError(f"SMTP refused {body['to']}: {exc.recipients}",
                                retryable=all(400 <= c < 500 for c in codes)) from None
        except smtplib.SMTPResponseException as exc:
            raise DeliveryError(f"SMTP {exc.smtp_code}: {exc.smtp_error!r}",
                                retryable=400 <= exc.smtp_code < 500) from None
        except smtplib.SMTPNotSupportedError as exc:  # STARTTLS or AUTH not offered: asking again will not help
            raise DeliveryError(f"SMTP: {exc}", retryable=False) from None
        except (smtplib.SMTPException, OSError) as exc:
            raise DeliveryError(f"SMTP: {type(exc).__name__}: {exc}") from None

    def acknowledge(self, inbound: Inbound) -> None:
        """Nothing: a mail is marked read by the poller once it is recorded."""

    def close(self) -> None:
        """Nothing held: each send opens its own SMTP connection."""


# ------------------------------------------------------------------------------- reading
def strip_quoted(text: str) -> str:
    """A reply without what it quotes: cut at the quote header ("On … wrote:", "-----Original
    Message-----") or the signature ("-- "), and every ``>`` line dropped."""
    kept: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.rstrip() == "--" and line.startswith("--"):
            break
        if _QUOTE_HEADER.match(line.strip()):
            if kept and kept[-1].strip().lower().startswith("on ") and not line.strip().lower().startswith("on "):
                kept.pop()  # "On Tue, … Flora <flora@…>" wrapped before "wrote:"
            break
        if line.lstrip().startswith(">"):
            continue
        kept.append(line.rstrip())
    return "\n".join(kept).strip()


def _text_of(mail: EmailMessage) -> str:
    part = mail.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    content = part.get_content()  # LookupError for an unknown charset: the caller's MalformedUpdate
    if part.get_content_subtype() == "html":
        return html_to_text(content)
    return content


class _Text(HTMLParser):
    BREAKS = {"br", "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self._skip = 0  # inside a quoted reply, a style or a script

    def handle_starttag(self, tag, attrs):
        if tag in ("blockquote", "style", "script", "head"):
            self._skip += 1
        elif tag in self.BREAKS:
            self.out.append("\n")

    def handle_endtag(self, tag):
        if tag in ("blockquote", "style", "script", "head") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.out.append(data)


def html_to_text(markup: str) -> str:
    parser = _Text()
    parser.feed(markup)
    parser.close()
    lines = [re.sub(r"[ \t\xa0]+", " ", line).strip() for line in "".join(parser.out).split("\n")]
    return one_blank_line("\n".join(lines)).strip()


def _attachments(mail: EmailMessage, outlined: list[dict]) -> str:
    """The attachments listed: those in the mail, and those only described (``outlined``: a
    big mail fetched without them)."""
    listed = []
    for part in mail.iter_attachments():
        name = part.get_filename() or "(unnamed)"
        payload = part.get_payload(decode=True) or b""
        listed.append(f"- {name} ({part.get_content_type()}, {_size(len(payload))})")
    for part in outlined:
        size = _size(int(part.get("size", 0)))  # from the encoded size: near, not exact
        listed.append(f"- {part.get('name') or '(unnamed)'} ({part.get('type', '')}, about {size})")
    return "Attachments (not opened):\n" + "\n".join(listed) if listed else ""


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MB"


# ------------------------------------------------------------------------------- writing
def _answer_hint(out: Outbound) -> str:
    """What a button would have done, as what to write back: mail has no buttons."""
    datas = [b for row in out.buttons for b in row]
    if any(b.data.startswith("a:") for b in datas):
        return 'Reply "yes" to go ahead or "no" to cancel.'
    options = [b for b in datas if b.data.startswith("o:")]
    if options:
        return "Reply with one of:\n" + "\n".join(f"- {b.data[2:]} ({b.label})" for b in options)
    if out.task_id and out.kind == "question":
        return "Reply to this mail with your answer."
    return ""


def _first_line(text: str) -> str:
    line = next((ln.strip(" #*") for ln in text.splitlines() if ln.strip()), "")
    return html.unescape(line)[:78]
