"""The agent over HTTP: its tool calls are in the task's events and in a streamed answer, the
approval of a call shows the call, and ``always_allow`` on the answer is remembered."""

from __future__ import annotations

import pytest

from tests.api.conftest import start_server, stop_server
from tests.api.test_api import say, sse


@pytest.fixture(scope="module")
def agent_server(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("agent-api")
    marks = {"dir": str(data_dir)}
    server = start_server(data_dir, extra={
        "capabilities": {"plugin_modules": ["tests.support.sample_plugins", "tests.support.agent_plugins"],
                         "settings": {"write_note": marks, "count_mark": marks}},
        "memory": {"enabled": False}})
    yield server
    stop_server(server)


def test_a_streamed_agent_answer_shows_each_tool_call_and_result(agent_server, user):
    with agent_server.client() as client:
        with client.stream("POST", "/v1/messages", json={"content": "use your tools: the total of 2 plus 3, said back",
                                                         "user_id": user, "stream": True}) as response:
            assert response.status_code == 200
            events = sse(response.iter_lines())
        reply = events[-2][1]
        assert reply["message_type"] == "task_completed" and reply["message"] == "The sum is 5.", reply
        tools = [(data["event_type"], data["data"]["tool"]) for kind, data, _ in events
                 if kind == "flora_event" and data["event_type"] in ("TOOL_CALLED", "TOOL_RESULT")]
        assert tools == [("TOOL_CALLED", "add_numbers"), ("TOOL_RESULT", "add_numbers"), ("TOOL_CALLED", "echo"),
                         ("TOOL_RESULT", "echo")]
        history = client.get("/v1/events", params={"task_id": reply["task_id"], "user_id": user}).json()
        called = [e for e in history if e["event_type"] == "TOOL_CALLED"]
        assert called[0]["data"]["arguments"] == {"a": 2, "b": 3} and called[0]["data"]["step"] == 1


def test_an_approval_shows_the_call_and_always_allow_is_remembered(agent_server, user):
    with agent_server.client() as client:
        paused = say(client, user, "use your tools: write notes one and two")
        assert paused["message_type"] == "task_paused" and paused["pause_kind"] == "waiting_approval", paused
        assert paused["tool_call"]["tool"] == "write_note" and paused["tool_call"]["arguments"]["name"] == "one"
        done = client.post(f"/v1/tasks/{paused['task_id']}/answer", params={"user_id": user},
                           json={"approve": True, "always_allow": True})
        assert done.status_code == 200 and done.json()["message_type"] == "task_completed", done.text
        again = say(client, user, "use your tools: write notes three and four")
        assert again["message_type"] == "task_completed", again  # not asked again: always allowed
        refused = client.post("/v1/messages", json={"content": "", "user_id": user, "always_allow": "sometimes"})
        assert refused.status_code == 422
