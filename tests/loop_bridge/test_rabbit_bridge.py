"""The trigger bridge against the real RabbitMQ on 127.0.0.1:5672.

Each test gets its own queue (and dead-letter queue), deleted afterwards. A broker that
cannot be reached fails these tests: they are the proof that triggers run exactly once.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pika
import pytest

from capabilities.loop.rabbit_bridge import (
    Outcome, PublishError, RabbitBridge, Trigger, TriggerError, TriggerPublisher,
    dead_letter_queue_name, parse_trigger)

URL = "amqp://guest:guest@127.0.0.1:5672/%2F"
REPO = Path(__file__).resolve().parents[2]
WAIT_S = 5.0


def wait_until(predicate, timeout: float = WAIT_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


class DedupeStore:
    """Stands in for Flora's store: records a run key once, says DUPLICATE after that."""

    def __init__(self, recorded=()):
        self.recorded = dict.fromkeys(recorded, 1)
        self.calls: list[Trigger] = []
        self.outcomes: list[Outcome] = []
        self._lock = threading.Lock()

    def handle(self, trigger: Trigger) -> Outcome:
        with self._lock:
            self.calls.append(trigger)
            outcome = Outcome.DUPLICATE if trigger.run_key in self.recorded else Outcome.RECORDED
            self.recorded[trigger.run_key] = self.recorded.get(trigger.run_key, 0) + 1
            self.outcomes.append(outcome)
            return outcome


@pytest.fixture(scope="module")
def broker():
    try:
        pika.BlockingConnection(pika.URLParameters(URL)).close()
    except Exception as exc:  # any failure to connect is the message we want to show
        pytest.fail(f"RabbitMQ is not reachable at 127.0.0.1:5672 ({exc!r}); "
                    "the loop trigger tests need the real broker running")
    return URL


@pytest.fixture
def queue(broker):
    name = f"flora.test.{uuid.uuid4().hex[:12]}.queue"
    yield name
    connection = pika.BlockingConnection(pika.URLParameters(URL))
    channel = connection.channel()
    channel.queue_delete(name)
    channel.queue_delete(dead_letter_queue_name(name))
    connection.close()


@pytest.fixture
def publisher(queue):
    with TriggerPublisher(URL, queue) as p:
        yield p


def message_count(queue: str) -> int:
    connection = pika.BlockingConnection(pika.URLParameters(URL))
    try:
        return connection.channel().queue_declare(queue, passive=True).method.message_count
    finally:
        connection.close()


def publish_raw(queue: str, body: bytes, message_id: str | None = None) -> None:
    connection = pika.BlockingConnection(pika.URLParameters(URL))
    channel = connection.channel()
    channel.confirm_delivery()
    channel.basic_publish("", queue, body, pika.BasicProperties(delivery_mode=2, message_id=message_id),
                          mandatory=True)
    connection.close()


def close_connection_from_broker(connection_name: str) -> None:
    """Ask the broker to close one named connection (close_all_connections would also cut
    whatever else is using this broker)."""
    if shutil.which("rabbitmqctl") is None:
        pytest.fail("rabbitmqctl is not installed; cannot close a connection from the broker side")
    listing = subprocess.run(["rabbitmqctl", "-s", "list_connections", "pid", "client_properties"],
                             capture_output=True, text=True, timeout=WAIT_S, check=True).stdout
    pids = [line.split("\t")[0] for line in listing.splitlines()
            if f'{{"connection_name","{connection_name}"}}' in line]
    assert pids, f"no broker connection named {connection_name!r} in:\n{listing}"
    for pid in pids:
        subprocess.run(["rabbitmqctl", "close_connection", pid, "test"],
                       capture_output=True, timeout=WAIT_S, check=True)


# -- the message format ---------------------------------------------------------------------

def test_run_key_defaults_to_message_id_then_task_and_scheduled_time():
    body = b'{"loop_task_id": "daily", "scheduled_at": "2024-05-01T08:00:00+00:00"}'
    assert parse_trigger(body).run_key == "daily:2024-05-01T08:00:00+00:00"
    assert parse_trigger(body, pika.BasicProperties(message_id="m-1")).run_key == "m-1"
    explicit = b'{"loop_task_id": "daily", "run_key": "k", "parameters": {"n": 1}, "tenant_id": "t"}'
    trigger = parse_trigger(explicit, pika.BasicProperties(message_id="m-1"))
    assert (trigger.run_key, trigger.parameters, trigger.tenant_id) == ("k", {"n": 1}, "t")


@pytest.mark.parametrize(("body", "field"), [
    (b"not json", "(message)"),
    (b'["loop_task_id"]', "(message)"),
    (b'{"run_key": "k"}', "loop_task_id"),
    (b'{"loop_task_id": "  ", "run_key": "k"}', "loop_task_id"),
    (b'{"loop_task_id": 7, "run_key": "k"}', "loop_task_id"),
    (b'{"loop_task_id": "t", "run_key": "k", "parameters": [1]}', "parameters"),
    (b'{"loop_task_id": "t", "run_key": "k", "tenant_id": 3}', "tenant_id"),
    (b'{"loop_task_id": "t", "scheduled_at": "next tuesday"}', "scheduled_at"),
    (b'{"loop_task_id": "t"}', "run_key"),
])
def test_malformed_trigger_names_the_field(body, field):
    with pytest.raises(TriggerError) as caught:
        parse_trigger(body)
    assert caught.value.field == field


# -- the bridge on the real broker ---------------------------------------------------------

def test_published_trigger_is_handled_once_and_acked(queue, publisher):
    store = DedupeStore()
    with RabbitBridge(URL, queue, store.handle) as bridge:
        sent = publisher.publish("daily-report", scheduled_at="2024-05-01T08:00:00Z",
                                 parameters={"limit": 3}, source="test")
        assert wait_until(lambda: bridge.acked == 1), "the trigger was not acked"
    assert store.calls == [sent]
    assert sent.run_key == "daily-report:2024-05-01T08:00:00Z"
    assert (bridge.delivered, bridge.rejected, bridge.requeued) == (1, 0, 0)
    assert message_count(queue) == 0


def test_hundred_copies_of_one_run_key_record_once_and_all_ack(queue, publisher):
    store = DedupeStore()
    for _ in range(100):
        publisher.publish("t1", run_key="t1:once")
    with RabbitBridge(URL, queue, store.handle) as bridge:
        assert wait_until(lambda: bridge.acked == 100), f"acked {bridge.acked} of 100"
    assert len(store.calls) == 100
    assert store.outcomes.count(Outcome.RECORDED) == 1
    assert store.outcomes.count(Outcome.DUPLICATE) == 99
    assert message_count(queue) == 0


def test_consumer_killed_between_record_and_ack_gets_redelivered_as_duplicate(queue, publisher, tmp_path):
    record_file = tmp_path / "recorded.txt"
    record_file.touch()
    doomed = subprocess.Popen([sys.executable, "-m", "tests.loop_bridge.killed_consumer",
                               URL, queue, str(record_file)], cwd=REPO)
    try:
        sent = publisher.publish("t2", run_key="t2:run")
        assert wait_until(lambda: record_file.read_text() == "t2:run\n"), "the doomed consumer never ran it"
    finally:
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(WAIT_S)
    store = DedupeStore(recorded=record_file.read_text().split())
    with RabbitBridge(URL, queue, store.handle) as bridge:
        assert wait_until(lambda: bridge.acked == 1), "the unacked trigger was not redelivered"
    assert store.calls == [sent]
    assert store.outcomes == [Outcome.DUPLICATE]
    assert message_count(queue) == 0


def test_stop_during_a_run_leaves_it_unacked_for_the_next_bridge(queue, publisher):
    started, release = threading.Event(), threading.Event()
    store = DedupeStore()

    def record_then_block(trigger):
        outcome = store.handle(trigger)
        started.set()
        release.wait(WAIT_S)
        return outcome

    first = RabbitBridge(URL, queue, record_then_block).start()
    try:
        publisher.publish("t3", run_key="t3:run")
        assert started.wait(WAIT_S)
        began = time.monotonic()
        first.stop(drain_s=0.2)
        assert time.monotonic() - began < 1.5, "stop waited for the slow run"
    finally:
        release.set()
    with RabbitBridge(URL, queue, store.handle) as second:
        assert wait_until(lambda: second.acked == 1)
    assert store.outcomes == [Outcome.RECORDED, Outcome.DUPLICATE]
    assert first.acked == 0
    assert message_count(queue) == 0


def test_malformed_messages_go_to_the_dead_letter_queue_and_good_ones_still_run(queue, publisher):
    store = DedupeStore()
    with RabbitBridge(URL, queue, store.handle) as bridge:
        assert bridge.wait_consuming(WAIT_S)
        publish_raw(queue, b"not json at all", message_id="bad-1")
        publish_raw(queue, b'{"parameters": {}}', message_id="bad-2")
        publisher.publish("t4", run_key="t4:good")
        assert wait_until(lambda: bridge.acked == 1 and bridge.rejected == 2)
    assert [t.run_key for t in store.calls] == ["t4:good"]
    dead = dead_letter_queue_name(queue)
    assert wait_until(lambda: message_count(dead) == 2), "malformed messages were not dead-lettered"
    assert message_count(queue) == 0


def test_slow_handle_keeps_the_connection_alive_through_heartbeats(queue, publisher):
    """At heartbeat=1 the broker drops a connection silent for ~2 s; a handle run on the
    connection's own thread for 3 s would lose it (and have its ack refused)."""
    def slow(trigger):
        time.sleep(3.0)
        return Outcome.RECORDED

    with RabbitBridge(URL + "?heartbeat=1", queue, slow) as bridge:
        publisher.publish("t9", run_key="t9:slow")
        assert wait_until(lambda: bridge.acked == 1, timeout=WAIT_S + 3.0)
    assert bridge.reconnects == 0
    assert message_count(queue) == 0


@pytest.mark.parametrize("first_answer", ["retry", "raise"])
def test_retry_or_failure_is_redelivered_then_recorded(queue, publisher, first_answer, caplog):
    store = DedupeStore()

    def fail_once(trigger):
        if not store.calls:
            store.calls.append(trigger)
            if first_answer == "raise":
                raise RuntimeError("store is locked")
            return Outcome.RETRY
        return store.handle(trigger)

    with RabbitBridge(URL, queue, fail_once, retry_delay_s=0.05) as bridge:
        publisher.publish("t5", run_key="t5:run")
        assert wait_until(lambda: bridge.acked == 1), "the retried trigger was not recorded"
    assert bridge.requeued == 1
    assert [t.run_key for t in store.calls] == ["t5:run", "t5:run"]
    assert store.outcomes == [Outcome.RECORDED]
    assert message_count(queue) == 0
    if first_answer == "raise":
        assert "store is locked" in caplog.text


def test_bridge_and_publisher_reconnect_after_the_broker_closes_their_connections(queue, publisher):
    store = DedupeStore()
    with RabbitBridge(URL, queue, store.handle, reconnect_delay_s=0.1) as bridge:
        publisher.publish("t6", run_key="t6:before")
        assert wait_until(lambda: bridge.acked == 1)
        close_connection_from_broker(f"flora.loop.bridge {queue}")
        close_connection_from_broker(f"flora.loop.publisher {queue}")
        assert wait_until(lambda: bridge.reconnects == 1), "the bridge did not reconnect"
        publisher.publish("t6", run_key="t6:after")  # the publisher finds its connection dead here
        assert wait_until(lambda: bridge.acked == 2), "a trigger after the reconnect did not run"
    assert [t.run_key for t in store.calls] == ["t6:before", "t6:after"]
    assert message_count(queue) == 0


def test_publish_to_a_deleted_queue_raises_instead_of_losing_the_trigger(queue, publisher):
    publisher.publish("t7", run_key="t7:first")
    connection = pika.BlockingConnection(pika.URLParameters(URL))
    connection.channel().queue_delete(queue)
    connection.close()
    with pytest.raises(PublishError, match="returned"):
        publisher.publish("t7", run_key="t7:second")


def test_publish_to_an_unreachable_broker_raises_publish_error():
    with TriggerPublisher("amqp://guest:guest@127.0.0.1:1/%2F", "nowhere.queue") as p:
        with pytest.raises(PublishError, match="cannot publish"):
            p.publish("t8", run_key="t8:run")


def test_publish_refuses_a_bad_trigger_before_touching_the_broker():
    with TriggerPublisher("amqp://guest:guest@127.0.0.1:1/%2F", "nowhere.queue") as p:
        with pytest.raises(TriggerError, match="loop_task_id"):
            p.publish("")
