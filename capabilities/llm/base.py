"""The one interface every language-model back end in Flora implements.

Callers (the intent router, the planner, tools) only ever see `LLM`, so a unit
test can hand them a `ScriptedLLM` and production can hand them a model that
runs in-process or behind an OpenAI-compatible server without either side
knowing which.

Exceptions::

    LLMError                     base; anything the model layer refuses to do
    ├── LLMUnavailable           back end unreachable, not installed or not loaded;
    │                            retryable later
    ├── ModelHostError           (model_host.py) the shared model server would not start
    ├── LLMRequestRejected       the server refused the request (4xx other than 429);
    │                            retrying the same request cannot help
    ├── LLMOutputError           the reply is not valid JSON or not valid for the schema
    ├── LLMScriptExhausted       a ScriptedLLM ran out of replies: a bug in the test
    └── ModelError               a packaged model (models.py) cannot be assembled
        ├── ModelNotInstalled    its part packages are not installed
        └── ModelIntegrityError  the assembled file does not match its sha256
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator, Protocol, runtime_checkable

import jsonschema

Message = dict[str, str]


@dataclass(frozen=True)
class LLMReply:
    """What one completion produced, with token counts for cost accounting."""

    text: str
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0


@runtime_checkable
class LLM(Protocol):
    """A chat model.

    `messages` are OpenAI-style ``{"role": "system"|"user"|"assistant",
    "content": str}`` dicts. When `json_schema` is given the back end must
    constrain its output to it (a grammar on llama.cpp, ``response_format`` on
    a server); callers still validate, through `complete_json`, because some
    back ends quietly fall back to "any JSON" for schemas they cannot compile.

    `stream` is lazy in every implementation: nothing is sent until the first
    chunk is read, and errors are raised while iterating.
    """

    name: str

    def complete(
        self,
        messages: list[dict],
        *,
        json_schema: dict | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
    ) -> LLMReply: ...

    def stream(
        self,
        messages: list[dict],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
    ) -> Iterator[str]: ...


class LLMError(Exception):
    """Base of every error raised by the model layer."""


class LLMUnavailable(LLMError):
    """The back end cannot be reached or is not loaded; worth retrying later."""


class LLMRequestRejected(LLMError):
    """The server answered 4xx (not 429): the request itself is wrong."""

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class LLMOutputError(LLMError):
    """The model's reply is not what the caller's schema asked for.

    `text` keeps the raw reply so the caller can log it or show it.
    """

    def __init__(self, message: str, *, text: str) -> None:
        super().__init__(message)
        self.text = text


class LLMScriptExhausted(LLMError):
    """A ScriptedLLM was asked for more replies than the test prepared."""


class ModelError(LLMError):
    """A packaged model cannot be made available (see models.py)."""


class ModelNotInstalled(ModelError):
    """The packages that ship the model's bytes are not installed."""


class ModelIntegrityError(ModelError):
    """The assembled file is not the file the catalogue pins."""


def complete_json(llm: LLM, messages: list[dict], schema: dict, **kw: Any) -> dict:
    """Ask for a JSON object constrained by `schema` and return it validated.

    Raises LLMOutputError when the reply does not parse or does not validate.
    An invalid `schema` is a bug in the caller and raises jsonschema's
    SchemaError unchanged.
    """
    return complete_json_reply(llm, messages, schema, **kw)[0]


def complete_json_reply(llm: LLM, messages: list[dict], schema: dict, *, check: dict | None = None,
                        **kw: Any) -> tuple[dict, LLMReply]:
    """`complete_json`, also returning the reply (its token counts). The output is
    constrained by `schema` and validated against `check` (default: `schema`): a looser
    `check` lets the caller explain finer errors itself (which tool's argument is wrong)."""
    check = schema if check is None else check
    for each in (schema, check):
        jsonschema.validators.validator_for(each).check_schema(each)
    validator_cls = jsonschema.validators.validator_for(check)
    reply = llm.complete(messages, json_schema=schema, **kw)
    text = reply.text.strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LLMOutputError(
            f"{llm.name} replied with text that is not JSON ({exc.msg} at char {exc.pos})",
            text=reply.text,
        ) from None
    if not isinstance(value, dict):
        raise LLMOutputError(
            f"{llm.name} replied with a JSON {type(value).__name__}, not an object",
            text=reply.text,
        )
    error = jsonschema.exceptions.best_match(validator_cls(check).iter_errors(value))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        raise LLMOutputError(
            f"{llm.name} replied with JSON that fails the schema at {where}: {error.message}",
            text=reply.text,
        )
    return value, reply
