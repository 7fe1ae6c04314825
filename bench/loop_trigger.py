"""Loop triggers end to end: raw pika publish→consume beside publish→ExecutionActor start.

Three measurements in one run, each done the same way (sequential latency, then a burst):

- raw: pika alone on the same broker. A publisher (BlockingConnection, publisher confirms,
  persistent messages) sends small JSON messages to a fresh durable queue; a consumer on its
  own thread and connection (prefetch 16, one ack per message) notes when each arrives.
  Latency: consume time − publish time (``time.perf_counter``, one process).
- flora: Flora started with ``loops.queue: rabbitmq`` on multiprocTCPBase. A trigger
  published to its trigger queue goes RabbitBridge → TriggerIntake (run key claimed, run task
  created in the SQLite store) → LoopSchedulerActor → AgentActor → ExecutionActor, which runs
  the loop task's capability, ``bench_mark`` (bench/loop_bench_plugin.py): it appends the
  trigger's ``sent`` time and its own start time to a file. Latency: start − sent (both
  ``time.time()``, since the ExecutionActors are other processes).
- flora without the broker: the same run, recorded in this process with
  ``LoopService.accept`` and handed to the LoopSchedulerActor as ``loop_fire``, as the
  bridge does, but with no RabbitMQ in between: the core pipeline's own cost.

Sequential latency: one message or trigger at a time, the next one once the previous has
arrived or started (watched every 0.5 ms); prints p50/p99. Burst: ``--burst`` sent back to
back, rate from the first send until the last has arrived or started. The loop task is
registered with the overlap policy ``queue``, so runs of the same task may overlap (with
``skip`` a trigger arriving while the previous run is still going would be held, not run).

The issue's target, checked at the end: Flora's p99 ≤ 1.5 × raw p99 + the core pipeline's p99.

    .venv/bin/python bench/loop_trigger.py [--trips 200] [--burst 500]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pika  # noqa: E402

import main  # noqa: E402
from bench.loop_bench_plugin import BENCH_FILE_ENV  # noqa: E402
from bench.loop_trigger_raw import (  # noqa: E402
    DEFAULT_URL, RawConsumer, RawPublisher, delete_queues, percentile, wait_for)
from capabilities.loop.rabbit_bridge import dead_letter_queue_name, declare_trigger_queue  # noqa: E402
from capabilities.loop.schedule import Schedule  # noqa: E402
from common import messages as m  # noqa: E402
from common.runtime import Runtime  # noqa: E402

PREFETCH = 16
POOL_SIZE = 2
WARMUP = 20


def summary(latencies: list[float], rate: float) -> dict:
    return {"p50_ms": percentile(latencies, 50) * 1e3, "p99_ms": percentile(latencies, 99) * 1e3, "per_s": rate}


# --------------------------------------------------------------------------- raw pika
def measure_raw(url: str, queue: str, trips: int, burst: int) -> dict:
    publisher = RawPublisher(url, queue)
    try:
        with RawConsumer(url, queue, PREFETCH) as consumer:
            sent = 0
            for i in range(WARMUP + trips):
                if i == WARMUP:
                    consumer.latencies.clear()
                publisher.publish(sent)
                sent += 1
                wait_for(lambda: consumer.acked == sent, "a raw message")
            latencies = list(consumer.latencies)
            first = time.perf_counter()
            for _ in range(burst):
                publisher.publish(sent)
                sent += 1
            last = wait_for(lambda: consumer.acked == sent, "the raw burst")
    finally:
        publisher.close()
    return summary(latencies, burst / (last - first))


# --------------------------------------------------------------------------- Flora
class RunLog:
    """The lines bench_mark appends: sent time → start time of each run."""

    def __init__(self, path: Path):
        self.path = path
        self.started: dict[float, float] = {}
        self._offset = 0
        self._partial = ""

    def poll(self) -> int:
        try:
            with open(self.path, encoding="utf-8") as f:
                f.seek(self._offset)
                chunk = f.read()
                self._offset = f.tell()
        except FileNotFoundError:
            return len(self.started)
        lines = (self._partial + chunk).split("\n")
        self._partial = lines.pop()  # an unfinished line, completed by a later read
        for line in lines:
            sent, started = line.split()
            self.started[float(sent)] = float(started)
        return len(self.started)

    def has_all(self, sents: list[float]) -> bool:
        self.poll()
        return all(s in self.started for s in sents)


class TriggerSender:
    """Publishes loop triggers as any outside program would: pika, confirms, persistent."""

    def __init__(self, url: str, queue: str, loop_task_id: str):
        self._connection = pika.BlockingConnection(pika.URLParameters(url))
        self._channel = self._connection.channel()
        declare_trigger_queue(self._channel, queue)
        self._channel.confirm_delivery()
        self._queue = queue
        self._loop_task_id = loop_task_id

    def send(self) -> float:
        run_key = f"bench:{uuid.uuid4().hex}"
        sent = time.time()
        body = json.dumps({"loop_task_id": self._loop_task_id, "run_key": run_key,
                           "parameters": {"sent": sent}}).encode()
        self._channel.basic_publish("", self._queue, body, pika.BasicProperties(
            delivery_mode=2, content_type="application/json", message_id=run_key), mandatory=True)
        return sent

    def close(self) -> None:
        self._connection.close()


class DirectSender:
    """The bridge's path without the broker: accept the run here, tell the scheduler."""

    def __init__(self, flora, rt: Runtime, loop):
        self._flora, self._rt, self._loop = flora, rt, loop

    def send(self) -> float:
        run_key = f"bench:direct:{uuid.uuid4().hex}"
        sent = time.time()
        accepted = self._rt.loops.accept(tenant_id=self._loop.tenant_id, loop_task_id=self._loop.loop_task_id,
                                         run_key=run_key, parameters={"sent": sent})
        if accepted.start is None:
            raise SystemExit(f"run {run_key} not accepted: {accepted.outcome} ({accepted.reason})")
        start = accepted.start
        self._flora.system.tell(self._flora.scheduler, m.loop_fire(
            tenant_id=start.tenant_id, user_id=start.user_id, loop_task_id=start.loop_task_id,
            run_key=start.run_key, task_id=start.task_id))
        return sent


def wait_started(runs: RunLog, sents: list[float], what: str) -> float:
    try:
        return wait_for(lambda: runs.has_all(sents), what)
    except SystemExit:
        done = sum(s in runs.started for s in sents)
        raise SystemExit(f"gave up waiting for {what}: {done} of {len(sents)} runs started") from None


def measure_runs(sender, runs: RunLog, trips: int, burst: int, what: str) -> dict:
    for _ in range(WARMUP):
        wait_started(runs, [sender.send()], f"a warm-up run {what}")
    latencies = []
    for _ in range(trips):
        sent = sender.send()
        wait_started(runs, [sent], f"a run {what}")
        latencies.append(runs.started[sent] - sent)
    first = time.perf_counter()
    sents = [sender.send() for _ in range(burst)]
    last = wait_started(runs, sents, f"the burst {what}")
    return summary(latencies, burst / (last - first))


def measure_flora(url: str, queue: str, trips: int, burst: int) -> tuple[dict, dict]:
    data_dir = Path(tempfile.mkdtemp(prefix="flora-bench-loop-"))
    os.environ[BENCH_FILE_ENV] = str(data_dir / "runs.txt")  # inherited by the actor processes
    runs = RunLog(data_dir / "runs.txt")
    flora = rt = sender = None
    try:
        flora = main.start_flora({
            "data_dir": str(data_dir), "llm": {"backend": "none"}, "log_level": "ERROR",
            "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 30, "execution_pool_size": POOL_SIZE},
            "capabilities": {"plugin_modules": ["bench.loop_bench_plugin"], "entry_points": False},
            "loops": {"queue": "rabbitmq", "tick_s": 1.0, "overlap": "queue"},
            "rabbitmq": {"url": url, "loop_trigger_queue": queue}})
        rt = Runtime.from_config(flora.config)
        loop = rt.loops.register(tenant_id=flora.config.default_tenant, user_id="bench", content="bench",
                                 schedule=Schedule.every(86400, timezone="UTC"), capability="bench_mark",
                                 parameters={})
        sender = TriggerSender(url, queue, loop.loop_task_id)
        via_broker = measure_runs(sender, runs, trips, burst, "through RabbitMQ")
        direct = measure_runs(DirectSender(flora, rt, loop), runs, trips, burst, "without the broker")
        return via_broker, direct
    finally:
        if sender is not None:
            sender.close()
        if flora is not None:
            flora.shutdown()
        if rt is not None:
            rt.close()
        os.environ.pop(BENCH_FILE_ENV, None)
        shutil.rmtree(data_dir, ignore_errors=True)


# --------------------------------------------------------------------------- report
def main_(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trips", type=int, default=200, help="sequential round trips for p50/p99")
    parser.add_argument("--burst", type=int, default=500, help="messages/triggers sent back to back")
    parser.add_argument("--url", default=DEFAULT_URL)
    args = parser.parse_args(argv)
    tag = uuid.uuid4().hex[:8]
    raw_queue, flora_queue = f"bench.raw.{tag}", f"bench.loop.trigger.{tag}.queue"
    try:
        raw = measure_raw(args.url, raw_queue, args.trips, args.burst)
        flora, core = measure_flora(args.url, flora_queue, args.trips, args.burst)
    finally:
        delete_queues(args.url, raw_queue, flora_queue, dead_letter_queue_name(flora_queue))

    print(f"{args.trips} sequential trips (after {WARMUP} warm-up), burst of {args.burst}; persistent, "
          f"publisher confirms, prefetch {PREFETCH}; Flora on multiprocTCPBase, {POOL_SIZE} ExecutionActors")
    print(f"{'':28} {'p50 ms':>8} {'p99 ms':>8} {'per s':>9}")
    for name, r, unit in (("raw pika publish→consume", raw, "msgs"), ("flora publish→run start", flora, "runs"),
                          ("flora without the broker", core, "runs")):
        print(f"{name:28} {r['p50_ms']:8.3f} {r['p99_ms']:8.3f} {r['per_s']:9.1f} {unit}/s")
    print(f"{'flora/raw (latency)':28} {flora['p50_ms'] / raw['p50_ms']:8.2f} {flora['p99_ms'] / raw['p99_ms']:8.2f}"
          f" {raw['per_s'] / flora['per_s']:9.2f} raw/flora (throughput)")
    target = 1.5 * raw["p99_ms"] + core["p99_ms"]
    verdict = "meets" if flora["p99_ms"] <= target else "misses"
    print(f"target p99 ≤ 1.5 × raw p99 + core p99 = 1.5 × {raw['p99_ms']:.3f} + {core['p99_ms']:.3f}"
          f" = {target:.3f} ms; flora p99 {flora['p99_ms']:.3f} ms {verdict} it")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
