"""A Feishu/Lark channel's settings (``type: feishu``, docs/channels.md#feishu--lark)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import model_validator

from config import ChannelConfig


class FeishuSettings(ChannelConfig):
    API_BASE: ClassVar[str] = "https://open.feishu.cn"
    CREDENTIALS: ClassVar[tuple[str, ...]] = ("app_id_env", "app_secret_env")

    type: Literal["feishu"]
    app_id_env: str = ""  # App ID
    app_secret_env: str = ""  # App Secret
    verification_token_env: str = ""  # the event subscription's verification token (optional)
    encrypt_key_env: str = ""  # the event subscription's encrypt key (optional)

    @model_validator(mode="after")
    def _events_can_be_checked(self) -> "FeishuSettings":
        if not (self.verification_token_env or self.encrypt_key_env):
            raise ValueError("verification_token_env: a feishu channel needs its verification token or its "
                             "encrypt key (encrypt_key_env), or Feishu's events cannot be told from forged ones")
        return self
