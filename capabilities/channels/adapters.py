"""Building a channel's adapter and poller from its configuration, and checking its credentials at start.

Credentials live in environment variables only; the config names them (``token_env``,
``username_env`` and friends). A missing one stops Flora at start with the key's name
(:func:`check_credentials`), not at the first message. That holds for the secrets that tell a
service's calls from forged ones too (fail closed): each channel's ``build_adapter`` reads
them with :func:`credential`, so a channel never starts in a mode where anyone could post to
its webhook as the service. Which adapter a type gets is its channel plugin's business
(:mod:`capabilities.channels.plugin`); nothing here names a type.
"""

from __future__ import annotations

import os
from typing import Any, Mapping


class ChannelSetupError(ValueError):
    """A channel cannot start; the message names the configuration key."""


def credential(name: str, settings: Any, key: str, env: Mapping[str, str], *, required: bool = True) -> str:
    """The value of the environment variable that ``channels.<name>.<key>`` names."""
    variable = getattr(settings, key)
    if not variable:
        if required:
            raise ChannelSetupError(f"channels.{name}.{key}: name the environment variable that holds it")
        return ""
    value = env.get(variable, "")
    if required and not value:
        raise ChannelSetupError(f"channels.{name}.{key}: environment variable {variable} is not set")
    return value


def _catalogue(catalogue):
    from capabilities.channels.plugin import default_catalogue

    return catalogue or default_catalogue()


def check_credentials(config: Any, env: Mapping[str, str] | None = None, *, catalogue=None) -> None:
    """Every enabled channel's credentials are set (ChannelSetupError naming the key if not):
    its adapter is built, which reads and checks them, and closed again."""
    env = os.environ if env is None else env
    for name, settings in config.channels.items():
        if settings.enabled:
            build_adapter(name, settings, env, catalogue=catalogue).close()


def build_adapter(name: str, settings: Any, env: Mapping[str, str] | None = None, *, catalogue=None) -> Any:
    """The adapter that speaks channel ``name``'s service."""
    env = os.environ if env is None else env
    return _catalogue(catalogue).get(settings.type).build_adapter(name, settings, env)


def build_poller(name: str, settings: Any, adapter: Any, receive, stop, env: Mapping[str, str] | None = None,
                 *, catalogue=None) -> Any:
    """The poller of channel ``name`` (``receive`` records each fetched item), None for a
    channel whose service calls Flora's webhook."""
    env = os.environ if env is None else env
    return _catalogue(catalogue).get(settings.type).build_poller(name, settings, adapter, receive, stop, env)
