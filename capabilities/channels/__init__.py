"""Chat channels: Telegram, Discord, Feishu/Lark and e-mail as ways to talk to Flora (docs/channels.md).

One model for all of them: an adapter per channel type speaks the service's API (parse what
comes in, send what goes out: HTTP, or for e-mail IMAP through
:mod:`~capabilities.channels.mailbox` and SMTP); :class:`~capabilities.channels.service.ChannelService`
decides (who may talk, which Flora user a sender is, what a reply looks like with its
buttons); :class:`~capabilities.channels.delivery.Deliverer` sends with retries and records
each send; ``capability_actors/channel_actor.py`` is the actor around them, one per
configured channel.

Errors::

    ChannelError                  anything a channel refuses or fails at
    ├── MalformedUpdate           what came in is not a message this channel understands (logged, skipped)
    ├── Unauthorized              a webhook call whose secret or signature does not check out (HTTP 401)
    └── DeliveryError             a send failed; ``retryable``, ``retry_after`` (seconds the service asked for)
"""

from capabilities.channels.model import (  # noqa: F401
    Button, ChannelError, DeliveryError, Inbound, MalformedUpdate, Outbound, Unauthorized,
)
