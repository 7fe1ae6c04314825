"""Chat channels: ways to talk to Flora from chat services and e-mail (docs/channels.md).

One model for all of them: each channel type is a package here (``telegram``, ``discord``,
``feishu``, ``email``, ``slack``, ``whatsapp``, ``dingtalk``, ``wecom``, ``matrix``) or in a
third-party package, registered in the catalogue of :mod:`~capabilities.channels.plugin`; its
adapter speaks the service's API (parse what comes in, checking signatures; render and send
what goes out) and, for a type that fetches, its poller watches the service.
:class:`~capabilities.channels.service.ChannelService` decides (who may talk, which Flora user
a sender is, what a reply looks like with its buttons);
:class:`~capabilities.channels.delivery.Deliverer` sends with retries and records each send;
``capability_actors/channel_actor.py`` is the actor around them, one per configured channel.

Errors::

    ChannelError                  anything a channel refuses or fails at
    ├── MalformedUpdate           what came in is not a message this channel understands (logged, skipped)
    ├── Unauthorized              a webhook call whose secret or signature does not check out (HTTP 401)
    └── DeliveryError             a send failed; ``retryable``, ``retry_after`` (seconds the service asked for)
"""

from capabilities.channels.model import (  # noqa: F401
    Button, ChannelError, DeliveryError, Inbound, MalformedUpdate, Outbound, Unauthorized,
)
