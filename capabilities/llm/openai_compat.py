"""`LLM` over any server that speaks OpenAI's ``/chat/completions``.

The same adapter serves a hosted API, a vLLM/Ollama box, and Flora's own
`ModelHost` (llama-cpp-python's bundled server). They differ in one place:
how a JSON schema is asked for. OpenAI's API wants
``{"type": "json_schema", "json_schema": {...}}``; llama-cpp-python's server
only accepts ``{"type": "json_object", "schema": ...}`` and rejects the former
with 422. `schema_mode` picks which.

Transient failures (connect errors, timeouts, 429, 5xx) are retried with
exponential backoff and end in LLMUnavailable; any other 4xx is the request's
fault and raises LLMRequestRejected at once with the server's own message.
Streams are retried only until the response starts: a half-read stream has
already been shown to someone.

With ``restart_wait_s`` (Flora's own model hosts, which are started again when they die:
host_supervisor.py), a request whose connection was refused or dropped — the host died under
it — waits until the server answers ``GET /models`` again (at most ``restart_wait_s``) and is
sent once more; only once, so a request that kills the host every time is not a crash loop.
A request may also ask not to be retried at all (``retries=0``: background work with a short
timeout of its own).

`complete_tools` uses the API's native function calling (``tools``, ``tool_calls``) for
servers that support it; the agent uses it when ``agent.native_tools`` is on.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Iterator, Literal

from dataclasses import dataclass, field

import httpx

from capabilities.llm.base import LLMError, LLMReply, LLMRequestRejected, LLMUnavailable

logger = logging.getLogger("flora.llm.openai")

SchemaMode = Literal["json_schema", "json_object"]

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_BACKOFF_S = 0.5
_ERROR_TEXT_LIMIT = 500

_RETRYABLE_TRANSPORT_ERRORS = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
)
# the server went away (refused, reset, closed without answering), as opposed to a slow answer
_CONNECTION_LOST = (httpx.ConnectError, httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
_READY_POLL_S = 0.25


class _ConnectionLost(Exception):
    def __init__(self, failure: str) -> None:
        super().__init__(failure)
        self.failure = failure


@dataclass(frozen=True)
class ToolCallReply:
    """What a native function-calling completion produced: the calls the model made (each
    ``(name, arguments as the JSON text the server sent)``), or its text when it made none."""

    text: str
    calls: list[tuple[str, str]] = field(default_factory=list)
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0


class OpenAICompatibleLLM:
    """Chat completions against `base_url` (e.g. ``http://127.0.0.1:8000/v1``)."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
        schema_mode: SchemaMode = "json_schema",
        restart_wait_s: float = 0.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        """``restart_wait_s`` > 0: the server is a supervised model host (see the module's
        docstring). ``headers`` go with every request."""
        if schema_mode not in ("json_schema", "json_object"):
            raise ValueError(f"schema_mode must be 'json_schema' or 'json_object', not {schema_mode!r}")
        self.name = f"openai:{model}"
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._ready_url = base_url.rstrip("/") + "/models"
        self.restart_wait_s = restart_wait_s
        self._model = model
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        self.schema_mode: SchemaMode = schema_mode
        headers = {**(headers or {}), **({"Authorization": f"Bearer {api_key}"} if api_key else {})}
        self._client = httpx.Client(timeout=timeout_s, headers=headers)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAICompatibleLLM:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def complete(
        self,
        messages: list[dict],
        *,
        json_schema: dict | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
    ) -> LLMReply:
        payload = self._payload(messages, max_tokens, temperature, stop, stream=False)
        if json_schema is not None:
            payload["response_format"] = self._response_format(json_schema)
        response = self._send(payload, stream=False)
        try:
            data = response.json()
            text = data["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"{self._url} answered 200 with an unexpected body: {exc!r}") from None
        usage = data.get("usage") or {}
        return LLMReply(
            text=text,
            model=data.get("model") or self._model,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )

    def complete_tools(
        self,
        messages: list[dict],
        tools: list[dict],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
    ) -> ToolCallReply:
        """One completion offering ``tools`` (``{"name", "description", "parameters"}``, names
        as the API allows: letters, digits, ``_`` and ``-``) the model may call."""
        payload = self._payload(messages, max_tokens, temperature, None, stream=False)
        payload["tools"] = [{"type": "function", "function": tool} for tool in tools]
        payload["tool_choice"] = "auto"
        response = self._send(payload, stream=False)
        try:
            data = response.json()
            message = data["choices"][0]["message"]
            calls = [(call["function"]["name"], call["function"].get("arguments") or "{}")
                     for call in message.get("tool_calls") or []]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"{self._url} answered 200 with an unexpected body: {exc!r}") from None
        usage = data.get("usage") or {}
        return ToolCallReply(text=message.get("content") or "", calls=calls, model=data.get("model") or self._model,
                             prompt_tokens=int(usage.get("prompt_tokens") or 0),
                             completion_tokens=int(usage.get("completion_tokens") or 0))

    def stream(
        self,
        messages: list[dict],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
    ) -> Iterator[str]:
        payload = self._payload(messages, max_tokens, temperature, stop, stream=True)
        response = self._send(payload, stream=True)
        try:
            yield from _sse_deltas(response, self._url)
        except httpx.TransportError as exc:  # part of it was read (and shown): not sent again
            raise LLMUnavailable(f"{self._url} went away mid-stream: {type(exc).__name__}: {exc}") from None
        finally:
            response.close()

    def _payload(
        self, messages: list[dict], max_tokens: int, temperature: float, stop: list[str] | None, *, stream: bool
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self._model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": stream,
        }
        if stop:
            payload["stop"] = stop
        return payload

    def _response_format(self, schema: dict) -> dict[str, Any]:
        if self.schema_mode == "json_object":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}}

    def _send(self, payload: dict[str, Any], *, stream: bool) -> httpx.Response:
        """POST with retries; returns a 2xx response (unread when streaming)."""
        try:
            return self._send_with_retries(payload, stream=stream, host_may_restart=self.restart_wait_s > 0)
        except _ConnectionLost as lost:
            self._wait_for_restart(lost.failure)
        try:
            return self._send_with_retries(payload, stream=stream, host_may_restart=True, retried=True)
        except _ConnectionLost as lost:
            raise LLMUnavailable(f"{self._url} went away again on the same request after it was started "
                                 f"again; not sent a third time: {lost.failure}") from None

    def _send_with_retries(self, payload: dict[str, Any], *, stream: bool, host_may_restart: bool,
                           retried: bool = False) -> httpx.Response:
        attempts = 1 if retried else self._max_retries + 1
        failure = ""
        for attempt in range(attempts):
            if attempt:
                time.sleep(self._backoff_s * 2 ** (attempt - 1))
            started = time.monotonic()
            try:
                request = self._client.build_request("POST", self._url, json=payload)
                response = self._client.send(request, stream=stream)
            except _RETRYABLE_TRANSPORT_ERRORS as exc:
                failure = f"{type(exc).__name__}: {exc}"
                logger.warning(
                    "POST %s failed after %.0f ms (attempt %s/%s): %s",
                    self._url, _ms_since(started), attempt + 1, attempts, failure,
                )
                if host_may_restart and isinstance(exc, _CONNECTION_LOST):
                    raise _ConnectionLost(failure) from None
                continue
            logger.info(
                "POST %s -> %s in %.0f ms (attempt %s/%s)",
                self._url, response.status_code, _ms_since(started), attempt + 1, attempts,
            )
            if response.is_success:
                return response
            message = _error_message(response)
            response.close()
            if response.status_code == 429 or response.status_code >= 500:
                failure = f"HTTP {response.status_code}: {message}"
                continue
            raise LLMRequestRejected(
                f"{self._url} rejected the request with HTTP {response.status_code}: {message}",
                status_code=response.status_code,
            )
        raise LLMUnavailable(f"{self._url} failed {attempts} times; last: {failure}")

    def _wait_for_restart(self, failure: str) -> None:
        """Until the server answers again (its supervisor starts it again), at most restart_wait_s."""
        deadline = time.monotonic() + self.restart_wait_s
        logger.warning("%s went away (%s); waiting up to %.0f s for it to be started again",
                       self._url, failure, self.restart_wait_s)
        while time.monotonic() < deadline:
            try:
                if self._client.get(self._ready_url, timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(_READY_POLL_S)
        raise LLMUnavailable(f"{self._url} went away ({failure}) and did not answer again within "
                             f"{self.restart_wait_s:.0f} s")


def _sse_deltas(response: httpx.Response, url: str) -> Iterator[str]:
    """Yield the text deltas of an OpenAI-style server-sent event stream."""
    for line in response.iter_lines():
        if not line.startswith("data:"):
            continue  # blank separators, ": ping" comments, event names
        data = line[len("data:"):].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
        except json.JSONDecodeError:
            raise LLMError(f"{url} sent a stream event that is not JSON: {data[:_ERROR_TEXT_LIMIT]!r}") from None
        if "error" in event:
            raise LLMError(f"{url} failed mid-stream: {_describe_error(event['error'])}")
        for choice in event.get("choices") or []:
            delta = (choice.get("delta") or {}).get("content")
            if delta:
                yield delta


def _error_message(response: httpx.Response) -> str:
    """The server's own explanation, from whichever error shape it uses."""
    response.read()
    try:
        body = response.json()
    except ValueError:
        return response.text[:_ERROR_TEXT_LIMIT] or response.reason_phrase
    if isinstance(body, dict):
        if "error" in body:
            return _describe_error(body["error"])
        if "detail" in body:  # FastAPI validation errors (llama-cpp-python's server)
            return json.dumps(body["detail"])[:_ERROR_TEXT_LIMIT]
    return json.dumps(body)[:_ERROR_TEXT_LIMIT]


def _describe_error(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)[:_ERROR_TEXT_LIMIT]
    return str(error)[:_ERROR_TEXT_LIMIT]


def _ms_since(started: float) -> float:
    return (time.monotonic() - started) * 1000
