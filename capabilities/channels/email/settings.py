"""An e-mail channel's settings (``type: email``, docs/channels.md#e-mail): Flora's address, its
IMAP and SMTP servers, how often it looks for mail, and whose Authentication-Results it trusts."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from config import ChannelConfig, _Section

MAIL_PORTS = {"imap": {"ssl": 993, "starttls": 143, "plain": 143}, "smtp": {"ssl": 465, "starttls": 587, "plain": 25}}


class MailServer(_Section):
    """An IMAP or SMTP server of an e-mail channel. ``security``: ``ssl`` (TLS from the first
    byte), ``starttls`` (upgraded after connecting; refused if the server cannot) or ``plain``
    (loopback and tests only). ``port`` 0: the usual port for the protocol and security."""

    host: str = ""
    port: int = Field(0, ge=0, le=65535)
    security: Literal["ssl", "starttls", "plain"] = "ssl"
    timeout_s: float = Field(30.0, gt=0, le=300)
    ca_file: str = ""  # a PEM file of CA certificates to trust instead of the system's (a private CA)

    def tls_context(self):
        import ssl

        return ssl.create_default_context(cafile=self.ca_file or None)


class EmailSettings(ChannelConfig):
    MODES: ClassVar[tuple[str, ...]] = ("polling",)  # it polls its mailbox
    CREDENTIALS: ClassVar[tuple[str, ...]] = ("username_env", "password_env")

    type: Literal["email"]
    address: str = ""  # the From of Flora's mails
    username_env: str = ""  # the mailbox login (IMAP and SMTP)
    password_env: str = ""  # its password
    imap: MailServer = Field(default_factory=MailServer)
    smtp: MailServer = Field(default_factory=MailServer)  # security defaults to starttls here
    smtp_auth: bool = True  # log in to the SMTP server with the same credentials
    mailbox: str = "INBOX"
    imap_idle: bool = True  # wait with IMAP IDLE where the server offers it
    imap_id: dict[str, str] = Field(default_factory=lambda: {"name": "Flora", "version": "1"})  # RFC 2971; {}: none
    poll_interval_idle: float = Field(60.0, gt=0, le=3600)  # seconds between polls while idle
    poll_interval_active: float = Field(5.0, gt=0, le=3600)  # ... after a mail, until active_timeout
    active_timeout: float = Field(300.0, ge=0, le=86400)  # seconds without mail before idle again
    max_fetch_bytes: int = Field(1_000_000, ge=1024)  # a bigger mail is fetched as its text only
    # a mail is its From's only when the receiving server's Authentication-Results (from one
    # of trusted_authserv_ids) shows DMARC, aligned DKIM or aligned SPF passed (docs/channels.md)
    require_sender_auth: bool = True
    trusted_authserv_ids: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _fits_email(self) -> "EmailSettings":
        if "@" not in self.address:
            raise ValueError("address: an email channel needs the address its mails come from")
        for key in ("imap", "smtp"):
            server = getattr(self, key)
            if not server.host:
                raise ValueError(f"{key}.host: an email channel needs its {key.upper()} server")
            if key == "smtp" and "security" not in server.model_fields_set:
                object.__setattr__(server, "security", "starttls")  # submission's usual way
            if not server.port:
                object.__setattr__(server, "port", MAIL_PORTS[key][server.security])
        if self.require_sender_auth and not [i for i in self.trusted_authserv_ids if i.strip()]:
            raise ValueError("trusted_authserv_ids: an email channel takes a mail as its From's only when the "
                             "receiving server's Authentication-Results says so; name that server's authserv-id "
                             "(the first word of the header it adds), or set require_sender_auth: false to take "
                             "any From as it is (forgeable)")
        object.__setattr__(self, "trusted_authserv_ids", [i.strip().lower() for i in self.trusted_authserv_ids
                                                          if i.strip()])
        # addresses are compared lower-cased: Alice@Example.com and alice@example.com are one sender
        object.__setattr__(self, "allow", [a if a == "*" else a.lower() for a in self.allow])
        object.__setattr__(self, "users", {a.lower(): u for a, u in self.users.items()})
        return self
