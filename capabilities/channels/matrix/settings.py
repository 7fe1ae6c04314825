"""A Matrix channel's settings (``type: matrix``, docs/channels.md#matrix)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from config import ChannelConfig


class MatrixSettings(ChannelConfig):
    MODES: ClassVar[tuple[str, ...]] = ("polling",)  # /sync long polling
    CREDENTIALS: ClassVar[tuple[str, ...]] = ("access_token_env",)

    type: Literal["matrix"]
    user_id: str = ""  # Flora's own account (@flora:example.org): its own messages are not answered
    access_token_env: str = ""  # that account's access token
    sync_timeout_s: int = Field(30, ge=0, le=120)  # how long one /sync waits for news
    catch_up_s: float = Field(600.0, ge=0, le=86400)  # at start: messages this recent are answered, older ones not
    auto_join: bool = True  # join the rooms Flora is invited to

    @model_validator(mode="after")
    def _names_its_server_and_account(self) -> "MatrixSettings":
        if not self.api_base:
            raise ValueError("api_base: a matrix channel needs its homeserver's URL (https://matrix.example.org)")
        if not (self.user_id.startswith("@") and ":" in self.user_id):
            raise ValueError("user_id: a matrix channel needs its own account's id, like @flora:example.org")
        return self
