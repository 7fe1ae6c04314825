"""Many nodes, one poller, against the real Redis: of two nodes only the lease holder polls;
when the holder's process is killed with SIGKILL the other takes over within 15 s; a clean
stop hands the lease over at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis

from capabilities.channels.lease import PollerLease

REDIS_URL = "redis://127.0.0.1:6379/0"
REPO = Path(__file__).resolve().parents[2]
NODE = """
import sys, threading, time, redis
from capabilities.channels.lease import PollerLease
lease = PollerLease(redis.Redis.from_url(sys.argv[1], decode_responses=True), sys.argv[2], "node-a", ttl_s=3.0)
def poll(lost):
    print("POLLING", flush=True)
    lost.wait()
lease.run_while_held(poll, threading.Event())
"""


@pytest.fixture
def client():
    try:
        connection = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        connection.ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis at {REDIS_URL} is needed for this test: {exc}")
    yield connection
    connection.close()


@pytest.fixture
def key(client):
    name = f"flora-test-{uuid.uuid4().hex[:8]}:poller:tg"
    yield name
    client.delete(name)


def node_b(client, key, polling: list, stop: threading.Event) -> threading.Thread:
    lease = PollerLease(client, key, "node-b", ttl_s=3.0)

    def poll(lost: threading.Event) -> None:
        polling.append(time.monotonic())
        lost.wait()

    thread = threading.Thread(target=lease.run_while_held, args=(poll, stop), daemon=True)
    thread.start()
    return thread


def test_only_the_holder_polls_and_another_node_takes_over_within_15_s_when_it_is_killed(client, key):
    a = subprocess.Popen([sys.executable, "-c", NODE, REDIS_URL, key], cwd=REPO, stdout=subprocess.PIPE, text=True)
    polling_b: list[float] = []
    stop = threading.Event()
    try:
        assert a.stdout.readline().strip() == "POLLING"
        b = node_b(client, key, polling_b, stop)
        time.sleep(4.0)  # longer than the lease: node A renews it, node B never polls
        assert polling_b == [] and client.get(key) == "node-a"
        killed_at = time.monotonic()
        os.kill(a.pid, signal.SIGKILL)
        deadline = killed_at + 15
        while not polling_b:
            assert time.monotonic() < deadline, "node B never took over"
            time.sleep(0.05)
        assert polling_b[0] - killed_at < 15 and client.get(key) == "node-b"
    finally:
        stop.set()
        if a.poll() is None:
            a.kill()
        a.wait()
    b.join(timeout=5)
    assert client.get(key) is None  # node B stopped cleanly: the lease is free at once


def test_a_holder_that_cannot_renew_stops_polling(client, key):
    lease = PollerLease(client, key, "node-a", ttl_s=1.5)
    stopped = threading.Event()
    stop = threading.Event()

    def poll(lost: threading.Event) -> None:
        client.set(key, "node-b")  # another node holds it now (the holder was paused past its lease)
        lost.wait()
        stopped.set()

    thread = threading.Thread(target=lease.run_while_held, args=(poll, stop), daemon=True)
    thread.start()
    try:
        assert stopped.wait(5), "the poller went on without the lease"
    finally:
        stop.set()
        thread.join(timeout=5)
    assert client.get(key) == "node-b"  # a release never frees another holder's lease
