"""A WeCom (企业微信) application channel's settings (``type: wecom``, docs/channels.md#wecom--企业微信)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from config import ChannelConfig


class WeComSettings(ChannelConfig):
    API_BASE: ClassVar[str] = "https://qyapi.weixin.qq.com"
    CREDENTIALS: ClassVar[tuple[str, ...]] = ("corp_secret_env", "token_env", "encoding_aes_key_env")

    type: Literal["wecom"]
    corp_id: str = ""  # the company's CorpID (not a secret): it ends every decrypted callback
    agent_id: int = Field(0, ge=0)  # the application's AgentId
    corp_secret_env: str = ""  # the application's Secret, for access_token
    token_env: str = ""  # the callback's Token (msg_signature is computed with it)
    encoding_aes_key_env: str = ""  # the callback's EncodingAESKey (43 characters)

    @model_validator(mode="after")
    def _names_its_app(self) -> "WeComSettings":
        if not self.corp_id.strip():
            raise ValueError("corp_id: a wecom channel needs the company's CorpID (My Company > Company Info)")
        if not self.agent_id:
            raise ValueError("agent_id: a wecom channel needs its application's AgentId")
        return self
