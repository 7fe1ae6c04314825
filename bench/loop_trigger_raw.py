"""Loop triggers through RabbitMQ: raw pika beside TriggerPublisher → RabbitBridge.

Both sides publish persistent messages with publisher confirms to a temporary durable
queue and consume them with one ack per message at the same prefetch, in the same run:

- pipelined: a consumer is running while N triggers are published one by one; prints
  publish→callback latency p50/p99 (callback: pika's on_message for raw, ``handle`` for
  the bridge) and the sustained rate from the first publish to the last ack;
- backlog: N triggers wait in the queue, then a consumer starts; prints the drain rate,
  which is the consuming side alone (publishing with confirms is the slower half above).

The bridge's handle records each run key in a dict, standing in for Flora's store.

    .venv/bin/python bench/loop_trigger_raw.py [--messages 2000] [--prefetch 16]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pika  # noqa: E402

from capabilities.loop.rabbit_bridge import (  # noqa: E402
    Outcome, RabbitBridge, TriggerPublisher, dead_letter_queue_name)

DEFAULT_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"
WARMUP = 50
WAIT_S = 60.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def wait_for(predicate, what: str) -> float:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting for {what}")
        time.sleep(0.0005)
    return time.perf_counter()


def body(i: int) -> bytes:
    return json.dumps({"loop_task_id": "bench", "run_key": f"bench:{i}",
                       "parameters": {"sent": time.perf_counter()}}).encode()


class RawConsumer:
    """pika's BlockingConnection consuming on its own thread, acking in the callback."""

    def __init__(self, url: str, queue: str, prefetch: int):
        self.latencies: list[float] = []
        self.acked = 0
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(url, queue, prefetch), daemon=True)

    def __enter__(self) -> RawConsumer:
        self._thread.start()
        if not self._ready.wait(10):
            raise SystemExit("raw consumer did not start")
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join(10)

    def _on_message(self, channel, method, properties, raw: bytes) -> None:
        self.latencies.append(time.perf_counter() - json.loads(raw)["parameters"]["sent"])
        channel.basic_ack(method.delivery_tag)
        self.acked += 1

    def _run(self, url: str, queue: str, prefetch: int) -> None:
        connection = pika.BlockingConnection(pika.URLParameters(url))
        channel = connection.channel()
        channel.basic_qos(prefetch_count=prefetch)
        channel.basic_consume(queue, self._on_message)
        self._ready.set()
        while not self._stop.is_set():
            connection.process_data_events(time_limit=0.1)
        connection.close()


class RawPublisher:
    def __init__(self, url: str, queue: str):
        self._connection = pika.BlockingConnection(pika.URLParameters(url))
        self._channel = self._connection.channel()
        self._channel.queue_declare(queue, durable=True)
        self._channel.confirm_delivery()
        self._queue = queue

    def publish(self, i: int) -> None:
        self._channel.basic_publish("", self._queue, body(i), pika.BasicProperties(
            delivery_mode=2, content_type="application/json", message_id=f"bench:{i}"), mandatory=True)

    def close(self) -> None:
        self._connection.close()


class Store:
    """The bridge's handle: records each run key once, as Flora's store would."""

    def __init__(self):
        self.runs: dict[str, int] = {}
        self.latencies: list[float] = []

    def handle(self, trigger) -> Outcome:
        self.latencies.append(time.perf_counter() - trigger.parameters["sent"])
        if trigger.run_key in self.runs:
            return Outcome.DUPLICATE
        self.runs[trigger.run_key] = 1
        return Outcome.RECORDED


def flora_publish(publisher: TriggerPublisher, i: int) -> None:
    publisher.publish("bench", run_key=f"bench:{i}", parameters={"sent": time.perf_counter()})


def measure_raw(url: str, queue: str, n: int, prefetch: int) -> dict:
    publisher = RawPublisher(url, queue)
    try:
        with RawConsumer(url, queue, prefetch) as consumer:
            for i in range(WARMUP):
                publisher.publish(i)
            wait_for(lambda: consumer.acked == WARMUP, "raw warm-up")
            consumer.latencies.clear()
            first = time.perf_counter()
            for i in range(n):
                publisher.publish(WARMUP + i)
            last = wait_for(lambda: consumer.acked == WARMUP + n, "raw pipelined acks")
            latencies = list(consumer.latencies)
        for i in range(n):
            publisher.publish(i)
        with RawConsumer(url, queue, prefetch) as consumer:
            start = time.perf_counter()
            drained = wait_for(lambda: consumer.acked == n, "raw backlog acks")
    finally:
        publisher.close()
    return {"latencies": latencies, "rate": n / (last - first), "drain": n / (drained - start)}


def measure_flora(url: str, queue: str, n: int, prefetch: int) -> dict:
    with TriggerPublisher(url, queue) as publisher:
        store = Store()
        with RabbitBridge(url, queue, store.handle, prefetch=prefetch) as bridge:
            for i in range(WARMUP):
                flora_publish(publisher, i)
            wait_for(lambda: bridge.acked == WARMUP, "bridge warm-up")
            store.latencies.clear()
            first = time.perf_counter()
            for i in range(n):
                flora_publish(publisher, WARMUP + i)
            last = wait_for(lambda: bridge.acked == WARMUP + n, "bridge pipelined acks")
            latencies = list(store.latencies)
        for i in range(n):
            flora_publish(publisher, WARMUP + n + i)
        with RabbitBridge(url, queue, Store().handle, prefetch=prefetch) as bridge:
            start = time.perf_counter()
            drained = wait_for(lambda: bridge.acked == n, "bridge backlog acks")
    return {"latencies": latencies, "rate": n / (last - first), "drain": n / (drained - start)}


def delete_queues(url: str, *queues: str) -> None:
    connection = pika.BlockingConnection(pika.URLParameters(url))
    channel = connection.channel()
    for queue in queues:
        channel.queue_delete(queue)
    connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--prefetch", type=int, default=16)
    parser.add_argument("--url", default=DEFAULT_URL)
    args = parser.parse_args()
    tag = uuid.uuid4().hex[:8]
    raw_queue, flora_queue = f"flora.bench.{tag}.raw", f"flora.bench.{tag}.queue"
    try:
        raw = measure_raw(args.url, raw_queue, args.messages, args.prefetch)
        flora = measure_flora(args.url, flora_queue, args.messages, args.prefetch)
    finally:
        delete_queues(args.url, raw_queue, flora_queue, dead_letter_queue_name(flora_queue))
    print(f"{args.messages} persistent triggers, publisher confirms, ack per message, prefetch {args.prefetch}")
    print(f"{'':8} {'p50 ms':>8} {'p99 ms':>8} {'pipelined msg/s':>16} {'backlog msg/s':>14}")
    for name, r in (("raw", raw), ("flora", flora)):
        print(f"{name:8} {percentile(r['latencies'], 50) * 1e3:8.3f} {percentile(r['latencies'], 99) * 1e3:8.3f}"
              f" {r['rate']:16,.0f} {r['drain']:14,.0f}")
    print(f"{'flora/raw':8} {percentile(flora['latencies'], 50) / percentile(raw['latencies'], 50):8.2f}"
          f" {percentile(flora['latencies'], 99) / percentile(raw['latencies'], 99):8.2f}"
          f" {flora['rate'] / raw['rate']:16.2f} {flora['drain'] / raw['drain']:14.2f}")


if __name__ == "__main__":
    main()
