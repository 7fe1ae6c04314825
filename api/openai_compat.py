"""The OpenAI chat-completions shape over Flora's reply contract, so the official ``openai``
client and OpenAI-compatible chat UIs talk to Flora unchanged.

The last ``user`` message is what the user says now; the conversation itself (a paused
task, a clarification) is kept by Flora, per user, so the next user message answers a
question the previous reply asked. The reply is rendered as the assistant's text and the
raw reply contract rides along under ``flora``.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from typing import Any, Awaitable, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from api.service import APIError
from common import messages as m
from common.i18n import cjk_chars, without_cjk

MODEL_ID = "flora"
MODEL_CREATED = 1_767_225_600  # 2026-01-01, a fixed date: the model list does not change between calls
CHUNK_WORDS = 8
KEEPALIVE_S = 5.0


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # temperature, top_p...: accepted, not used

    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessage] = Field(min_length=1, max_length=1000)
    stream: bool = False
    user: str | None = Field(None, min_length=1, max_length=200)

    @model_validator(mode="after")
    def _known_model(self) -> "ChatRequest":
        if self.model != MODEL_ID:
            raise ValueError(f"unknown model {self.model!r}; this server serves {MODEL_ID!r}")
        if not any(msg.role == "user" for msg in self.messages):
            raise ValueError("messages holds no 'user' message")
        return self


def model_list() -> dict:
    return {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": MODEL_CREATED,
                                        "owned_by": "flora"}]}


def last_user_text(request: ChatRequest) -> str:
    message = next(msg for msg in reversed(request.messages) if msg.role == "user")
    content = message.content
    if isinstance(content, list):  # content parts: the text ones, in order
        content = "\n".join(str(part.get("text", "")) for part in content if part.get("type") == "text")
    text = (content or "").strip()
    if not text:
        raise APIError(422, "invalid_request", "the last user message has no text", field="messages")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800") is valid JSON but not text
        raise APIError(422, "invalid_request", "the last user message is not valid Unicode text",
                       field="messages") from None
    return text


def completion(reply: dict, model: str, *, prompt: str) -> dict:
    text = m.reply_text(reply)
    prompt_tokens, completion_tokens = count_tokens(prompt), count_tokens(text)
    return {"id": _completion_id(), "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
            "flora": reply}


async def stream(answer: Awaitable[dict], model: str, pieces: asyncio.Queue | None = None):
    """``chat.completion.chunk`` events: the role at once, then the reply's text as Flora
    writes it (``pieces``: its ``reply_chunk`` messages), keep-alive comments while it works,
    the rest of the reply's text in pieces (all of it for a reply that was not written
    piece by piece), the finish, and ``[DONE]``."""
    cid, created = _completion_id(), int(time.time())

    def chunk(delta: dict, finish: str | None = None, **extra: Any) -> str:
        body = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra}
        return f"data: {json.dumps(body, ensure_ascii=False, default=str)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    task = asyncio.ensure_future(answer)
    pieces = pieces if pieces is not None else asyncio.Queue()
    sent = ""
    try:
        while not task.done():
            waiter = asyncio.ensure_future(pieces.get())
            done, _ = await asyncio.wait([task, waiter], timeout=KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED)
            if waiter in done:
                text = waiter.result().get("text", "")
                sent += text
                for piece in split_text(text):  # what a fast model wrote between two looks: still in pieces
                    yield chunk({"content": piece})
            else:
                waiter.cancel()
                if not done:
                    yield ": working\n\n"
        while not pieces.empty():
            text = pieces.get_nowait().get("text", "")
            sent += text
            for piece in split_text(text):
                yield chunk({"content": piece})
        try:
            reply = task.result()
        except APIError as exc:
            reply = exc.as_reply("")
    finally:
        task.cancel()
    whole, said = m.reply_text(reply), sent.strip()
    rest = whole if not said else (whole[len(said):] if whole.startswith(said) else "")  # what was not streamed
    for piece in split_text(rest) if rest else []:
        yield chunk({"content": piece})
    yield chunk({}, "stop", flora=reply)
    yield "data: [DONE]\n\n"


def split_text(text: str, words: int = CHUNK_WORDS) -> list[str]:
    """``text`` in pieces of a few words each, whitespace kept, so the pieces join back exactly."""
    tokens = re.findall(r"\S+\s*|\s+", text)
    return ["".join(tokens[i:i + words]) for i in range(0, len(tokens), words)] or [""]


def count_tokens(text: str) -> int:
    """An estimate: words, and each CJK character as one."""
    return len(cjk_chars(text)) + len(without_cjk(text).split())


def _completion_id() -> str:
    return "chatcmpl-" + uuid.uuid4().hex[:24]
