"""Honest fakes of `LLM` for tests: same interface, same errors, no model.

`ScriptedLLM` replays replies a test prepared, in order, and fails loudly when
the test asks for more than it scripted. `FunctionLLM` computes each reply
from the prompt, which suits tests where the number or order of calls is not
the point (and, being importable by path, works in every actor process).

Both record each call as ``(messages, kwargs)`` and cut replies at `stop`
strings the way a real back end does, so code under test cannot lean on
behaviour the real thing lacks.
"""

from __future__ import annotations

import copy
import json
import threading
from typing import Any, Callable, Iterator

from capabilities.llm.base import LLMReply, LLMScriptExhausted

ScriptItem = str | dict | LLMReply | BaseException
ReplyFunction = Callable[[list[dict], dict | None], str | dict | LLMReply]

_STREAM_CHUNKS = 4


def _as_reply(item: str | dict | LLMReply, model: str, messages: list[dict]) -> LLMReply:
    if isinstance(item, LLMReply):
        return item
    text = json.dumps(item) if isinstance(item, dict) else item
    if not isinstance(text, str):
        raise TypeError(f"a fake reply must be str, dict or LLMReply, not {type(item).__name__}")
    prompt_words = sum(len(str(m.get("content", "")).split()) for m in messages)
    return LLMReply(
        text=text,
        model=model,
        prompt_tokens=prompt_words,
        completion_tokens=len(text.split()),
    )


def _cut_at_stop(reply: LLMReply, stop: list[str] | None) -> LLMReply:
    if not stop:
        return reply
    cut = min((i for i in (reply.text.find(s) for s in stop if s) if i >= 0), default=-1)
    if cut < 0:
        return reply
    return LLMReply(reply.text[:cut], reply.model, reply.prompt_tokens, len(reply.text[:cut].split()))


def _chunks(text: str) -> Iterator[str]:
    """Split `text` into a few pieces so streaming consumers see real chunking."""
    size = max(1, -(-len(text) // _STREAM_CHUNKS))
    for start in range(0, len(text), size):
        yield text[start : start + size]


class _RecordingLLM:
    """Shared bookkeeping: call records and the stream-from-complete bridge."""

    name = "fake"

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict], dict[str, Any]]] = []
        self._lock = threading.Lock()

    def _reply_for(self, messages: list[dict], json_schema: dict | None) -> LLMReply:
        raise NotImplementedError

    def complete(
        self,
        messages: list[dict],
        *,
        json_schema: dict | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
    ) -> LLMReply:
        kwargs = {
            "json_schema": json_schema,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stop": stop,
        }
        self._record(messages, kwargs)
        return _cut_at_stop(self._reply_for(messages, json_schema), stop)

    def stream(
        self,
        messages: list[dict],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
    ) -> Iterator[str]:
        # A generator, like the real adapters: nothing is recorded or consumed
        # until the caller reads the first chunk, and errors surface there.
        kwargs = {"max_tokens": max_tokens, "temperature": temperature, "stop": stop, "stream": True}
        self._record(messages, kwargs)
        reply = _cut_at_stop(self._reply_for(messages, None), stop)
        yield from _chunks(reply.text)

    def _record(self, messages: list[dict], kwargs: dict[str, Any]) -> None:
        with self._lock:
            self.calls.append((copy.deepcopy(messages), kwargs))


class ScriptedLLM(_RecordingLLM):
    """Replays `replies` in order.

    Each item is a str (the reply text), a dict (sent as its JSON text), an
    LLMReply (returned as is) or an exception instance (raised, to script a
    failing back end). Asking past the end raises LLMScriptExhausted.
    """

    name = "scripted"

    def __init__(self, replies: list[ScriptItem]) -> None:
        super().__init__()
        self._script = list(replies)
        self._next = 0

    @property
    def remaining(self) -> int:
        """How many scripted replies have not been used yet."""
        return len(self._script) - self._next

    def _reply_for(self, messages: list[dict], json_schema: dict | None) -> LLMReply:
        with self._lock:
            if self._next >= len(self._script):
                raise LLMScriptExhausted(
                    f"ScriptedLLM had {len(self._script)} replies and got call "
                    f"{len(self.calls)}; last message: {_last_content(messages)!r}"
                )
            item = self._script[self._next]
            self._next += 1
        if isinstance(item, BaseException):
            raise item
        return _as_reply(item, self.name, messages)


class FunctionLLM(_RecordingLLM):
    """Computes each reply as ``fn(messages, json_schema)``.

    `fn` returns a str, a dict (sent as its JSON text) or an LLMReply; whatever
    it raises propagates, like an error from a real back end.
    """

    def __init__(self, fn: ReplyFunction) -> None:
        super().__init__()
        self._fn = fn
        self.name = f"function:{getattr(fn, '__qualname__', type(fn).__name__)}"

    def _reply_for(self, messages: list[dict], json_schema: dict | None) -> LLMReply:
        return _as_reply(self._fn(messages, json_schema), self.name, messages)


def _last_content(messages: list[dict]) -> str:
    return str(messages[-1].get("content", ""))[:80] if messages else ""
