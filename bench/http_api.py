"""user_input round trips through the HTTP API, beside a trivial endpoint and a raw actor ask.

Three measurements in one run, each the same way: ``--warmup`` untimed requests, then
``--requests`` sequential ones (latency p50/p99), then ``--burst`` more with ``--concurrency``
in flight at once (throughput):

- trivial: ``GET /health`` on a real API server (``python main.py --api``, started as
  tests/api/conftest.py does: multiprocTCPBase, the deterministic fake model
  ``tests.support.fake_llm:respond``, an API key). It touches no actor: the cost of HTTP,
  uvicorn and the middleware alone.
- messages: ``POST /v1/messages`` ``{"content": "hello"}`` on the same server: the request
  goes through a gateway worker thread's Thespian ask to the InteractionActor, on to the
  AgentActor and back (a ``chat_reply``), then out as JSON.
- raw actor ask: the same ``user_input`` asked straight of the InteractionActor with
  ``flora.system.ask`` in this process (``main.start_flora`` with the server's config, started
  after the server has stopped so the two never compete for the CPU); throughput with
  ``--concurrency`` messages in flight (``tell`` / ``listen``, as bench/pipeline.py does).

Clients: one keep-alive ``httpx.Client`` for the sequential part; ``--concurrency``
coroutines sharing an ``httpx.AsyncClient`` for the burst. Everything talks to 127.0.0.1,
every request has a timeout, and the server and the in-process actor system are stopped at
the end, whatever happens; actor processes still alive after that (Thespian's admin is a
daemon, and a stop that does not reach it leaves it and its actors running) are ended by pid.

    .venv/bin/python bench/http_api.py [--requests 300] [--concurrency 8] [--burst 400] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402

import httpx  # noqa: E402

import main  # noqa: E402
from bench.pipeline import percentile  # noqa: E402
from common import messages as m  # noqa: E402
from tests.api.conftest import server_config, start_server, stop_server  # noqa: E402

TIMEOUT_S = 30  # any one request or ask
TENANT, USER = "team-a", "user_001"  # what the server's key and default user make of a message
RUN_MARK = "FLORA_BENCH_HTTP_RUN"  # in the server's environment, so its actor processes can be found


# --------------------------------------------------------------------------- leftover processes
# Thespian's admin daemonizes (its own session, parent 1) and the actors are its children, so
# neither dies with the process that started them. A stop that does not reach the admin
# leaves them running; these find the ones this run started and end them.
def _proc_read(pid: int, name: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes()
    except OSError:
        return b""


def _pids() -> list[int]:
    if not Path("/proc").is_dir():
        return []
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]


def _server_leftovers(mark: str) -> list[int]:
    """The server's processes still alive: they carry this run's mark in their environment."""
    needle = f"{RUN_MARK}={mark}".encode()
    return [pid for pid in _pids() if needle in _proc_read(pid, "environ").split(b"\0")]


def _inprocess_leftovers(before: set[int]) -> list[int]:
    """Actor processes forked from this one (same command line) that were not there before."""
    me = _proc_read(os.getpid(), "cmdline")
    return [pid for pid in _pids() if pid not in before and me and _proc_read(pid, "cmdline") == me]


def _end(pids: list[int], what: str) -> None:
    if not pids:
        return
    print(f"(ending {len(pids)} leftover {what} processes: {' '.join(map(str, pids))})", file=sys.stderr)
    for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in pids):
            time.sleep(0.1)
        pids = [pid for pid in pids if Path(f"/proc/{pid}").exists()]
        if not pids:
            return


def summary(latencies: list[float], rate: float) -> dict:
    return {"p50_ms": statistics.median(latencies) * 1e3, "p99_ms": percentile(latencies, 99) * 1e3, "per_s": rate}


# --------------------------------------------------------------------------- over HTTP
def measure_http(url: str, key: str, method: str, path: str, body: dict | None, check, *,
                 warmup: int, requests: int, burst: int, concurrency: int) -> dict:
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=TIMEOUT_S) as client:
        for _ in range(warmup):
            check(client.request(method, path, json=body))
        latencies = []
        for _ in range(requests):
            started = time.perf_counter()
            response = client.request(method, path, json=body)
            latencies.append(time.perf_counter() - started)
            check(response)
    rate = asyncio.run(_burst(url, headers, method, path, body, check, burst, concurrency))
    return summary(latencies, rate)


async def _burst(url: str, headers: dict, method: str, path: str, body: dict | None, check,
                 count: int, concurrency: int) -> float:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=TIMEOUT_S, limits=limits) as client:
        for response in await asyncio.gather(*(client.request(method, path, json=body) for _ in range(concurrency))):
            check(response)  # untimed: opens the connections
        left = count

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                check(await client.request(method, path, json=body))

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return count / (time.perf_counter() - started)


def check_health(response: httpx.Response) -> None:
    if response.status_code != 200 or response.json() != {"status": "ok"}:
        raise RuntimeError(f"unexpected /health answer: {response.status_code} {response.text[:300]}")


def check_message(response: httpx.Response) -> None:
    if response.status_code != 200 or response.json().get("message_type") != "chat_reply":
        raise RuntimeError(f"unexpected /v1/messages answer: {response.status_code} {response.text[:300]}")


def bench_http(args) -> tuple[dict, dict]:
    data_dir = Path(tempfile.mkdtemp(prefix="flora-bench-http-"))
    mark = uuid.uuid4().hex
    os.environ[RUN_MARK] = mark  # start_server hands this process's environment on to the server
    try:
        server = start_server(data_dir / "server")
    except BaseException:
        _end(_server_leftovers(mark), "server")
        raise
    try:
        counts = dict(warmup=args.warmup, requests=args.requests, burst=args.burst, concurrency=args.concurrency)
        trivial = measure_http(server.url, server.key, "GET", "/health", None, check_health, **counts)
        messages = measure_http(server.url, server.key, "POST", "/v1/messages", {"content": "hello"}, check_message,
                                **counts)
        return trivial, messages
    finally:
        stop_server(server)
        time.sleep(1.0)  # the admin and actors wind down after the server process has gone
        _end(_server_leftovers(mark), "server")
        shutil.rmtree(data_dir, ignore_errors=True)


# --------------------------------------------------------------------------- straight to the actor
def bench_raw(args) -> dict:
    data_dir = Path(tempfile.mkdtemp(prefix="flora-bench-raw-"))
    before = set(_pids())
    try:
        flora = main.start_flora({**server_config(data_dir), "log_level": "ERROR"})
    except BaseException:
        _end(_inprocess_leftovers(before), "actor")
        raise
    system, target = flora.system, flora.interaction

    def make() -> dict:
        return m.user_input(user_id=USER, tenant_id=TENANT, content="hello", channel="http")

    def check(reply) -> None:
        if not isinstance(reply, dict) or reply.get("message_type") != "chat_reply":
            raise RuntimeError(f"unexpected reply: {reply!r}")

    try:
        for _ in range(args.warmup):
            check(system.ask(target, make(), TIMEOUT_S))
        latencies = []
        for _ in range(args.requests):
            started = time.perf_counter()
            reply = system.ask(target, make(), TIMEOUT_S)
            latencies.append(time.perf_counter() - started)
            check(reply)
        # throughput: keep `concurrency` messages outstanding
        sent = received = 0
        started = time.perf_counter()
        while sent < min(args.concurrency, args.burst):
            system.tell(target, make())
            sent += 1
        while received < args.burst:
            reply = system.listen(TIMEOUT_S)
            if reply is None:
                raise RuntimeError(f"no reply within {TIMEOUT_S} s")
            check(reply)
            received += 1
            if sent < args.burst:
                system.tell(target, make())
                sent += 1
        return summary(latencies, args.burst / (time.perf_counter() - started))
    finally:
        flora.shutdown()
        time.sleep(1.0)
        _end(_inprocess_leftovers(before), "actor")
        shutil.rmtree(data_dir, ignore_errors=True)


# --------------------------------------------------------------------------- report
def main_(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="sequential requests for p50/p99, each")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight during the burst")
    parser.add_argument("--burst", type=int, default=400, help="requests in the throughput burst, each")
    parser.add_argument("--warmup", type=int, default=30, help="untimed requests first, each")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = parser.parse_args(argv)
    if min(args.requests, args.concurrency, args.burst) < 1 or args.warmup < 0:
        parser.error("--requests, --concurrency and --burst must be at least 1, --warmup at least 0")

    trivial, messages = bench_http(args)
    raw = bench_raw(args)

    print(f"{args.requests} sequential requests each (after {args.warmup} warm-up), then {args.burst} with "
          f"{args.concurrency} in flight; multiprocTCPBase, fake model, server on 127.0.0.1")
    print(f"{'':32} {'p50 ms':>8} {'p99 ms':>8} {'per s':>9}")
    for name, r in (("GET /health (trivial)", trivial), ("POST /v1/messages hello", messages),
                    ("raw actor ask (in-process)", raw)):
        print(f"{name:32} {r['p50_ms']:8.3f} {r['p99_ms']:8.3f} {r['per_s']:9.1f}")
    ratios = {
        "messages_vs_trivial": {"p50": messages["p50_ms"] / trivial["p50_ms"],
                                "p99": messages["p99_ms"] / trivial["p99_ms"],
                                "throughput": trivial["per_s"] / messages["per_s"]},
        "messages_vs_raw": {"p50": messages["p50_ms"] / raw["p50_ms"], "p99": messages["p99_ms"] / raw["p99_ms"],
                            "throughput": raw["per_s"] / messages["per_s"]},
    }
    for name, r, how in (("messages / trivial", ratios["messages_vs_trivial"], "trivial/messages"),
                         ("messages / raw actor ask", ratios["messages_vs_raw"], "raw/messages")):
        print(f"{name:32} {r['p50']:8.2f} {r['p99']:8.2f} {r['throughput']:9.2f}   (latency ×; per s: {how})")
    print(f"{'HTTP cost over the raw ask':32} {messages['p50_ms'] - raw['p50_ms']:8.3f} "
          f"{messages['p99_ms'] - raw['p99_ms']:8.3f}   (ms, messages − raw)")
    if args.json:
        print(json.dumps({"requests": args.requests, "concurrency": args.concurrency, "burst": args.burst,
                          "warmup": args.warmup, "trivial": trivial, "messages": messages, "raw_actor_ask": raw,
                          "ratios": ratios}))
    return 0


if __name__ == "__main__":
    sys.exit(main_())
