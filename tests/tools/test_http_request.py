"""http_request against a real local HTTP server.

The server listens on loopback, which http_request refuses by default: these tests open it
the way an operator would, with ``allow_private`` (the refusals are in test_http_guard.py)."""

from __future__ import annotations

import socket

import pytest
from jsonschema import ValidationError

from capabilities.base import CapabilityError, CapabilityInputError
from capabilities.base import ExecutionContext
from capabilities.tools.http_request import http_request
from tests.tools.conftest import call as call_capability
from tests.tools.local_http import LocalHTTPServer, Reply, Request


LOCAL = ["127.0.0.1", "localhost"]


def call(registry, name: str, parameters: dict, settings: dict | None = None):
    """The capability called with the loopback test server allowed."""
    return call_capability(registry, name, parameters, {"allow_private": LOCAL, **(settings or {})})


def app(request: Request) -> Reply:
    if request.path == "/items":
        return Reply.json({"method": request.method, "query": request.query,
                           "token": request.headers.get("x-token"),
                           "sent": request.json() if request.body else None})
    if request.path == "/hello":
        return Reply.text("héllo, world")
    if request.path == "/big.txt":
        return Reply.text("a" * 5000)
    if request.path == "/big.json":
        return Reply.json({"data": ["x" * 100] * 50})
    if request.path == "/image.png":
        return Reply(200, b"\x89PNG\r\n\x1a\n" + bytes(64), {"Content-Type": "image/png"})
    if request.path == "/unavailable":
        return Reply.text("try later", 503)
    if request.path == "/slow":
        return Reply.text("late", delay_s=1.0)
    if request.path == "/hop":
        return Reply(302, b"", {"Location": request.query["to"][0]})
    return Reply.json({"error": "no such thing"}, 404)


@pytest.fixture
def server():
    with LocalHTTPServer(app) as running:
        yield running


def test_json_answer_is_parsed_and_query_headers_and_body_are_sent(registry, server):
    result = call(registry, "http_request", {
        "method": "POST", "url": f"{server.url}/items", "params": {"page": 2, "tag": ["a", "b"]},
        "headers": {"X-Token": "s3cret"}, "json": {"name": "pen"}})

    assert result["status"] == 200
    assert result["body_kind"] == "json"
    assert result["body"] == {"method": "POST", "query": {"page": ["2"], "tag": ["a", "b"]},
                              "token": "s3cret", "sent": {"name": "pen"}}
    assert result["headers"]["content-type"] == "application/json"
    assert all(name == name.lower() for name in result["headers"])
    assert result["truncated"] is False
    assert isinstance(result["elapsed_ms"], int)


def test_text_answer_is_returned_as_text(registry, server):
    result = call(registry, "http_request", {"url": f"{server.url}/hello"})
    assert (result["body"], result["body_kind"]) == ("héllo, world", "text")


def test_binary_answer_is_left_out(registry, server):
    result = call(registry, "http_request", {"url": f"{server.url}/image.png"})
    assert (result["body"], result["body_kind"]) == (None, "binary")


def test_error_status_is_data_not_an_exception(registry, server):
    missing = call(registry, "http_request", {"url": f"{server.url}/nope", "method": "DELETE"})
    busy = call(registry, "http_request", {"url": f"{server.url}/unavailable"})
    # an internal server's error text is withheld: its status and the standard reason only
    assert (missing["status"], missing["reason"], missing["body"]) == (404, "Not Found", None)
    assert (busy["status"], busy["reason"], busy["body"], busy["body_kind"]) == (503, "Service Unavailable",
                                                                                 None, "withheld")
    assert busy["headers"] == {} and "try later" not in str(busy)


def test_head_returns_headers_without_a_body(registry, server):
    result = call(registry, "http_request", {"method": "HEAD", "url": f"{server.url}/hello"})
    assert result["status"] == 200 and result["body"] == ""
    assert result["headers"]["content-length"] == str(len("héllo, world".encode()))


def test_large_body_is_cut_at_the_configured_size_and_flagged(registry, server):
    settings = {"max_response_bytes": 1000}
    text = call(registry, "http_request", {"url": f"{server.url}/big.txt"}, settings)
    json_body = call(registry, "http_request", {"url": f"{server.url}/big.json"}, settings)

    assert text["truncated"] is True and text["body"] == "a" * 1000
    # Half a JSON document cannot be parsed: it comes back as the text it is.
    assert json_body["truncated"] is True and json_body["body_kind"] == "text"
    assert len(json_body["body"]) == 1000


def test_host_outside_the_allow_list_is_refused_before_any_call(registry, server):
    with pytest.raises(CapabilityInputError) as caught:
        call(registry, "http_request", {"url": f"{server.url}/hello"}, {"allow_hosts": ["api.example.com"]})
    assert caught.value.parameter == "url"
    assert "127.0.0.1" in str(caught.value)
    assert server.requests == []


def test_allowed_hosts_match_exactly_or_by_wildcard(registry, server):
    exact = call(registry, "http_request", {"url": f"{server.url}/hello"}, {"allow_hosts": ["127.0.0.1"]})
    wildcard = call(registry, "http_request", {"url": f"http://localhost:{server.port}/hello"},
                    {"allow_hosts": ["*.localhost"]})
    assert exact["status"] == wildcard["status"] == 200


def test_redirect_to_a_host_outside_the_allow_list_is_refused(registry, server):
    elsewhere = f"http://localhost:{server.port}/hello"
    with pytest.raises(CapabilityError) as caught:
        call(registry, "http_request", {"url": f"{server.url}/hop", "params": {"to": elsewhere}},
             {"allow_hosts": ["127.0.0.1"]})
    assert caught.value.error_type == "forbidden"
    assert [r.path for r in server.requests] == ["/hop"]


def test_redirects_within_the_allow_list_are_followed(registry, server):
    result = call(registry, "http_request", {"url": f"{server.url}/hop", "params": {"to": f"{server.url}/hello"}},
                  {"allow_hosts": ["127.0.0.1"]})
    assert result["status"] == 200 and result["url"] == f"{server.url}/hello"


def test_slow_server_times_out_as_retryable(registry, server):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "http_request", {"url": f"{server.url}/slow", "timeout_s": 0.2})
    assert caught.value.retryable and caught.value.error_type == "timeout"
    assert "did not answer within 0.2 s" in str(caught.value)


def test_refused_connection_is_retryable(registry):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(CapabilityError) as caught:
        call(registry, "http_request", {"url": f"http://127.0.0.1:{port}/"})
    assert caught.value.retryable and caught.value.error_type == "unavailable"


def test_schema_refuses_other_schemes_methods_and_long_timeouts(registry):
    for bad in ({"url": "ftp://example.com/file"}, {"url": "https://example.com", "method": "TRACE"},
                {"url": "https://example.com", "timeout_s": 600}, {"url": "https://example.com", "body": "x"}):
        with pytest.raises(ValidationError):
            call(registry, "http_request", bad)


def test_non_http_url_is_refused_even_without_the_schema():
    context = ExecutionContext(task_id="t", user_id="u")
    with pytest.raises(CapabilityInputError) as caught:
        http_request("file:///etc/passwd", context)
    assert caught.value.parameter == "url"


def test_query_string_in_the_url_reaches_the_server(registry, server):
    result = call(registry, "http_request", {"url": f"{server.url}/items?city=Beijing&tag=a&tag=b"})

    assert result["body"]["query"] == {"city": ["Beijing"], "tag": ["a", "b"]}
    assert server.requests[-1].path == "/items"


def test_explicit_params_merge_with_the_url_query_and_override_the_same_name(registry, server):
    result = call(registry, "http_request", {"url": f"{server.url}/items?city=Beijing&units=metric",
                                             "params": {"units": "imperial", "page": 2}})

    assert result["body"]["query"] == {"city": ["Beijing"], "units": ["imperial"], "page": ["2"]}


@pytest.mark.parametrize("headers", [{"Authorization": "Bearer 北京"}, {"X-Token": "a\r\nX-Injected: 1"},
                                     {"X Bad Name": "v"}, {"Città": "v"}])
def test_a_header_that_cannot_be_sent_is_refused_before_any_call(registry, server, headers):
    with pytest.raises(CapabilityInputError) as caught:
        call(registry, "http_request", {"url": f"{server.url}/items", "headers": headers})
    assert caught.value.parameter == "headers"
    assert next(iter(headers)) in str(caught.value)
    assert server.requests == []
