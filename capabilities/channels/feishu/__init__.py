"""Feishu/Lark through its event subscription callback and message API (docs/channels.md)."""

from capabilities.channels.adapters import credential
from capabilities.channels.feishu.adapter import FeishuAdapter  # noqa: F401
from capabilities.channels.feishu.settings import FeishuSettings
from capabilities.channels.plugin import ChannelPlugin


def _adapter(name, settings, env):
    # each secret the config names must be set (fail closed); the config names one at least
    return FeishuAdapter(base_url=settings.base_url(), app_id=credential(name, settings, "app_id_env", env),
                         app_secret=credential(name, settings, "app_secret_env", env),
                         verification_token=credential(name, settings, "verification_token_env", env,
                                                       required=bool(settings.verification_token_env)),
                         encrypt_key=credential(name, settings, "encrypt_key_env", env,
                                                required=bool(settings.encrypt_key_env)),
                         timeout_s=settings.http_timeout_s)


CHANNEL = ChannelPlugin(type="feishu", settings=FeishuSettings, adapter=_adapter,
                        summary="Feishu/Lark events (encrypted or token-checked), post messages, cards")
