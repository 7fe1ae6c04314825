"""A DingTalk robot channel's settings (``type: dingtalk``, docs/channels.md#dingtalk)."""

from __future__ import annotations

from typing import ClassVar, Literal

from config import ChannelConfig


class DingTalkSettings(ChannelConfig):
    API_BASE: ClassVar[str] = "https://oapi.dingtalk.com"
    CREDENTIALS: ClassVar[tuple[str, ...]] = ("app_secret_env",)

    type: Literal["dingtalk"]
    app_secret_env: str = ""  # the robot's app secret: the sign of every callback is checked with it
