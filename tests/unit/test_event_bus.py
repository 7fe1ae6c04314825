"""EventBus over a real SQLite store: history, subscribers, and a subscriber that breaks."""

from __future__ import annotations

import logging

import pytest

from events.event_bus import EventBus
from events.event_types import EventType

TENANT = "acme"


@pytest.fixture
def bus(store):
    return EventBus(store)


def publish(bus, event_type, task_id="t1", **kwargs):
    return bus.publish_task_event(task_id=task_id, event_type=event_type, source="agent", tenant_id=TENANT,
                                  user_id=kwargs.pop("user_id", "alice"), **kwargs)


def test_published_event_is_kept_in_the_history(bus):
    event = publish(bus, EventType.TASK_CREATED, data={"capability": "weather"})
    (kept,) = bus.history(TENANT)
    assert kept == event
    assert (kept.event_type, kept.task_id, kept.user_id, kept.source) == ("TASK_CREATED", "t1", "alice", "agent")
    assert kept.data == {"capability": "weather"}


def test_history_survives_in_the_store_for_a_second_bus(bus, make_store):
    publish(bus, EventType.TASK_CREATED)
    publish(bus, EventType.TASK_STARTED)
    seen = EventBus(make_store()).history(TENANT)
    assert [e.event_type for e in seen] == ["TASK_CREATED", "TASK_STARTED"]


def test_agent_id_goes_into_the_data_without_changing_the_callers_dict(bus):
    data = {"capability": "weather"}
    event = publish(bus, EventType.TASK_STARTED, agent_id="agent-1", data=data)
    assert event.data == {"capability": "weather", "agent_id": "agent-1"}
    assert data == {"capability": "weather"}


def test_history_filters_by_type_given_as_enum_or_text(bus):
    publish(bus, EventType.TASK_CREATED)
    publish(bus, EventType.TASK_STARTED)
    publish(bus, "TASK_STARTED", task_id="t2")
    assert [e.task_id for e in bus.history(TENANT, event_type=EventType.TASK_STARTED)] == ["t1", "t2"]
    assert [e.task_id for e in bus.history(TENANT, event_type="TASK_STARTED")] == ["t1", "t2"]


def test_history_filters_by_task_user_and_since_id(bus):
    first = publish(bus, EventType.TASK_CREATED, task_id="t1", user_id="alice")
    publish(bus, EventType.TASK_CREATED, task_id="t2", user_id="bob")
    third = publish(bus, EventType.TASK_STARTED, task_id="t1", user_id="alice")
    assert [e.event_id for e in bus.history(TENANT, task_id="t1")] == [first.event_id, third.event_id]
    assert [e.task_id for e in bus.history(TENANT, user_id="bob")] == ["t2"]
    assert [e.event_id for e in bus.history(TENANT, since_id=first.event_id, task_id="t1")] == [third.event_id]
    assert bus.history("globex") == []


def test_subscribers_get_only_the_type_they_asked_for(bus):
    completed, everything = [], []
    bus.subscribe(completed.append, EventType.TASK_COMPLETED)
    bus.subscribe(everything.append)
    publish(bus, EventType.TASK_STARTED)
    done = publish(bus, EventType.TASK_COMPLETED)
    assert completed == [done]
    assert [e.event_type for e in everything] == ["TASK_STARTED", "TASK_COMPLETED"]


def test_subscription_by_text_name_matches_the_enum(bus):
    seen = []
    bus.subscribe(seen.append, "TASK_PAUSED")
    publish(bus, EventType.TASK_PAUSED)
    assert len(seen) == 1


def test_unsubscribe_stops_delivery(bus):
    seen = []
    unsubscribe = bus.subscribe(seen.append)
    publish(bus, EventType.TASK_CREATED)
    unsubscribe()
    publish(bus, EventType.TASK_STARTED)
    assert [e.event_type for e in seen] == ["TASK_CREATED"]


def test_raising_subscriber_is_logged_and_the_others_still_run(bus, caplog, monkeypatch):
    # caplog listens at the root: undo what other code in this process may have done to the
    # flora tree (configure_logging() stops propagation; a dictConfig disables existing loggers).
    monkeypatch.setattr(logging.getLogger("flora"), "propagate", True)
    monkeypatch.setattr(logging.getLogger("flora.events"), "disabled", False)
    before, after = [], []

    def broken(event):
        raise RuntimeError("subscriber is broken")

    bus.subscribe(before.append)
    bus.subscribe(broken)
    bus.subscribe(after.append)
    with caplog.at_level(logging.ERROR, logger="flora.events"):
        event = publish(bus, EventType.TASK_FAILED)
    assert before == [event] and after == [event]
    assert bus.history(TENANT) == [event]
    (record,) = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert record.name == "flora.events"
    assert "TASK_FAILED" in record.getMessage()
    assert record.exc_info and isinstance(record.exc_info[1], RuntimeError)

