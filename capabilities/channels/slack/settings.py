"""A Slack channel's settings (``type: slack``, docs/channels.md#slack)."""

from __future__ import annotations

from typing import ClassVar, Literal

from config import ChannelConfig


class SlackSettings(ChannelConfig):
    API_BASE: ClassVar[str] = "https://slack.com/api"
    CREDENTIALS: ClassVar[tuple[str, ...]] = ("bot_token_env", "signing_secret_env")

    type: Literal["slack"]
    bot_token_env: str = ""  # the app's bot token (xoxb-...), for chat.postMessage
    signing_secret_env: str = ""  # the app's signing secret: every call to the webhook is checked with it
