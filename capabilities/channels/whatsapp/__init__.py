"""WhatsApp through the Business Cloud API: verified, signed webhook; interactive buttons (docs/channels.md)."""

from capabilities.channels.adapters import credential
from capabilities.channels.plugin import ChannelPlugin
from capabilities.channels.whatsapp.adapter import WhatsAppAdapter  # noqa: F401
from capabilities.channels.whatsapp.settings import WhatsAppSettings


def _adapter(name, settings, env):
    return WhatsAppAdapter(base_url=settings.base_url(), phone_number_id=settings.phone_number_id.strip(),
                           access_token=credential(name, settings, "access_token_env", env),
                           app_secret=credential(name, settings, "app_secret_env", env),
                           verify_token=credential(name, settings, "verify_token_env", env),
                           timeout_s=settings.http_timeout_s)


CHANNEL = ChannelPlugin(type="whatsapp", settings=WhatsAppSettings, adapter=_adapter,
                        summary="WhatsApp Business Cloud API: signed webhook, reply buttons and lists")
