"""Discord through its HTTP interactions endpoint (Ed25519-signed) and REST API (docs/channels.md)."""

from capabilities.channels.adapters import ChannelSetupError, credential
from capabilities.channels.discord.adapter import DiscordAdapter  # noqa: F401
from capabilities.channels.discord.settings import DiscordSettings
from capabilities.channels.plugin import ChannelPlugin


def public_key(name: str, hex_key: str) -> bytes:
    """The application's Ed25519 public key; ChannelSetupError when it is not 32 bytes of hex."""
    try:
        key = bytes.fromhex(hex_key)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise ChannelSetupError(f"channels.{name}.public_key_env: the application's public key must be 64 hex "
                                f"characters (Ed25519)")
    return key


def _adapter(name, settings, env):
    return DiscordAdapter(base_url=settings.base_url(), token=credential(name, settings, "token_env", env),
                          public_key=public_key(name, credential(name, settings, "public_key_env", env)),
                          timeout_s=settings.http_timeout_s)


CHANNEL = ChannelPlugin(type="discord", settings=DiscordSettings, adapter=_adapter,
                        summary="Discord interactions: a slash command, buttons as components")
