"""WeCom (企业微信) through a self-built application: encrypted, signed callbacks; application messages (docs/channels.md)."""

from capabilities.channels.adapters import ChannelSetupError, credential
from capabilities.channels.plugin import ChannelPlugin
from capabilities.channels.wecom.adapter import WeComAdapter  # noqa: F401
from capabilities.channels.wecom.settings import WeComSettings


def _adapter(name, settings, env):
    try:
        return WeComAdapter(base_url=settings.base_url(), corp_id=settings.corp_id.strip(), agent_id=settings.agent_id,
                            corp_secret=credential(name, settings, "corp_secret_env", env),
                            token=credential(name, settings, "token_env", env),
                            encoding_aes_key=credential(name, settings, "encoding_aes_key_env", env),
                            timeout_s=settings.http_timeout_s)
    except ValueError as exc:
        if isinstance(exc, ChannelSetupError):
            raise
        raise ChannelSetupError(f"channels.{name}.encoding_aes_key_env: {exc}") from None


CHANNEL = ChannelPlugin(type="wecom", settings=WeComSettings, adapter=_adapter,
                        summary="WeCom application: msg_signature and AES callbacks, message/send, button cards")
