"""The model host's process: llama-cpp-python's OpenAI-compatible server with a bounded stop.

``python -m llama_cpp.server`` runs uvicorn with its defaults: on SIGTERM it waits, without a
limit, for the requests in flight, and a generation in llama.cpp can run for minutes. A
service manager's stop would then hang (and end in SIGKILL). This entry point builds the same
application from the same command-line flags and serves it with a limit: open requests get
GRACE_S after the first SIGTERM/SIGINT, the process is gone HARD_EXIT_S after it whatever it
was doing, and a second signal ends it at once. Nothing is lost: the server keeps no state
but the loaded weights.

Sleeping when idle (``--flora_idle_unload_s``, from ``llm.idle_unload_s``): after that many
seconds without a model request the weights are freed (the process, a few tens of MB, stays
and keeps its port), and the next request loads them again before it is answered — it
waits, it does not fail. :class:`IdleUnloader` decides, against an injected clock; the
state (``loaded`` / ``unloaded_idle``, since when, the process's resident memory then) is
written to ``--flora_state_file`` at each change, where ``main.py --status`` and the HTTP
health endpoint read it.

Background work goes last (:class:`PriorityGate`): a request sent with the header
``X-Flora-Priority: background`` (memory's distillation: work nobody waits for) is let through
only when no other model request is in flight and none ended in the last ``QUIET_S``, one at
a time; and a reply asked for while it generates cuts it short — its next sampled token
raises :class:`Preempted` (an HTTP 500 naming it; the sender, which retries nothing, finds the
model unavailable and tries again later). Its prompt's evaluation is not interrupted.

Run as a script (``python .../model_server.py --model ...``) so that it needs nothing of
Flora on the import path; ModelHost starts it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Callable

GRACE_S = 2
HARD_EXIT_S = 4.0
LOADED, UNLOADED_IDLE = "loaded", "unloaded_idle"
MAX_CHECK_S = 1.0  # how often, at most, idleness is looked at
# requests that need the weights; /v1/models and the like do not, and do not wake the model
MODEL_PATHS = ("/v1/chat/completions", "/v1/completions", "/v1/embeddings")
PRIORITY_HEADER = "X-Flora-Priority"  # "background": let every other model request go first
QUIET_S = 2.0  # a background request waits this long after the last other one ended
_WAIT_POLL_S = 0.05


class Preempted(RuntimeError):
    """A background generation cut short because a reply is waiting for the model."""


class PriorityGate:
    """ASGI middleware: background model requests wait for a quiet model and give way to others.

    ``install(Llama)`` wraps llama-cpp-python's completion methods so that the background
    request's generation checks, at every token, whether another request has arrived since it
    was let through (``preempt``), and raises Preempted then. The server runs one generation at
    a time, and a background request is let through only when nothing else is in flight, so the
    generation running when ``preempt`` is set is the background one; the wrapper still tells
    it by its messages, so a request that slipped in first is never the one cut.
    """

    def __init__(self, app, *, quiet_s: float = QUIET_S, clock: Callable[[], float] = time.monotonic):
        self.app, self.quiet_s, self._clock = app, quiet_s, clock
        self.foreground = 0  # other model requests in flight
        self.last_foreground = float("-inf")  # when the last one ended
        self.preempt = threading.Event()
        self.background_messages: list | None = None  # the running background request's
        self.admitted = self.preempted = 0
        self._one_background: asyncio.Lock | None = None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope.get("path", "").startswith(MODEL_PATHS):
            return await self.app(scope, receive, send)
        if _header(scope, PRIORITY_HEADER).lower() != "background":
            self.foreground += 1
            if self.background_messages is not None:
                self.preempt.set()
            try:
                return await self.app(scope, receive, send)
            finally:
                self.foreground -= 1
                self.last_foreground = self._clock()
        body, receive = await _buffered(receive)
        if self._one_background is None:
            self._one_background = asyncio.Lock()
        async with self._one_background:
            await self._quiet()
            self.preempt.clear()
            self.background_messages = _said(body)
            self.admitted += 1
            try:
                await self.app(scope, receive, send)
            finally:
                self.background_messages = None

    async def _quiet(self) -> None:
        while self.foreground or self._clock() - self.last_foreground < self.quiet_s:
            await asyncio.sleep(_WAIT_POLL_S)

    def install(self, llama_class) -> None:
        """Make the background request's generation stop with Preempted once ``preempt`` is set.

        ``create_chat_completion`` is wrapped to tell the background request's call (by its
        messages) and ``create_completion``, which the chat handler calls in the same thread,
        to add a stopping criterion to that call only: llama-cpp-python checks it after every
        sampled token, in Python, so what it raises ends the call (a logits processor would
        run inside a C callback, where an exception is swallowed)."""
        chat, completion = llama_class.create_chat_completion, llama_class.create_completion
        local = threading.local()
        gate = self

        def create_chat_completion(llama, *args, **kwargs):
            said = _messages_key(kwargs.get("messages"))
            local.background = said is not None and said == gate.background_messages
            try:
                return chat(llama, *args, **kwargs)
            finally:
                local.background = False

        def create_completion(llama, *args, **kwargs):
            if not getattr(local, "background", False) or kwargs.get("stream"):
                return completion(llama, *args, **kwargs)

            def stop_if_preempted(input_ids, logits) -> bool:
                if gate.preempt.is_set():
                    gate.preempted += 1
                    raise Preempted("preempted: a reply is waiting for the model; background work is tried later")
                return False

            from llama_cpp import StoppingCriteriaList

            criteria = StoppingCriteriaList([*(kwargs.get("stopping_criteria") or []), stop_if_preempted])
            return completion(llama, *args, **{**kwargs, "stopping_criteria": criteria})

        llama_class.create_chat_completion = create_chat_completion
        llama_class.create_completion = create_completion


def _header(scope, name: str) -> str:
    wanted = name.lower().encode()
    for key, value in scope.get("headers") or []:
        if key.lower() == wanted:
            return value.decode("latin-1")
    return ""


async def _buffered(receive):
    """The request body, and a ``receive`` that hands it on as if unread."""
    chunks, more = [], True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body, handed = b"".join(chunks), False

    async def replay():
        nonlocal handed
        if not handed:
            handed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay


def _said(body: bytes) -> list | None:
    try:
        return _messages_key(json.loads(body or b"{}").get("messages"))
    except (ValueError, AttributeError):
        return None


def _messages_key(messages) -> list | None:
    """What identifies a request's messages: each one's role and content."""
    if not isinstance(messages, list):
        return None
    return [(m.get("role"), json.dumps(m.get("content"), sort_keys=True)) if isinstance(m, dict) else repr(m)
            for m in messages]


class IdleUnloader:
    """When the model may sleep, and what state it is in.

    The server calls ``begin``/``end`` around each model request and ``tick`` now and then,
    all on its event loop. ``unload`` is called when ``idle_unload_s`` (> 0) have passed since
    the last request ended and none is running; the next request loads the model itself, and
    its ``end`` finds it loaded (``is_loaded``). ``on_change`` gets the new state.
    """

    def __init__(self, idle_unload_s: float, *, unload: Callable[[], None], is_loaded: Callable[[], bool],
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
                 on_change: Callable[[dict], None] | None = None):
        self.idle_unload_s = idle_unload_s
        self._unload, self._is_loaded = unload, is_loaded
        self._clock, self._wall = clock, wall
        self._on_change = on_change
        self.in_flight = 0
        self.last_used = clock()
        self.state, self.since = LOADED, wall()
        self.loads = self.unloads = 0

    def begin(self) -> None:
        self.in_flight += 1

    def end(self) -> None:
        self.in_flight -= 1
        self.last_used = self._clock()
        if self.state == UNLOADED_IDLE and self._is_loaded():  # the request loaded it again
            self.loads += 1
            self._changed(LOADED)

    def next_check_s(self) -> float:
        """How long until idleness is worth looking at again."""
        if self.idle_unload_s <= 0:
            return MAX_CHECK_S
        left = self.idle_unload_s - (self._clock() - self.last_used)
        return min(MAX_CHECK_S, max(0.05, left))

    def tick(self) -> bool:
        """Unload the model if it has been idle long enough; whether it was unloaded."""
        if self.idle_unload_s <= 0 or self.in_flight or self.state != LOADED:
            return False
        if self._clock() - self.last_used < self.idle_unload_s:
            return False
        self._unload()
        self.unloads += 1
        self._changed(UNLOADED_IDLE)
        return True

    def snapshot(self) -> dict:
        return {"state": self.state, "since": self.since, "idle_unload_s": self.idle_unload_s,
                "loads": self.loads, "unloads": self.unloads}

    def _changed(self, state: str) -> None:
        self.state, self.since = state, self._wall()
        if self._on_change is not None:
            self._on_change(self.snapshot())

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.next_check_s())
            self.tick()


class UseTracker:
    """ASGI middleware: tells the IdleUnloader when a model request starts and ends (after the
    last byte of a streamed reply)."""

    def __init__(self, app, idle: IdleUnloader):
        self.app, self.idle = app, idle

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope.get("path", "").startswith(MODEL_PATHS):
            return await self.app(scope, receive, send)
        self.idle.begin()
        try:
            await self.app(scope, receive, send)
        finally:
            self.idle.end()


def write_state(path: Path, state: dict) -> None:
    """The host's state for readers in other processes, replaced atomically."""
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(state), encoding="utf-8")
    os.replace(partial, path)


def resident_mb() -> float | None:
    """This process's resident memory, where /proc tells it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def _own_flags(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--flora_idle_unload_s", type=float, default=0.0)
    parser.add_argument("--flora_state_file", default="")
    parser.add_argument("--flora_restarts", type=int, default=0)  # times its host was started again
    return parser.parse_known_args(argv)


def _proxy_controls():
    """unload / is_loaded for the server's one model. llama-cpp-python's LlamaProxy loads the
    configured model whenever a request finds none loaded, so freeing it is all it takes."""
    from llama_cpp.server import app as server_app

    def unload() -> None:
        proxy = server_app._llama_proxy
        if proxy is not None and proxy._current_model is not None:
            proxy._current_model.close()
            proxy._current_model = None

    def is_loaded() -> bool:
        proxy = server_app._llama_proxy
        return proxy is not None and proxy._current_model is not None

    return unload, is_loaded


def main(argv: list[str] | None = None) -> None:
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings, ServerSettings, Settings

    own, rest = _own_flags(argv)
    parser = argparse.ArgumentParser(description="Flora's model host (llama-cpp-python's server)")
    add_args_from_model(parser, Settings)
    args = parser.parse_args(rest)
    server_settings = parse_model_from_args(ServerSettings, args)
    model_settings = parse_model_from_args(ModelSettings, args)
    app = create_app(server_settings=server_settings, model_settings=[model_settings])

    state_file = Path(own.flora_state_file) if own.flora_state_file else None
    identity = {"pid": os.getpid(), "model": model_settings.model_alias or model_settings.model,
                "port": server_settings.port, "restarts": own.flora_restarts}

    def publish(state: dict) -> None:
        if state_file is not None:
            write_state(state_file, {**identity, **state, "rss_mb": resident_mb()})

    unload, is_loaded = _proxy_controls()
    idle = IdleUnloader(own.flora_idle_unload_s, unload=unload, is_loaded=is_loaded, on_change=publish)
    publish(idle.snapshot())

    class BoundedServer(uvicorn.Server):
        async def serve(self, sockets=None) -> None:
            watcher = asyncio.create_task(idle.run()) if idle.idle_unload_s > 0 else None
            try:
                await super().serve(sockets)
            finally:
                if watcher is not None:
                    watcher.cancel()

        def handle_exit(self, sig: int, frame) -> None:
            if self.should_exit:  # the second signal
                os._exit(128 + sig)
            timer = threading.Timer(HARD_EXIT_S, os._exit, args=(0,))  # a generation may not yield
            timer.daemon = True
            timer.start()
            super().handle_exit(sig, frame)

    import llama_cpp

    gate = PriorityGate(UseTracker(app, idle))
    gate.install(llama_cpp.Llama)
    config = uvicorn.Config(gate, host=server_settings.host, port=server_settings.port,
                            log_level="warning", timeout_graceful_shutdown=GRACE_S)
    BoundedServer(config).run()


if __name__ == "__main__":
    sys.exit(main())
