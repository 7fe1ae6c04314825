"""Channel messages and deliveries in the TaskStore, on both real backends (SQLite, Redis)."""

from __future__ import annotations

from common.tasks.models import ChannelDelivery, ChannelMessage

TENANT = "acme"


def inbound(key: str, **fields) -> ChannelMessage:
    return ChannelMessage(tenant_id=TENANT, channel="tg", message_key=key, payload={"text": f"hi {key}"}, **fields)


def test_a_message_is_recorded_once_and_a_redelivery_changes_nothing(store):
    assert store.record_channel_message(inbound("1")) is True
    assert store.record_channel_message(ChannelMessage(tenant_id=TENANT, channel="tg", message_key="1",
                                                       payload={"text": "other"})) is False
    assert store.get_channel_message(TENANT, "tg", "1").payload == {"text": "hi 1"}


def test_the_same_key_on_another_channel_or_tenant_is_another_message(store):
    assert store.record_channel_message(inbound("1"))
    assert store.record_channel_message(ChannelMessage(tenant_id=TENANT, channel="dc", message_key="1", payload={}))
    assert store.record_channel_message(ChannelMessage(tenant_id="globex", channel="tg", message_key="1", payload={}))
    assert store.get_channel_message("globex", "tg", "1").payload == {}


def test_open_messages_are_the_unanswered_ones_oldest_first(store):
    for i, key in enumerate(["a", "b", "c", "d"]):
        store.record_channel_message(inbound(key, created_at=100.0 + i))
    store.update_channel_message(TENANT, "tg", "b", "answered")
    store.update_channel_message(TENANT, "tg", "c", "replied", reply={"message": "done"})
    store.update_channel_message(TENANT, "tg", "d", "refused")
    opened = store.open_channel_messages(TENANT, "tg")
    assert [(m.message_key, m.state) for m in opened] == [("a", "received"), ("c", "replied")]
    assert opened[1].reply == {"message": "done"}
    assert store.open_channel_messages(TENANT, "other") == []


def test_a_second_store_object_sees_the_state_and_updating_an_unknown_message_says_so(store, make_store):
    store.record_channel_message(inbound("1"))
    assert store.update_channel_message(TENANT, "tg", "1", "dispatched")
    assert make_store().get_channel_message(TENANT, "tg", "1").state == "dispatched"
    assert store.update_channel_message(TENANT, "tg", "nope", "answered") is False


def test_deliveries_are_recorded_replaced_by_id_and_listed_by_what_they_answer(store):
    store.record_channel_delivery(ChannelDelivery(tenant_id=TENANT, channel="tg", delivery_id="d1", target="42",
                                                  kind="reply", state="failed", ref="1", attempts=1, error="500",
                                                  created_at=1.0))
    store.record_channel_delivery(ChannelDelivery(tenant_id=TENANT, channel="tg", delivery_id="d2", target="42",
                                                  kind="notification", state="sent", ref="note_1", attempts=1,
                                                  created_at=2.0))
    store.record_channel_delivery(ChannelDelivery(tenant_id=TENANT, channel="tg", delivery_id="d1", target="42",
                                                  kind="reply", state="sent", ref="1", attempts=3, created_at=1.0))
    assert [(d.delivery_id, d.state, d.attempts) for d in store.channel_deliveries(TENANT, "tg")] == \
        [("d1", "sent", 3), ("d2", "sent", 1)]
    assert [d.delivery_id for d in store.channel_deliveries(TENANT, "tg", ref="note_1")] == ["d2"]


def test_the_outbox_lists_pending_entries_oldest_first_counts_by_state_and_keeps_channel_states(store):
    from common.tasks.models import ChannelState

    def entry(delivery_id: str, state: str, at: float) -> ChannelDelivery:
        return ChannelDelivery(tenant_id=TENANT, channel="ob", delivery_id=delivery_id, target="42", kind="reply",
                               state=state, created_at=at, payload={"chat_id": "42", "text": delivery_id})

    store.record_channel_delivery(entry("late", "pending", 2.0))
    store.record_channel_delivery(entry("early", "pending", 1.0))
    store.record_channel_delivery(entry("gone", "pending", 0.5))
    store.record_channel_delivery(entry("gone", "delivered", 0.5))  # the same entry, moved on
    store.record_channel_delivery(entry("lost", "failed", 3.0))
    assert [(d.delivery_id, d.payload["text"]) for d in store.pending_channel_deliveries(TENANT, "ob")] == \
        [("early", "early"), ("late", "late")]
    assert store.count_channel_deliveries(TENANT, "ob") == {"pending": 2, "delivered": 1, "failed": 1}
    store.put_channel_state(ChannelState(channel="ob", state="running", node="n1"))
    store.put_channel_state(ChannelState(channel="ob", state="stopped", detail="bad credentials", node="n1"))
    assert store.channel_states()["ob"].label == "stopped: bad credentials"
