"""Probes: what hostile or careless input does to a running Flora, and how it meets its limits.

    .venv/bin/python -m bench.probes [--quick]

Each probe returns its numbers; this script prints them, and tests/api/test_probes.py runs the
same probes (with smaller counts where the count is not the point) as checks.

- actors: malformed messages through ``system.ask`` / ``tell`` to every actor whose address a
  client can learn (InteractionActor, RouterActor, LoopSchedulerActor, the tenant's
  AgentActor): random types, 1 MB strings, deep nesting, forged internal messages
  (``loop_fire``, ``resume_task``, ``execute`` ... every protocol type with wrong fields).
  Counted: PoisonMessage replies (a handler raised twice), actor processes that died,
  Flora still answering.
- http: malformed bodies on every POST route (and PATCH): broken JSON, wrong types, huge and
  deeply nested values, odd content types. Counted: status codes, 5xx, calls that hung.
- tenants: tenant B tries every route on tenant A's paused task. Counted: responses that
  show anything of it.
- limits: a 10 MB user_input (HTTP and actor), 200 concurrent HTTP requests, a capability
  returning 50 MB: the server's memory, the replies, whether it still answers.
- sql: writes, ATTACH, PRAGMA changes and multi-statement tricks through ``data_access``
  on SQLite. Counted: refused, and any change that went through.

The raw figure beside Flora's, as bench/ requires: the HTTP probe also times a bare
``/health`` (no actors, no store) in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import string
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from common import messages as m  # noqa: E402

KEY_A, KEY_B = "sk-probe-team-a", "sk-probe-team-b"
ASK_S = 5.0
CALL_TIMEOUT_S = 30.0


# --------------------------------------------------------------------------- generators
def _text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.printable + "中文é\u0000\ud7ff") for _ in range(n))


def _nested(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def junk_value(rng: random.Random) -> Any:
    kind = rng.randrange(12)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([0, -1, 2**63, -(2**70), 3.5, float("nan"), float("inf"), True])
    if kind == 2:
        return _text(rng, rng.randrange(0, 40))
    if kind == 3:
        return "x" * (1024 * 1024)  # 1 MB
    if kind == 4:
        return _nested(rng.choice([50, 200, 400]))
    if kind == 5:
        return [junk_value(rng) for _ in range(rng.randrange(0, 4))]
    if kind == 6:
        return {_text(rng, 5): junk_value(rng) for _ in range(rng.randrange(0, 4))}
    if kind == 7:
        return b"\x00\xff" * rng.randrange(1, 100)
    if kind == 8:
        return (1, "two", None)
    if kind == 9:
        return {1, 2, 3}
    if kind == 10:
        return m.new_id(rng.choice(["task", "msg", "loop", "run"]))
    return ""


def malformed_message(rng: random.Random, i: int) -> Any:
    """Every fourth a non-dict or a dict without a usable message_type; the rest forged
    protocol messages: a real type with fields dropped, replaced or added."""
    if i % 4 == 0:
        return rng.choice([junk_value(rng), {"content": "no type"}, {"message_type": junk_value(rng)},
                           {"message_type": "no_such_type_" + _text(rng, 4)}, "x" * (1024 * 1024),
                           _nested(300)])
    kind = rng.choice(sorted(m.CONSTRUCTORS))
    msg: dict[str, Any] = {"message_type": kind}
    for name in ("tenant_id", "user_id", "task_id", "msg_id", "content", "loop_task_id", "run_key", "capability",
                 "parameters", "result", "config", "role", "reply_to", "command", "answer", "error_type", "plan",
                 "steps", "node", "approve", "session_id"):
        roll = rng.random()
        if roll < 0.35:
            continue
        msg[name] = junk_value(rng) if roll < 0.8 else m.new_id("task")
    if rng.random() < 0.1:
        msg["content"] = "x" * (1024 * 1024)
    if rng.random() < 0.1:
        msg["parameters"] = _nested(300)
    return msg


# --------------------------------------------------------------------------- actors
@dataclass
class ActorProbe:
    sent: int = 0
    replies: Counter = field(default_factory=Counter)
    poison: list = field(default_factory=list)
    died: list = field(default_factory=list)
    answers_after: bool = False
    seconds: float = 0.0


def probe_actors(flora, n: int, *, seed: int = 7) -> ActorProbe:
    """Send ``n`` malformed messages, spread over the actors a client can learn the address of."""
    from thespian.actors import PoisonMessage

    from common.processes import group_members

    rng = random.Random(seed)
    targets = {"interaction": flora.interaction, "router": flora.router, "scheduler": flora.scheduler,
               "agent": flora.agent}
    group = getattr(flora, "actor_group", None)
    before = set(group_members(group)) if group else set()
    out = ActorProbe()
    started = time.monotonic()
    names = sorted(targets)
    for i in range(n):
        name = names[i % len(names)]
        msg = malformed_message(rng, i)
        try:
            flora.system.tell(targets[name], msg)
        except Exception as exc:  # the message cannot even be sent (unpicklable): counts as refused here
            out.replies[f"unsendable:{type(exc).__name__}"] += 1
            continue
        out.sent += 1
        if i % 25 == 0:  # now and then wait for what came back, so the actors' queues stay short
            _drain(flora.system, out, PoisonMessage, quiet_s=0.2)
    _drain(flora.system, out, PoisonMessage, quiet_s=1.0)
    out.seconds = time.monotonic() - started
    after = set(group_members(group)) if group else set()
    out.died = sorted(before - after)
    reply = flora.system.ask(flora.interaction, m.user_input(user_id="probe_after", content="hello"), 60)
    out.answers_after = isinstance(reply, dict) and reply.get("message_type") in m.REPLY_TYPES
    return out


def _drain(system, out: ActorProbe, poison_type, *, quiet_s: float) -> None:
    while True:
        reply = system.listen(quiet_s)
        if reply is None:
            return
        if isinstance(reply, poison_type):
            out.poison.append(_describe(reply.poisonMessage))
            out.replies["PoisonMessage"] += 1
        elif isinstance(reply, dict):
            out.replies[str(reply.get("message_type"))[:40] + (":" + str(reply.get("error_type"))
                                                               if reply.get("error_type") else "")] += 1
        else:
            out.replies[type(reply).__name__] += 1


def _describe(msg: Any) -> str:
    if isinstance(msg, dict):
        return f"{msg.get('message_type')!r} with {sorted(map(str, msg))[:8]}"
    return type(msg).__name__


# --------------------------------------------------------------------------- HTTP
POST_ROUTES = ["/v1/messages", "/v1/tasks/{task}/answer", "/v1/tasks/{task}/cancel", "/v1/loops",
               "/v1/loops/{loop}/pause", "/v1/loops/{loop}/resume", "/v1/loops/{loop}/trigger", "/v1/sessions",
               "/v1/chat/completions", "PATCH /v1/loops/{loop}"]


def malformed_body(rng: random.Random, i: int) -> tuple[bytes, str]:
    """A body and its content type: JSON that is broken, of the wrong shape, huge or deep."""
    kind = i % 10
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))), "application/json"
    if kind == 1:
        return b'{"content": "unterminated', "application/json"
    if kind == 2:
        return b"[" * rng.choice([1000, 20000, 200000]) + b"]" * 3, "application/json"
    if kind == 3:
        return json.dumps(_nested(rng.choice([100, 900]))).encode(), "application/json"
    if kind == 4:
        return json.dumps({"content": "x" * rng.choice([10, 100_000, 900_000]), "stream": rng.random() < 0.2,
                           "messages": [{"role": "user", "content": "hi"}]}).encode(), "application/json"
    if kind == 5:
        return json.dumps(junk_value(rng), default=str).encode(), "application/json"
    if kind == 6:
        body = {k: junk_value(rng) for k in rng.sample(["content", "user_id", "task_id", "parameters", "approve",
                                                         "session_id", "msg_id", "stream", "request", "schedule",
                                                         "title", "messages", "model", "user"], 5)}
        return json.dumps(body, default=str).encode(), "application/json"
    if kind == 7:
        return b"content=hello&user_id=x", rng.choice(["application/x-www-form-urlencoded", "text/plain", ""])
    if kind == 8:
        return '{"content": "\ud800"}'.encode("utf-8", "surrogatepass"), "application/json"
    return json.dumps({"content": 12, "messages": "not a list", "parameters": [1], "approve": "yes",
                       "stream": "maybe", "request": None}).encode(), "application/json"


@dataclass
class HTTPProbe:
    per_route: dict = field(default_factory=dict)  # route -> Counter of status codes
    server_errors: list = field(default_factory=list)
    hangs: list = field(default_factory=list)
    answers_after: bool = False
    flora_s_per_call: float = 0.0
    raw_health_s_per_call: float = 0.0


async def _call(client: httpx.AsyncClient, method: str, path: str, body: bytes, ctype: str):
    headers = {"Content-Type": ctype} if ctype else {}
    return await client.request(method, path, content=body, headers=headers)


def probe_http(url: str, key: str, n_per_route: int, *, seed: int = 11, concurrency: int = 8) -> HTTPProbe:
    rng = random.Random(seed)
    out = HTTPProbe()

    async def run() -> None:
        limits = httpx.Limits(max_connections=concurrency)
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}",
                                                            "X-Flora-User": "probe_http"},
                                     timeout=CALL_TIMEOUT_S, limits=limits) as client:
            gate = asyncio.Semaphore(concurrency)
            calls = 0
            started = time.perf_counter()

            async def one(route: str, body: bytes, ctype: str) -> None:
                method, _, path = route.rpartition(" ")
                path = path.format(task=m.new_id("task"), loop=m.new_id("loop"))
                async with gate:
                    try:
                        response = await _call(client, method or "POST", path, body, ctype)
                    except httpx.TimeoutException:
                        out.hangs.append(route)
                        return
                    except httpx.HTTPError as exc:
                        out.server_errors.append((route, f"{type(exc).__name__}: {exc}"))
                        return
                out.per_route.setdefault(route, Counter())[response.status_code] += 1
                if response.status_code >= 500:
                    out.server_errors.append((route, response.status_code, body[:120], response.text[:300]))

            jobs = []
            for route in POST_ROUTES:
                for i in range(n_per_route):
                    body, ctype = malformed_body(rng, i)
                    jobs.append(one(route, body, ctype))
                    calls += 1
            await asyncio.gather(*jobs)
            out.flora_s_per_call = (time.perf_counter() - started) / max(calls, 1)
            started = time.perf_counter()
            await asyncio.gather(*(client.get("/health") for _ in range(200)))
            out.raw_health_s_per_call = (time.perf_counter() - started) / 200
            answer = await client.post("/v1/messages", json={"content": "hello"})
            out.answers_after = answer.status_code == 200

    asyncio.run(run())
    return out


# --------------------------------------------------------------------------- tenants
@dataclass
class TenantProbe:
    tried: list = field(default_factory=list)  # (what, status)
    leaks: list = field(default_factory=list)
    task_still_paused: bool = False


def probe_tenants(url: str, key_a: str, key_b: str) -> TenantProbe:
    """Tenant A gets a paused task in a session; tenant B tries every route on it."""
    out = TenantProbe()
    a = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key_a}"}, timeout=CALL_TIMEOUT_S)
    b = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key_b}"}, timeout=CALL_TIMEOUT_S)
    try:
        session = a.post("/v1/sessions", json={"title": "A's secret plans"}, params={"user_id": "alice"}).json()
        paused = a.post("/v1/messages", json={"user_id": "alice", "content": "add numbers a=2",
                                              "session_id": session["session_id"]}).json()
        assert paused["message_type"] == "task_paused", paused
        task, sid = paused["task_id"], session["session_id"]
        secrets = (task, sid, "A's secret plans")
        attempts = [
            ("GET", f"/v1/tasks/{task}", None), ("POST", f"/v1/tasks/{task}/answer", {"content": "3"}),
            ("POST", f"/v1/tasks/{task}/answer", {"parameters": {"b": 3}}),
            ("POST", f"/v1/tasks/{task}/cancel", None), ("GET", f"/v1/events?task_id={task}", None),
            ("GET", "/v1/events", None), ("GET", "/v1/tasks", None), ("GET", "/v1/notifications?all=true", None),
            ("GET", f"/v1/sessions/{sid}", None), ("DELETE", f"/v1/sessions/{sid}", None), ("GET", "/v1/sessions", None),
            ("POST", "/v1/messages", {"content": "3", "task_id": task}),
            ("POST", "/v1/messages", {"content": "3", "session_id": sid}),
            ("POST", "/v1/messages", {"content": "3", "approve": True, "task_id": task}),
        ]
        for method, path, body in attempts:
            for user in ("alice", "mallory"):  # B names A's user too
                response = b.request(method, path, json=body, params={"user_id": user},
                                     headers={"X-Flora-User": user})
                out.tried.append((method, path.replace(task, "{A's task}").replace(sid, "{A's session}"),
                                  user, response.status_code))
                if any(s in response.text for s in secrets) and response.status_code < 400:
                    out.leaks.append((method, path, user, response.status_code, response.text[:300]))
                elif response.status_code < 300 and method != "GET" and path.startswith(("/v1/tasks/", "/v1/sessions/")):
                    out.leaks.append((method, path, user, response.status_code, "changed A's data: "
                                      + response.text[:300]))
        # the live stream, filtered to A's task, and unfiltered
        for path in (f"/v1/events/stream?task_id={task}&since_id=0", "/v1/events/stream?since_id=0"):
            try:
                with b.stream("GET", path, timeout=3) as response:
                    seen = b""
                    for chunk in response.iter_bytes():
                        seen += chunk
                        if len(seen) > 100_000:
                            break
            except httpx.ReadTimeout:
                pass
            out.tried.append(("GET", path.replace(task, "{A's task}"), "b", response.status_code))
            if task.encode() in seen and response.status_code < 400:  # a 404 names the id B itself sent
                out.leaks.append(("GET", path, "stream", response.status_code, seen[:300]))
        state = a.get(f"/v1/tasks/{task}", params={"user_id": "alice"}).json()
        out.task_still_paused = state.get("state") == "waiting_parameters"
    finally:
        a.close()
        b.close()
    return out


# --------------------------------------------------------------------------- limits
@dataclass
class LimitsProbe:
    http_10mb: tuple = ()
    actor_10mb: str = ""
    concurrent: Counter = field(default_factory=Counter)
    concurrent_s: float = 0.0
    big_result: str = ""
    big_result_s: float = 0.0
    rss_mb: dict = field(default_factory=dict)
    answers_after: bool = False


def rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return round(total / 1024, 1)


def probe_limits(url: str, key: str, family: callable, flora=None) -> LimitsProbe:
    out = LimitsProbe()
    out.rss_mb["start"] = rss_mb(family())
    client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120)
    try:
        big = client.post("/v1/messages", json={"user_id": "probe_limits", "content": "x" * (10 * 1024 * 1024)})
        out.http_10mb = (big.status_code, big.json().get("error", {}).get("message", big.text[:200])
                         if big.headers.get("content-type", "").startswith("application/json") else big.text[:200])

        async def many() -> Counter:
            async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=300,
                                         limits=httpx.Limits(max_connections=200)) as aclient:
                async def one(i: int):
                    try:
                        response = await aclient.post("/v1/messages", json={"user_id": f"probe_c{i % 20}",
                                                                              "content": f"add numbers a={i} b=1"})
                        return str(response.status_code)
                    except httpx.HTTPError as exc:
                        return type(exc).__name__
                return Counter(await asyncio.gather(*(one(i) for i in range(200))))

        started = time.monotonic()
        out.concurrent = asyncio.run(many())
        out.concurrent_s = time.monotonic() - started
        out.rss_mb["after 200 concurrent"] = rss_mb(family())

        started = time.monotonic()
        reply = client.post("/v1/messages", json={"user_id": "probe_limits", "content": "big result megabytes=50"})
        out.big_result_s = time.monotonic() - started
        body = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else {}
        out.big_result = (f"{reply.status_code} {body.get('message_type')} {body.get('error_type', '')}: "
                          f"{str(body.get('message') or body.get('error') or '')[:200]} "
                          f"(reply {len(reply.content) / 1e6:.1f} MB)")
        out.rss_mb["after 50 MB result"] = rss_mb(family())
        out.answers_after = client.post("/v1/messages", json={"content": "hello"}).status_code == 200
    finally:
        client.close()
    if flora is not None:
        reply = flora.system.ask(flora.interaction, m.user_input(user_id="probe_limits",
                                                                 content="x" * (10 * 1024 * 1024)), 120)
        out.actor_10mb = (f"{reply.get('message_type')} {reply.get('error_type', '')}: "
                          f"{str(reply.get('message', ''))[:200]}" if isinstance(reply, dict) else repr(reply)[:200])
    return out


# --------------------------------------------------------------------------- SQL
SQL_TRICKS = [
    "INSERT INTO sales VALUES ('x', 1)", "UPDATE sales SET amount = 0", "DELETE FROM sales",
    "DROP TABLE sales", "CREATE TABLE evil (x)", "ALTER TABLE sales ADD COLUMN y",
    "SELECT 1; DELETE FROM sales", "SELECT 1; ATTACH DATABASE '{other}' AS o",
    "ATTACH DATABASE '{other}' AS o", "ATTACH '{other}' AS o", "DETACH DATABASE main",
    "PRAGMA query_only = OFF", "PRAGMA query_only=0; DELETE FROM sales", "PRAGMA writable_schema = ON",
    "PRAGMA journal_mode = DELETE", "PRAGMA user_version = 7", "PRAGMA foreign_keys = OFF",
    "VACUUM", "VACUUM INTO '{other}'", "REINDEX", "ANALYZE",
    "WITH x AS (SELECT 1) DELETE FROM sales", "WITH x AS (SELECT 1) INSERT INTO sales SELECT 'y', 2",
    "EXPLAIN DELETE FROM sales", "SELECT * FROM sales /* ; DELETE FROM sales */; DELETE FROM sales",
    "SELECT ';'; DELETE FROM sales", "select 1;\nupdate sales set amount=1", "BEGIN; DELETE FROM sales; COMMIT",
    "SAVEPOINT a", "REPLACE INTO sales VALUES ('z', 3)", "SELECT load_extension('/tmp/x.so')",
    "SELECT writefile('{other}', 'x')", "SELECT * FROM pragma_query_only", "PRAGMA main.query_only = 0",
    "select 1 union all select 2; drop table sales", "CREATE TEMP TABLE t (x)", "CREATE TEMP VIEW v AS SELECT 1",
    "INSERT INTO temp.t VALUES (1)", "SELECT * FROM sales; -- trailing",
]


@dataclass
class SQLProbe:
    refused: int = 0
    allowed: list = field(default_factory=list)  # tricks that ran (reads only are acceptable)
    changed: bool = False
    other_created: bool = False
    reads_ok: bool = False


def probe_sql(workdir: Path) -> SQLProbe:
    import logging

    from capabilities.base import CapabilityError
    from capabilities.tools.data_access import DataAccessor

    logging.getLogger("flora.tools").setLevel(logging.ERROR)  # one warning per refused trick otherwise

    db, other = workdir / "sales.db", workdir / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS sales (month TEXT, amount INTEGER)")
        conn.execute("DELETE FROM sales")
        conn.executemany("INSERT INTO sales VALUES (?, ?)", [("2026-10", 120), ("2026-09", 80)])
    before = db.read_bytes()
    accessor = DataAccessor({"sales": f"sqlite:///{db}"})
    out = SQLProbe()
    try:
        for trick in SQL_TRICKS:
            try:
                accessor.query("sales", trick.format(other=other))
                out.allowed.append(trick)
            except CapabilityError:
                out.refused += 1
        out.reads_ok = accessor.query("sales", "SELECT sum(amount) AS total FROM sales")["rows"] == [[200]]
    finally:
        accessor.close()
    out.changed = db.read_bytes() != before
    out.other_created = other.exists()
    return out


# --------------------------------------------------------------------------- the script
def server_config(data_dir: Path) -> dict:
    return {
        "data_dir": str(data_dir),
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 60, "execution_pool_size": 2},
        "capabilities": {"plugin_modules": ["tests.support.sample_plugins", "bench.probe_plugin"]},
        "http": {"api_keys": {KEY_A: "team-a", KEY_B: "team-b"}},
    }


def start_server(data_dir: Path):
    from agents.actor_system import free_port
    from tests.support.flora_process import marked_env

    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "config.json").write_text(json.dumps(server_config(data_dir)))
    port = free_port()
    env, mark = marked_env({**os.environ, "PYTHONPATH": str(REPO)})
    log = open(data_dir / "server.log", "wb")
    process = subprocess.Popen([sys.executable, "main.py", "--api", "--config", str(data_dir / "config.json"),
                                "--port", str(port)], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError((data_dir / "server.log").read_text(errors="replace"))
        try:
            if httpx.get(url + "/ready", timeout=2).status_code == 200:
                return process, mark, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the API server did not become ready")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts (a minute instead of several)")
    args = parser.parse_args(argv)
    n_actor, n_http = (300, 100) if args.quick else (1200, 1000)

    import main as flora_main
    from tests.support.flora_process import end_marked, marked_pids

    work = Path(tempfile.mkdtemp(prefix="flora-probes-"))
    failures = 0
    process, mark, url = start_server(work / "server")
    try:
        http = probe_http(url, KEY_A, n_http)
        print(f"http: {sum(sum(c.values()) for c in http.per_route.values())} malformed bodies on "
              f"{len(POST_ROUTES)} routes; 5xx/errors: {len(http.server_errors)}; hangs: {len(http.hangs)}; "
              f"answers afterwards: {http.answers_after}")
        for route, counts in http.per_route.items():
            print(f"  {route:28s} {dict(sorted(counts.items()))}")
        print(f"  per call: Flora route {http.flora_s_per_call * 1000:.1f} ms, raw /health "
              f"{http.raw_health_s_per_call * 1000:.1f} ms (ratio {http.flora_s_per_call / max(http.raw_health_s_per_call, 1e-9):.1f})")
        for error in http.server_errors[:5]:
            print(f"  ! {error}")
        failures += bool(http.server_errors or http.hangs or not http.answers_after)

        tenants = probe_tenants(url, KEY_A, KEY_B)
        print(f"tenants: {len(tenants.tried)} attempts by tenant B on tenant A's paused task; leaks: "
              f"{len(tenants.leaks)}; A's task still paused: {tenants.task_still_paused}")
        print("  statuses: " + ", ".join(f"{m_} {p} {u}={s}" for m_, p, u, s in tenants.tried[:40]))
        for leak in tenants.leaks:
            print(f"  ! {leak}")
        failures += bool(tenants.leaks or not tenants.task_still_paused)

        flora = flora_main.start_flora({**server_config(work / "actors"), "http": {}})
        try:
            limits = probe_limits(url, KEY_A, lambda: marked_pids(mark), flora)
            print(f"limits: 10 MB over HTTP -> {limits.http_10mb}; 10 MB through system.ask -> {limits.actor_10mb}")
            print(f"  200 concurrent requests -> {dict(limits.concurrent)} in {limits.concurrent_s:.1f} s")
            print(f"  50 MB capability result -> {limits.big_result} in {limits.big_result_s:.1f} s")
            print(f"  server RSS (all its processes), MB: {limits.rss_mb}; answers afterwards: {limits.answers_after}")
            failures += not limits.answers_after

            actors = probe_actors(flora, n_actor)
            print(f"actors: {actors.sent} malformed messages in {actors.seconds:.1f} s; PoisonMessage (a handler "
                  f"raised): {len(actors.poison)}; actor processes died: {len(actors.died)}; answers afterwards: "
                  f"{actors.answers_after}")
            print(f"  replies: {dict(actors.replies.most_common(12))}")
            for what in sorted(set(actors.poison))[:10]:
                print(f"  ! poison: {what}")
            failures += bool(actors.poison or actors.died or not actors.answers_after)
        finally:
            flora.shutdown()
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        end_marked(mark)

    sql = probe_sql(work)
    print(f"sql: {len(SQL_TRICKS)} tricks through data_access on SQLite: refused {sql.refused}, ran "
          f"{len(sql.allowed)} {sql.allowed}; database changed: {sql.changed}; other file created: "
          f"{sql.other_created}; reads still work: {sql.reads_ok}")
    failures += bool(sql.changed or sql.other_created or not sql.reads_ok)
    print("probes: " + ("all held" if not failures else f"{failures} probe(s) found a problem"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
