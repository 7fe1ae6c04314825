"""Personas through the actors, as a user meets them: a rule's persona writes the chat reply,
an allow-list holds at routing and at execution, the model picks in auto mode, and every
choice is in the events."""

from __future__ import annotations

import pytest

import main
from common.tasks.models import TaskRecord
from tests.actors.conftest import BASES, flora_config

PERSONAS = {
    "auto": True,
    "roster": [
        {"name": "coder", "prompt": "You are Coder. You answer programming questions.",
         "capabilities": ["http_request"], "rules": [{"keywords": ["python"]}]},
        {"name": "calc", "description": "sums", "prompt": "You are Calc. You add numbers.",
         "capabilities": ["add_numbers"], "rules": [{"keywords": ["sum"]}]},
        {"name": "writer", "description": "stories and poems", "prompt": "You are Writer. You write prose.",
         "capabilities": ["http_request"], "rules": [{"user": "poet", "channel": "telegram"}]},
    ],
}


@pytest.fixture(scope="module", params=BASES)
def flora(request, tmp_path_factory, dify, sales_db):
    config = flora_config(tmp_path_factory.mktemp(f"personas-{request.param}"), dify.url, sales_db, request.param)
    running = main.start_flora({**config, "personas": PERSONAS})
    yield running
    running.shutdown()


def selected(store, user: str) -> list[dict]:
    return [e.data for e in store.events("default", user_id=user) if e.event_type == "PERSONA_SELECTED"]


def test_a_rule_chosen_persona_writes_the_chat_reply(flora, store, user):
    reply = flora.ask("tell me a joke about python", user_id=user)
    assert reply["message_type"] == "chat_reply", reply
    assert reply["persona"] == "coder"
    assert "(as: You are Coder)" in reply["message"]  # the fake model echoes the system prompt's persona
    assert selected(store, user) == [{"persona": "coder", "how": "rule", "rule": "coder.rules[0]",
                                      "capabilities": ["http_request"]}]


def test_a_channel_and_user_rule_chooses_for_that_sender_only(flora, store, user):
    assert flora.ask("tell me a joke", user_id="poet", channel="telegram:42")["persona"] == "writer"
    assert flora.ask("tell me a joke", user_id="poet", channel="cli")["persona"] != "writer"


def test_a_persona_task_records_its_persona_and_runs_what_it_may(flora, store, user):
    reply = flora.ask("sum please: add numbers a=2 b=3", user_id=user)
    assert reply["message_type"] == "task_completed", reply
    assert reply["result"] == {"sum": 5} and reply["persona"] == "calc"
    task = store.get_task("default", reply["task_id"])
    assert task.meta["persona"] == "calc" and task.meta["allowed_capabilities"] == ["add_numbers"]


def test_a_capability_outside_the_allow_list_is_refused_at_routing_even_by_name(flora, store, user):
    reply = flora.ask("python: add numbers a=2 b=3", user_id=user)
    assert reply["message_type"] == "chat_reply" and reply["persona"] == "coder", reply
    assert "may not use 'add_numbers'" in reply["message"]
    assert not [t for t in store.list_tasks("default", user_id=user) if t.capability == "add_numbers"]


def test_a_capability_outside_the_allow_list_is_refused_at_execution(flora, store, user):
    # a paused task of the coder persona for a capability it may not use (however it got there)
    task = TaskRecord(task_id=f"task_forged_{user[-12:]}", tenant_id="default", user_id=user,
                      content="add numbers", state="waiting_parameters", capability="add_numbers",
                      parameters={"a": 2}, meta={"persona": "coder", "allowed_capabilities": ["http_request"]},
                      missing=[{"name": "b", "description": "the second number", "schema": {"type": "integer"}}])
    store.create_task(task)
    reply = flora.ask("", user_id=user, task_id=task.task_id, parameters={"b": 3})
    assert reply["message_type"] == "task_error", reply
    assert reply["error_type"] == "forbidden" and "may not use 'add_numbers'" in reply["message"]
    assert store.get_task("default", task.task_id).state == "failed"


def test_auto_mode_lets_the_model_pick_when_no_rule_matches(flora, store, user):
    reply = flora.ask("could the writer tell me a story?", user_id=user)
    assert reply["message_type"] == "chat_reply" and reply["persona"] == "writer", reply
    assert "(as: You are Writer)" in reply["message"]
    assert selected(store, user) == [{"persona": "writer", "how": "auto", "capabilities": ["http_request"]}]


def test_auto_mode_may_pick_flora_herself_who_speaks_in_her_own_voice(flora, store, user):
    reply = flora.ask("tell me a joke", user_id=user)
    assert reply["persona"] == "flora" and "(as:" not in reply["message"]
    assert selected(store, user) == [{"persona": "flora", "how": "auto"}]


@pytest.mark.parametrize("persona", ["coder", {"name": "coder", "prompt": "x", "how": "because"}])
def test_a_malformed_persona_on_agent_work_is_refused_and_the_actors_keep_serving(flora, user, persona):
    reply = flora.system.ask(flora.agent, {"message_type": "agent_task", "task_id": "task_bad_persona",
                                           "msg_id": "msg_bad_persona", "tenant_id": "default", "user_id": user,
                                           "content": "hi", "persona": persona}, 10)
    assert reply["message_type"] == "task_error" and reply["error_type"] == "malformed_message", reply
    assert "'persona" in reply["message"]
    assert flora.ask("tell me a joke about python", user_id=user)["persona"] == "coder"
