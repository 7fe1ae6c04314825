"""What the agent keeps in the TaskStore, on both real backends (SQLite, Redis; the conftest
runs each test on each): the tools a person always allows, and the transcript with the task,
which a second store object (another process, another node) reads and continues."""

from __future__ import annotations

import pytest

from capabilities.agent.loop import AgentLoop, ToolBox
from capabilities.agent.transcript import TranscriptKeeper
from capabilities.base import ExecutionContext, InputRequired
from capabilities.llm.fake import ScriptedLLM
from capabilities.registry import CapabilityRegistry
from common.tasks.models import TaskRecord

TENANT = "acme"


def test_always_allowed_tools_are_kept_per_tenant_and_user(store):
    assert store.allowed_tools(TENANT, "alice") == set()
    store.allow_tool(TENANT, "alice", "shell")
    store.allow_tool(TENANT, "alice", "shell")  # idempotent
    store.allow_tool(TENANT, "alice", "time.get_current_time")
    assert store.allowed_tools(TENANT, "alice") == {"shell", "time.get_current_time"}
    assert store.allowed_tools(TENANT, "bob") == set()
    assert store.allowed_tools("globex", "alice") == set()


def test_a_second_store_object_sees_what_was_allowed(store, make_store):
    store.allow_tool(TENANT, "alice", "file_write")
    assert make_store().allowed_tools(TENANT, "alice") == {"file_write"}


def test_the_transcript_is_kept_in_the_task_beside_its_other_meta(store):
    store.create_task(TaskRecord(task_id="t1", tenant_id=TENANT, user_id="alice", content="c", meta={"node": "n1"}))
    keeper = TranscriptKeeper(store, TENANT, "t1")
    transcript = keeper.load("add numbers")
    transcript.add_call("add_numbers", {"a": 1, "b": 2})
    keeper.save(transcript)
    task = store.get_task(TENANT, "t1")
    assert task.meta["node"] == "n1" and task.meta["agent"]["entries"][0]["tool"] == "add_numbers"
    assert TranscriptKeeper(store, TENANT, "t1").load("ignored").request == "add numbers"


def test_a_loop_paused_through_one_store_object_continues_through_another(store, make_store):
    registry = CapabilityRegistry()
    registry.register_module("tests.support.sample_plugins")
    store.create_task(TaskRecord(task_id="t2", tenant_id=TENANT, user_id="alice", content="add, then ask"))

    def loop(on, llm):
        context = ExecutionContext(task_id="t2", user_id="alice", tenant_id=TENANT, registry=registry, llm=llm,
                                   store=on)
        return AgentLoop(llm=llm, tools=ToolBox.from_registry(registry), context=context)

    # an ask right after a result is sent back once to read the result again; asked again, it stands
    first = ScriptedLLM([{"tool": "add_numbers", "arguments": {"a": 1, "b": 2}}, {"ask": "And then?"},
                         {"ask": "And then?"}])
    with pytest.raises(InputRequired) as asked:
        loop(store, first).run("add, then ask")
    assert asked.value.question == "And then?"
    second = ScriptedLLM([{"final": "3, then done"}])
    result = loop(make_store(), second).run("add, then ask", answer="nothing more")
    assert result["message"] == "3, then done" and [s["tool"] for s in result["steps"]] == ["add_numbers"]
    assert '"sum": 3' in second.calls[0][0][3]["content"]
