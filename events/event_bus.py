"""EventBus: publishes lifecycle events, keeps their history, notifies subscribers.

History goes to the TaskStore, so it is shared by every actor process and survives a
restart; ``history()`` queries it. A task's state changes go through ``create_task`` and
``transition`` here, which write the change and its event in one store transaction. Subscribers are callables in the publishing process
(a log writer, a metrics counter, the HTTP event stream); a subscriber that raises is
logged and does not stop the others or the publisher.
"""

from __future__ import annotations

import logging
from typing import Callable, Iterable

from common import spans
from common.tasks.models import Event, PendingEvent, TaskRecord
from common.tasks.store import TaskStore
from events.event_types import STATE_EVENTS, EventType

log = logging.getLogger("flora.events")

Subscriber = Callable[[Event], None]


class EventBus:
    def __init__(self, store: TaskStore):
        self._store = store
        self._subscribers: list[tuple[str | None, Subscriber]] = []

    def subscribe(self, callback: Subscriber, event_type: EventType | str | None = None) -> Callable[[], None]:
        """Call ``callback`` for each event (of one type, if given); returns an unsubscribe."""
        entry = (_name(event_type) if event_type else None, callback)
        self._subscribers.append(entry)
        return lambda: self._subscribers.remove(entry)

    def publish_task_event(self, *, task_id: str, event_type: EventType | str, source: str,
                           tenant_id: str, user_id: str = "", agent_id: str = "",
                           data: dict | None = None) -> Event:
        """Record and announce an event that goes with no task change."""
        event = self._store.append_event(event_type=_name(event_type), task_id=task_id, tenant_id=tenant_id,
                                         user_id=user_id, source=source, data=_payload(data, agent_id))
        self._announce(event)
        return event

    def create_task(self, task: TaskRecord, *, source: str, agent_id: str = "", data: dict | None = None) -> TaskRecord:
        """Store a new task and its TASK_CREATED event in one transaction."""
        pending = PendingEvent(EventType.TASK_CREATED.value, source, _payload(data, agent_id))
        task, event = self._store.create_recorded(task, pending)
        self._announce(event)
        return task

    def transition(self, tenant_id: str, task_id: str, state: str, *, source: str, agent_id: str = "",
                   data: dict | None = None, event_type: EventType | str | None = None,
                   expect: Iterable[str] | None = None, unchanged_since: float | None = None,
                   **changes) -> TaskRecord:
        """Change a task's state and record the event that state publishes (``STATE_EVENTS``,
        or ``event_type``) in one transaction: the history never disagrees with the task.
        ``expect`` and ``unchanged_since`` as for ``TaskStore.transition``."""
        kind = _name(event_type) if event_type else STATE_EVENTS[state].value
        task, event = self._store.transition_recorded(tenant_id, task_id, state,
                                                      PendingEvent(kind, source, _payload(data, agent_id)),
                                                      expect=expect, unchanged_since=unchanged_since, **changes)
        self._announce(event)
        return task

    def _announce(self, event: Event) -> None:
        with spans.span("events"):
            self._tell(event)

    def _tell(self, event: Event) -> None:
        log.info("event %s task_id=%s source=%s", event.event_type, event.task_id, event.source,
                 extra={"task_id": event.task_id, "tenant_id": event.tenant_id, "event": event.event_type})
        for wanted, callback in list(self._subscribers):
            if wanted is None or wanted == event.event_type:
                try:
                    callback(event)
                except Exception:  # a broken subscriber must not break the task
                    log.exception("event subscriber %r failed on %s", callback, event.event_type)

    def history(self, tenant_id: str, **filters) -> list[Event]:
        """Events kept for a tenant, oldest first (filters: task_id, user_id, event_type, since_id, limit)."""
        if "event_type" in filters and filters["event_type"] is not None:
            filters["event_type"] = _name(filters["event_type"])
        return self._store.events(tenant_id, **filters)


def _payload(data: dict | None, agent_id: str) -> dict:
    payload = dict(data or {})
    if agent_id:
        payload.setdefault("agent_id", agent_id)
    return payload


def _name(event_type: EventType | str) -> str:
    return event_type.value if isinstance(event_type, EventType) else str(event_type)
