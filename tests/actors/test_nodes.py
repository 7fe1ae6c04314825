"""Several nodes on loopback, each ``python main.py --api`` (or ``--worker``) in its own process
with its own Thespian admin port, joined in one convention and sharing the real Redis.

- a task paused on node A is resumed by the user's answer arriving at node B;
- a node killed with -9 drops out of the node registry within a few heartbeats;
- a front node that takes no ExecutionActors has them placed on a worker node, holds work
  until one joins, and fails clearly the task a killed worker node was running;
- a second process cannot take a live node's name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import httpx
import pytest

from common.cluster import RedisCluster
from agents.actor_system import free_port
from tests.actors.test_restart_recovery import kill_9
from tests.api.conftest import REPO, start_server, stop_server
from tests.conftest import REDIS_URL
from tests.support.flora_process import end_marked, marked_env

pytestmark = pytest.mark.timeout(600)

BEAT_S = 0.5
SLOW_S = 120  # the most a step may take on a loaded machine before the test gives up on it
# the address every node's actors listen on and the leader is joined at (actors.bind_address):
# loopback by default; FLORA_TEST_NODE_ADDRESS runs the same tests on another address of this host
NODE_ADDRESS = os.environ.get("FLORA_TEST_NODE_ADDRESS", "127.0.0.1")


@pytest.fixture
def prefix(redis_prefix):
    return redis_prefix


def node_config(prefix: str, node: str, admin_port: int, leader_port: int, *, execution: bool = True) -> dict:
    return {
        "store": {"backend": "redis"},
        "redis": {"url": REDIS_URL},
        "loops": {"tick_s": 0.2, "timezone": "Asia/Shanghai", "registry": "redis", "redis_prefix": prefix},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 20, "execution_pool_size": 2,
                   "node": node, "admin_port": admin_port, "convention_address": f"{NODE_ADDRESS}:{leader_port}",
                   "bind_address": NODE_ADDRESS,
                   "heartbeat_interval_s": BEAT_S, "execution": execution},
    }


def say(server, user: str, content: str, timeout: float = 30) -> dict:
    with server.client(timeout=timeout) as client:
        response = client.post("/v1/messages", json={"user_id": user, "content": content})
    assert response.status_code == 200, response.text
    return response.json()


def live_nodes(prefix: str) -> set[str]:
    cluster = RedisCluster(REDIS_URL, prefix=prefix)
    try:
        return cluster.live_names()
    finally:
        cluster.close()


def wait_for(predicate, within_s: float, what: str):
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {within_s} s: {what}")


def test_a_task_paused_on_node_a_is_resumed_by_the_answer_arriving_at_node_b(tmp_path, prefix):
    leader = free_port()
    a = start_server(tmp_path / "a", extra=node_config(prefix, "A", leader, leader))
    try:
        b = start_server(tmp_path / "b", extra=node_config(prefix, "B", free_port(), leader))
        try:
            assert live_nodes(prefix) == {"A", "B"}
            status = subprocess.run([sys.executable, "main.py", "--status", "--json", "--config",
                                     str(tmp_path / "a" / "config.json")], cwd=REPO, capture_output=True, text=True,
                                    timeout=60)
            nodes = {n["name"]: n for n in json.loads(status.stdout)["nodes"]}
            assert set(nodes) == {"A", "B"} and nodes["B"]["agents"] == 1 and nodes["A"]["role"] == "node"
            paused = say(a, "ann", "add numbers a=2")
            assert paused["message_type"] == "task_paused"
            with b.client() as client:
                done = client.post(f"/v1/tasks/{paused['task_id']}/answer", params={"user_id": "ann"},
                                   json={"content": "3"}).json()
                assert done["message_type"] == "task_completed" and done["result"] == {"sum": 5}
                task = client.get(f"/v1/tasks/{paused['task_id']}", params={"user_id": "ann"}).json()
            assert task["meta"]["node"] == "B"  # the resumed run happened on B
            with a.client() as client:  # A sees the same task finished: one store
                assert client.get(f"/v1/tasks/{paused['task_id']}",
                                  params={"user_id": "ann"}).json()["state"] == "completed"

            kill_9(str(tmp_path / "b" / "config.json"))
            wait_for(lambda: live_nodes(prefix) == {"A"}, 3 * BEAT_S + 3, "node B leaves the registry")
            assert say(a, "ann", "add numbers a=1 b=1")["result"] == {"sum": 2}  # A goes on serving
        finally:
            stop_server(b)
    finally:
        stop_server(a)


def test_execution_actors_are_placed_on_a_worker_node_and_a_killed_worker_fails_its_task_clearly(tmp_path, prefix):
    leader = free_port()
    # a worker that starts slowly (a loaded machine) must not turn the held work into a timeout:
    # the front waits up to SLOW_S for the reply, the test for each condition, never a fixed time
    config = node_config(prefix, "F", leader, leader, execution=False)
    config["actors"]["ask_timeout_s"] = SLOW_S
    front = start_server(tmp_path / "front", extra=config)
    worker = None
    try:
        early: dict = {}
        sender = threading.Thread(target=lambda: early.update(say(front, "bo", "add numbers a=2 b=5", SLOW_S + 10)))
        sender.start()  # no node takes ExecutionActors yet: the work waits
        time.sleep(1.0)
        assert not early

        worker_config = tmp_path / "worker.json"
        worker_config.write_text(json.dumps(node_config(prefix, "W", free_port(), leader)))
        env, worker_mark = marked_env()
        worker = subprocess.Popen([sys.executable, "main.py", "--worker", "--config", str(worker_config)], cwd=REPO,
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        sender.join(timeout=SLOW_S + 20)
        assert early.get("message_type") == "task_completed", early
        with front.client() as client:
            task = client.get(f"/v1/tasks/{early['task_id']}", params={"user_id": "bo"}).json()
        assert task["meta"]["node"] == "W"

        pid_file = tmp_path / "job.pid"
        running: dict = {}
        job = threading.Thread(target=lambda: running.update(
            say(front, "bo", f"slow job seconds={SLOW_S} pid_file={pid_file}", SLOW_S + 10)))
        job.start()
        wait_for(pid_file.exists, SLOW_S, "the slow job starts on the worker node")
        kill_9(str(worker_config))
        job.join(timeout=SLOW_S)
        assert running.get("message_type") == "task_error", running
        assert running["task_id"] and ("W" in running["message"] or "exited" in running["message"])
        with front.client() as client:
            assert client.get(f"/v1/tasks/{running['task_id']}",
                              params={"user_id": "bo"}).json()["state"] == "failed"
    finally:
        if worker is not None:
            end_marked(worker_mark)  # the worker, its admin and its actors, whatever the outcome
            worker.wait()
        stop_server(front)


def test_a_second_process_cannot_take_a_live_nodes_name(tmp_path, prefix):
    leader = free_port()
    a = start_server(tmp_path / "a", extra=node_config(prefix, "A", leader, leader))
    try:
        clash = tmp_path / "clash.json"
        clash.write_text(json.dumps(node_config(prefix, "A", free_port(), leader)))
        done = subprocess.run([sys.executable, "main.py", "--test", "--config", str(clash)], cwd=REPO,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2
        assert "node name 'A' is already in use" in done.stderr
        assert httpx.get(a.url + "/ready", timeout=5).status_code == 200
    finally:
        stop_server(a)
