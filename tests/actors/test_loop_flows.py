"""Loop tasks as a user sees them through ``system.ask``: registering in Chinese and English,
the missing time or parameter asked through pause/resume, plain-words operations on one's
own loop tasks only, runs whose results arrive as notifications (fetched or pushed)."""

from __future__ import annotations

import time

from common import messages as m
from common.runtime import Runtime
from tests.actors.test_conversation_flows import ask


def wait_for_notes(flora, user: str, count: int = 1, timeout: float = 15.0) -> list[dict]:
    deadline, notes = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        notes += flora.notifications(user)
        if len(notes) >= count:
            return notes
        time.sleep(0.1)
    raise AssertionError(f"{len(notes)} notification(s) for {user} after {timeout}s, wanted {count}")


def registered(reply: dict) -> dict:
    assert reply["message_type"] == "task_completed", reply
    assert reply["result"]["loop_task_id"].startswith("loop_")
    return reply["result"]


def test_a_daily_reminder_in_chinese_is_registered_with_its_next_time(flora, user):
    result = registered(ask(flora, user, "每天早上9点提醒我复习GRPO"))
    assert result["schedule"]["kind"] == "cron" and result["schedule"]["cron"] == "0 9 * * *"
    assert result["capability"] == "remind" and result["parameters"]["content"] == "复习GRPO"
    assert "every day at 09:00" in result["description"] and result["next_fire_at"] > time.time()
    history = Runtime.from_config(flora.config).events.history("default", user_id=user)
    assert "LOOP_TASK_REGISTERED" in [e.event_type for e in history]


def test_a_weekly_task_asks_for_its_missing_parameter_then_registers(flora, user):
    paused = ask(flora, user, "every Monday at 10:00 fetch the sales report")
    assert paused["message_type"] == "task_paused" and paused["capability"] == "http_request"
    assert [p["name"] for p in paused["missing_parameters"]] == ["url"]
    result = registered(ask(flora, user, "https://example.com/report"))
    assert result["capability"] == "http_request" and result["parameters"]["url"] == "https://example.com/report"
    assert result["schedule"]["cron"] == "0 10 * * 1" and "every Monday at 10:00" in result["description"]


def test_a_reminder_without_a_time_asks_for_it_and_an_unreadable_one_is_asked_again(flora, user):
    paused = ask(flora, user, "remind me to call Li")
    assert paused["message_type"] == "task_paused"
    assert [p["name"] for p in paused["missing_parameters"]] == ["time"]
    again = ask(flora, user, "whenever you like")
    assert again["message_type"] == "task_paused" and "cannot read a time" in again["missing_parameters"][0]["reason"]
    result = registered(ask(flora, user, "15:30"))
    assert result["schedule"]["kind"] == "once" and result["parameters"]["content"] == "call Li"
    assert "15:30" in result["description"]


def test_a_reminder_fires_and_its_result_reaches_the_user_as_a_notification(flora, user):
    result = registered(ask(flora, user, "remind me in 1 second to stretch"))
    notes = wait_for_notes(flora, user)
    assert notes[0]["message"] == "⏰ Reminder: stretch" and notes[0]["loop_task_id"] == result["loop_task_id"]
    assert notes[0]["kind"] == "loop_run_completed"
    runtime = Runtime.from_config(flora.config)
    run = runtime.store.get_task("default", notes[0]["task_id"])
    assert run.state == "completed" and run.meta["run"]["loop_task_id"] == result["loop_task_id"]
    kinds = [e.event_type for e in runtime.events.history("default", task_id=run.task_id)]
    assert kinds[:2] == ["TASK_CREATED", "TASK_TRIGGERED"] and "TASK_COMPLETED" in kinds
    assert flora.notifications(user) == []  # fetched once
    deadline = time.monotonic() + 15  # the run's end is recorded beside its notification
    while (state := runtime.loops.registry.get("default", result["loop_task_id"]).state) != "done" \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state == "done"  # a one-time reminder that fired fires no more
    runtime.close()


def test_a_reminder_whose_time_was_asked_afterwards_fires_with_its_text(flora, user):
    paused = ask(flora, user, "remind me to call Li")
    assert [p["name"] for p in paused["missing_parameters"]] == ["time"]
    result = registered(ask(flora, user, "in 1 second"))
    assert result["parameters"] == {"content": "call Li"}  # the time is the schedule, not a parameter
    notes = wait_for_notes(flora, user)
    assert notes[0]["message"] == "⏰ Reminder: call Li" and notes[0]["loop_task_id"] == result["loop_task_id"]
    assert notes[0]["kind"] == "loop_run_completed"


def test_list_pause_resume_modify_run_now_and_delete_in_plain_words(flora, user):
    grpo = registered(ask(flora, user, "每天早上9点提醒我复习GRPO"))["loop_task_id"]
    registered(ask(flora, user, "every day at 18:00 remind me to water the plants"))
    listing = ask(flora, user, "list my loop tasks")
    assert listing["message_type"] == "task_completed" and len(listing["result"]) == 2
    assert grpo in listing["message"]

    paused = ask(flora, user, "暂停GRPO提醒")
    assert paused["result"]["loop_task_id"] == grpo and paused["result"]["state"] == "paused"
    resumed = ask(flora, user, "resume the GRPO reminder")
    assert resumed["result"]["state"] == "active"
    changed = ask(flora, user, f"change {grpo} to every day at 10:00")
    assert changed["result"]["schedule"]["cron"] == "0 10 * * *"
    ran = ask(flora, user, "run the GRPO reminder now")
    assert ran["message_type"] == "task_completed" and ran["message"] == "⏰ Reminder: 复习GRPO"
    deleted = ask(flora, user, "delete the plants reminder")
    assert deleted["result"]["state"] == "deleted"
    assert [t["loop_task_id"] for t in ask(flora, user, "我有哪些定时任务")["result"]] == [grpo]


def test_an_ambiguous_reference_lists_the_candidates(flora, user):
    registered(ask(flora, user, "every day at 8:00 remind me to drink water"))
    registered(ask(flora, user, "every day at 20:00 remind me to read"))
    reply = ask(flora, user, "pause my reminder")
    assert reply["message_type"] == "task_error" and reply["error_type"] == "invalid_parameter"
    assert "drink water" in reply["message"] and "read" in reply["message"]


def test_a_user_sees_and_touches_only_their_own_loop_tasks(flora, user):
    theirs = registered(ask(flora, user, "every day at 7:00 remind me to run"))["loop_task_id"]
    other = user + "_other"
    assert ask(flora, other, "list my reminders")["result"] == []
    for text in (f"pause {theirs}", f"delete {theirs}", f"run {theirs} now", f"change {theirs} to every day at 8:00"):
        reply = ask(flora, other, text)
        assert reply["message_type"] == "task_error" and reply["error_type"] == "forbidden", (text, reply)
    assert ask(flora, user, "list my reminders")["result"][0]["state"] == "active"
    missing = ask(flora, user, "pause loop_0123456789abcdef")
    assert missing["error_type"] == "not_found"


def test_an_impossible_schedule_gets_a_clear_error(flora, user):
    reply = ask(flora, user, "every 0 minutes remind me to blink")
    assert reply["message_type"] == "task_error" and reply["error_type"] == "invalid_parameter"
    assert ask(flora, user, "hi")["message_type"] == "chat_reply"  # still serving


def test_a_subscribed_client_gets_notifications_pushed(flora, user):
    first = flora.system.ask(flora.interaction, m.subscribe(user_id=user), 10)
    assert first["message_type"] == "notifications_reply"
    registered(ask(flora, user, "remind me in 1 second to look away from the screen"))
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        pushed = flora.system.listen(1)
        if isinstance(pushed, dict) and pushed.get("message_type") == "notification":
            assert pushed["message"] == "⏰ Reminder: look away from the screen"
            break
    else:
        raise AssertionError("no notification pushed")
    assert flora.notifications(user) == []  # pushed ones count as delivered


def test_malformed_notification_requests_get_clear_errors_and_nothing_is_lost(flora, user):
    registered(ask(flora, user, "every day at 6:00 remind me to wake up"))
    for bad, field in (({"message_type": "subscribe"}, "user_id"),
                       ({"message_type": "notifications_request", "user_id": 7}, "user_id"),
                       ({"message_type": "notifications_request", "user_id": user, "all": "yes"}, "all")):
        reply = flora.system.ask(flora.interaction, bad, 10)
        assert reply["message_type"] == "task_error" and reply["field"] == field, (bad, reply)
    forged = m.loop_fire(tenant_id="default", user_id=user, loop_task_id="loop_x", run_key="k", task_id="task_x")
    flora.system.tell(flora.scheduler, forged)  # not a recorded run: dropped, no notification
    assert ask(flora, user, "list my reminders")["result"][0]["content"] == "wake up"
    assert flora.notifications(user) == []
