"""OpenAICompatibleLLM against a real HTTP server on 127.0.0.1 (no mocked transport)."""

from __future__ import annotations

import logging
import socket

import pytest

from capabilities.llm import (
    LLMError,
    LLMRequestRejected,
    LLMUnavailable,
    OpenAICompatibleLLM,
    complete_json,
)

from .chat_server import Answer, completion, streamed

USER = [{"role": "user", "content": "hi"}]
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def client(server, **kw) -> OpenAICompatibleLLM:
    kw.setdefault("backoff_s", 0.001)
    return OpenAICompatibleLLM(server.base_url, model="test-model", **kw)


def test_plain_completion_returns_text_model_and_usage(chat_server):
    chat_server.answers.append(completion("hello!"))
    reply = client(chat_server).complete(USER, max_tokens=12, stop=["\n"])
    assert (reply.text, reply.model, reply.prompt_tokens, reply.completion_tokens) == ("hello!", "test-model", 7, 3)
    sent = chat_server.requests[0]
    assert sent["messages"] == USER
    assert (sent["model"], sent["max_tokens"], sent["temperature"], sent["stop"], sent["stream"]) == (
        "test-model", 12, 0.0, ["\n"], False,
    )
    assert "response_format" not in sent


def test_json_schema_mode_sends_openai_response_format(chat_server):
    chat_server.answers.append(completion('{"ok": true}'))
    assert complete_json(client(chat_server), USER, SCHEMA) == {"ok": True}
    assert chat_server.requests[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": SCHEMA, "strict": True},
    }


def test_json_object_mode_sends_llama_cpp_response_format(chat_server):
    chat_server.answers.append(completion('{"ok": false}'))
    client(chat_server, schema_mode="json_object").complete(USER, json_schema=SCHEMA)
    assert chat_server.requests[0]["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_api_key_is_sent_as_bearer_token(chat_server):
    chat_server.answers.append(completion("x"))
    client(chat_server, api_key="sk-test").complete(USER)
    assert chat_server.headers[0]["Authorization"] == "Bearer sk-test"


def test_retries_after_two_503s_then_succeeds(chat_server, caplog):
    chat_server.answers += [Answer(503, {"error": {"message": "loading"}})] * 2 + [completion("finally")]
    with caplog.at_level(logging.INFO, logger="flora.llm.openai"):
        assert client(chat_server, max_retries=3).complete(USER).text == "finally"
    assert len(chat_server.requests) == 3
    assert [r.getMessage().split(" -> ")[1].split(" ")[0] for r in caplog.records] == ["503", "503", "200"]


def test_retries_on_429(chat_server):
    chat_server.answers += [Answer(429, {"error": {"message": "slow down"}}), completion("ok")]
    assert client(chat_server).complete(USER).text == "ok"


def test_gives_up_with_unavailable_after_max_retries_of_5xx(chat_server):
    chat_server.answers += [Answer(500, {"error": {"message": "boom"}})] * 3
    with pytest.raises(LLMUnavailable, match="failed 3 times; last: HTTP 500: boom"):
        client(chat_server, max_retries=2).complete(USER)


def test_does_not_retry_a_400_and_reports_the_servers_message(chat_server):
    chat_server.answers += [Answer(400, {"error": {"message": "max_tokens is too large"}}), completion("never")]
    with pytest.raises(LLMRequestRejected, match="HTTP 400: max_tokens is too large") as caught:
        client(chat_server).complete(USER)
    assert caught.value.status_code == 400
    assert len(chat_server.requests) == 1


def test_reports_fastapi_validation_detail_on_422(chat_server):
    chat_server.answers.append(Answer(422, {"detail": [{"loc": ["body", "response_format"], "msg": "bad"}]}))
    with pytest.raises(LLMRequestRejected, match="response_format"):
        client(chat_server).complete(USER, json_schema=SCHEMA)


def test_stream_joins_sse_chunks_until_done(chat_server):
    chat_server.answers.append(streamed("Hel", "lo", " world"))
    chunks = list(client(chat_server).stream(USER, max_tokens=5))
    assert chunks == ["Hel", "lo", " world"]
    assert chat_server.requests[0]["stream"] is True


def test_stream_retries_before_the_first_byte(chat_server):
    chat_server.answers += [Answer(503, {"error": {"message": "busy"}}), streamed("ok")]
    assert "".join(client(chat_server).stream(USER)) == "ok"


def test_stream_raises_on_an_error_event(chat_server):
    chat_server.answers.append(Answer(events=['{"error": {"message": "context overflow"}}']))
    with pytest.raises(LLMError, match="mid-stream: context overflow"):
        list(client(chat_server).stream(USER))


def test_unexpected_body_is_an_llm_error(chat_server):
    chat_server.answers.append(Answer(body={"nothing": "here"}))
    with pytest.raises(LLMError, match="unexpected body"):
        client(chat_server).complete(USER)


def test_connection_refused_ends_in_unavailable_after_retries():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    llm = OpenAICompatibleLLM(f"http://127.0.0.1:{port}/v1", model="m", max_retries=2, backoff_s=0.001)
    with pytest.raises(LLMUnavailable, match="failed 3 times; last: ConnectError"):
        llm.complete(USER)


def test_rejects_an_unknown_schema_mode():
    with pytest.raises(ValueError, match="schema_mode"):
        OpenAICompatibleLLM("http://127.0.0.1:1/v1", model="m", schema_mode="grammar")  # type: ignore[arg-type]
