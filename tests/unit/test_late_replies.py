"""A reply that comes after its person was told it took too long is kept: the task is found
by its id (a chat answer gets a task of its own) and the reply comes as a notification."""

from __future__ import annotations

import time

from agents.coordination.interaction_coordinator import InteractionCoordinator
from agents.coordination.notification_desk import NotificationDesk
from common import messages as m
from common.tasks.models import COMPLETED, FAILED


class NewWorkDesk:
    """A front desk that makes every message new work."""

    def handle_user_input(self, msg, history=None, standing=None):
        from capabilities.context.conversation_manager import Decision
        return Decision("new_task", needs_backend=True, content=msg["content"])


def timed_out(desk: InteractionCoordinator, content: str, msg_id: str) -> tuple[dict, dict]:
    """Send ``content``; let its reply time out; (the work sent on, what the person was told)."""
    (to, task), = desk.on_user_input(m.user_input(user_id="alice", tenant_id="acme", content=content, msg_id=msg_id))
    assert to == "agent"
    (to, told), = desk.expire_overdue(time.monotonic() + 10)
    assert to == "reply" and told["error_type"] == "timeout"
    return task, told


def test_a_chat_reply_that_timed_out_is_kept_under_its_task_id_and_notified(store):
    desk = InteractionCoordinator(NewWorkDesk(), reply_timeout_s=1, store=store)
    task, told = timed_out(desk, "tell me about the moon", "msg_1")
    assert told["task_id"] == task["task_id"] and "notification" in told["message"]
    assert store.get_task("acme", task["task_id"]) is None  # a chat answer has no task until it comes

    (to, note), = desk.on_backend_reply(m.chat_reply(msg_id="msg_1", message="The moon is 384,400 km away.",
                                                     intent="chat"))
    assert to == "notify" and note["user_id"] == "alice" and note["task_id"] == task["task_id"]
    assert note["kind"] == "task_completed" and "384,400 km" in note["message"]
    kept = store.get_task("acme", task["task_id"])  # what GET /v1/tasks/{id} reads
    assert kept is not None and kept.state == COMPLETED and kept.user_id == "alice"
    assert kept.result["message"] == "The moon is 384,400 km away."
    fetched = NotificationDesk(store).on_request(m.notifications_request(user_id="alice", tenant_id="acme"), None)
    assert [n["task_id"] for n in fetched["notifications"]] == [task["task_id"]]
    assert desk.on_backend_reply(m.chat_reply(msg_id="msg_1", message="again", intent="chat")) == []  # once


def test_a_failure_that_came_late_is_kept_failed_and_in_the_persons_language(store):
    desk = InteractionCoordinator(NewWorkDesk(), reply_timeout_s=1, store=store)
    task, _ = timed_out(desk, "给我讲讲月亮", "msg_2")
    (to, note), = desk.on_backend_reply(m.task_error(msg_id="msg_2", error_type="unavailable",
                                                     message="the language model is unavailable"))
    assert to == "notify" and note["kind"] == "task_failed" and note["message"].startswith("任务")
    kept = store.get_task("acme", task["task_id"])
    assert kept.state == FAILED and "unavailable" in kept.error


def test_a_task_the_agent_recorded_keeps_its_own_record_and_is_notified(store):
    from common.tasks.models import TaskRecord

    desk = InteractionCoordinator(NewWorkDesk(), reply_timeout_s=1, store=store)
    task, _ = timed_out(desk, "add 2 and 3", "msg_3")
    store.create_task(TaskRecord(task_id=task["task_id"], tenant_id="acme", user_id="alice", content="add 2 and 3",
                                 state=COMPLETED, result={"sum": 5}))
    (to, note), = desk.on_backend_reply(m.task_completed(msg_id="msg_3", task_id=task["task_id"], result={"sum": 5},
                                                         message="5"))
    assert to == "notify" and note["data"]["result"] == {"sum": 5}
    assert store.get_task("acme", task["task_id"]).result == {"sum": 5}


def test_without_a_store_a_late_reply_is_dropped_as_before():
    desk = InteractionCoordinator(NewWorkDesk(), reply_timeout_s=1)
    timed_out(desk, "tell me about the moon", "msg_4")
    assert desk.on_backend_reply(m.chat_reply(msg_id="msg_4", message="late", intent="chat")) == []
