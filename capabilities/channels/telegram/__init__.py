"""Telegram through the Bot API: long polling or a webhook with a secret header (docs/channels.md)."""

from capabilities.channels.adapters import credential
from capabilities.channels.plugin import ChannelPlugin
from capabilities.channels.telegram.adapter import TelegramAdapter, UpdatePoller  # noqa: F401
from capabilities.channels.telegram.settings import TelegramSettings


def _adapter(name, settings, env):
    return TelegramAdapter(base_url=settings.base_url(), token=credential(name, settings, "token_env", env),
                           webhook_secret=credential(name, settings, "webhook_secret_env", env,
                                                     required=settings.mode == "webhook"),
                           timeout_s=settings.http_timeout_s)


def _poller(name, settings, adapter, receive, stop, env):
    return UpdatePoller(adapter, timeout_s=settings.poll_timeout_s, receive=receive, stop=stop, name=name)


CHANNEL = ChannelPlugin(type="telegram", settings=TelegramSettings, adapter=_adapter, poller=_poller,
                        summary="Telegram Bot API: polling or webhook, inline keyboards, MarkdownV2")
