"""A WhatsApp Business Cloud API channel's settings (``type: whatsapp``, docs/channels.md#whatsapp)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import model_validator

from config import ChannelConfig


class WhatsAppSettings(ChannelConfig):
    API_BASE: ClassVar[str] = "https://graph.facebook.com/v21.0"
    CREDENTIALS: ClassVar[tuple[str, ...]] = ("access_token_env", "app_secret_env", "verify_token_env")

    type: Literal["whatsapp"]
    phone_number_id: str = ""  # the business number's id (not a secret): messages go out from it
    access_token_env: str = ""  # a system user's access token with whatsapp_business_messaging
    app_secret_env: str = ""  # the Meta app's secret: X-Hub-Signature-256 of every event is checked with it
    verify_token_env: str = ""  # the token typed into the webhook's setup, echoed in its GET handshake

    @model_validator(mode="after")
    def _has_a_number(self) -> "WhatsAppSettings":
        if not self.phone_number_id.strip().isdigit():
            raise ValueError("phone_number_id: a whatsapp channel needs its business number's id (digits, from "
                             "the app's WhatsApp > API Setup page)")
        return self
