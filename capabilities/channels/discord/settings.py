"""A Discord channel's settings (``type: discord``, docs/channels.md#discord)."""

from __future__ import annotations

from typing import ClassVar, Literal

from config import ChannelConfig


class DiscordSettings(ChannelConfig):
    API_BASE: ClassVar[str] = "https://discord.com/api/v10"
    CREDENTIALS: ClassVar[tuple[str, ...]] = ("token_env", "public_key_env")

    type: Literal["discord"]
    token_env: str = ""  # the bot token
    public_key_env: str = ""  # the application's Ed25519 public key (hex)
