"""Building a channel's adapter from its configuration, and checking its credentials at start.

Credentials live in environment variables only; the config names them (``token_env``,
``username_env`` and friends). A missing one stops Flora at start with the key's name
(:func:`check_credentials`), not at the first message. That holds for the secrets that tell a
service's calls from forged ones too (fail closed): a Feishu verification token or encrypt key
whose variable is named but not set, a Discord public key, a Telegram webhook's secret. A
channel never starts in a mode where anyone could post to its webhook as the service.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from config import CHANNEL_CREDENTIALS, FloraConfig


FEISHU_SECRETS = ("verification_token_env", "encrypt_key_env")


class ChannelSetupError(ValueError):
    """A channel cannot start; the message names the configuration key."""


def credential(name: str, settings: Any, key: str, env: Mapping[str, str], *, required: bool = True) -> str:
    """The value of the environment variable that ``channels.<name>.<key>`` names."""
    variable = getattr(settings, key)
    if not variable:
        if required:
            raise ChannelSetupError(f"channels.{name}.{key}: name the environment variable that holds it")
        return ""
    value = env.get(variable, "")
    if required and not value:
        raise ChannelSetupError(f"channels.{name}.{key}: environment variable {variable} is not set")
    return value


def check_credentials(config: FloraConfig, env: Mapping[str, str] | None = None) -> None:
    """Every enabled channel's credentials are set (ChannelSetupError naming the key if not)."""
    env = os.environ if env is None else env
    for name, settings in config.channels.items():
        if not settings.enabled:
            continue
        for key in CHANNEL_CREDENTIALS[settings.type]:
            credential(name, settings, key, env)
        if settings.type == "telegram" and settings.mode == "webhook":
            credential(name, settings, "webhook_secret_env", env)
        if settings.type == "discord":
            _discord_key(name, credential(name, settings, "public_key_env", env))
        if settings.type == "feishu":
            for key in FEISHU_SECRETS:  # the config names one at least; each one named must be set
                credential(name, settings, key, env, required=bool(getattr(settings, key)))


def build_adapter(name: str, settings: Any, env: Mapping[str, str] | None = None) -> Any:
    """The adapter that speaks channel ``name``'s service."""
    env = os.environ if env is None else env
    if settings.type == "email":
        from capabilities.channels.email import EmailAdapter

        return EmailAdapter(address=settings.address, smtp=settings.smtp, smtp_auth=settings.smtp_auth,
                            username=credential(name, settings, "username_env", env),
                            password=credential(name, settings, "password_env", env),
                            require_sender_auth=settings.require_sender_auth,
                            trusted_authserv_ids=settings.trusted_authserv_ids)
    base, timeout = settings.base_url(), settings.http_timeout_s
    if settings.type == "telegram":
        from capabilities.channels.telegram import TelegramAdapter

        return TelegramAdapter(base_url=base, token=credential(name, settings, "token_env", env),
                               webhook_secret=credential(name, settings, "webhook_secret_env", env,
                                                         required=settings.mode == "webhook"),
                               timeout_s=timeout)
    if settings.type == "discord":
        from capabilities.channels.discord import DiscordAdapter

        return DiscordAdapter(base_url=base, token=credential(name, settings, "token_env", env),
                              public_key=_discord_key(name, credential(name, settings, "public_key_env", env)),
                              timeout_s=timeout)
    from capabilities.channels.feishu import FeishuAdapter

    return FeishuAdapter(base_url=base, app_id=credential(name, settings, "app_id_env", env),
                         app_secret=credential(name, settings, "app_secret_env", env),
                         verification_token=credential(name, settings, "verification_token_env", env,
                                                       required=bool(settings.verification_token_env)),
                         encrypt_key=credential(name, settings, "encrypt_key_env", env,
                                                required=bool(settings.encrypt_key_env)),
                         timeout_s=timeout)


def _discord_key(name: str, hex_key: str) -> bytes:
    try:
        key = bytes.fromhex(hex_key)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise ChannelSetupError(f"channels.{name}.public_key_env: the application's public key must be 64 hex "
                                f"characters (Ed25519)")
    return key


def build_mail_poller(name: str, settings: Any, receive, stop, env: Mapping[str, str] | None = None) -> Any:
    """The IMAP watcher of e-mail channel ``name``; ``receive`` records each fetched mail."""
    from capabilities.channels.mailbox import MailPoller

    env = os.environ if env is None else env
    return MailPoller(settings, username=credential(name, settings, "username_env", env),
                      password=credential(name, settings, "password_env", env), receive=receive, stop=stop)
