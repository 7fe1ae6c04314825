"""E-mail through a mailbox: IMAP in (:mod:`.mailbox`), SMTP out (:mod:`.adapter`), senders
checked by the receiving server's Authentication-Results (:mod:`.sender_auth`)."""

from capabilities.channels.adapters import credential
from capabilities.channels.email.adapter import EmailAdapter, html_to_text, strip_quoted  # noqa: F401
from capabilities.channels.email.settings import EmailSettings
from capabilities.channels.plugin import ChannelPlugin


def _adapter(name, settings, env):
    return EmailAdapter(address=settings.address, smtp=settings.smtp, smtp_auth=settings.smtp_auth,
                        username=credential(name, settings, "username_env", env),
                        password=credential(name, settings, "password_env", env),
                        require_sender_auth=settings.require_sender_auth,
                        trusted_authserv_ids=settings.trusted_authserv_ids)


def _poller(name, settings, adapter, receive, stop, env):
    from capabilities.channels.email.mailbox import MailPoller

    return MailPoller(settings, username=credential(name, settings, "username_env", env),
                      password=credential(name, settings, "password_env", env), receive=receive, stop=stop)


CHANNEL = ChannelPlugin(type="email", settings=EmailSettings, adapter=_adapter, poller=_poller,
                        summary="a mailbox: IMAP (IDLE) in, SMTP out, DMARC/DKIM/SPF-checked senders")
