"""SIGTERM and SIGINT end every Flora process within 10 s, and a second signal forces it.

Each kind of process is started for real (``main.py`` interactive, a Flora with a task in
flight, ``main.py --worker``, the model host), signalled, and timed until no process of its
family is left (the family: every process carrying the environment mark the test started it
with, which the Thespian admin and the actors it forks share; see tests/support/flora_process.py).
The model is the deterministic fake wherever a model is not the point.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from common.tasks.sqlite_store import SQLiteTaskStore
from agents.actor_system import free_port
from tests.actors.test_restart_recovery import config as fake_config
from tests.api.conftest import REPO, start_server, stop_server
from tests.support.flora_process import end_marked, marked_env, marked_pids, wait_gone

pytestmark = pytest.mark.timeout(240)

STOP_WITHIN_S = 10.0


def read_line_until(process: subprocess.Popen, wanted: str, within_s: float = 90) -> None:
    deadline = time.monotonic() + within_s
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if wanted in line:
            return
    raise AssertionError(f"no line with {wanted!r}; output: {''.join(seen)[-2000:]}")


def wait_for(predicate, within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within_s} s: {what}")
        time.sleep(0.05)


def start(args: list[str], **popen) -> tuple[subprocess.Popen, str]:
    env, mark = marked_env({**os.environ, "PYTHONPATH": str(REPO)})
    process = subprocess.Popen([sys.executable, *args], cwd=REPO, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, **popen)
    return process, mark


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_interactive_flora_and_every_actor_process(tmp_path, sig):
    (tmp_path / "config.json").write_text(json.dumps(fake_config(tmp_path)))
    process, mark = start(["main.py", "--config", str(tmp_path / "config.json")], stdin=subprocess.PIPE)
    try:
        read_line_until(process, "Flora is ready")
        assert len(marked_pids(mark)) >= 5  # main, admin, logger, actors
        process.send_signal(sig)
        took = wait_gone(mark, STOP_WITHIN_S)
        assert process.wait(timeout=5) == 0
        print(f"{signal.Signals(sig).name}: every process gone after {took:.2f} s")
    finally:
        end_marked(mark)


def run_with_a_task_in_flight(tmp_path: Path) -> tuple[subprocess.Popen, str, Path]:
    pid_file = tmp_path / "job.pid"
    (tmp_path / "config.json").write_text(json.dumps(fake_config(tmp_path)))
    process, mark = start(["-m", "tests.support.flora_process", str(tmp_path / "config.json"), "stop_user",
                           "add numbers a=2", f"slow job seconds=120 pid_file={pid_file}"])
    read_line_until(process, "READY")
    wait_for(pid_file.exists, 30, "the slow job runs")
    return process, mark, pid_file


def test_sigterm_during_a_running_task_stops_everything_fails_the_task_and_keeps_the_paused_one(tmp_path):
    process, mark, pid_file = run_with_a_task_in_flight(tmp_path)
    try:
        process.send_signal(signal.SIGTERM)
        took = wait_gone(mark, STOP_WITHIN_S)
        print(f"SIGTERM with an ExecutionActor blocked in a capability: every process gone after {took:.2f} s")
    finally:
        end_marked(mark)
    store = SQLiteTaskStore(tmp_path / "flora.db")
    try:
        tasks = {t.capability: t for t in store.list_tasks("default", user_id="stop_user")}
        assert tasks["add_numbers"].state == "waiting_parameters"  # paused: resumable after the restart
        slow = tasks["slow_job"]
        assert slow.state == "failed" and "did not finish" in slow.error
        last = store.events("default", task_id=slow.task_id)[-1]
        assert (last.event_type, last.data["reason"]) == ("TASK_FAILED", "interrupted")
        assert [n.task_id for n in store.notifications("default", "stop_user")] == [slow.task_id]
    finally:
        store.close()


def test_a_second_signal_forces_the_stop(tmp_path):
    process, mark, _ = run_with_a_task_in_flight(tmp_path)
    try:
        process.send_signal(signal.SIGTERM)
        read_line_until(process, "send it again to force")  # two signals at once would merge into one
        process.send_signal(signal.SIGTERM)
        took = wait_gone(mark, STOP_WITHIN_S)
        print(f"two SIGTERMs: every process gone after {took:.2f} s")
    finally:
        end_marked(mark)


def test_sigterm_stops_a_worker_node_and_its_actor_processes(tmp_path, redis_prefix):
    from tests.actors.test_nodes import node_config

    leader = free_port()
    front = start_server(tmp_path / "front", extra=node_config(redis_prefix, "F", leader, leader, execution=False))
    try:
        worker_config = tmp_path / "worker.json"
        worker_config.write_text(json.dumps(node_config(redis_prefix, "W", free_port(), leader)))
        process, mark = start(["main.py", "--worker", "--config", str(worker_config)])
        try:
            read_line_until(process, "joined")
            assert len(marked_pids(mark)) >= 3  # the worker, its admin and logger (and placed ExecutionActors)
            process.send_signal(signal.SIGTERM)
            took = wait_gone(mark, STOP_WITHIN_S)
            assert process.wait(timeout=5) == 0
            print(f"worker: every process gone after {took:.2f} s")
        finally:
            end_marked(mark)
    finally:
        stop_server(front)


@pytest.mark.real_model
def test_sigterm_ends_the_model_host_within_seconds_even_while_it_generates(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (scripts/install_llm.sh)")
    from capabilities.llm.model_host import ModelHost
    from capabilities.llm.models import DEFAULT_UNDERSTANDING_MODEL, model_path

    # The smaller of the two models scripts/install.sh assembles: it starts fastest.
    model = model_path(DEFAULT_UNDERSTANDING_MODEL, REPO / "data")
    if not model.is_file():
        pytest.skip(f"{model} is not installed (scripts/install_llm.sh)")

    host = ModelHost(model, n_ctx=512, n_threads=1, supervise=False).start()  # not started again here
    try:
        url = host.base_url + "/completions"
        generating = threading.Event()

        def generate() -> None:
            try:
                with httpx.stream("POST", url, json={"prompt": "Once upon a time", "max_tokens": 400,
                                                     "stream": True}, timeout=120) as response:
                    for _ in response.iter_lines():
                        generating.set()  # tokens are coming: llama.cpp is busy
            except httpx.HTTPError:
                pass  # the host goes away mid-answer: expected

        threading.Thread(target=generate, daemon=True).start()
        assert generating.wait(60), "the model host did not start generating"
        started = time.monotonic()
        os.kill(host.pid, signal.SIGTERM)
        wait_for(lambda: not host.running, STOP_WITHIN_S, "the model host exits")
        print(f"model host: gone {time.monotonic() - started:.2f} s after SIGTERM")
    finally:
        host.stop()


def test_sigterm_stops_the_http_api_node_with_an_event_stream_open(tmp_path):
    server = start_server(tmp_path / "api")
    try:
        opened = threading.Event()

        def follow() -> None:  # an open event stream must not hold the stop up
            try:
                with httpx.stream("GET", server.url + "/v1/events/stream", timeout=60,
                                  headers={"Authorization": f"Bearer {server.key}"}) as response:
                    opened.set()
                    for _ in response.iter_bytes():
                        pass
            except httpx.HTTPError:
                pass  # the server went away: expected

        threading.Thread(target=follow, daemon=True).start()
        assert opened.wait(30), "the event stream did not open"
        server.process.send_signal(signal.SIGTERM)
        took = wait_gone(server.mark, STOP_WITHIN_S)
        assert server.process.wait(timeout=5) == 0
        print(f"--api with an open event stream: every process gone after {took:.2f} s")
    finally:
        stop_server(server)


@pytest.mark.parametrize("moment", ["admin forked", "actors up", "API listening"])
def test_sigterm_at_any_moment_of_the_http_nodes_start_stops_it(tmp_path, moment):
    """The start builds pydantic models, and pydantic turns an exception raised from a signal
    handler into one of its own or swallows it: the signal must still stop the node."""
    (tmp_path / "config.json").write_text(json.dumps(fake_config(tmp_path)))
    port = free_port()
    process, mark = start(["main.py", "--api", "--config", str(tmp_path / "config.json"), "--port", str(port)])
    try:
        if moment == "admin forked":
            wait_for(lambda: len(marked_pids(mark)) >= 2, 90, "the actor system starts")
        elif moment == "actors up":
            wait_for(lambda: len(marked_pids(mark)) >= 5, 90, "main, admin, logger and actors run")
        elif moment == "API listening":
            read_line_until(process, "Flora API on")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0, process.stdout.read()
        wait_gone(mark, STOP_WITHIN_S)
    finally:
        end_marked(mark)
