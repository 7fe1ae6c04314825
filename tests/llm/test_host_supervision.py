"""A model host that dies is started again: its in-flight request is answered after the
restart, it says ``down`` with the reason meanwhile, and counts its restarts.

The host runs tests/llm/fake_host_server.py (a small OpenAI-style server) in place of the
llama.cpp server, through the same ModelHost and supervisor; tests/smoke/test_real_model.py
does it with the packaged model.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from capabilities.llm import LLMUnavailable, ModelHost, OpenAICompatibleLLM
from capabilities.llm.host_supervisor import RestartBackoff, describe_exit
from capabilities.llm.model_host import read_host_states

FAKE = [sys.executable, str(Path(__file__).with_name("fake_host_server.py"))]
WAIT_S = 30.0


def wait_for(condition, what: str, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def host_factory(tmp_path):
    hosts: list[ModelHost] = []

    def make(**kwargs) -> ModelHost:
        model = tmp_path / "fake.gguf"
        model.write_bytes(b"not a model")
        host = ModelHost(model, alias="fake", server=FAKE, state_file=tmp_path / "run" / "fake.json",
                         startup_timeout_s=20, poll_s=0.05, **kwargs)
        hosts.append(host)
        return host.start()

    yield make
    for host in hosts:
        host.stop()


def test_the_backoff_doubles_up_to_its_bound_and_starts_over_after_a_long_life():
    backoff = RestartBackoff(initial_s=1, max_s=8, reset_after_s=60)
    assert [backoff.delay(lived_s=2) for _ in range(6)] == [1, 2, 4, 8, 8, 8]
    assert backoff.delay(lived_s=61) == 1  # it had been fine for a while: a fresh start
    assert backoff.delay(lived_s=0.5) == 2
    with pytest.raises(ValueError):
        RestartBackoff(initial_s=0)


def test_exits_are_described_by_signal_or_status():
    assert describe_exit(-signal.SIGSEGV) == "killed by SIGSEGV"
    assert describe_exit(-signal.SIGKILL) == "killed by SIGKILL"
    assert describe_exit(3) == "exited with status 3"


def test_a_request_in_flight_when_the_host_is_killed_is_answered_after_the_restart(host_factory, tmp_path, monkeypatch):
    hang = tmp_path / "hang"
    monkeypatch.setenv("FAKE_HOST_HANG_ONCE", str(hang))
    hang.write_text("")
    host = host_factory(backoff=RestartBackoff(initial_s=0.5, max_s=2))
    first_pid = host.pid
    llm = OpenAICompatibleLLM(host.base_url, model="fake", schema_mode="json_object", timeout_s=20,
                              max_retries=0, restart_wait_s=WAIT_S)
    answer: dict = {}

    def ask() -> None:
        try:
            answer["reply"] = llm.complete([{"role": "user", "content": "hello"}])
        except Exception as exc:  # reported by the assertion below
            answer["error"] = exc

    asking = threading.Thread(target=ask)
    asking.start()
    seen = Path(str(hang) + ".seen")
    wait_for(seen.exists, "the request to reach the host")
    os.kill(first_pid, signal.SIGKILL)  # mid-request
    down = wait_for(lambda: (s := host.state())["state"] == "down" and s, "the host to be seen down")
    asking.join(WAIT_S)
    assert not asking.is_alive()
    assert "error" not in answer, answer
    assert answer["reply"].text == f"answered by {host.pid}" and host.pid != first_pid
    assert down["reason"].startswith("killed by SIGKILL")
    state = wait_for(lambda: (s := host.state())["state"] == "loaded" and s, "the supervisor to see it back")
    assert state["restarts"] == 1 and "reason" not in state
    on_disk = read_host_states(tmp_path / "run")  # what --status and /metrics read
    assert [(s["model"], s["state"], s["restarts"]) for s in on_disk] == [("fake", "loaded", 1)]
    llm.close()


def test_a_host_that_cannot_come_back_stays_down_with_the_reason_then_returns(host_factory, tmp_path, monkeypatch):
    refuse = tmp_path / "refuse"
    monkeypatch.setenv("FAKE_HOST_EXIT_ON_START", str(refuse))
    host = host_factory(backoff=RestartBackoff(initial_s=0.05, max_s=0.2))
    refuse.write_text("")
    os.kill(host.pid, signal.SIGKILL)
    failed = wait_for(lambda: "starting it again failed" in (host.state().get("reason") or "") and host.state(),
                      "a failed restart to be reported")
    assert failed["state"] == "down" and "exited with status 3" in failed["reason"]
    assert "refusing to start" in failed["reason"]  # the last line of its log
    on_disk = read_host_states(tmp_path / "run")
    assert on_disk and on_disk[0]["state"] == "down" and on_disk[0]["pid"] == os.getpid()
    llm = OpenAICompatibleLLM(host.base_url if host.running else f"http://127.0.0.1:{host._port}/v1", model="fake",
                              schema_mode="json_object", timeout_s=5, max_retries=0, restart_wait_s=0.3)
    with pytest.raises(LLMUnavailable, match="did not answer again within"):
        llm.complete([{"role": "user", "content": "hello"}])
    refuse.unlink()
    wait_for(lambda: host.state()["state"] == "loaded", "the host to be back")
    assert host.restarts == 1
    assert llm.complete([{"role": "user", "content": "hello"}]).text == f"answered by {host.pid}"
    llm.close()


def test_a_stopped_host_is_not_started_again(host_factory):
    host = host_factory(backoff=RestartBackoff(initial_s=0.05, max_s=0.05))
    host.stop()
    assert not host.supervised  # its watcher ended with the stop: nothing can start it again
    assert not host.running and host.state()["state"] == "stopped" and host.restarts == 0


def test_a_stream_cut_by_the_hosts_death_ends_in_llm_unavailable(host_factory, tmp_path, monkeypatch):
    import http.server
    import socket

    # a server that starts an event stream and then drops the connection, as a dying host does
    class Cut(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b'data: {"choices": [{"delta": {"content": "half"}}]}\n\n'
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Cut)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        llm = OpenAICompatibleLLM(f"http://127.0.0.1:{server.server_address[1]}/v1", model="x", max_retries=0,
                                  restart_wait_s=1)
        seen = []
        with pytest.raises(LLMUnavailable, match="went away mid-stream"):
            for piece in llm.stream([{"role": "user", "content": "hi"}]):
                seen.append(piece)
        assert seen == ["half"]
        llm.close()
    finally:
        server.shutdown()
        server.server_close()
