"""Malformed and hostile messages: each gets a clear task_error, the actors keep serving,
and tasks already accepted are not lost."""

from __future__ import annotations

import pytest

from common import messages as m

TIMEOUT = 30


def raw_ask(flora, message):
    reply = flora.system.ask(flora.interaction, message, TIMEOUT)
    assert reply is not None, f"no reply to {message!r}"
    return reply


@pytest.mark.parametrize("message, error_type, field", [
    ("hello", "malformed_message", None),
    (42, "malformed_message", None),
    (["user_input"], "malformed_message", None),
    ({}, "malformed_message", "message_type"),
    ({"message_type": "launch_missiles"}, "unknown_message_type", "message_type"),
    ({"message_type": "user_input", "content": "hi"}, "malformed_message", "user_id"),
    ({"message_type": "user_input", "user_id": 7, "content": "hi"}, "malformed_message", "user_id"),
    ({"message_type": "user_input", "user_id": "u", "content": None}, "malformed_message", "content"),
    ({"message_type": "user_input", "user_id": "u", "content": "x", "parameters": "a=1"}, "malformed_message",
     "parameters"),
    ({"message_type": "user_input", "user_id": "", "content": "x"}, "malformed_message", "user_id"),
    ({"message_type": "execute", "task_id": "t", "tenant_id": "default", "user_id": "u", "capability": "x",
      "parameters": {}}, "unknown_message_type", "message_type"),
])
def test_malformed_message_gets_a_task_error_naming_the_problem(flora, message, error_type, field):
    reply = raw_ask(flora, message)
    assert reply["message_type"] == "task_error"
    assert reply["error_type"] == error_type
    assert reply.get("field") == field
    assert reply["message"]


def test_bad_messages_do_not_lose_a_paused_task(flora, user):
    paused = raw_ask(flora, m.user_input(user_id=user, content="add numbers a=4"))
    for bad in ("garbage", {"message_type": "user_input"}, {"message_type": "nope"}, 3.5):
        assert raw_ask(flora, bad)["message_type"] == "task_error"
    done = raw_ask(flora, m.user_input(user_id=user, content="b=6"))
    assert done["message_type"] == "task_completed"
    assert done["task_id"] == paused["task_id"]
    assert done["result"] == {"sum": 10}


def test_a_user_cannot_answer_another_users_task(flora, user):
    paused = raw_ask(flora, m.user_input(user_id=user, content="add numbers a=1"))
    intruder = raw_ask(flora, m.user_input(user_id=user + "_other", content="b=2", task_id=paused["task_id"]))
    assert intruder["message_type"] == "task_error"
    assert intruder["error_type"] == "forbidden"
    # the intruder's free-text answer does not reach the task either
    chat = raw_ask(flora, m.user_input(user_id=user + "_other", content="b=2"))
    assert chat["message_type"] != "task_completed"
    done = raw_ask(flora, m.user_input(user_id=user, content="b=2"))
    assert done["message_type"] == "task_completed" and done["result"] == {"sum": 3}


def test_another_tenant_cannot_see_the_task(flora, user):
    paused = raw_ask(flora, m.user_input(user_id=user, content="add numbers a=1"))
    reply = raw_ask(flora, m.user_input(user_id=user, content="b=2", task_id=paused["task_id"], tenant_id="acme"))
    assert reply["message_type"] == "task_error"
    assert reply["error_type"] == "not_found"


def test_unknown_task_id_and_finished_task_are_refused(flora, user):
    missing = raw_ask(flora, m.user_input(user_id=user, content="x", task_id="task_does_not_exist"))
    assert missing["error_type"] == "not_found"
    paused = raw_ask(flora, m.user_input(user_id=user, content="add numbers a=1 b=1"))
    assert paused["message_type"] == "task_completed"
    again = raw_ask(flora, m.user_input(user_id=user, content="a=3", task_id=paused["task_id"]))
    assert again["error_type"] == "conflict"


def test_wrong_typed_structured_parameters_are_asked_again(flora, user):
    paused = raw_ask(flora, m.user_input(user_id=user, content="add numbers"))
    reply = raw_ask(flora, m.user_input(user_id=user, content="", task_id=paused["task_id"],
                                        parameters={"a": "ten", "b": 2}))
    assert reply["message_type"] == "task_paused"
    assert [p["name"] for p in reply["missing_parameters"]] == ["a"]
    assert reply["missing_parameters"][0]["reason"] == "must be a whole number"


def test_a_second_tenant_gets_its_own_agent_and_is_served(flora, user):
    reply = raw_ask(flora, m.user_input(user_id=user, content="add numbers a=2 b=2", tenant_id="tenant_b"))
    assert reply["message_type"] == "task_completed"
    status = flora.system.ask(flora.router, m.status_request(), TIMEOUT)
    assert {a["tenant_id"] for a in status["status"]["agents"]} >= {"default", "tenant_b"}
