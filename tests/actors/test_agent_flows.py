"""The agent loop in a running Flora (both system bases): tool calls recorded as events,
approval asked per call, "always allow" remembered, cancel in the middle of a call, and a
model that proposes nonsense (a pause that survives a restart: test_agent_restart.py).

The model is the deterministic ``tests.support.fake_llm:respond``, whose ``agent_step``
scripts the agent's calls; the tools are real plugin modules."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import main
from common import messages as m
from tests.actors.conftest import BASES, flora_config
from tests.support.asking import ask_flora

TIMEOUT = 30


def agent_config(data_dir, dify_url: str, sales_db, base: str) -> dict:
    config = flora_config(data_dir, dify_url, sales_db, base)
    config["capabilities"]["plugin_modules"].append("tests.support.agent_plugins")
    marks = {"dir": str(data_dir)}
    config["capabilities"]["settings"].update(count_mark=marks, write_note=marks, wait_for_cancel=marks)
    config["memory"] = {"enabled": False}
    config["agent"] = {"max_invalid": 4}  # the nonsense test sends three bad replies before a good one
    return config


@pytest.fixture(scope="module", params=BASES)
def flora(request, tmp_path_factory, dify, sales_db):
    data_dir = tmp_path_factory.mktemp(f"agent-{request.param}")
    running = main.start_flora(agent_config(data_dir, dify.url, sales_db, request.param))
    yield running
    running.shutdown()


def ask(flora, user: str, content: str, **fields) -> dict:
    return ask_flora(flora, user, content, timeout=TIMEOUT, **fields)


def marks(flora, task_id: str) -> list[str]:
    path = Path(flora.config.data_dir) / f"{task_id}.marks"
    return path.read_text().splitlines() if path.exists() else []


def tool_events(store, task_id: str) -> list[tuple[str, str]]:
    return [(e.event_type, e.data["tool"]) for e in store.events("default", task_id=task_id)
            if e.event_type in ("TOOL_CALLED", "TOOL_RESULT")]


def test_two_tool_calls_run_in_turn_and_are_recorded_as_events(flora, user, store):
    done = ask(flora, user, "use your tools: the total of 2 plus 3, said back")
    assert done["message_type"] == "task_completed", done
    assert done["message"] == "The sum is 5." and done["capability"] == "agent"
    assert tool_events(store, done["task_id"]) == [("TOOL_CALLED", "add_numbers"), ("TOOL_RESULT", "add_numbers"),
                                                   ("TOOL_CALLED", "echo"), ("TOOL_RESULT", "echo")]
    result = [e for e in store.events("default", task_id=done["task_id"]) if e.event_type == "TOOL_RESULT"][0]
    assert result.data["ok"] is True and '"sum": 5' in result.data["result"]
    task = store.get_task("default", done["task_id"])
    assert task.state == "completed" and [e["tool"] for e in task.meta["agent"]["entries"]] == ["add_numbers", "echo"]


def test_each_call_that_needs_approval_asks_again_and_yes_continues(flora, user):
    paused = ask(flora, user, "use your tools: write notes alpha and beta")
    assert paused["message_type"] == "task_paused" and paused["pause_kind"] == "waiting_approval", paused
    assert paused["tool_call"]["tool"] == "write_note" and paused["tool_call"]["arguments"]["name"] == "alpha"
    assert "write_note" in paused["message"] and "name=alpha" in paused["message"]
    second = ask(flora, user, "yes")
    assert second["message_type"] == "task_paused" and second["tool_call"]["arguments"]["name"] == "beta", second
    assert marks(flora, paused["task_id"]) == ["note alpha"]
    done = ask(flora, user, "yes")
    assert done["message_type"] == "task_completed" and done["message"] == "Both notes are written."
    assert marks(flora, paused["task_id"]) == ["note alpha", "note beta"]


def test_always_allow_is_remembered_for_the_person(flora, user, store):
    paused = ask(flora, user, "use your tools: write notes gamma and delta")
    assert paused["pause_kind"] == "waiting_approval", paused
    done = ask(flora, user, "always allow")
    assert done["message_type"] == "task_completed", done  # the second call was not asked
    assert store.allowed_tools("default", user) == {"write_note"}
    again = ask(flora, user, "use your tools: write notes epsilon and zeta")
    assert again["message_type"] == "task_completed", again
    other = ask(flora, user + "_other", "use your tools: write notes eta and theta")
    assert other["message_type"] == "task_paused"  # another person is still asked
    assert ask(flora, user + "_other", "no")["error_type"] == "cancelled"


def test_always_allow_through_the_structured_answer(flora, user, store):
    paused = ask(flora, user, "use your tools: write notes iota and kappa")
    done = ask(flora, user, "", task_id=paused["task_id"], approve=True, always_allow=True)
    assert done["message_type"] == "task_completed", done
    assert store.allowed_tools("default", user) == {"write_note"}


def test_a_model_proposing_nonsense_is_corrected_and_the_actors_keep_serving(flora, user, store):
    done = ask(flora, user, "use your tools: stumble then add")
    assert done["message_type"] == "task_completed" and done["message"] == "Recovered: the sum is 5.", done
    entries = store.get_task("default", done["task_id"]).meta["agent"]["entries"]
    assert [e["kind"] for e in entries] == ["invalid", "invalid", "invalid", "call"]
    assert "no tool named 'rm_rf'" in entries[1]["error"] and "'two' is not of type 'integer'" in entries[2]["error"]
    assert ask(flora, user, "use your tools: the total of 4 plus 5, said back")["message"] == "The sum is 9."


def test_cancel_stops_the_loop_in_the_middle_of_a_call(flora, user, store):
    if flora.config.actors.system_base != "multiprocTCPBase":
        pytest.skip("a second request while the first runs needs actors in their own processes")
    request = m.user_input(user_id=user, content="use your tools: wait until cancelled")
    flora.system.tell(flora.interaction, request)
    deadline = time.monotonic() + 30
    while True:
        running = [t for t in store.list_tasks("default", user_id=user, states=["running"]) if t.capability == "agent"]
        if running and marks(flora, running[0].task_id) == ["started"]:
            break
        assert time.monotonic() < deadline, "the agent's call never started"
        time.sleep(0.05)
    with flora.system.private() as endpoint:
        cancelled = endpoint.ask(flora.interaction, m.user_input(user_id=user, content="cancel it"), TIMEOUT)
    assert cancelled["task_id"] == running[0].task_id, cancelled
    original = flora.system.listen(TIMEOUT)
    assert original["msg_id"] == request["msg_id"] and original["error_type"] == "cancelled", original
    task = store.get_task("default", running[0].task_id)
    assert task.state == "cancelled" and task.meta["agent"]["final"] is None
