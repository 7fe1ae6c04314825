"""A model host that sleeps when idle: the decision against an injected clock, the middleware
that tells it about requests, and how its state is read back (``--status``, ``/health``)."""

from __future__ import annotations

import asyncio
import json
import os
import re

import pytest

from capabilities.llm.model_host import ModelHost, read_host_states
from capabilities.llm.model_server import LOADED, UNLOADED_IDLE, IdleUnloader, UseTracker, write_state
from common.status import model_line, render_prometheus, render_text


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Model:
    """Stands for the server's one model: unloading frees it, a request loads it."""

    def __init__(self):
        self.loaded = True
        self.unloads = 0

    def unload(self):
        self.loaded = False
        self.unloads += 1


def unloader(idle_s=10.0):
    clock, model, changes = Clock(), Model(), []
    idle = IdleUnloader(idle_s, unload=model.unload, is_loaded=lambda: model.loaded, clock=clock, wall=clock,
                        on_change=changes.append)
    return idle, clock, model, changes


def test_the_model_stays_loaded_until_it_has_been_idle_long_enough():
    idle, clock, model, changes = unloader(10)
    clock.now += 9.9
    assert idle.tick() is False and model.loaded and idle.state == LOADED
    clock.now += 0.1
    assert idle.tick() is True and not model.loaded
    assert changes == [{"state": UNLOADED_IDLE, "since": 1010.0, "idle_unload_s": 10, "loads": 0, "unloads": 1}]
    assert idle.tick() is False and model.unloads == 1  # unloaded once


def test_idleness_counts_from_the_end_of_the_last_request():
    idle, clock, model, _ = unloader(10)
    clock.now += 8
    idle.begin()
    clock.now += 5  # a long generation
    idle.end()
    clock.now += 9
    assert idle.tick() is False and model.loaded
    clock.now += 1
    assert idle.tick() is True


def test_a_running_request_is_never_unloaded_under():
    idle, clock, model, _ = unloader(10)
    idle.begin()
    clock.now += 60
    assert idle.tick() is False and model.loaded
    idle.end()
    clock.now += 10
    assert idle.tick() is True


def test_the_next_request_finds_the_model_loaded_again_and_the_state_says_so():
    idle, clock, model, changes = unloader(10)
    clock.now += 10
    idle.tick()
    clock.now += 100
    idle.begin()
    model.loaded = True  # the server loads it for the request, which waits for it
    clock.now += 2
    idle.end()
    assert (idle.state, idle.since, idle.loads) == (LOADED, 1112.0, 1)
    assert [c["state"] for c in changes] == [UNLOADED_IDLE, LOADED]
    clock.now += 10
    assert idle.tick() is True and idle.unloads == 2


def test_zero_never_unloads():
    idle, clock, model, changes = unloader(0)
    clock.now += 10 ** 6
    assert idle.tick() is False and model.loaded and changes == []


def test_the_next_check_comes_when_the_idle_time_runs_out_at_most_a_second_away():
    idle, clock, _, _ = unloader(10)
    assert idle.next_check_s() == 1.0
    clock.now += 9.7
    assert idle.next_check_s() == pytest.approx(0.3)
    clock.now += 5
    assert idle.next_check_s() == 0.05


def _asgi_call(app, path):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(app({"type": "http", "path": path, "method": "POST"}, receive, send))
    return sent


def test_model_requests_are_counted_until_their_last_byte_and_others_not_at_all():
    idle, clock, model, _ = unloader(10)
    seen = []

    async def app(scope, receive, send):
        seen.append(idle.in_flight)
        clock.now += 3  # streaming the reply
        await send({"type": "http.response.body", "body": b"x", "more_body": False})

    tracked = UseTracker(app, idle)
    _asgi_call(tracked, "/v1/chat/completions")
    assert seen == [1] and idle.in_flight == 0 and idle.last_used == 1003.0
    _asgi_call(tracked, "/v1/models")  # does not need the weights: does not wake or keep them
    assert seen == [1, 0] and idle.last_used == 1003.0


def test_a_failed_request_still_ends():
    idle, _, _, _ = unloader(10)

    async def app(scope, receive, send):
        raise RuntimeError("the model raised")

    with pytest.raises(RuntimeError):
        _asgi_call(UseTracker(app, idle), "/v1/completions")
    assert idle.in_flight == 0


def test_only_live_hosts_states_are_read_back(tmp_path):
    write_state(tmp_path / "alive.json", {"pid": os.getpid(), "model": "alive", "state": UNLOADED_IDLE,
                                          "since": 1767000000.0, "rss_mb": 61.5})
    write_state(tmp_path / "gone.json", {"pid": 2 ** 22 + 12345, "model": "gone", "state": LOADED})
    (tmp_path / "torn.json").write_text("{not json")
    assert [s["model"] for s in read_host_states(tmp_path)] == ["alive"]
    assert read_host_states(tmp_path / "absent") == []
    assert not list(tmp_path.glob("*.partial"))


def test_a_host_that_is_not_running_says_stopped(tmp_path):
    assert ModelHost(tmp_path / "m.gguf", alias="m").state() == {"model": "m", "state": "stopped", "restarts": 0}


def test_status_shows_each_models_state_and_since_when():
    model = {"model": "qwen2.5-coder-1.5b", "state": UNLOADED_IDLE, "since": 1767000000.0, "rss_mb": 61.5}
    assert model_line(model).startswith("unloaded_idle since 20") and model_line(model).endswith("rss_mb=61.5")
    status = {"store": {"backend": "sqlite", "location": "x"}, "loop_registry": {"backend": "sqlite", "location": "x"},
              "tasks": {"total": {}, "by_tenant": {}}, "queues": {}, "loop_tasks": {"total": {}, "by_tenant": {}},
              "nodes": [], "nodes_note": "", "models": [model, {**model, "model": "small", "state": LOADED}]}
    text = render_text(status)
    assert re.search(r"^model +qwen2\.5-coder-1\.5b +unloaded_idle since \S+ \S+ rss_mb=61\.5$", text, re.M), text
    assert 'flora_model_loaded{model="qwen2.5-coder-1.5b"} 0' in render_prometheus(status)
    assert 'flora_model_loaded{model="small"} 1' in render_prometheus(status)
    json.dumps(status)
