"""user_input → task_completed round trips through Flora, beside raw Thespian hops.

For each actor system base, in the same run: Flora (fake LLM, a no-op capability, the
SQLite store) and a raw three-actor chain with the same six hops (bench/raw_chain.py).
Prints latency p50/p99 of sequential round trips, throughput (with several in flight on
multiprocTCPBase; sequential on simpleSystemBase, which runs inside the caller's ask), and
the ratio Flora/raw.

    .venv/bin/python bench/pipeline.py [--trips 500] [--in-flight 16] [--bases simpleSystemBase multiprocTCPBase]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from thespian.actors import ActorSystem  # noqa: E402

import main  # noqa: E402
from agents import node  # noqa: E402
from bench.raw_chain import RawFront  # noqa: E402
from common import messages as m  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def measure(system, target, make, trips: int, in_flight: int, check) -> dict:
    for i in range(20):  # warm-up: processes, connections, caches
        check(system.ask(target, make(i), 30))
    latencies = []
    first = time.perf_counter()
    for i in range(trips):
        started = time.perf_counter()
        check(system.ask(target, make(i), 30))
        latencies.append(time.perf_counter() - started)
    result = {"p50_ms": statistics.median(latencies) * 1000, "p99_ms": percentile(latencies, 99) * 1000,
              "per_s": trips / (time.perf_counter() - first)}
    if in_flight == 1:
        return result
    # throughput: keep `in_flight` messages outstanding
    sent = received = 0
    started = time.perf_counter()
    while sent < min(in_flight, trips):
        system.tell(target, make(sent))
        sent += 1
    while received < trips:
        reply = system.listen(30)
        if reply is None:
            raise RuntimeError("no reply within 30 s")
        check(reply)
        received += 1
        if sent < trips:
            system.tell(target, make(sent))
            sent += 1
    result["per_s"] = trips / (time.perf_counter() - started)
    return result


def bench_flora(base: str, trips: int, in_flight: int) -> dict:
    data_dir = tempfile.mkdtemp(prefix="flora-bench-")
    flora = main.start_flora({"data_dir": data_dir, "llm": {"backend": "none"}, "log_level": "ERROR",
                              "actors": {"system_base": base, "execution_pool_size": 2},
                              "capabilities": {"plugin_modules": ["bench.noop_plugin"], "entry_points": False}})

    def make(i):
        return m.user_input(user_id=f"bench_{i % 50}", content="noop", msg_id=f"msg_{base}_{i}_{time.monotonic_ns()}")

    def check(reply):
        if not isinstance(reply, dict) or reply.get("message_type") != "task_completed":
            raise RuntimeError(f"unexpected reply: {reply!r}")

    try:
        return measure(flora.system, flora.interaction, make, trips, in_flight, check)
    finally:
        flora.shutdown()


def bench_raw(base: str, trips: int, in_flight: int) -> dict:
    capabilities = {} if base == "simpleSystemBase" else {"Admin Port": node._free_port()}
    system = ActorSystem(base, capabilities, logDefs=node._thespian_log_defs())
    try:
        front = system.createActor(RawFront)

        def check(reply):
            if not isinstance(reply, dict) or reply.get("stage") != 2:
                raise RuntimeError(f"unexpected reply: {reply!r}")

        return measure(system, front, lambda i: {"id": i, "content": "noop"}, trips, in_flight, check)
    finally:
        system.shutdown()


def main_(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trips", type=int, default=500)
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--bases", nargs="+", default=["simpleSystemBase", "multiprocTCPBase"])
    args = parser.parse_args(argv)
    print(f"{'base':18} {'what':6} {'p50 ms':>8} {'p99 ms':>8} {'trips/s':>9}")
    for base in args.bases:
        # simpleSystemBase runs every actor inside the caller's ask(): one at a time is all it does
        in_flight = 1 if base == "simpleSystemBase" else args.in_flight
        raw = bench_raw(base, args.trips, in_flight)
        flora = bench_flora(base, args.trips, in_flight)
        for name, r in (("raw", raw), ("flora", flora)):
            print(f"{base:18} {name:6} {r['p50_ms']:8.3f} {r['p99_ms']:8.3f} {r['per_s']:9.1f}")
        print(f"{base:18} {'ratio':6} {flora['p50_ms'] / raw['p50_ms']:8.2f} {flora['p99_ms'] / raw['p99_ms']:8.2f}"
              f" {raw['per_s'] / flora['per_s']:9.2f}   (flora/raw; for trips/s raw/flora)")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
