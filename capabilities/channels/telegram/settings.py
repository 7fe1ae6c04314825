"""A Telegram channel's settings (``type: telegram``, docs/channels.md#telegram)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from config import ChannelConfig


class TelegramSettings(ChannelConfig):
    API_BASE: ClassVar[str] = "https://api.telegram.org"
    MODES: ClassVar[tuple[str, ...]] = ("webhook", "polling")
    CREDENTIALS: ClassVar[tuple[str, ...]] = ("token_env",)

    type: Literal["telegram"]
    token_env: str = ""  # the bot token
    webhook_secret_env: str = ""  # webhook mode: the secret_token Telegram sends back in a header
    poll_timeout_s: int = Field(25, ge=0, le=50)  # polling: getUpdates long-poll seconds

    @model_validator(mode="after")
    def _webhook_has_a_secret(self) -> "TelegramSettings":
        if self.mode == "webhook" and not self.webhook_secret_env:
            raise ValueError("webhook_secret_env: a telegram webhook needs a secret token (its environment "
                             "variable's name), or Telegram's calls cannot be told from forged ones")
        return self
