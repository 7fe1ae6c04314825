"""NotificationDesk: what the InteractionActor decides about notifications, as a plain class.

Notifications (loop runs' results) are kept in the TaskStore until fetched. A client either
asks for them (``notifications_request``) or ``subscribe``s: then it gets the unread ones at
once and each new one pushed as it comes; a pushed notification counts as read. Subscribers
are addresses, kept in a list per (tenant, user) because Thespian addresses are not hashable.
A notification whose ``channel`` is one of the chat channels (``<name>:<chat id>``, the
channel a loop task was made on) goes to that channel's ChannelActor as well, which sends it
to the chat.

With linked accounts (:mod:`common.accounts.linking`) a notification follows its person: it
goes to the conversation the work was asked in while that is still theirs (the answer lands
beside the question, and a group's loop posts to the group), else to the direct conversation
they used last (an account unlinked since, or work asked in the browser), else it waits to be
fetched. A chat whose account now belongs to someone else never gets it.
"""

from __future__ import annotations

from typing import Any

from common import messages as m
from common.accounts.linking import AccountLinks
from common.tasks.store import TaskStore


class NotificationDesk:
    def __init__(self, store: TaskStore, *, default_tenant: str = "default", channels: dict[str, Any] | None = None,
                 links: AccountLinks | None = None):
        self._store = store
        self._default_tenant = default_tenant
        self.subscribers: dict[tuple[str, str], list[Any]] = {}
        self.channels = dict(channels or {})  # chat channel name -> its ChannelActor
        self._links = links

    def on_request(self, msg: object, sender: Any) -> dict:
        """The reply to a ``subscribe`` or ``notifications_request`` (a ``task_error`` naming
        the field when it is malformed)."""
        try:
            m.validate(msg)
        except m.ProtocolError as exc:
            return m.task_error(msg_id=m.new_id("msg"), error_type=exc.error_type, message=str(exc), field=exc.field)
        tenant, user = msg.get("tenant_id") or self._default_tenant, msg["user_id"]
        mark = True
        if msg["message_type"] == "subscribe":
            listeners = self.subscribers.setdefault((tenant, user), [])
            if sender not in listeners:
                listeners.append(sender)
        else:
            mark = msg.get("mark_read", True)
        notes = self._store.notifications(tenant, user, unread_only=not msg.get("all", False))
        if mark:
            self._store.mark_notifications_read(tenant, user, [n.notification_id for n in notes])
        return m.notifications_reply(user_id=user, notifications=[n.to_dict() for n in notes])

    def deliveries(self, note: m.Notification) -> list[tuple[Any, m.Notification]]:
        """Who gets ``note`` pushed, and the note each gets: addressed to the conversation its
        person reads now (:meth:`routed`)."""
        routed = self.routed(note)
        return [(address, routed) for address in self.recipients(routed)]

    def routed(self, note: m.Notification) -> m.Notification:
        """``note`` addressed where its person reads it now (a new dict; the received one is
        the sender's); its ``channel`` emptied when no chat is theirs any more."""
        if self._links is None or not self.channels:
            return note
        origin = str(note.get("channel") or "")
        target = self._links.route(note["tenant_id"], note["user_id"], origin or None) or ""
        return note if target == origin else {**note, "channel": target}  # type: ignore[return-value]

    def recipients(self, note: m.Notification) -> list[Any]:
        """Who gets ``note`` pushed; with none it waits in the store, unread."""
        listeners = list(self.subscribers.get((note["tenant_id"], note["user_id"]), []))
        channel = self.channels.get(str(note.get("channel") or "").partition(":")[0])
        if channel is not None and channel not in listeners:
            listeners.append(channel)
        if listeners:
            self._store.mark_notifications_read(note["tenant_id"], note["user_id"], [note["notification_id"]])
        return list(listeners)
