"""A secret parameter (dify's API key) is kept masked in the conversation history, while the
task keeps the real value: the turn recorded through ConversationLog into a real SQLite store,
the way the InteractionActor records it."""

from __future__ import annotations

import json

import pytest

from capabilities.context.conversation_log import ConversationLog
from capabilities.secrets import SecretMasker, mask, secret_names
from common.tasks.models import TaskRecord
from common.tasks.sqlite_store import SQLiteTaskStore
from tests.tools.conftest import build_registry

KEY = "app-Zq81LmNoPq7c9f2"
TENANT, USER, CONVERSATION = "t1", "alice", "conv_1"


@pytest.fixture
def store(tmp_path):
    opened = SQLiteTaskStore(tmp_path / "flora.db")
    yield opened
    opened.close()


@pytest.fixture
def log(store):
    return ConversationLog(store, secrets=SecretMasker.from_registry(build_registry()))


def history(store) -> str:
    return json.dumps(store.get_session(TENANT, CONVERSATION).to_dict(), ensure_ascii=False)


def test_a_mask_shows_the_kind_and_the_last_four_only():
    assert mask(KEY) == "app-…c9f2"
    assert mask("sk-short") == "sk-…"
    assert mask("hunter2") == "…"


def test_secret_parameters_are_those_the_schema_marks():
    spec = build_registry().get_executable("dify_workflow")
    assert secret_names(spec.parameters) == {"api_key"}
    assert secret_names({"properties": {"pw": {"type": "string", "format": "password"}, "n": {}}}) == {"pw"}


def test_the_answer_that_completes_a_paused_task_is_masked_in_history(store, log):
    # the person answered the paused task's question with the key; the task has it, unmasked
    store.create_task(TaskRecord(task_id="task_1", tenant_id=TENANT, user_id=USER, content="run the workflow",
                                 capability="dify_workflow", parameters={"api_key": KEY, "inputs": {}}))
    said = {"content": f"here it is: {KEY}", "task_id": "task_1"}
    reply = {"message_type": "task_completed", "task_id": "task_1", "capability": "dify_workflow",
             "parameters": {"api_key": KEY, "inputs": {}}, "result": {"status": "succeeded"},
             "message": f"Ran the workflow with key {KEY}."}
    log.record(TENANT, USER, CONVERSATION, said, reply)

    kept = history(store)
    assert KEY not in kept and "app-…c9f2" in kept
    assert store.get_task(TENANT, "task_1").parameters["api_key"] == KEY  # the task still has the real value
    assert log.recent(TENANT, USER, CONVERSATION)[0]["content"] == "here it is: app-…c9f2"


def test_a_key_given_as_structured_parameters_is_masked(store, log):
    store.create_task(TaskRecord(task_id="task_2", tenant_id=TENANT, user_id=USER, content="run it",
                                 capability="dify_workflow"))
    said = {"content": "", "task_id": "task_2", "parameters": {"api_key": "plain-secret-value-99"}}
    log.record(TENANT, USER, CONVERSATION, said, {"message_type": "task_paused", "task_id": "task_2",
                                                   "message": "working"})
    assert "plain-secret-value-99" not in history(store)


def test_a_key_pasted_in_a_first_message_is_masked_by_its_look(store, log):
    said = {"content": f"run the dify workflow with {KEY} please"}
    log.record(TENANT, USER, CONVERSATION, said, {"message_type": "chat_reply", "message": "On it."})
    kept = history(store)
    assert KEY not in kept and "app-…c9f2" in kept
    assert store.get_session(TENANT, CONVERSATION).title == "run the dify workflow with app-…c9f2 please"


def test_ordinary_turns_are_kept_as_they_are(store, log):
    said = {"content": "what is an app-store? and the weather in Beijing"}
    log.record(TENANT, USER, CONVERSATION, said, {"message_type": "chat_reply", "message": "Sunny."})
    assert store.get_session(TENANT, CONVERSATION).messages[0]["content"] == said["content"]
