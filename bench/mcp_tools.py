"""The same MCP tool call through Flora and through the bare SDK, in one run.

Two servers: ``time.get_current_time`` of mcp-server-time (PyPI, a stdio subprocess) and
``greet`` of the SDK test server (tests/support/mcp_server.py) over streamable HTTP on
127.0.0.1. For each, ``--calls`` sequential calls after ``--warmup`` untimed ones:

- raw: a bare ``mcp`` session (``mcp.Client(...).session.call_tool``) on an asyncio loop,
  timed inside the loop: the cost of the protocol, the transport and the server;
- flora invoke: the registry's capability (``CapabilitySpec.invoke``), as an ExecutionActor
  runs it, timed by its synchronous caller: the call is handed to the process's MCP
  event-loop thread and waited for, the result turned into Flora's result dict;
- flora ask (``--no-ask`` skips it): ``system.ask`` of a request that routes to the tool
  (``main.start_flora``, multiprocTCPBase, the deterministic fake model), beside the same
  round trip to a capability that does nothing (``bench/noop_plugin.py``): Flora's pipeline
  cost (InteractionActor → AgentActor → ExecutionActor, the task's records and events).

Raw and Flora calls alternate one by one (and the ask runs alternate with the noop asks), so
both meet the same load on the machine. Prints p50/p99 in milliseconds and the ratios
flora/raw; ``--json`` prints them as JSON.

    .venv/bin/python bench/mcp_tools.py [--calls 300] [--warmup 20] [--no-ask] [--json]
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
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from concurrent.futures import Future  # noqa: E402

from bench.pipeline import percentile  # noqa: E402
from capabilities.base import ExecutionContext  # noqa: E402
from common import messages as m  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TIME_ARGS = ["-m", "mcp_server_time", "--local-timezone", "UTC"]


def summary(samples: list[float]) -> dict:
    return {"p50_ms": round(percentile(samples, 50) * 1000, 3), "p99_ms": round(percentile(samples, 99) * 1000, 3),
            "mean_ms": round(statistics.fmean(samples) * 1000, 3), "n": len(samples)}


class RawSession:
    """A bare ``mcp.Client`` session on an event loop of its own thread. A call is timed
    inside the loop, around ``session.call_tool`` alone: the SDK, the transport and the server."""

    def __init__(self, server):
        from capabilities.mcp.loop import LoopThread

        self._thread = LoopThread()
        self._stop = None
        ready: Future = Future()
        self._held = self._thread.submit(self._hold(server, ready))
        self._client = ready.result(60)

    async def _hold(self, server, ready: Future) -> None:
        from mcp import Client

        self._stop = asyncio.Event()
        async with Client(server, cache=None) as client:
            ready.set_result(client)
            await self._stop.wait()

    def call(self, tool: str, arguments: dict) -> float:
        async def once() -> float:
            started = time.perf_counter()
            result = await self._client.session.call_tool(tool, arguments)
            took = time.perf_counter() - started
            assert not result.is_error, result
            return took

        return self._thread.run(once(), timeout=60)

    def close(self) -> None:
        self._thread.loop().call_soon_threadsafe(self._stop.set)
        self._held.result(30)
        self._thread.close()


def side_by_side(first, second, calls: int, warmup: int) -> tuple[dict, dict]:
    """``calls`` of each, one after the other in turn, so that both meet the same machine
    (the load of whatever else runs on it); ``first`` reports its own duration, ``second``
    is timed here."""
    for _ in range(warmup):
        first()
        second()
    a, b = [], []
    for _ in range(calls):
        a.append(first())
        started = time.perf_counter()
        second()
        b.append(time.perf_counter() - started)
    return summary(a), summary(b)


def flora_ask(config_dict: dict, calls: int, warmup: int) -> dict:
    import main

    flora = main.start_flora(config_dict)
    try:
        def ask(content: str):
            def once() -> float:
                started = time.perf_counter()
                reply = flora.system.ask(flora.interaction, m.user_input(user_id="bench", content=content), 60)
                assert reply is not None and reply["message_type"] == "task_completed", reply
                return time.perf_counter() - started
            return once

        noop, timed_ = side_by_side(ask("noop"), ask("what is the current time, timezone=UTC"), calls, warmup)
        noop_again, notes = side_by_side(ask("noop"), ask("use notes.greet with name=Ada"), calls, warmup)
        return {"time": timed_, "notes": notes, "noop": noop, "noop_beside_notes": noop_again}
    finally:
        flora.shutdown()


def ratio(a: dict, b: dict) -> dict:
    return {k: round(a[k] / b[k], 2) for k in ("p50_ms", "p99_ms") if b[k]}


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--no-ask", action="store_true", help="skip the runs through a running Flora")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from mcp import StdioServerParameters

    from capabilities.mcp import close_process_sessions
    from config import load_config
    from init_plugins import build_registry
    from tests.mcp.conftest import start_http_server, stop_http_server

    data_dir = Path(tempfile.mkdtemp(prefix="flora-bench-mcp-"))
    http = start_http_server()
    os.environ["PYTHONPATH"] = str(REPO)
    servers = {"time": {"command": sys.executable, "args": TIME_ARGS},
               "notes": {"url": http.url, "transport": "streamable_http"}}
    base = {"data_dir": str(data_dir), "memory": {"enabled": False}, "mcp": {"servers": servers}}
    results: dict = {"calls": args.calls}
    try:
        registry = build_registry(load_config({**base, "llm": {"backend": "none"}}, env={}))
        context = ExecutionContext(task_id="bench", user_id="bench")
        results["raw"], results["invoke"] = {}, {}
        for server, raw_server, tool, arguments in (
                ("time", StdioServerParameters(command=sys.executable, args=TIME_ARGS), "get_current_time",
                 {"timezone": "UTC"}),
                ("notes", http.url, "greet", {"name": "Ada"})):
            spec = registry.get_executable(f"{server}.{tool}")
            raw = RawSession(raw_server)
            try:
                results["raw"][server], results["invoke"][server] = side_by_side(
                    lambda: raw.call(tool, arguments), lambda: spec.invoke(arguments, context),
                    args.calls, args.warmup)
            finally:
                raw.close()
        close_process_sessions()
        if not args.no_ask:
            results["ask"] = flora_ask({**base, "llm": {"backend": "function",
                                                        "function": "tests.support.fake_llm:respond"},
                                        "actors": {"system_base": "multiprocTCPBase", "execution_pool_size": 1},
                                        "capabilities": {"plugin_modules": ["bench.noop_plugin"],
                                                         "entry_points": False}},
                                       args.calls, args.warmup)
    finally:
        close_process_sessions()
        stop_http_server(http)
        shutil.rmtree(data_dir, ignore_errors=True)
    results["ratio_invoke_vs_raw"] = {s: ratio(results["invoke"][s], results["raw"][s]) for s in ("time", "notes")}
    if "ask" in results:
        results["ask_minus_pipeline_p50_ms"] = {
            s: round(results["ask"][s]["p50_ms"] - results["ask"]["noop" if s == "time" else "noop_beside_notes"]
                     ["p50_ms"], 3) for s in ("time", "notes")}
    if args.json:
        print(json.dumps(results, indent=1))
        return
    print(f"MCP tool calls, {args.calls} sequential each (ms)")
    rows = [("raw mcp session", "raw"), ("flora registry invoke", "invoke")] + \
        ([("flora system.ask", "ask")] if "ask" in results else [])
    for server in ("time", "notes"):
        label = "time.get_current_time (stdio)" if server == "time" else "notes.greet (streamable HTTP)"
        print(f"\n{label}")
        for name, key in rows:
            r = results[key][server]
            print(f"  {name:24s} p50 {r['p50_ms']:8.3f}  p99 {r['p99_ms']:8.3f}")
        rat = results["ratio_invoke_vs_raw"][server]
        print(f"  invoke / raw             p50 {rat['p50_ms']:.2f}x  p99 {rat['p99_ms']:.2f}x")
        if "ask" in results:
            print(f"  ask - noop ask (p50)     {results['ask_minus_pipeline_p50_ms'][server]:8.3f}")
    if "ask" in results:
        for label, key in (("beside time", "noop"), ("beside notes", "noop_beside_notes")):
            noop = results["ask"][key]
            print(f"\nFlora's pipeline alone (system.ask of the noop capability, {label}): p50 {noop['p50_ms']:.3f}  "
                  f"p99 {noop['p99_ms']:.3f}", end="")
        print()


if __name__ == "__main__":
    main_()
