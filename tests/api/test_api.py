"""The HTTP API against a real server process (``python main.py --api``): the reply contract,
paused tasks answered by words and by structured parameters, cancel, events (history and
live), sessions, loop tasks, keys and tenant isolation, bad input."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest


def say(client: httpx.Client, user: str, content: str = "", **fields) -> dict:
    response = client.post("/v1/messages", json={"content": content, "user_id": user, **fields})
    assert response.status_code == 200, response.text
    return response.json()


def error_of(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["type"] and body["error"]["message"], body
    return body["error"]


def sse(lines) -> list[tuple[str, dict, str | None]]:
    """Parse server-sent events from an iterator of lines."""
    out, kind, data, event_id = [], None, [], None
    for line in lines:
        if line == "":
            if kind is not None:
                out.append((kind, json.loads("\n".join(data)), event_id))
            kind, data, event_id = None, [], None
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line.startswith("id:"):
            event_id = line[3:].strip()
    return out


# --------------------------------------------------------------------------- the reply contract
def test_a_missing_parameter_is_asked_for_and_a_structured_answer_completes_the_task(api_server, user):
    with api_server.client() as client:
        paused = say(client, user, "add numbers a=2")
        assert paused["message_type"] == "task_paused"
        assert [p["name"] for p in paused["missing_parameters"]] == ["b"]
        done = say(client, user, task_id=paused["task_id"], parameters={"b": 3})
        assert done["message_type"] == "task_completed" and done["result"] == {"sum": 5}
        task = client.get(f"/v1/tasks/{paused['task_id']}", params={"user_id": user}).json()
        assert task["state"] == "completed" and task["parameters"] == {"a": 2, "b": 3}
        assert "tenant_id" not in task


def test_a_word_answer_resumes_the_task_and_a_wrong_type_is_asked_again(api_server, user):
    with api_server.client() as client:
        paused = say(client, user, "add numbers a=2")
        again = say(client, user, task_id=paused["task_id"], parameters={"b": "three"})
        assert again["message_type"] == "task_paused" and again["missing_parameters"][0]["name"] == "b"
        done = client.post(f"/v1/tasks/{paused['task_id']}/answer", params={"user_id": user}, json={"content": "4"})
        assert done.json()["message_type"] == "task_completed" and done.json()["result"] == {"sum": 6}


def test_chat_gets_a_chat_reply_and_the_user_comes_from_the_header(api_server):
    with api_server.client(headers={"X-Flora-User": "header_user"}) as client:
        reply = client.post("/v1/messages", json={"content": "hello"}).json()
        assert reply["message_type"] == "chat_reply" and reply["message"]
        assert client.get("/v1/whoami").json() == {"tenant_id": "team-a", "user_id": "header_user", "auth": "api_key"}


def test_an_approval_is_given_by_a_structured_answer(api_server, user):
    with api_server.client() as client:
        paused = say(client, user, "delete file path=notes.txt")
        assert paused["message_type"] == "task_paused" and paused["pause_kind"] == "waiting_approval"
        done = say(client, user, task_id=paused["task_id"], approve=True)
        assert done["message_type"] == "task_completed" and done["result"] == {"deleted": "notes.txt", "by": user}
        refused = say(client, user, "delete file path=other.txt")
        rejected = say(client, user, task_id=refused["task_id"], approve=False)
        assert rejected["message_type"] == "task_error" and rejected["error_type"] == "cancelled"


# --------------------------------------------------------------------------- cancel
def test_cancel_a_paused_task_then_its_answer_is_refused_and_a_second_cancel_conflicts(api_server, user):
    with api_server.client() as client:
        paused = say(client, user, "add numbers a=1")
        task_id = paused["task_id"]
        cancelled = client.post(f"/v1/tasks/{task_id}/cancel", params={"user_id": user})
        assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
        error_of(client.post(f"/v1/tasks/{task_id}/cancel", params={"user_id": user}), 409)
        late = say(client, user, task_id=task_id, parameters={"b": 1})
        assert late["message_type"] == "task_error"
        kinds = [e["event_type"] for e in client.get("/v1/events", params={"task_id": task_id, "user_id": user}).json()]
        assert kinds[-1] == "TASK_CANCELLED" and "TASK_COMPLETED" not in kinds


def test_a_task_cancelled_while_it_runs_is_never_reported_done(api_server, user, tmp_path):
    pid_file = tmp_path / "pid"
    with api_server.client() as client:
        reply = {}
        runner = threading.Thread(target=lambda: reply.update(say(
            client, user, f"slow job seconds=2 pid_file={pid_file}")))
        runner.start()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            running = client.get("/v1/tasks", params={"user_id": user, "state": "running"}).json()
            if running:
                break
            time.sleep(0.05)
        assert running, "the slow job never started"
        assert client.post(f"/v1/tasks/{running[0]['task_id']}/cancel", params={"user_id": user}).status_code == 200
        runner.join(30)
        assert reply["message_type"] == "task_error" and reply["error_type"] == "conflict"
        task = client.get(f"/v1/tasks/{running[0]['task_id']}", params={"user_id": user}).json()
        assert task["state"] == "cancelled" and task["result"] is None


# --------------------------------------------------------------------------- events
def test_the_event_stream_shows_a_task_live_and_resumes_from_last_event_id(api_server, user):
    seen: list = []
    with api_server.client() as client:
        def follow():
            with client.stream("GET", "/v1/events/stream", params={"user_id": user}, timeout=30) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                lines = []
                for line in response.iter_lines():
                    lines.append(line)
                    if line == "" and any("TASK_COMPLETED" in x for x in lines):
                        break
                seen.extend(sse(lines))

        watcher = threading.Thread(target=follow)
        watcher.start()
        time.sleep(0.5)  # the stream starts from "now"
        paused = say(client, user, "add numbers a=5")
        say(client, user, task_id=paused["task_id"], parameters={"b": 5})
        watcher.join(30)
        kinds = [data["event_type"] for kind, data, _ in seen if kind == "flora_event"]
        assert kinds[:1] == ["TASK_CREATED"] and "TASK_PAUSED" in kinds and kinds[-1] == "TASK_COMPLETED"
        assert all(data["task_id"] == paused["task_id"] for _, data, _ in seen)

        first_id = seen[0][2]
        with client.stream("GET", "/v1/events/stream", params={"user_id": user},
                           headers={"Last-Event-ID": first_id}, timeout=10) as response:
            lines = []
            for line in response.iter_lines():
                lines.append(line)
                if line == "" and any("TASK_COMPLETED" in x for x in lines):
                    break
        replayed = [data["event_id"] for _, data, _ in sse(lines)]
        assert replayed == [data["event_id"] for _, data, _ in seen[1:]]


def test_a_streamed_message_sends_its_events_then_the_reply(api_server, user):
    with api_server.client() as client:
        with client.stream("POST", "/v1/messages", json={"content": "add numbers a=1 b=2", "user_id": user,
                                                         "stream": True}) as response:
            assert response.status_code == 200
            events = sse(response.iter_lines())
        kinds = [kind for kind, _, _ in events]
        assert kinds[-2:] == ["reply", "done"] and "flora_event" in kinds
        assert events[-2][1]["message_type"] == "task_completed" and events[-2][1]["result"] == {"sum": 3}
        assert {data["event_type"] for kind, data, _ in events if kind == "flora_event"} >= {"TASK_CREATED",
                                                                                            "TASK_COMPLETED"}


def test_a_streamed_chat_sends_the_reply_in_pieces_as_it_is_written_then_the_reply(api_server, user):
    with api_server.client() as client:
        with client.stream("POST", "/v1/messages", json={"content": "tell me a joke about the sea", "user_id": user,
                                                         "stream": True}) as response:
            assert response.status_code == 200
            events = sse(response.iter_lines())
    kinds = [kind for kind, _, _ in events]
    assert kinds[-2:] == ["reply", "done"] and "reply_chunk" in kinds
    assert kinds.index("reply_chunk") < kinds.index("reply")
    written = "".join(data["text"] for kind, data, _ in events if kind == "reply_chunk")
    assert written.strip() == events[-2][1]["message"] and events[-2][1]["intent"] == "chat"


# --------------------------------------------------------------------------- sessions
def test_a_session_keeps_the_conversation_on_the_server(api_server, user):
    with api_server.client() as client:
        created = client.post("/v1/sessions", params={"user_id": user}, json={})
        assert created.status_code == 201
        session_id = created.json()["session_id"]
        paused = say(client, user, "add numbers a=2", session_id=session_id)
        say(client, user, task_id=paused["task_id"], parameters={"b": 2}, session_id=session_id)
        session = client.get(f"/v1/sessions/{session_id}", params={"user_id": user}).json()
        assert [x["role"] for x in session["messages"]] == ["user", "assistant", "user", "assistant"]
        assert session["title"] == "add numbers a=2"
        assert session["messages"][3]["reply"]["result"] == {"sum": 4}
        listed = client.get("/v1/sessions", params={"user_id": user}).json()
        assert [s["session_id"] for s in listed] == [session_id] and listed[0]["message_count"] == 4
        assert client.delete(f"/v1/sessions/{session_id}", params={"user_id": user}).status_code == 204
        error_of(client.get(f"/v1/sessions/{session_id}", params={"user_id": user}), 404)


# --------------------------------------------------------------------------- loop tasks
def test_loop_tasks_are_created_listed_changed_paused_run_and_deleted(api_server, user):
    with api_server.client() as client:
        made = client.post("/v1/loops", params={"user_id": user},
                           json={"request": "every day at 9:00 remind me to stretch"}).json()
        assert made["message_type"] == "task_completed", made
        loop_id = made["result"]["loop_task_id"]
        listed = client.get("/v1/loops", params={"user_id": user}).json()
        assert [t["loop_task_id"] for t in listed] == [loop_id] and listed[0]["next_fire_at"] > time.time()

        changed = client.patch(f"/v1/loops/{loop_id}", params={"user_id": user}, json={"schedule": "every day at 18:30"})
        assert changed.status_code == 200 and "18:30" in changed.json()["description"]
        assert client.post(f"/v1/loops/{loop_id}/pause", params={"user_id": user}).json()["state"] == "paused"
        assert client.post(f"/v1/loops/{loop_id}/resume", params={"user_id": user}).json()["state"] == "active"
        ran = client.post(f"/v1/loops/{loop_id}/trigger", params={"user_id": user})
        assert ran.status_code == 200 and ran.json()["message_type"] == "task_completed", ran.text
        assert client.delete(f"/v1/loops/{loop_id}", params={"user_id": user}).status_code == 200
        assert client.get("/v1/loops", params={"user_id": user}).json() == []
        error_of(client.post(f"/v1/loops/{loop_id}/pause", params={"user_id": user}), 404)


def test_a_request_that_is_not_a_loop_is_refused_as_a_loop(api_server, user):
    with api_server.client() as client:
        error = error_of(client.post("/v1/loops", params={"user_id": user}, json={"request": "add numbers a=1"}), 422)
        assert error["field"] == "request"
        assert client.get("/v1/tasks", params={"user_id": user}).json() == []


# --------------------------------------------------------------------------- keys and isolation
def test_no_key_or_a_wrong_key_gets_401_with_a_clear_body(api_server):
    with api_server.client(key="") as client:
        assert "API key is required" in error_of(client.get("/v1/tasks"), 401)["message"]
    with api_server.client(key="sk-nope") as client:
        assert error_of(client.post("/v1/messages", json={"content": "hello"}), 401)["type"] == "unauthorized"
    with httpx.Client(base_url=api_server.url, headers={"X-API-Key": api_server.key}) as client:
        assert client.get("/v1/whoami").json()["tenant_id"] == "team-a"
    health = httpx.get(api_server.url + "/health").json()
    assert health["status"] == "ok" and health["models"] == []  # no model host


def test_another_tenant_can_neither_see_nor_answer_nor_cancel_a_task(api_server, user):
    with api_server.client() as team_a, api_server.client(api_server.other_key) as team_b:
        paused = say(team_a, user, "add numbers a=2")
        task_id = paused["task_id"]
        session_id = team_a.post("/v1/sessions", params={"user_id": user}).json()["session_id"]
        error_of(team_b.get(f"/v1/tasks/{task_id}", params={"user_id": user}), 404)
        error_of(team_b.post(f"/v1/tasks/{task_id}/cancel", params={"user_id": user}), 404)
        error_of(team_b.post("/v1/messages", json={"task_id": task_id, "parameters": {"b": 1}, "user_id": user}), 404)
        error_of(team_b.get("/v1/events", params={"task_id": task_id, "user_id": user}), 404)
        error_of(team_b.get(f"/v1/sessions/{session_id}", params={"user_id": user}), 404)
        assert team_b.get("/v1/tasks", params={"user_id": user}).json() == []
        assert team_b.get("/v1/events", params={"user_id": user}).json() == []
        still = team_a.get(f"/v1/tasks/{task_id}", params={"user_id": user}).json()
        assert still["state"] == "waiting_parameters"


def test_another_user_of_the_tenant_is_forbidden_and_a_pinned_key_cannot_act_as_someone_else(api_server, user):
    with api_server.client() as client, api_server.client(api_server.pinned_key) as alice:
        paused = say(client, user, "add numbers a=2")
        error_of(client.get(f"/v1/tasks/{paused['task_id']}", params={"user_id": "intruder"}), 403)
        error_of(client.post(f"/v1/tasks/{paused['task_id']}/cancel", params={"user_id": "intruder"}), 403)
        assert error_of(alice.get("/v1/tasks", params={"user_id": user}), 403)["field"] == "user_id"
        error_of(alice.get(f"/v1/tasks/{paused['task_id']}"), 403)
        assert alice.get("/v1/whoami").json()["user_id"] == "alice"
        assert client.get(f"/v1/tasks/{paused['task_id']}", params={"user_id": user}).json()["state"] == \
            "waiting_parameters"


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("body, status, field", [
    (b"{not json", 400, None),
    (b"[1, 2]", 422, None),
    (json.dumps({"content": 5}).encode(), 422, "content"),
    (json.dumps({"content": "x", "approve": "maybe"}).encode(), 422, "approve"),
    (json.dumps({"content": "x", "colour": "red"}).encode(), 422, "colour"),
    (json.dumps({"content": "   "}).encode(), 422, "content"),
    (json.dumps({"content": "x", "parameters": [1]}).encode(), 422, "parameters"),
])
def test_malformed_bodies_get_a_clear_4xx(api_server, body, status, field):
    with api_server.client(headers={"Content-Type": "application/json"}) as client:
        error = error_of(client.post("/v1/messages", content=body), status)
        if field:
            assert error["field"] == field


def test_a_body_over_the_limit_is_refused_and_nothing_accepted_is_lost(api_server, user):
    with api_server.client() as client:
        paused = say(client, user, "add numbers a=2")
        error_of(client.post("/v1/messages", json={"content": "x" * (1 << 20), "user_id": user}), 413)
        error_of(client.post("/v1/messages", json={"content": "hello", "user_id": user, "session_id": "ses_nope"}), 404)
        error_of(client.get("/v1/tasks", params={"state": "sleeping"}), 422)
        error_of(client.get("/v1/nowhere"), 404)
        done = say(client, user, task_id=paused["task_id"], parameters={"b": 1})
        assert done["message_type"] == "task_completed"


def test_metrics_and_readiness(api_server, user):
    import re

    with api_server.client() as client:
        assert say(client, user, "add numbers a=1 b=1")["message_type"] == "task_completed"
        text = client.get("/metrics").text
    assert re.search(r'^flora_tasks\{tenant="[^"]+",state="completed"\} [1-9]\d*$', text, re.M), text
    assert "flora_store_up 1" in text and re.search(r"^flora_nodes [1-9]\d*$", text, re.M), text
    assert 'flora_http_requests_total{method="POST",route="/v1/messages",status="200"}' in text
    assert "flora_reply_seconds_count" in text
    ready = httpx.get(api_server.url + "/ready")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"


def test_the_openapi_spec_is_published(api_server):
    spec = httpx.get(api_server.url + "/openapi.json").json()
    assert {"/v1/messages", "/v1/tasks/{task_id}/answer", "/v1/chat/completions", "/v1/loops"} <= set(spec["paths"])
    assert "HTTPBearer" in spec["components"]["securitySchemes"]


# --------------------------------------------------------------------------- the process
def test_sigterm_stops_the_server_and_every_actor_process(tmp_path):
    import subprocess

    from tests.api.conftest import start_server

    server = start_server(tmp_path / "s")
    with server.client() as client:
        assert client.post("/v1/messages", json={"content": "hello"}).status_code == 200
    server.process.terminate()
    assert server.process.wait(timeout=30) == 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = subprocess.run(["pgrep", "-f", str(tmp_path / "s" / "config.json")], capture_output=True, text=True)
        if not left.stdout.strip():
            break
        time.sleep(0.2)
    assert not left.stdout.strip(), f"actor processes left behind: {left.stdout}"


def test_serving_off_loopback_without_keys_is_refused_at_start(tmp_path):
    import subprocess
    import sys

    from tests.api.conftest import REPO

    env = {k: v for k, v in __import__("os").environ.items() if k != "FLORA_API_KEYS"}
    run = subprocess.run([sys.executable, "main.py", "--api", "--host", "0.0.0.0", "--port", "1"], cwd=REPO, env={
        **env, "FLORA_DATA_DIR": str(tmp_path), "FLORA_LLM__BACKEND": "none"}, capture_output=True, text=True,
        timeout=60)
    assert run.returncode == 2 and "without API keys" in run.stderr


def test_a_task_is_shown_with_its_whiteboard(api_server, user):
    from capabilities.memory.whiteboard import Whiteboard
    from common.tasks.sqlite_store import SQLiteTaskStore

    with api_server.client() as client:
        task_id = say(client, user, "add numbers a=2")["task_id"]
        assert client.get(f"/v1/tasks/{task_id}", params={"user_id": user}).json()["whiteboard"] == {}
        store = SQLiteTaskStore(api_server.data_dir / "flora.db")  # a step of the task writes on its board
        try:
            Whiteboard(store).write("team-a", task_id, facts=["a is 2"], todo=["ask for b"], user_id=user)
        finally:
            store.close()
        board = client.get(f"/v1/tasks/{task_id}", params={"user_id": user}).json()["whiteboard"]
        assert [f["text"] for f in board["facts"]] == ["a is 2"] and board["todo"][0]["done"] is False
