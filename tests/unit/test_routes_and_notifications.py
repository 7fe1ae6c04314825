"""AgentRoutes and NotificationDesk: the plain logic the InteractionActor and the
LoopSchedulerActor use to reach AgentActors and to hand out users' notifications."""

from __future__ import annotations

from agents.coordination.agent_routes import AgentRoutes
from agents.coordination.notification_desk import NotificationDesk
from common import messages as m
from common.tasks.models import Notification


def test_messages_wait_for_one_route_request_per_tenant_then_go_out():
    routes = AgentRoutes("router")
    first, second = {"n": 1}, {"n": 2}
    assert routes.send("acme", first) == [("router", m.route_request(tenant_id="acme", watch=True))]
    assert routes.send("acme", second) == []  # already asked
    assert routes.learned(m.route_reply(tenant_id="acme", node="local", agent="agent-a")) == \
        [("agent-a", first), ("agent-a", second)]
    assert routes.send("acme", first) == [("agent-a", first)] and routes.is_agent("agent-a")
    routes.forget("agent-a")
    assert not routes.is_agent("agent-a")
    assert routes.send("acme", first) == [("router", m.route_request(tenant_id="acme", watch=True))]


def test_a_route_reply_naming_another_agent_says_the_known_one_was_replaced():
    routes = AgentRoutes("router")
    first = m.route_reply(tenant_id="acme", node="local", agent="agent-a")
    assert not routes.replaced(first)  # nothing known yet
    routes.learned(first)
    assert not routes.replaced(first)
    assert routes.replaced(m.route_reply(tenant_id="acme", node="local", agent="agent-b"))
    assert not routes.replaced(m.route_reply(tenant_id="other", node="local", agent="agent-b"))


def note(store, user="alice", text="⏰ Reminder: GRPO") -> Notification:
    return store.add_notification(Notification(notification_id=m.new_id("note"), tenant_id="default",
                                                user_id=user, message=text))


def test_fetching_marks_read_unless_asked_not_to_and_only_the_users_own(store):
    desk = NotificationDesk(store)
    kept = note(store)
    note(store, user="bob")
    peek = desk.on_request(m.notifications_request(user_id="alice", mark_read=False), "client")
    assert [n["notification_id"] for n in peek["notifications"]] == [kept.notification_id]
    assert len(desk.on_request(m.notifications_request(user_id="alice"), "client")["notifications"]) == 1
    assert desk.on_request(m.notifications_request(user_id="alice"), "client")["notifications"] == []
    assert len(desk.on_request(m.notifications_request(user_id="alice", all=True), "client")["notifications"]) == 1
    bad = desk.on_request({"message_type": "subscribe", "user_id": 3}, "client")
    assert bad["message_type"] == "task_error" and bad["field"] == "user_id"


def test_subscribers_get_new_notifications_pushed_and_those_count_as_read(store):
    desk = NotificationDesk(store)
    waiting = note(store)
    assert desk.recipients(m.notification(notification_id=waiting.notification_id, tenant_id="default",
                                          user_id="alice", message=waiting.message, kind="loop_run")) == []
    first = desk.on_request(m.subscribe(user_id="alice"), "client-1")
    assert [n["notification_id"] for n in first["notifications"]] == [waiting.notification_id]
    desk.on_request(m.subscribe(user_id="alice"), "client-1")  # twice: still one listener
    fresh = note(store)
    pushed = m.notification(notification_id=fresh.notification_id, tenant_id="default", user_id="alice",
                            message=fresh.message, kind="loop_run")
    assert desk.recipients(pushed) == ["client-1"]
    assert store.notifications("default", "alice") == []


def test_messages_waiting_for_a_replaced_agent_are_answered_at_once_and_retryable():
    from agents.coordination.interaction_coordinator import InteractionCoordinator, Waiting

    coordinator = InteractionCoordinator(conversation=None)
    coordinator.waiting = {"m1": Waiting("acme", "u", "add numbers", "task_1", deadline=1e12),
                           "m2": Waiting("other", "u", "hello", "task_2", deadline=1e12)}
    [(to, error)] = coordinator.expire_tenant("acme", "please send it again")
    assert to == "reply" and error["msg_id"] == "m1" and error["task_id"] == "task_1"
    assert error["error_type"] == "unavailable" and error["retryable"] is True
    assert list(coordinator.waiting) == ["m2"]  # another tenant's AgentActor still answers
