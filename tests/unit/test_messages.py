"""The message protocol: constructors, ``validate``, and what survives a process boundary."""

from __future__ import annotations

import copy
import inspect
import json
import pickle

import pytest

from common import messages as m
from common.messages import CONSTRUCTORS, MESSAGE_TYPES, REPLY_TYPES, ProtocolError, validate

MISSING_CITY = {"name": "city", "description": "The city to look up", "schema": {"type": "string"}}
OPTION = {"id": "1", "label": "Weather in Paris", "capability": "weather"}

# Keyword arguments that make a valid message of each type (JSON values only).
SAMPLES: dict[str, dict] = {
    "user_input": dict(user_id="alice", content="weather in Paris", tenant_id="acme"),
    "task_completed": dict(msg_id="msg_1", task_id="task_1", message="Done.", result={"temp_c": 21}),
    "task_paused": dict(msg_id="msg_1", task_id="task_1", message="Which city?", missing_parameters=[MISSING_CITY]),
    "task_queued": dict(msg_id="msg_1", task_id="task_1", message="Queued at position 2 (limit: 1 running per user).",
                        position=2, scope="user", limit=1, capability="slow_job"),
    "chat_reply": dict(msg_id="msg_1", message="Hello!"),
    "clarification": dict(msg_id="msg_1", message="Which one?", options=[OPTION]),
    "task_error": dict(msg_id="msg_1", error_type="not_found", message="There is no such task."),
    "agent_task": dict(task_id="task_1", msg_id="msg_1", tenant_id="acme", user_id="alice", content="hi"),
    "resume_task": dict(task_id="task_1", msg_id="msg_1", tenant_id="acme", user_id="alice"),
    "analyze": dict(task_id="task_1", tenant_id="acme", user_id="alice", content="weather in Paris"),
    "reply_chunk": dict(task_id="task_1", text="Hel", seq=0),
    "analysis_result": dict(task_id="task_1", intent="task", capability="weather", parameters={"city": "Paris"}),
    "execute": dict(task_id="task_1", tenant_id="acme", user_id="alice", capability="weather",
                    parameters={"city": "Paris"}),
    "resume_execution": dict(task_id="task_1", tenant_id="acme", user_id="alice"),
    "subtask_result": dict(task_id="task_1", tenant_id="acme", capability="weather", ok=True, result=[1, 2.5]),
    "run_plan": dict(task_id="task_1", tenant_id="acme", user_id="alice", resume=True),
    "plan_result": dict(task_id="task_1", tenant_id="acme", ok=True, result={"value": [1, 2]}, message="Done."),
    "aggregate_plan": dict(task_id="task_1", tenant_id="acme", plan={"steps": [{"id": "s1", "capability": "echo"}]},
                           results={"s1": "hi"}, errors={}, children={"s1": "task_2"}, min_ok=1),
    "plan_aggregated": dict(task_id="task_1", tenant_id="acme", ok=False, error_type="capability_failed",
                            error="voting: no answers"),
    "loop_command": dict(msg_id="msg_1", tenant_id="acme", user_id="alice", op="pause", reference="the GRPO one"),
    "loop_fire": dict(tenant_id="acme", user_id="alice", loop_task_id="loop_1", run_key="loop_1:2026-03-02T01:00:00Z",
                      task_id="run_1"),
    "run_task": dict(task_id="run_1", msg_id="msg_1", tenant_id="acme", user_id="alice"),
    "notification": dict(notification_id="note_1", tenant_id="acme", user_id="alice", message="⏰ Reminder: GRPO",
                         kind="loop_run_completed", loop_task_id="loop_1"),
    "subscribe": dict(user_id="alice"),
    "memory_request": dict(op="recall", tenant_id="acme", user_id="alice", query="what do I drink?"),
    "memory_reply": dict(op="recall", memories=[{"memory_id": "mem_1", "fact": "Likes green tea"}]),
    "notifications_request": dict(user_id="alice", all=True),
    "notifications_reply": dict(user_id="alice", notifications=[{"message": "⏰ Reminder: GRPO"}]),
    "configure": dict(config={"log_level": "INFO"}, role="agent"),
    "configured": dict(role="agent"),
    "route_request": dict(tenant_id="acme"),
    "route_reply": dict(tenant_id="acme", node="local", agent="agent-address"),
    "agent_children": dict(children=["worker-address", "group-address"]),
    "heartbeat": dict(seq=7),
    "heartbeat_ack": dict(seq=7, role="agent"),
    "status_request": dict(),
    "status_reply": dict(status={"tasks": {"running": 2}}),
    "channel_update": dict(channel="telegram", body='{"update_id": 1}', headers={"content-type": "application/json"}),
    "channel_ack": dict(channel="telegram", status=200, body={}),
}


def sample(kind: str, **overrides) -> dict:
    return CONSTRUCTORS[kind](**{**SAMPLES[kind], **overrides})


def test_the_samples_cover_every_message_type():
    assert set(SAMPLES) == set(MESSAGE_TYPES)


def test_every_message_type_has_a_constructor_and_nothing_else_does():
    assert set(CONSTRUCTORS) == set(MESSAGE_TYPES)


def test_reply_types_are_the_six_replies_to_user_input():
    assert REPLY_TYPES == {"task_completed", "task_paused", "task_queued", "chat_reply", "clarification",
                           "task_error"}
    assert REPLY_TYPES <= set(MESSAGE_TYPES)


@pytest.mark.parametrize("kind", sorted(MESSAGE_TYPES))
def test_constructor_output_validates_and_carries_its_type(kind):
    msg = sample(kind)
    assert msg["message_type"] == kind
    assert validate(msg) is msg


@pytest.mark.parametrize("kind", sorted(CONSTRUCTORS))
def test_constructors_take_keyword_arguments_only(kind):
    params = inspect.signature(CONSTRUCTORS[kind]).parameters.values()
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)


def test_optional_fields_left_out_are_absent_not_none():
    msg = m.user_input(user_id="alice", content="hi")
    assert "task_id" not in msg and "approve" not in msg and "tenant_id" not in msg


def test_user_input_gets_a_fresh_msg_id_when_none_is_given():
    first, second = m.user_input(user_id="alice", content="hi"), m.user_input(user_id="alice", content="hi")
    assert first["msg_id"].startswith("msg_") and first["msg_id"] != second["msg_id"]


def test_a_false_approval_is_kept_not_dropped():
    assert m.user_input(user_id="alice", content="no", task_id="task_1", approve=False)["approve"] is False


def test_task_completed_accepts_a_capability_that_returned_nothing():
    msg = m.task_completed(msg_id="msg_1", task_id="task_1", message="Done.", result=None)
    assert "result" in msg and msg["result"] is None
    assert validate(msg) is msg


def test_constructor_refuses_a_wrong_value_naming_the_field():
    with pytest.raises(ProtocolError) as info:
        m.task_error(msg_id="msg_1", error_type="oops", message="x")
    assert info.value.field == "error_type"


def test_address_fields_may_hold_any_object():
    class Address:  # what Thespian hands out: not JSON, only used inside the actor system
        pass

    msg = m.agent_task(**SAMPLES["agent_task"], reply_to=Address())
    assert validate(msg) is msg
    assert validate(m.configure(config={}, router=Address(), agent=Address()))


def _msg(kind: str, **changes) -> dict:
    msg = sample(kind)
    for key, value in changes.items():
        if value is _DROP:
            del msg[key]
        else:
            msg[key] = value
    return msg


_DROP = object()

MALFORMED = [
    # (id, message, field, words the error text must contain)
    ("not-a-dict", ["user_input"], None, ["JSON object", "list"]),
    ("no-message-type", {"user_id": "alice"}, "message_type", ["no 'message_type'"]),
    ("empty-message-type", {"message_type": ""}, "message_type", ["no 'message_type'"]),
    ("non-string-message-type", {"message_type": 3}, "message_type", ["no 'message_type'"]),
    ("unknown-type", {"message_type": "user_inptu"}, "message_type", ["unknown message_type 'user_inptu'", "user_input"]),
    ("missing-required", _msg("chat_reply", message=_DROP), "message", ["missing required field 'message'"]),
    ("string-for-string-field", _msg("chat_reply", message=5), "message", ["must be a string", "int"]),
    ("bool-for-int", _msg("heartbeat", seq=True), "seq", ["must be an integer", "bool"]),
    ("float-for-int", _msg("heartbeat", seq=1.5), "seq", ["must be an integer", "float"]),
    ("int-for-bool", _msg("subtask_result", ok=1), "ok", ["must be true or false", "int"]),
    ("outside-literal", _msg("task_error", error_type="oops"), "error_type", ["must be one of", "'not_found'"]),
    ("list-for-dict", _msg("execute", parameters=["Paris"]), "parameters", ["must be an object", "list"]),
    ("empty-user-id", _msg("user_input", user_id=""), "user_id", ["'user_id' must not be empty"]),
    ("empty-tenant-id", _msg("agent_task", tenant_id=""), "tenant_id", ["'tenant_id' must not be empty"]),
    ("empty-capability", _msg("execute", capability=""), "capability", ["must not be empty"]),
    ("nested-missing-schema", _msg("task_paused", missing_parameters=[{"name": "city", "description": "The city"}]),
     "missing_parameters", ["'schema'", "objects with"]),
    ("nested-wrong-type", _msg("task_paused", missing_parameters=[{**MISSING_CITY, "name": 1}]),
     "missing_parameters", ["objects with"]),
    ("nested-not-an-object", _msg("task_paused", missing_parameters=["city"]), "missing_parameters", ["objects with"]),
    ("nested-not-a-list", _msg("task_paused", missing_parameters=MISSING_CITY), "missing_parameters", ["a list"]),
    ("option-without-label", _msg("clarification", options=[{"id": "1"}]), "options", ["'label'"]),
]


@pytest.mark.parametrize("msg, field, words", [case[1:] for case in MALFORMED], ids=[case[0] for case in MALFORMED])
def test_malformed_message_raises_protocol_error_naming_the_field(msg, field, words):
    with pytest.raises(ProtocolError) as info:
        validate(msg)
    assert info.value.field == field
    for word in words:
        assert word in str(info.value)


def test_unknown_type_is_its_own_error_type_and_other_faults_are_malformed():
    with pytest.raises(ProtocolError) as unknown:
        validate({"message_type": "launch_rockets"})
    with pytest.raises(ProtocolError) as malformed:
        validate(_msg("heartbeat", seq="7"))
    assert unknown.value.error_type == "unknown_message_type"
    assert malformed.value.error_type == "malformed_message"


def test_protocol_error_is_a_value_error():
    assert issubclass(ProtocolError, ValueError)


def test_extra_fields_from_newer_senders_are_tolerated():
    msg = {**sample("chat_reply"), "trace_id": "abc", "priority": 3}
    assert validate(msg) is msg


@pytest.mark.parametrize("kind", sorted(MESSAGE_TYPES))
def test_validate_never_mutates_the_message(kind):
    msg = {**sample(kind), "extra": {"nested": [1, 2]}}
    before = copy.deepcopy(msg)
    validate(msg)
    assert msg == before


def test_validate_leaves_a_refused_message_untouched():
    msg = _msg("task_paused", missing_parameters=[{"name": "city"}])
    before = copy.deepcopy(msg)
    with pytest.raises(ProtocolError):
        validate(msg)
    assert msg == before


@pytest.mark.parametrize("kind", sorted(MESSAGE_TYPES))
def test_messages_round_trip_through_json(kind):
    msg = sample(kind)  # address fields (reply_to, router, agent) are left out or plain strings here
    again = json.loads(json.dumps(msg))
    assert again == msg
    assert validate(again) == msg


@pytest.mark.parametrize("kind", sorted(MESSAGE_TYPES))
def test_messages_round_trip_through_pickle(kind):
    msg = sample(kind)
    again = pickle.loads(pickle.dumps(msg))
    assert again == msg
    assert validate(again) == msg


def test_unicode_content_survives_json():
    msg = m.user_input(user_id="用户", content="北京明天天气怎么样？🌧")
    assert json.loads(json.dumps(msg)) == msg


# -- replies as a person reads them, in their language -------------------------------------------------
def test_a_paused_or_queued_reply_reads_with_its_hint_in_the_language_it_speaks():
    asked_zh = m.task_paused(msg_id="m", task_id="task_1", message="要完成「执行Dify工作流」，我还需要：api_key",
                             missing_parameters=[])
    assert m.reply_text(asked_zh).endswith("\n（任务 task_1 正在等你的回答）")
    asked_en = m.task_paused(msg_id="m", task_id="task_1", message="To run dify_workflow I need: api_key",
                             missing_parameters=[])
    assert m.reply_text(asked_en).endswith("\n(task task_1 is waiting for your answer)")
    queued = m.task_queued(msg_id="m", task_id="task_2", message="已排队，第 2 位", position=2, scope="user", limit=1)
    assert m.reply_text(queued).endswith("\n（任务 task_2 会自己开始，结果会以通知发来）")


def test_a_failure_in_other_words_than_the_persons_is_framed_in_theirs():
    from agents.coordination.interaction_coordinator import in_their_language

    refused = m.task_error(msg_id="m", error_type="unavailable", message="Could not get an answer from 127.0.0.1: "
                           "[Errno 111] Connection refused.")
    framed = in_their_language(refused, "帮我请求一下 http://127.0.0.1:9/ping")
    assert framed["message"] == "这件事没能完成：Could not get an answer from 127.0.0.1: [Errno 111] Connection refused."
    assert framed["error_type"] == "unavailable" and refused["message"].startswith("Could not")  # a copy
    assert in_their_language(refused, "call http://127.0.0.1:9/ping") is refused
    already = m.task_error(msg_id="m", error_type="not_found", message="没有这个任务。")
    assert in_their_language(already, "继续任务 task_x") is already
    chat = m.chat_reply(msg_id="m", message="Hello!")
    assert in_their_language(chat, "你好") is chat
