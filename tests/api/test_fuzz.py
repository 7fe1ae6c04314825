"""Fuzzing the HTTP API against its own OpenAPI spec: no request, valid or not, gets a 5xx.

- ``test_no_server_error``: schemathesis generates requests for every operation in
  ``/openapi.json`` (positive and negative data; its examples, coverage and fuzzing phases)
  and sends them, with a valid key, to the real server of the ``api_server`` fixture. Each
  response must not be a server error and must have a content type the spec declares.
  Only ``GET /v1/events/stream`` is left out: it is a live stream that never ends. A
  ``POST /v1/messages`` or ``/v1/chat/completions`` with ``stream: true`` ends by itself
  (its reply closes it); every call has a timeout all the same.
- ``test_generated_bodies_through_the_actors``: generated bodies for the three routes that
  reach the actors, kept past the 404/422 a random id or model meets, so they run the
  InteractionActor and AgentActor (streamed or not).
- ``test_event_stream_odd_positions``: the positions (``since_id``, ``Last-Event-ID``) a
  client may send the live stream left out above.
- ``test_malformed_bodies``: hand-made broken bodies (and Content-Lengths) to every POST
  route get a 4xx with the error shape, and the server still answers afterwards.

Every call acts for ``FUZZ_USER`` unless it names a user itself. Deterministic (fixed seed,
``derandomize``) and bounded (``MAX_EXAMPLES`` per operation); about 40 s in all.
"""

from __future__ import annotations

import collections
import json
import socket
from urllib.parse import urlsplit

import httpx
import hypothesis
import hypothesis.strategies as st
import pytest
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance

MAX_EXAMPLES = 30
CALL_TIMEOUT_S = 30  # per request; a streamed message answer ends well before
FUZZ_USER = "fuzz_user"  # the default user of every fuzzed call, so other tests' users stay untouched
STREAMING_ONLY = "/v1/events/stream"


@pytest.fixture(scope="module")
def fuzz_schema(api_server):
    spec = httpx.get(api_server.url + "/openapi.json", timeout=10).json()
    config = schemathesis.Config.from_dict({
        "base-url": api_server.url,
        "seed": 20240601,
        "request-timeout": CALL_TIMEOUT_S,
        "headers": {"Authorization": f"Bearer {api_server.key}", "X-Flora-User": FUZZ_USER},
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none",
                       "with-security-parameters": False},
        "phases": {"stateful": {"enabled": False}},
    })
    return schemathesis.openapi.from_dict(spec, config=config)


schema = schemathesis.pytest.from_fixture("fuzz_schema").exclude(method="GET", path=STREAMING_ONLY)


@schema.parametrize()
@hypothesis.settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
def test_no_server_error(case, api_server):
    headers = {"Authorization": f"Bearer {api_server.key}", "X-Flora-User": FUZZ_USER}
    response = case.call(headers=headers, timeout=CALL_TIMEOUT_S)
    assert response.status_code < 500, (case.method, case.path, case.query, case.body, response.status_code,
                                        response.text[:2000])
    case.validate_response(response, checks=[not_a_server_error, content_type_conformance])
    if response.status_code == 200 and isinstance(case.body, dict) and case.body.get("stream") is True:
        ending = "data: [DONE]" if case.path == "/v1/chat/completions" else "event: done"
        assert ending in response.text, response.text[-500:]


# --------------------------------------------------------------------------- through the actors
def _reachable(label: str, body: dict, content: str) -> dict:
    """A generated body, changed only where a random value is bound to end in a 404/422 before the
    actors see it (an id that does not exist, an unknown model, nothing said)."""
    body = dict(body)
    if label == "POST /v1/chat/completions":
        body["model"] = "flora"
        body["messages"] = list(body.get("messages") or []) + [{"role": "user", "content": content}]
        return body
    body.pop("session_id", None)  # no such session: 404
    if label == "POST /v1/loops":  # words that do not say when: 422
        body["request"] = f"every day at 9:00 remind me to {body['request']}"
    if label == "POST /v1/messages":
        body.pop("task_id", None)  # no such task: 404
        if not str(body.get("content", "")).strip():
            body["content"] = content
    return body


@pytest.mark.parametrize("label", ["POST /v1/messages", "POST /v1/chat/completions", "POST /v1/loops"])
def test_generated_bodies_through_the_actors(fuzz_schema, api_server, label):
    """The schema-level fuzz above mostly ends in 404/422 for these routes (a random task id, model
    or session id); here the generated bodies are kept reachable, so they go through the
    InteractionActor and AgentActor (streamed or not), and none may end in a 5xx."""
    method, path = label.split(" ", 1)
    operation = fuzz_schema[path][method]
    headers = {"Authorization": f"Bearer {api_server.key}", "X-Flora-User": FUZZ_USER}
    statuses: collections.Counter = collections.Counter()

    @hypothesis.given(data=st.data())
    @hypothesis.settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck))
    def run(data):
        case = data.draw(operation.as_strategy())
        content = data.draw(st.text(min_size=1, max_size=200).filter(str.strip), label="content")
        body = _reachable(label, case.body, content)
        with httpx.Client(base_url=api_server.url, headers=headers, timeout=CALL_TIMEOUT_S) as client:
            response = client.request(method, path, json=body)
        statuses[response.status_code] += 1
        assert response.status_code < 500, (label, body, response.status_code, response.text[:2000])
        kind = response.headers.get("content-type", "")
        if response.status_code >= 400:
            _error_shape(response)
        elif body.get("stream"):
            assert kind.startswith("text/event-stream"), (label, body, kind)
            ending = "data: [DONE]" if label == "POST /v1/chat/completions" else "event: done"
            assert ending in response.text, (label, body, response.text[-500:])
        else:
            assert kind.startswith("application/json"), (label, body, kind)

    try:
        run()
    finally:  # the loop tasks made here stay out of everything else's way
        with api_server.client(timeout=CALL_TIMEOUT_S) as client:
            for loop in client.get("/v1/loops", headers={"X-Flora-User": FUZZ_USER}).json():
                client.delete(f"/v1/loops/{loop['loop_task_id']}", headers={"X-Flora-User": FUZZ_USER})
    # not vacuous: most generated bodies were answered by the actors, not refused at the door
    assert statuses[200] >= MAX_EXAMPLES // 2, (label, dict(statuses))


# --------------------------------------------------------------------------- the live event stream
@pytest.mark.parametrize("position", [
    {"params": {"since_id": "0"}},
    {"params": {"since_id": str(2**63)}},  # past SQLite's INTEGER
    {"params": {"since_id": "9" * 40}},
    {"headers": {"Last-Event-ID": b"abc"}},
    {"headers": {"Last-Event-ID": b"-5"}},
    {"headers": {"Last-Event-ID": str(2**63).encode()}},
    {"headers": {"Last-Event-ID": b"\xb2"}},  # latin-1 '²': str.isdigit() says yes, int() says no
    {"headers": {"Last-Event-ID": b"1\xb9"}},
], ids=["since_id-0", "since_id-2**63", "since_id-40-digits", "last-event-id-abc", "last-event-id-negative",
        "last-event-id-2**63", "last-event-id-superscript", "last-event-id-1-superscript"])
def test_event_stream_odd_positions(api_server, position):
    """``GET /v1/events/stream`` is left out of the fuzz run (it never ends); the positions a
    client may send it are tried here. Each is refused with a 4xx, or the stream opens and
    stays open (nothing to send yet): it is not a 5xx, nor a stream cut off by a crash."""
    headers = {"Authorization": f"Bearer {api_server.key}", "X-Flora-User": FUZZ_USER, **position.get("headers", {})}
    with httpx.stream("GET", api_server.url + "/v1/events/stream", params=position.get("params"), headers=headers,
                      timeout=httpx.Timeout(CALL_TIMEOUT_S, read=2.0)) as response:
        if response.status_code != 200:
            response.read()
            assert 400 <= response.status_code < 500, (position, response.status_code, response.text[:500])
            _error_shape(response)
            return
        chunks = response.iter_raw()
        assert next(chunks).startswith(b": connected"), position
        try:
            extra = next(chunks, b"")  # an event would be fine; the end of the stream is not
        except httpx.ReadTimeout:
            return  # open and quiet: what it should be
        except httpx.RemoteProtocolError as exc:
            pytest.fail(f"the stream was cut off ({exc}); server log:\n"
                        + (api_server.data_dir / "server.log").read_text(errors="replace")[-2000:])
        assert extra, f"the stream ended by itself: {position}"


# --------------------------------------------------------------------------- hand-made bodies
VALID = {  # a body each route takes (the task and loop task need not exist: the body is refused first)
    "/v1/messages": {"content": "hello"},
    "/v1/tasks/task_nope/answer": {"approve": True},
    "/v1/loops": {"request": "every day at 9 remind me to stretch"},
    "/v1/loops/loop_nope": {"schedule": "every day at 10"},  # PATCH
    "/v1/sessions": {"title": "fuzz"},
    "/v1/chat/completions": {"model": "flora", "messages": [{"role": "user", "content": "hello"}]},
}
POST_ROUTES = list(VALID)
ACCEPTED = {  # not malformed for that route, by design
    ("/v1/sessions", "json null"),  # the session body is optional: null or nothing is no body
    ("/v1/sessions", "empty body"),
    ("/v1/chat/completions", "unknown field"),  # OpenAI clients send temperature, top_p...: accepted, unused
}
TEXT_FIELD = {"/v1/messages": "content", "/v1/tasks/task_nope/answer": "content", "/v1/loops": "request",
              "/v1/loops/loop_nope": "schedule", "/v1/sessions": "title", "/v1/chat/completions": "messages"}
STREAMS = {"/v1/messages", "/v1/chat/completions"}


def _from_valid(route: str, name: str) -> bytes:
    """The route's valid body, broken one way: an unknown field, or a lone surrogate (valid JSON,
    ``"\\ud800"``, but no Unicode text) in its text, answered whole or streamed."""
    body = json.loads(json.dumps(VALID[route]))
    if name == "unknown field":
        body["no_such_field"] = 1
        return json.dumps(body).encode()
    if TEXT_FIELD[route] == "messages":
        body["messages"][0]["content"] = "hello \ud800"
    else:
        body[TEXT_FIELD[route]] = f"{body.get(TEXT_FIELD[route], 'hello')} \ud800"
    if name.endswith("streamed") and route in STREAMS:
        body["stream"] = True
    return json.dumps(body).encode()  # ensure_ascii: the surrogate goes out as the escape "\\ud800"
TOO_BIG = 1024 * 1024 + 1


def _method(route: str) -> str:
    return "PATCH" if route == "/v1/loops/loop_nope" else "POST"


def _error_shape(response: httpx.Response) -> dict:
    body = response.json()
    assert set(body) == {"error"}, body
    assert isinstance(body["error"].get("type"), str) and body["error"]["type"], body
    assert isinstance(body["error"].get("message"), str) and body["error"]["message"], body
    return body["error"]


def _raw_request(url: str, head: str, body: bytes, *, half_close: bool = False) -> tuple[int | None, str, bytes]:
    """One hand-written HTTP/1.1 request (``head`` without the blank line); ``(status, content
    type, body)`` of the answer, status None when the server closed without one."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    answer = b"".join(chunks)
    if not answer:
        return None, "", b""
    head_part, _, rest = answer.partition(b"\r\n\r\n")
    lines = head_part.decode("latin-1").split("\r\n")
    fields = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
    kind = next((v.strip() for k, v in fields.items() if k.lower() == "content-type"), "")
    return int(lines[0].split(" ", 2)[1]), kind, rest


def _server_errors(server) -> int:
    """5xx answers the server has counted so far (``/metrics``)."""
    text = httpx.get(server.url + "/metrics", headers={"Authorization": f"Bearer {server.key}"}, timeout=10).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("flora_http_requests_total{") and 'status="5' in line)


MALFORMED = [  # (name, body bytes, content type, the status every route must answer; None: any 4xx)
    ("not json", b"{this is not json", "application/json", 400),
    ("truncated json", b'{"content": "hel', "application/json", 400),
    ("empty body", b"", "application/json", None),
    ("json array", b'["hello"]', "application/json", 422),
    ("json string", b'"hello"', "application/json", 422),
    ("json null", b"null", "application/json", None),
    ("wrong types", json.dumps({"content": 5, "request": [], "title": {}, "schedule": 1, "parameters": "x",
                                "approve": "maybe", "model": 3, "messages": "hi", "stream": "yes"}).encode(),
     "application/json", 422),
    ("unknown field", None, "application/json", 422),  # the route's valid body plus one unknown field
    ("deep nesting", b'{"parameters": ' + b"[" * 5000 + b"]" * 5000 + b"}", "application/json", None),
    ("invalid utf-8", b'{"content": "\xff\xfe"}', "application/json", None),
    ("lone surrogate", None, "application/json", None),  # "\\ud800" in the route's text: not Unicode text
    ("lone surrogate, streamed", None, "application/json", None),
    ("form body", b"content=hello", "application/x-www-form-urlencoded", None),
    ("too large", b'{"content": "' + b"x" * TOO_BIG + b'"}', "application/json", 413),
]


@pytest.mark.parametrize("route", POST_ROUTES)
def test_malformed_bodies(api_server, route):
    method = _method(route)
    headers = {"X-Flora-User": FUZZ_USER}
    errors_before = _server_errors(api_server)
    with api_server.client(timeout=CALL_TIMEOUT_S) as client:
        for name, body, content_type, expected in MALFORMED:
            if (route, name) in ACCEPTED:
                continue
            if body is None:
                body = _from_valid(route, name)
            try:
                response = client.request(method, route, content=body,
                                          headers={**headers, "Content-Type": content_type})
            except httpx.RemoteProtocolError as exc:  # a 200 stream that a crash cut off
                pytest.fail(f"{route}, {name}: the answer was cut off ({exc}); server log:\n"
                            + (api_server.data_dir / "server.log").read_text(errors="replace")[-3000:])
            assert 400 <= response.status_code < 500, (route, name, response.status_code, response.text[:500])
            if expected is not None:
                assert response.status_code == expected, (route, name, response.status_code, response.text[:500])
            error = _error_shape(response)
            if name == "unknown field":
                assert error.get("field") == "no_such_field", (route, error)

        head = (f"{method} {route} HTTP/1.1\r\nHost: {urlsplit(api_server.url).netloc}\r\n"
                f"Authorization: Bearer {api_server.key}\r\nX-Flora-User: {FUZZ_USER}\r\n"
                f"Content-Type: application/json\r\n")
        hello = b'{"content": "hello"}'
        # a Content-Length over the limit: 413 before the body is read
        status, kind, answer = _raw_request(api_server.url, head + f"Content-Length: {TOO_BIG}\r\n", hello)
        assert status == 413 and json.loads(answer)["error"]["type"] == "too_large", (route, status, answer)
        # a Content-Length shorter than the body: the first bytes are the body, not valid JSON
        status, kind, answer = _raw_request(api_server.url, head + "Content-Length: 5\r\n", hello)
        assert status == 400 and json.loads(answer)["error"]["type"] == "invalid_json", (route, status, answer)
        # longer than the body, and the client stops sending: nothing to answer, nothing breaks
        status, kind, answer = _raw_request(api_server.url, head + "Content-Length: 100\r\n", hello,
                                            half_close=True)
        assert status is None or 400 <= status < 500, (route, status, answer)
        # not a number, negative, empty, two values: uvicorn refuses the request line itself, before
        # Flora sees it, so the answer is uvicorn's plain-text 400, not Flora's error shape
        for length in ("abc", "-1", "", "5, 6"):
            status, kind, answer = _raw_request(api_server.url, head + f"Content-Length: {length}\r\n", hello)
            assert status == 400, (route, length, status, answer)
            if kind.startswith("application/json"):
                _error_shape(httpx.Response(status, content=answer))

        # the server is still there and still works, and nothing above was a server error
        assert httpx.get(api_server.url + "/ready", timeout=10).status_code == 200
        reply = client.post("/v1/messages", json={"content": "hello"}, headers=headers)
        assert reply.status_code == 200, reply.text
        assert reply.json()["message_type"] == "chat_reply", reply.text
    log = (api_server.data_dir / "server.log").read_text(errors="replace")
    assert _server_errors(api_server) == errors_before, (route, log[-3000:])
