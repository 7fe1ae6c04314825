"""Helpers shared by the loop end-to-end tests: polling with deadlines, the broker seen
from outside (queue depths, raw publishes, dead letters, restarting the broker app) and a
Flora's notifications."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pika

from tests.loop_e2e.plugins import COUNT_FILE_ENV

URL = "amqp://guest:guest@127.0.0.1:5672/%2F"
REPO = Path(__file__).resolve().parents[2]
TENANT = "default"


def wait_until(predicate: Callable[[], Any], timeout: float, interval: float = 0.05) -> Any:
    """Poll ``predicate`` until it returns something true or ``timeout`` passes; return its
    last value (falsy on timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def wait_stable(read: Callable[[], Any], *, settle_s: float, timeout: float, interval: float = 0.05) -> Any:
    """Poll ``read`` until its value has not changed for ``settle_s``; return that value."""
    deadline = time.monotonic() + timeout
    value, since = read(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(interval)
        now_value = read()
        if now_value != value:
            value, since = now_value, time.monotonic()
        elif time.monotonic() - since >= settle_s:
            break
    return value


# -- the broker ---------------------------------------------------------------------------

def broker_reachable() -> str | None:
    """None when RabbitMQ answers at URL, else why not."""
    try:
        pika.BlockingConnection(pika.URLParameters(URL)).close()
    except Exception as exc:  # any failure to connect is the reason to report
        return repr(exc)
    return None


def _channel_call(fn: Callable[[Any], Any]) -> Any:
    connection = pika.BlockingConnection(pika.URLParameters(URL))
    try:
        return fn(connection.channel())
    finally:
        if connection.is_open:
            connection.close()


def message_count(queue: str) -> int:
    """Messages ready in ``queue`` (passive declare: the queue must exist)."""
    return _channel_call(lambda ch: ch.queue_declare(queue, passive=True).method.message_count)


def queue_depths(queue: str) -> tuple[int, int]:
    """(ready messages, consumers) of ``queue``."""
    method = _channel_call(lambda ch: ch.queue_declare(queue, passive=True).method)
    return method.message_count, method.consumer_count


def delete_queues(*queues: str) -> None:
    def delete(channel):
        for name in queues:
            channel.queue_delete(name)

    _channel_call(delete)


def publish_raw(queue: str, body: bytes, message_id: str | None = None) -> None:
    """One persistent message, confirmed by the broker."""
    def publish(channel):
        channel.confirm_delivery()
        channel.basic_publish("", queue, body, pika.BasicProperties(
            delivery_mode=2, content_type="application/json", message_id=message_id), mandatory=True)

    _channel_call(publish)


def take_all(queue: str) -> list[tuple[bytes, Any]]:
    """Remove and return every message in ``queue`` as (body, properties)."""
    def take(channel):
        taken = []
        while True:
            method, properties, body = channel.basic_get(queue, auto_ack=True)
            if method is None:
                return taken
            taken.append((body, properties))

    return _channel_call(take)


def publish_from_another_program(queue: str, loop_task_id: str, *options: str) -> None:
    """Publish a trigger the way an outside program would: ``examples/publish_trigger.py`` in
    its own process (pika only: persistent, publisher confirms, Flora's queue arguments)."""
    args = [sys.executable, "examples/publish_trigger.py", loop_task_id, "--url", URL, "--queue", queue, *options]
    done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, f"the publishing program failed:\n{done.stdout}\n{done.stderr}"


# -- restarting the broker app -----------------------------------------------------------

def rabbitmqctl_unusable() -> str | None:
    """None when this process may stop and start the broker app, else why not."""
    if shutil.which("rabbitmqctl") is None:
        return "rabbitmqctl is not on PATH"
    try:
        done = subprocess.run(["rabbitmqctl", "-q", "status"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"rabbitmqctl cannot run here: {exc!r}"
    if done.returncode != 0:
        return f"rabbitmqctl status failed (not permitted?): {(done.stderr or done.stdout).strip()[:300]}"
    return None


def rabbitmqctl(*args: str, timeout: float = 60) -> None:
    done = subprocess.run(["rabbitmqctl", *args], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"rabbitmqctl {' '.join(args)} failed: {done.stderr or done.stdout}"


def start_broker_app() -> None:
    """Start the broker app (idempotent) and wait until it serves connections again."""
    rabbitmqctl("start_app")
    rabbitmqctl("await_startup")
    assert wait_until(lambda: broker_reachable() is None, timeout=30, interval=0.2), \
        "RabbitMQ did not accept connections after start_app"


# -- a running Flora -------------------------------------------------------------------

class Inbox:
    """A user's notifications, gathered across polls (a fetch marks them read)."""

    def __init__(self, flora, user_id: str):
        self._flora = flora
        self.user_id = user_id
        self.notes: list[dict] = []

    def poll(self) -> list[dict]:
        self.notes += self._flora.notifications(self.user_id, timeout=10)
        return self.notes

    def wait_for(self, predicate: Callable[[dict], bool], timeout: float) -> list[dict]:
        """Poll until a notification satisfies ``predicate``; all matching ones so far."""
        wait_until(lambda: any(predicate(n) for n in self.poll()), timeout=timeout, interval=0.1)
        return [n for n in self.notes if predicate(n)]


def environ_with(**values: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(values)
    return env


@contextlib.contextmanager
def running_flora(config: dict, count_file: Path):
    """Flora started with ``config`` and a Runtime beside it in this process; the run-count
    file's path is in the environment every actor process inherits. Everything is stopped
    and the environment restored afterwards."""
    import main
    from common.runtime import Runtime

    previous = os.environ.get(COUNT_FILE_ENV)
    os.environ[COUNT_FILE_ENV] = str(count_file)
    flora = runtime = None
    try:
        flora = main.start_flora(config)
        runtime = Runtime.from_config(flora.config)
        yield flora, runtime
    finally:
        if flora is not None:
            flora.shutdown()
        if runtime is not None:
            runtime.close()
        if previous is None:
            os.environ.pop(COUNT_FILE_ENV, None)
        else:
            os.environ[COUNT_FILE_ENV] = previous
