"""Real mail servers on loopback for the e-mail channel's tests.

:class:`Dovecot` is a dovecot IMAP server of the test's own: its config, passwd-file user,
Maildir, logs and sockets in a temporary directory, plaintext login on 127.0.0.1 at a free
port, run as ``dovecot -c <conf> -F`` (a subprocess, no system service) and stopped at the
end. Tests put mails in the mailbox with IMAP APPEND (``deliver``), read its flags (``seen``),
and can ``restart`` it. :class:`SMTPSink` is an aiosmtpd server that receives Flora's mails
(with AUTH LOGIN/PLAIN checked against the same user) and lets tests wait for them.

``scripts/install_test_tools.sh`` installs dovecot (Debian's ``dovecot-imapd``).
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import imaplib
import logging
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from email.message import EmailMessage

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

USER, PASSWORD = "flora", "mail-secret"
# aiosmtpd's own AUTH code reads the attribute it deprecates and logs so on every login
logging.getLogger("mail.log").addFilter(lambda record: "login_data is deprecated" not in record.getMessage())
DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def self_signed(directory: str) -> tuple[str, str]:
    """A certificate for 127.0.0.1 and localhost, and its key: (cert.pem, key.pem) in ``directory``.
    The certificate is its own CA: a client trusts it through ``ca_file``."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert_path, key_path


class Dovecot:
    def __init__(self, *, idle: bool = True, tls: bool = False):
        if not os.path.exists(DOVECOT):
            raise RuntimeError("dovecot is not installed: run scripts/install_test_tools.sh "
                               "(Debian: apt-get install dovecot-imapd)")
        self.dir = tempfile.mkdtemp(prefix="flora-dovecot-")
        os.chmod(self.dir, 0o755)  # dovecot's own processes read the passwd-file
        self.port = free_port()
        self.conf = os.path.join(self.dir, "dovecot.conf")
        self._process: subprocess.Popen | None = None
        root = os.getuid() == 0
        owner = pwd.getpwnam("dovecot") if root else pwd.getpwuid(os.getuid())
        mail = os.path.join(self.dir, "mail")
        os.makedirs(mail)
        os.chown(mail, owner.pw_uid, owner.pw_gid)
        with open(os.path.join(self.dir, "passwd"), "w") as f:
            f.write(f"{USER}:{{PLAIN}}{PASSWORD}::::::\n")
        # without IDLE in its capabilities, to test the polling the channel falls back to
        capability = "" if idle else "imap_capability = IMAP4rev1 LITERAL+ SASL-IR ID ENABLE UIDPLUS\n"
        # tls: STARTTLS on ``port``, TLS from the first byte on ``tls_port``, with a certificate of its own
        self.tls_port = free_port() if tls else 0
        self.cert = self_signed(self.dir)[0] if tls else ""
        ssl_conf = f"ssl = yes\nssl_cert = <{self.cert}\nssl_key = <{self.dir}/key.pem\n" if tls else "ssl = no\n"
        with open(self.conf, "w") as f:
            f.write(f"""base_dir = {self.dir}/run
state_dir = {self.dir}/state
log_path = {self.dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
{ssl_conf}disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = {"dovecot" if root else owner.pw_name}
default_login_user = {"dovenull" if root else owner.pw_name}
first_valid_uid = 0
mail_location = maildir:{mail}/%u
mailbox_idle_check_interval = 1 secs
mail_log_prefix = "%s(%u)<%{{pid}}>: "
imap_id_log = *
{capability}passdb {{
  driver = passwd-file
  args = scheme=PLAIN {self.dir}/passwd
}}
userdb {{
  driver = static
  args = uid={owner.pw_uid} gid={owner.pw_gid} home={mail}/%u
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {self.port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {self.tls_port}
  }}
}}
""")

    def start(self) -> "Dovecot":
        # a process group of its own: stopping it stops the IMAP sessions too, as a real restart does
        self._process = subprocess.Popen([DOVECOT, "-c", self.conf, "-F"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 30
        while True:
            try:
                self.client().logout()
                return self
            except OSError:
                if self._process.poll() is not None:
                    raise RuntimeError(f"dovecot exited: {self._process.stderr.read().decode()} {self.log()}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"dovecot did not listen on {self.port}: {self.log()}")
                time.sleep(0.05)

    def stop(self) -> None:
        """Stop dovecot and every process it started (they share its process group)."""
        if self._process is None:
            return
        group = self._process.pid
        for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(group, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                self._process.poll()
                if not _alive_in_group(group):
                    break
                time.sleep(0.02)
            else:
                continue
            break
        self._process.wait(timeout=10)
        self._process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "Dovecot":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def log(self) -> str:
        try:
            with open(os.path.join(self.dir, "dovecot.log")) as f:
                return f.read()
        except OSError:
            return ""

    def client(self) -> imaplib.IMAP4:
        client = imaplib.IMAP4("127.0.0.1", self.port, timeout=10)
        client.login(USER, PASSWORD)
        return client

    def deliver(self, mail: EmailMessage | bytes) -> None:
        """Put a mail, unseen, in the INBOX (IMAP APPEND)."""
        raw = mail if isinstance(mail, bytes) else mail.as_bytes()
        client = self.client()
        try:
            status, data = client.append("INBOX", None, None, raw)
            assert status == "OK", data
        finally:
            client.logout()

    def flags(self) -> dict[str, bool]:
        """Message-ID -> whether the mail is seen, for every mail in the INBOX."""
        client = self.client()
        try:
            client.select("INBOX", readonly=True)
            _, data = client.fetch("1:*", "(FLAGS BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
        finally:
            client.logout()
        seen = {}
        for item in data:
            if isinstance(item, tuple):
                header = email.message_from_bytes(item[1])
                seen[str(header.get("Message-ID", "")).strip()] = b"\\Seen" in item[0]
        return seen


def _alive_in_group(group: int) -> bool:
    """Whether a process of the group still runs (zombies left to an init that does not reap
    them do not count)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            return True
    return False


class _Handler:
    def __init__(self, sink: "SMTPSink"):
        self._sink = sink

    async def handle_DATA(self, server, session, envelope):
        with self._sink._cond:
            if self._sink.refuse_next:
                self._sink.refuse_next -= 1
                self._sink.refused += 1
                return "451 4.3.0 try again later"
        mail = email.message_from_bytes(envelope.original_content or envelope.content, policy=email.policy.default)
        with self._sink._cond:
            self._sink.received.append({"mail": mail, "rcpt": list(envelope.rcpt_tos), "login": session.authenticated,
                                        "at": time.monotonic()})
            self._sink._cond.notify_all()
        return "250 OK"


class SMTPSink:
    """``tls``: ``"starttls"`` offers STARTTLS, ``"ssl"`` speaks TLS from the first byte; with
    ``cert``/``key`` (see :func:`self_signed`)."""

    def __init__(self, *, tls: str = "", cert: str = "", key: str = ""):
        self.received: list[dict] = []
        self.refuse_next = 0  # answer the next N mails with a temporary failure (451)
        self.refused = 0
        self._cond = threading.Condition()
        self.port = free_port()
        context = None
        if tls:
            import ssl

            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(cert, key)
        self._controller = Controller(_Handler(self), hostname="127.0.0.1", port=self.port,
                                      authenticator=self._authenticate, auth_require_tls=False,
                                      tls_context=context if tls == "starttls" else None,
                                      ssl_context=context if tls == "ssl" else None)

    @staticmethod
    def _authenticate(server, session, envelope, mechanism, auth_data) -> AuthResult:
        ok = auth_data.login == USER.encode() and auth_data.password == PASSWORD.encode()
        return AuthResult(success=ok, handled=False)

    def __enter__(self) -> "SMTPSink":
        self._controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self._controller.stop()

    def mails_to(self, address: str) -> list[EmailMessage]:
        with self._cond:
            return [r["mail"] for r in self.received if address in r["rcpt"]]

    def received_at(self, address: str, index: int) -> float:
        """When (``time.monotonic``) the ``index``-th mail to ``address`` arrived."""
        with self._cond:
            return [r["at"] for r in self.received if address in r["rcpt"]][index]

    def wait_for(self, address: str, count: int = 1, timeout: float = 30.0) -> list[EmailMessage]:
        """The first ``count`` mails to ``address``, waiting up to ``timeout`` seconds for them."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                mails = [r["mail"] for r in self.received if address in r["rcpt"]]
                if len(mails) >= count:
                    return mails
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(mails)} of {count} mail(s) to {address} arrived in {timeout} s: "
                                         f"{[str(m['Subject']) for m in mails]}")
                self._cond.wait(left)


RECEIVING_SERVER = "mx.flora.test"  # the authserv-id of the mail server that receives Flora's mail


def mail(sender: str, text: str, *, subject: str = "Hello Flora", to: str = "flora@flora.test",
         in_reply_to: str = "", message_id: str | None = None,
         authentication: str | None = "dkim=pass header.d={domain}; dmarc=pass header.from={domain}") -> EmailMessage:
    """A person's mail to Flora, as the receiving server delivers it to the mailbox: with its
    ``Authentication-Results`` (``authentication``: the results, ``{domain}`` the From's; None: no
    header, as from a server that checks nothing)."""
    out = EmailMessage()
    if authentication is not None:
        domain = email.utils.parseaddr(sender)[1].rpartition("@")[2]
        out["Authentication-Results"] = f"{RECEIVING_SERVER}; " + authentication.format(domain=domain)
    out["From"], out["To"], out["Subject"] = sender, to, subject
    out["Message-ID"] = message_id or email.utils.make_msgid(domain="people.test")
    if in_reply_to:
        out["In-Reply-To"] = in_reply_to
        out["References"] = in_reply_to
    out.set_content(text)
    return out
