"""DingTalk through an enterprise robot: signed HTTP callbacks, answers through the session webhook (docs/channels.md)."""

from capabilities.channels.adapters import credential
from capabilities.channels.dingtalk.adapter import DingTalkAdapter  # noqa: F401
from capabilities.channels.dingtalk.settings import DingTalkSettings
from capabilities.channels.plugin import ChannelPlugin


def _adapter(name, settings, env):
    return DingTalkAdapter(base_url=settings.base_url(), app_secret=credential(name, settings, "app_secret_env", env),
                           timeout_s=settings.http_timeout_s)


CHANNEL = ChannelPlugin(type="dingtalk", settings=DingTalkSettings, adapter=_adapter,
                        summary="DingTalk robot callback (HMAC-SHA256 sign), session webhook, ActionCard buttons")
