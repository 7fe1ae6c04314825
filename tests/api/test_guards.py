"""The API's guards on a real running server (``main.py --api`` on a loopback port): a Host it
does not answer to gets 400 (DNS rebinding), a request head sent too slowly is cut off with
408 (slowloris), an oversized one gets 431, and the server keeps serving others throughout."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from api.app import host_name
from tests.api.conftest import KEY, PINNED_KEY, start_server, stop_server

HEADER_TIMEOUT_S = 1.0


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    """A server with a short header timeout and one extra name it answers to; its Dify is on
    an internal address nobody opened (a call to it is refused at once)."""
    server = start_server(tmp_path_factory.mktemp("api-guards"), extra={
        "http": {"api_keys": {KEY: "team-a", PINNED_KEY: {"tenant": "team-a", "user": "alice"}},
                 "allowed_hosts": ["flora.internal"], "header_timeout_s": HEADER_TIMEOUT_S},
        "capabilities": {"plugin_modules": ["tests.support.sample_plugins"],
                         "settings": {"dify_workflow": {"base_url": "http://127.0.0.1:9/v1"}}}})
    yield server
    stop_server(server)


def port_of(server) -> int:
    return int(server.url.rsplit(":", 1)[1])


def test_a_foreign_host_header_gets_400(api_server):
    for host in ("evil.example", "evil.example:80", f"attacker.test:{port_of(api_server)}", "127.0.0.1.evil.example",
                 "localhost.evil.example", ""):
        response = httpx.get(api_server.url + "/ready", headers={"Host": host})
        assert response.status_code == 400, host
        assert response.json()["error"]["type"] == "bad_host"
    with api_server.client(headers={"Host": "evil.example"}) as client:  # a valid key does not help
        assert client.post("/v1/messages", json={"content": "hello"}).status_code == 400


def test_loopback_names_are_answered(api_server):
    port = port_of(api_server)
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}", "LOCALHOST"):
        assert httpx.get(api_server.url + "/ready", headers={"Host": host}).status_code == 200, host


def test_a_configured_name_is_answered_and_others_still_are_not(guarded):
    assert httpx.get(guarded.url + "/ready", headers={"Host": "flora.internal:8000"}).status_code == 200
    assert httpx.get(guarded.url + "/ready", headers={"Host": "other.internal"}).status_code == 400


def raw_connection(server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port_of(server)), timeout=10)


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_client_sending_its_headers_slowly_is_cut_off(guarded):
    started = time.monotonic()
    with raw_connection(guarded) as sock:
        sock.sendall(b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        closed = False
        for n in range(40):  # one header every 0.1 s, forever: the head never completes
            try:
                sock.sendall(b"X-Slow-%d: a\r\n" % n)
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.1)
            if time.monotonic() - started > HEADER_TIMEOUT_S + 1.5:
                break
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b'"type": "timeout"' in answer
    assert time.monotonic() - started < HEADER_TIMEOUT_S + 3, "the slow client was not cut off in time"
    assert closed or answer  # the server ended the connection, not the test
    assert httpx.get(guarded.url + "/ready").status_code == 200


def test_a_client_that_connects_and_says_nothing_is_closed(guarded):
    started = time.monotonic()
    with raw_connection(guarded) as sock:
        answer = read_all(sock)
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408 ")
    assert time.monotonic() - started < HEADER_TIMEOUT_S + 3


def test_a_kept_alive_connection_is_timed_afresh_for_each_request(guarded):
    with raw_connection(guarded) as sock:
        sock.sendall(b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = sock.recv(65536)
        sock.sendall(b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the second head never completes
        answers = first + read_all(sock)
    assert answers.startswith(b"HTTP/1.1 200 ")
    assert answers.count(b"HTTP/1.1 ") == 2 and b"HTTP/1.1 408 " in answers, answers[:400]


def test_a_prompt_request_is_not_affected(guarded):
    with raw_connection(guarded) as sock:
        sock.sendall(b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert read_all(sock).startswith(b"HTTP/1.1 200 ")


def test_a_20_kb_header_gets_431(api_server):
    response = httpx.get(api_server.url + "/ready", headers={"X-Padding": "a" * 20_000})
    assert response.status_code == 431
    assert response.json()["error"]["type"] == "headers_too_large"
    many = {f"X-H{i}": "b" * 100 for i in range(200)}  # 20 KB in many small headers
    assert httpx.get(api_server.url + "/ready", headers=many).status_code == 431
    assert httpx.get(api_server.url + "/ready", headers={"X-Padding": "a" * 8_000}).status_code == 200
    assert httpx.get(api_server.url + "/ready").status_code == 200


@pytest.mark.parametrize("header, name", [("localhost:8000", "localhost"), ("[::1]:8000", "::1"), ("[::1]", "::1"),
                                          ("Example.COM.", "example.com"), ("a.b:c", "a.b:c"), ("", "")])
def test_the_host_is_read_without_its_port(header, name):
    assert host_name(header) == name


def test_an_api_key_given_in_the_conversation_is_kept_masked_in_the_session(guarded):
    secret = "app-Zq81LmNoPq7c9f2XY"
    with guarded.client() as client:
        session_id = client.post("/v1/sessions", params={"user_id": "keeper"}, json={}).json()["session_id"]
        paused = client.post("/v1/messages", json={"content": "please run the dify workflow", "user_id": "keeper",
                                                   "session_id": session_id}).json()
        assert paused["message_type"] == "task_paused" and paused["missing_parameters"][0]["name"] == "api_key"
        answered = client.post("/v1/messages", json={"content": secret, "user_id": "keeper",
                                                     "session_id": session_id}).json()
        # the task got the real key: it went on to call Dify (refused here: an internal address)
        assert answered["message_type"] == "task_error" and answered["task_id"] == paused["task_id"], answered
        assert "dify_workflow.allow_private" in answered["message"]
        session = client.get(f"/v1/sessions/{session_id}", params={"user_id": "keeper"})
    kept = session.text
    assert secret not in kept and "app-…f2XY" in kept
