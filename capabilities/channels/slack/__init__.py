"""Slack through the Events API (signed calls) and the Web API, Block Kit buttons (docs/channels.md)."""

from capabilities.channels.adapters import credential
from capabilities.channels.plugin import ChannelPlugin
from capabilities.channels.slack.adapter import SlackAdapter  # noqa: F401
from capabilities.channels.slack.settings import SlackSettings


def _adapter(name, settings, env):
    return SlackAdapter(base_url=settings.base_url(), bot_token=credential(name, settings, "bot_token_env", env),
                        signing_secret=credential(name, settings, "signing_secret_env", env),
                        timeout_s=settings.http_timeout_s)


CHANNEL = ChannelPlugin(type="slack", settings=SlackSettings, adapter=_adapter,
                        summary="Slack Events API (v0 signatures), chat.postMessage, Block Kit buttons")
