"""Matrix through the client-server API: /sync long polling, unencrypted rooms (docs/channels.md)."""

from capabilities.channels.adapters import credential
from capabilities.channels.matrix.adapter import MatrixAdapter, SyncPoller
from capabilities.channels.matrix.settings import MatrixSettings
from capabilities.channels.plugin import ChannelPlugin


def _adapter(name, settings, env):
    return MatrixAdapter(base_url=settings.base_url(), user_id=settings.user_id,
                         access_token=credential(name, settings, "access_token_env", env),
                         timeout_s=settings.http_timeout_s)


def _poller(name, settings, adapter, receive, stop, env):
    return SyncPoller(adapter, timeout_s=settings.sync_timeout_s, catch_up_s=settings.catch_up_s,
                      auto_join=settings.auto_join, receive=receive, stop=stop, name=name)


CHANNEL = ChannelPlugin(type="matrix", settings=MatrixSettings, adapter=_adapter, poller=_poller,
                        summary="Matrix client-server API: /sync, m.room.message, unencrypted rooms")
