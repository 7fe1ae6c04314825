"""Channel plugins: what a chat channel type brings, and the catalogue Flora knows them by.

A channel type is one package (``capabilities/channels/<type>/``, or a third-party package)
whose ``CHANNEL`` object satisfies :class:`Channel`: its settings model (the entry under
``channels.<name>`` whose ``type`` names it), how to build its adapter from those settings
and the environment (reading the credentials, failing closed on a missing secret), and, for
a channel that fetches rather than being called, its poller. Its rendering and its limits
live in its adapter (:meth:`ChannelAdapter.render`). Nothing outside the package names the
type: the config's ``channels`` section is validated through the catalogue
(:class:`config.ChannelConfig` is the common part), the ChannelActor builds whatever adapter
and poller the catalogue gives, and the HTTP API's one webhook route hands every call to the
channel's actor by name.

Built-in channels are listed in :data:`BUILTIN_CHANNELS`; third-party ones advertise the
``flora.channels`` entry-point group (docs/plugins.md), each entry point naming a
:class:`Channel` object. A type registered twice raises, like a capability name.

Errors::

    ChannelCatalogueError     a type registered twice, or an object that is no channel
                              (its settings model's ``type`` must be ``Literal[<its type>]``)
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any, Callable, Mapping, Protocol, get_args, runtime_checkable

from capabilities.channels.model import Inbound, Outbound

log = logging.getLogger("flora.channels.plugin")

ENTRY_POINT_GROUP = "flora.channels"
BUILTIN_CHANNELS = (
    "capabilities.channels.telegram",
    "capabilities.channels.discord",
    "capabilities.channels.feishu",
    "capabilities.channels.email",
    "capabilities.channels.slack",
    "capabilities.channels.whatsapp",
    "capabilities.channels.dingtalk",
    "capabilities.channels.wecom",
    "capabilities.channels.matrix",
)


@runtime_checkable
class ChannelAdapter(Protocol):
    """What a channel's adapter speaks. ``webhook`` takes one call to
    ``/v1/channels/{name}/webhook``: the raw ``body`` (a signature is computed over these exact
    bytes), ``headers`` with lowercase names, the ``method`` (GET for the verification
    handshakes some services make) and the ``query`` parameters; it checks the call
    (``Unauthorized`` when its signature or secret does not check out) and answers
    ``(status, body, inbounds)``: a dict body goes back as JSON, a str as plain text. ``parse`` reads one polled item. ``render``
    turns an :class:`Outbound` into the service's request bodies, within its limits (length,
    buttons); ``send`` sends one, raising ``DeliveryError`` (``retryable``, ``retry_after``)."""

    def webhook(self, body: str, headers: Mapping[str, str], *, method: str = "POST",
                query: Mapping[str, str] | None = None) -> tuple[int, dict | str, list[Inbound]]: ...

    def parse(self, raw: Any) -> list[Inbound]: ...

    def render(self, out: Outbound) -> list[dict]: ...

    def send(self, body: dict) -> None: ...

    def acknowledge(self, inbound: Inbound) -> None: ...

    def close(self) -> None: ...


class Poller(Protocol):
    """A loop on a thread of the ChannelActor that fetches what the service holds for Flora,
    hands each item to ``receive`` (which records it) and stops when ``stop`` is set."""

    def run(self) -> None: ...


@runtime_checkable
class Channel(Protocol):
    """A channel type. ``settings``: its pydantic model, a subclass of ``config.ChannelConfig``
    with ``type: Literal["<type>"]``; ``build_adapter(name, settings, env)``: its adapter, with
    the credentials read from ``env`` (``ChannelSetupError`` naming the key when one is not
    set); ``build_poller(name, settings, adapter, receive, stop, env)``: its poller, or None
    when the service calls Flora instead."""

    type: str
    settings: type

    def build_adapter(self, name: str, settings: Any, env: Mapping[str, str]) -> ChannelAdapter: ...

    def build_poller(self, name: str, settings: Any, adapter: Any, receive: Callable[[Any], None], stop: Any,
                     env: Mapping[str, str]) -> Poller | None: ...


@dataclass(frozen=True)
class ChannelPlugin:
    """The usual way to write a :class:`Channel`: its type, its settings model, and functions."""

    type: str
    settings: type
    adapter: Callable[[str, Any, Mapping[str, str]], Any]
    poller: Callable[..., Any] | None = None
    summary: str = ""

    def build_adapter(self, name: str, settings: Any, env: Mapping[str, str]) -> Any:
        return self.adapter(name, settings, env)

    def build_poller(self, name: str, settings: Any, adapter: Any, receive, stop, env: Mapping[str, str]):
        if self.poller is None or settings.mode != "polling":
            return None
        return self.poller(name, settings, adapter, receive, stop, env)


class ChannelCatalogueError(Exception):
    """A channel type registered twice, or an object that is no channel."""


class ChannelCatalogue:
    """The channel types one process knows, by ``type``."""

    def __init__(self) -> None:
        self._channels: dict[str, Channel] = {}

    def register(self, channel: Channel) -> None:
        if not isinstance(channel, Channel):
            raise ChannelCatalogueError(f"{channel!r} is not a channel (it needs type, settings, build_adapter "
                                        f"and build_poller)")
        if channel.type in self._channels:
            raise ChannelCatalogueError(f"channel type {channel.type!r} is already registered")
        field = getattr(channel.settings, "model_fields", {}).get("type")
        if field is None or get_args(field.annotation) != (channel.type,):
            raise ChannelCatalogueError(f"channel type {channel.type!r}: its settings model's type must be "
                                        f"Literal[{channel.type!r}]")
        self._channels[channel.type] = channel

    def register_module(self, module: str) -> Channel:
        """The ``CHANNEL`` object of a module, registered."""
        channel = importlib.import_module(module).CHANNEL
        self.register(channel)
        return channel

    def load_entry_points(self) -> list[str]:
        """Register the channels of installed packages (the ``flora.channels`` group)."""
        names = []
        for point in entry_points(group=ENTRY_POINT_GROUP):
            channel = point.load()
            self.register(channel)
            names.append(channel.type)
            log.info("channel type %s from entry point %s", channel.type, point.value)
        return names

    def get(self, type_: str) -> Channel:
        try:
            return self._channels[type_]
        except KeyError:
            raise KeyError(f"no channel type {type_!r}; installed: {', '.join(self.types())}") from None

    def types(self) -> list[str]:
        return sorted(self._channels)

    def __contains__(self, type_: str) -> bool:
        return type_ in self._channels


@lru_cache(maxsize=1)
def default_catalogue() -> ChannelCatalogue:
    """The built-in channels and those installed by entry point; built once per process
    (the set of installed packages does not change while it runs)."""
    catalogue = ChannelCatalogue()
    for module in BUILTIN_CHANNELS:
        catalogue.register_module(module)
    catalogue.load_entry_points()
    return catalogue
