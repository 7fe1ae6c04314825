"""The model host's PriorityGate: background requests wait for a quiet model, one at a time,
and a reply asked for meanwhile cuts the background generation short (not itself)."""

from __future__ import annotations

import asyncio
import json

import pytest

from capabilities.llm.model_server import PRIORITY_HEADER, Preempted, PriorityGate

PATH = "/v1/chat/completions"


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Model:
    """An ASGI app standing for the server: each request waits until the test lets it end."""

    def __init__(self):
        self.started: list[str] = []
        self.release: dict[str, asyncio.Event] = {}

    async def __call__(self, scope, receive, send):
        body = json.loads((await receive())["body"])
        name = body["messages"][0]["content"]
        self.started.append(name)
        await self.release.setdefault(name, asyncio.Event()).wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    def finish(self, name: str) -> None:
        self.release.setdefault(name, asyncio.Event()).set()


def request(gate, name: str, *, background: bool = False):
    headers = [(PRIORITY_HEADER.lower().encode(), b"background")] if background else []
    scope = {"type": "http", "path": PATH, "headers": headers}
    body = json.dumps({"messages": [{"role": "user", "content": name}]}).encode()
    sent = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    return asyncio.ensure_future(gate(scope, receive, send))


async def until(condition, what: str):
    for _ in range(400):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


def test_background_waits_for_replies_and_quiet_and_goes_one_at_a_time():
    async def scenario():
        model, clock = Model(), Clock()
        gate = PriorityGate(model, quiet_s=2.0, clock=clock)
        reply = request(gate, "reply")
        await until(lambda: model.started == ["reply"], "the reply to start")
        first, second = request(gate, "bg1", background=True), request(gate, "bg2", background=True)
        await asyncio.sleep(0.1)
        assert model.started == ["reply"]  # a reply in flight: background waits
        model.finish("reply")
        await reply
        await asyncio.sleep(0.1)
        assert model.started == ["reply"]  # not quiet long enough yet
        clock.now += 2.5
        await until(lambda: len(model.started) == 2, "one background request to start")
        await asyncio.sleep(0.1)
        assert len(model.started) == 2  # one at a time
        model.finish(model.started[1])
        await until(lambda: len(model.started) == 3, "the other background request to start")
        model.finish(model.started[2])
        await asyncio.gather(first, second)
        assert sorted(model.started[1:]) == ["bg1", "bg2"] and gate.admitted == 2

    asyncio.run(scenario())


def test_a_reply_arriving_while_background_generates_cuts_that_generation_and_only_that():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (scripts/install_llm.sh)")

    class Llama:
        """Stands for llama_cpp.Llama: the chat method renders and calls create_completion,
        which checks its stopping criteria after each sampled token."""

        def create_chat_completion(self, *, messages, **kwargs):
            return self.create_completion(prompt=messages[0]["content"], stopping_criteria=None)

        def create_completion(self, *, prompt, stopping_criteria=None, stream=False):
            for _ in range(3):  # three sampled tokens
                if stopping_criteria is not None and stopping_criteria([1, 2], [0.5]):
                    return {"stopped": prompt}
            return {"ok": prompt}

    gate = PriorityGate(None)
    gate.install(Llama)
    llama = Llama()
    gate.background_messages = [("user", json.dumps("distil this"))]
    assert llama.create_chat_completion(messages=[{"role": "user", "content": "distil this"}]) == {"ok": "distil this"}
    gate.preempt.set()  # a reply arrived while the background request runs
    assert llama.create_chat_completion(messages=[{"role": "user", "content": "a reply"}]) == {"ok": "a reply"}
    with pytest.raises(Preempted, match="a reply is waiting"):
        llama.create_chat_completion(messages=[{"role": "user", "content": "distil this"}])
    assert gate.preempted == 1
    assert llama.create_completion(prompt="direct") == {"ok": "direct"}  # not through the chat method: never cut


def test_a_reply_arriving_during_a_background_request_sets_preempt():
    async def scenario():
        model = Model()
        gate = PriorityGate(model, quiet_s=0.0)
        background = request(gate, "bg", background=True)
        await until(lambda: model.started == ["bg"], "the background request to start")
        assert not gate.preempt.is_set()
        reply = request(gate, "reply")
        await until(lambda: gate.preempt.is_set(), "preempt to be set")
        model.finish("bg")
        await background
        assert gate.background_messages is None
        await until(lambda: "reply" in model.started, "the reply to start")
        model.finish("reply")
        await reply

    asyncio.run(scenario())
