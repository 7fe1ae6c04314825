"""dify_workflow against a local server that speaks Dify's /v1/workflows/run.

The server listens on loopback, which the address guard refuses unless the operator opens it:
the settings here allow it with ``allow_private``, as an operator with a self-hosted Dify would."""

from __future__ import annotations

import socket

import pytest
from jsonschema import ValidationError

from capabilities.base import CapabilityError, CapabilityInputError, ExecutionContext
from tests.tools.conftest import call
from tests.tools.local_http import LocalHTTPServer, Reply, Request

GOOD_KEY = "app-good-key"


def fake_dify(request: Request) -> Reply:
    """Dify's documented answers for a workflow whose input ``topic`` is required."""
    if (request.method, request.path) != ("POST", "/v1/workflows/run"):
        return Reply.json({"code": "not_found", "message": "The requested URL was not found.", "status": 404}, 404)
    if request.headers.get("authorization") != f"Bearer {GOOD_KEY}":
        return Reply.json({"code": "unauthorized", "message": "Access token is invalid", "status": 401}, 401)
    body = request.json()
    inputs = body.get("inputs", {})
    if inputs.get("topic") == "overload":
        return Reply.json({"code": "internal_server_error", "message": "Service busy", "status": 503}, 503)
    if inputs.get("topic") == "slow":
        return Reply.json({}, delay_s=1.0)
    if body.get("response_mode") != "blocking" or not body.get("user") or not isinstance(inputs.get("topic"), str):
        return Reply.json({"code": "invalid_param", "message": "topic is required in input form", "status": 400}, 400)
    failed = inputs["topic"] == "explode"
    return Reply.json({
        "workflow_run_id": "run-123",
        "task_id": "dify-task-9",
        "data": {
            "id": "run-123",
            "workflow_id": "wf-1",
            "status": "failed" if failed else "succeeded",
            "outputs": None if failed else {"summary": f"All about {inputs['topic']}"},
            "error": "Node 'LLM' run failed: model quota exceeded" if failed else None,
            "elapsed_time": 0.42,
            "total_tokens": 0 if failed else 57,
            "total_steps": 3,
            "created_at": 1705407629,
            "finished_at": 1705407630,
        },
    })


@pytest.fixture
def dify_server():
    with LocalHTTPServer(fake_dify) as server:
        yield server


@pytest.fixture
def settings(dify_server):
    return {"base_url": f"{dify_server.url}/v1", "timeout_s": 5, "allow_private": ["127.0.0.1"]}


def test_successful_run_returns_outputs_and_run_facts(registry, dify_server, settings):
    result = call(registry, "dify_workflow", {"api_key": GOOD_KEY, "inputs": {"topic": "tides"}}, settings)

    assert result == {"workflow_run_id": "run-123", "status": "succeeded",
                      "outputs": {"summary": "All about tides"}, "elapsed_time": 0.42, "total_tokens": 57}
    sent = dify_server.requests[0]
    assert sent.json() == {"inputs": {"topic": "tides"}, "response_mode": "blocking", "user": "user-42"}


def test_base_url_is_not_a_parameter(registry, dify_server, settings):
    assert "base_url" not in registry.get_executable("dify_workflow").parameters["properties"]
    with pytest.raises(ValidationError):  # the schema refuses it, as the ExecutionActor checks it
        call(registry, "dify_workflow", {"api_key": GOOD_KEY, "base_url": f"{dify_server.url}/v1"}, settings)
    assert dify_server.requests == []


def test_base_url_passed_past_the_schema_is_refused_not_used(registry, dify_server, settings):
    spec = registry.get_executable("dify_workflow")
    context = ExecutionContext(task_id="t", user_id="u", settings={**settings, "base_url": "http://127.0.0.1:9/v1"})
    with pytest.raises(CapabilityError) as caught:
        spec.invoke({"api_key": GOOD_KEY, "inputs": {"topic": "x"}, "base_url": f"{dify_server.url}/v1"}, context)
    assert caught.value.error_type == "forbidden" and not isinstance(caught.value, CapabilityInputError)
    assert "capabilities.settings.dify_workflow.base_url" in str(caught.value)
    assert dify_server.requests == []


@pytest.mark.parametrize("base_url", ["http://127.0.0.1:{port}/v1", "http://10.0.0.8/v1",
                                      "http://169.254.169.254/latest/v1", "http://localhost:{port}/v1"])
def test_an_internal_configured_address_is_refused_unless_allowed(registry, dify_server, base_url):
    settings = {"base_url": base_url.format(port=dify_server.port), "timeout_s": 5}
    with pytest.raises(CapabilityError) as caught:
        call(registry, "dify_workflow", {"api_key": GOOD_KEY, "inputs": {"topic": "x"}}, settings)
    assert caught.value.error_type == "forbidden"
    assert "capabilities.settings.dify_workflow.allow_private" in str(caught.value)
    assert dify_server.requests == []


def test_an_internal_difys_error_text_is_not_passed_on(registry, settings):
    with pytest.raises(CapabilityInputError) as caught:
        call(registry, "dify_workflow", {"api_key": "sk-bad", "inputs": {"topic": "tides"}}, settings)
    assert caught.value.parameter == "api_key" and "HTTP 401" in str(caught.value)
    assert "Access token is invalid" not in str(caught.value)


def test_the_api_key_is_marked_secret(registry):
    assert registry.get_executable("dify_workflow").parameters["properties"]["api_key"]["x-flora-secret"] is True


def test_rejected_key_asks_for_the_api_key_again(registry, settings):
    with pytest.raises(CapabilityInputError) as caught:
        call(registry, "dify_workflow", {"api_key": "sk-bad", "inputs": {"topic": "tides"}}, settings)
    assert caught.value.parameter == "api_key"
    assert "401" in str(caught.value)


def test_failed_workflow_reports_difys_error(registry, settings):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "dify_workflow", {"api_key": GOOD_KEY, "inputs": {"topic": "explode"}}, settings)
    assert not isinstance(caught.value, CapabilityInputError)
    assert caught.value.error_type == "workflow_failed"
    assert not caught.value.retryable
    assert "model quota exceeded" in str(caught.value)


def test_refused_inputs_ask_for_the_inputs_again(registry, settings):
    with pytest.raises(CapabilityInputError) as caught:
        call(registry, "dify_workflow", {"api_key": GOOD_KEY}, settings)
    assert caught.value.parameter == "inputs"
    assert "HTTP 400" in str(caught.value)


def test_unavailable_dify_is_retryable(registry, settings):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "dify_workflow", {"api_key": GOOD_KEY, "inputs": {"topic": "overload"}}, settings)
    assert caught.value.retryable
    assert "503" in str(caught.value)


def test_slow_dify_times_out_after_the_configured_seconds(registry, settings):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "dify_workflow", {"api_key": GOOD_KEY, "inputs": {"topic": "slow"}},
             {**settings, "timeout_s": 0.2})
    assert caught.value.retryable
    assert caught.value.error_type == "timeout"


def test_wrong_configured_address_is_a_configuration_error(registry, dify_server, settings):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "dify_workflow", {"api_key": GOOD_KEY}, {**settings, "base_url": f"{dify_server.url}/api"})
    assert caught.value.error_type == "misconfigured" and not isinstance(caught.value, CapabilityInputError)
    assert "capabilities.settings.dify_workflow.base_url" in str(caught.value)


def test_unreachable_dify_is_retryable(registry):
    with socket.socket() as probe:  # a port that was free a moment ago: nobody listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(CapabilityError) as caught:
        call(registry, "dify_workflow", {"api_key": GOOD_KEY},
             {"base_url": f"http://127.0.0.1:{port}/v1", "allow_private": ["127.0.0.1"]})
    assert caught.value.retryable
    assert caught.value.error_type == "unavailable"


def test_schema_requires_the_api_key_and_refuses_unknown_parameters(registry):
    with pytest.raises(ValidationError, match="api_key"):
        call(registry, "dify_workflow", {"inputs": {}})
    with pytest.raises(ValidationError):
        call(registry, "dify_workflow", {"api_key": GOOD_KEY, "workflow": "x"})


@pytest.mark.parametrize("key", ["北京明天天气怎么样", "app-good key", "app-good-key\r\nX-Injected: 1", "app-ключ"])
def test_a_key_that_cannot_be_an_api_key_is_refused_before_any_call(registry, dify_server, settings, key):
    with pytest.raises(CapabilityInputError) as caught:
        call(registry, "dify_workflow", {"api_key": key, "inputs": {"topic": "x"}}, settings)
    assert caught.value.parameter == "api_key"
    assert "API key" in str(caught.value)
    assert dify_server.requests == []
