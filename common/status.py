"""Live counts for operators: ``python main.py --status`` and the HTTP ``/metrics`` text.

:func:`collect_status` reads the configured task store and loop registry, so it answers the
same whether Flora is running or not, and from any node when the store is the shared Redis:
tasks by state (per tenant and in total), queue lengths (tasks in state ``queued`` per
tenant), loop tasks by status, the nodes, whether long-term memory can be reached
(:func:`memory_health`, also behind the HTTP ``/health``) and the model hosts of this data
directory (whether each has its model loaded or unloaded while idle, since when;
``llm.idle_unload_s``; ``down`` with the reason while one that died is being started again,
and how often that happened). :func:`render_text` makes a short table of it,
:func:`render_prometheus` the Prometheus exposition text; :class:`StatusCache` collects at
most once per interval, so a scrape storm does not become a storm on the store.

Counting goes through the stores' own interfaces (``count_by_state``, ``list``); only finding
which tenants exist reads the backends directly, read-only, since neither interface lists
tenants. A SQLite file that does not exist yet is reported as empty, not created.

Exceptions::

    StatusUnavailable     the store or loop registry cannot be reached (the message names the key)
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import urlsplit, urlunsplit

import httpx
import redis

from common.loops.registry import open_loop_registry
from common.tasks.models import QUEUED  # a tenant's queue length is its count of queued tasks
from common.tasks.store import open_store
from config import FloraConfig

log = logging.getLogger("flora.status")

REDIS_TIMEOUT_S = 3.0  # a status call must fail fast on a wrong host, not hang on connect
DEFAULT_MAX_AGE_S = 1.0
CONFIGURED_NODES_NOTE = "from the configuration (actors.node), not checked live"

NodesSource = Callable[[], Iterable[dict]]


class StatusUnavailable(RuntimeError):
    """The store or loop registry cannot be reached; the message names the configuration key."""


# --------------------------------------------------------------------------- collecting
def collect_status(config: FloraConfig, nodes: NodesSource | None = None) -> dict:
    """The live counts, as JSON values::

        {"generated_at": 1767000000.0,
         "store": {"backend": "sqlite", "location": "data/flora.db"},
         "loop_registry": {"backend": "sqlite", "location": "data/flora.db"},
         "tasks": {"total": {"completed": 3}, "by_tenant": {"default": {"completed": 3}}},
         "queues": {"default": 0},
         "loop_tasks": {"total": {"active": 1}, "by_tenant": {"default": {"active": 1}}},
         "nodes": [{"name": "local"}], "nodes_note": "from the configuration ...",
         "memory": {"backend": "embedded", "location": "data/memory", "state": "ok"},
         "models": [{"model": "qwen2.5-coder-1.5b", "state": "unloaded_idle", "since": 1767000000.0, ...}],
         "tools": {"isolation": "kernel", "state": "ready", "mechanism": "bubblewrap 0.8.0", ...}}

    ``nodes`` lists the live nodes (dicts with at least ``name``); without it the node the
    configuration names is reported, with a note saying so. Raises StatusUnavailable.
    """
    by_tenant = _task_counts(config)
    loops_by_tenant = _loop_counts(config)
    tenants = sorted(set(by_tenant) | {config.default_tenant})
    if nodes is None and config.store.backend == "redis":
        node_list, note = _registered_nodes(config), ""
    elif nodes is None:
        node_list, note = [{"name": config.actors.node}], CONFIGURED_NODES_NOTE
    else:
        node_list, note = [dict(n) for n in nodes()], ""
    return {
        "generated_at": time.time(),
        "store": _location(config, config.store.backend),
        "loop_registry": _location(config, config.loops.registry),
        "tasks": {"total": _sum(by_tenant.values()), "by_tenant": by_tenant},
        "queues": {tenant: by_tenant.get(tenant, {}).get(QUEUED, 0) for tenant in tenants},
        "loop_tasks": {"total": _sum(loops_by_tenant.values()), "by_tenant": loops_by_tenant},
        "nodes": node_list,
        "nodes_note": note,
        "memory": memory_health(config),
        "models": model_states(config),
        "tools": tools_isolation(config),
        "channels": channel_states(config),
    }


def channel_states(config: FloraConfig) -> dict[str, dict]:
    """Each enabled chat channel's state (``running``, ``retrying``, ``stopped: bad
    credentials``; ``not started`` before its actor first recorded one) and its outbox's
    entries not delivered: ``pending`` (being tried) and ``failed`` (given up)."""
    names = [name for name, settings in config.channels.items() if settings.enabled]
    backend = config.store.backend
    if not names or (backend == "sqlite" and not Path(config.sqlite_path).exists()):
        return {name: {"state": "not started", "pending": 0, "failed": 0} for name in names}
    with _reaching(config, backend):
        store = open_store(config)
        try:
            states = store.channel_states()
            report = {}
            for name in names:
                tenant = config.channels[name].tenant or config.default_tenant
                counts = store.count_channel_deliveries(tenant, name)
                known = states.get(name)
                report[name] = {"state": known.label if known else "not started", "node": known.node if known else "",
                                "pending": counts.get("pending", 0), "failed": counts.get("failed", 0)}
        finally:
            store.close()
    return report


def tools_isolation(config: FloraConfig) -> dict:
    """What confines the programs shell and python_exec run (docs/tools.md)."""
    from capabilities.tools.kernel_sandbox import status

    return status(config.tools.isolation, config.tools.sandbox_uid)


MEMORY_PROBE_TIMEOUT_S = 2.0


def memory_health(config: FloraConfig) -> dict[str, str]:
    """Whether long-term memory can work: ``state`` is "ok", "off" (``memory.enabled`` false) or
    "degraded: <why>". Cheap and read-only: an embedded store's folder is checked, not opened
    (Chroma is the running Flora's to open); a Chroma server is asked for its heartbeat."""
    section = config.memory
    if not section.enabled:
        return {"backend": section.backend, "location": "", "state": "off"}
    if section.backend == "chroma_http":
        url = section.chroma_url.rstrip("/")
        report = {"backend": "chroma_http", "location": _redact(url)}
        try:
            answer = httpx.get(f"{url}/api/v2/heartbeat", timeout=MEMORY_PROBE_TIMEOUT_S)
        except httpx.HTTPError as exc:
            return {**report, "state": f"degraded: Chroma at {report['location']} does not answer "
                                       f"({type(exc).__name__}); check memory.chroma_url"}
        if answer.status_code != 200:
            return {**report, "state": f"degraded: Chroma at {report['location']} answered HTTP "
                                       f"{answer.status_code}; check memory.chroma_url"}
        return {**report, "state": "ok"}
    path = Path(config.memory_path)
    report = {"backend": "embedded", "location": str(path)}
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is None or not existing.is_dir():
        return {**report, "state": f"degraded: {existing or path} is not a folder; check memory.path"}
    if not os.access(existing, os.W_OK | os.X_OK):
        return {**report, "state": f"degraded: {existing} is not writable; check memory.path"}
    return {**report, "state": "ok"}


def health_report(memory_state: str, models: list[dict], tools: dict | None = None,
                  channels: dict[str, dict] | None = None) -> dict:
    """``GET /health``'s answer: ``status`` "ok", or "degraded" with ``reasons`` while long-term
    memory cannot be reached, a model host is down (it died and is being started again) or the
    tool sandbox cannot be set up, or a chat channel is not running or has undelivered
    messages; ``memory``, ``models`` (each host's state, a down one's ``reason``), ``tools``
    (the isolation in force) and ``channels`` (:func:`channel_states`) as they are."""
    reasons = [] if memory_state in ("ok", "off") else [f"memory {memory_state}"]
    reasons += [f"model host {m.get('model', '?')} is down: {m.get('reason') or 'no reason given'}"
                for m in models if m.get("state") == "down"]
    if tools is not None and tools.get("state") == "unavailable":
        reasons.append(f"the tool sandbox cannot be set up: {tools.get('reason')}")
    for name, channel in (channels or {}).items():
        if channel["state"] not in ("running", "not started"):
            reasons.append(f"channel {name} is {channel['state']}")
        if channel["pending"] or channel["failed"]:
            reasons.append(f"channel {name} has undelivered messages: {channel['pending']} pending, "
                           f"{channel['failed']} failed")
    report = {"status": "degraded" if reasons else "ok", "memory": memory_state, "models": models,
              **({"tools": tools} if tools is not None else {}), **({"channels": channels} if channels else {})}
    return {**report, "reasons": reasons} if reasons else report


def model_states(config: FloraConfig) -> list[dict]:
    """The running model hosts' states (backend local; none when Flora is not running)."""
    from capabilities.llm import host_state_dir
    from capabilities.llm.model_host import read_host_states

    return read_host_states(host_state_dir(config.data_dir))


def _registered_nodes(config: FloraConfig) -> list[dict]:
    """The nodes alive in the shared registry (their entries not expired), with how many
    AgentActors each runs."""
    from common.cluster import open_cluster

    cluster = open_cluster(config)
    try:
        with _reaching(config, "redis"):
            nodes, agents = cluster.nodes(), cluster.agents()
    finally:
        cluster.close()
    now = time.time()
    return [{"name": n.name, "role": n.role, "execution": n.execution, "host": n.host, "pid": n.pid,
             "admin_port": n.admin_port, "agents": sum(1 for a in agents if a["node"] == n.name),
             "up_s": round(now - n.started_at, 1)} for n in nodes]


def _task_counts(config: FloraConfig) -> dict[str, dict[str, int]]:
    backend = config.store.backend
    if backend == "sqlite" and not Path(config.sqlite_path).exists():
        return {}  # a status call never creates the store
    with _reaching(config, backend):
        _check_redis(config, backend)
        store = open_store(config)
        try:
            counts = {tenant: store.count_by_state(tenant) for tenant in store.tenants()}
        finally:
            store.close()
    return {tenant: dict(sorted(c.items())) for tenant, c in counts.items() if c}


def _loop_counts(config: FloraConfig) -> dict[str, dict[str, int]]:
    backend = config.loops.registry
    if backend == "sqlite" and not Path(config.sqlite_path).exists():
        return {}
    with _reaching(config, backend):
        _check_redis(config, backend)
        registry = open_loop_registry(backend, sqlite_path=config.sqlite_path, redis_url=config.redis.url,
                                      prefix=config.loops.redis_prefix)
        try:
            counts = {tenant: Counter(t.state for t in registry.list(tenant)) for tenant in registry.tenants()}
        finally:
            registry.close()
    return {tenant: dict(sorted(c.items())) for tenant, c in counts.items() if c}


@contextmanager
def _reaching(config: FloraConfig, backend: str) -> Iterator[None]:
    """Turns the backend's connection errors into StatusUnavailable naming the key to check."""
    try:
        yield
    except (redis.RedisError, ValueError) as exc:
        if backend != "redis":
            raise
        raise StatusUnavailable(f"cannot read Redis at redis.url {_redact(config.redis.url)}: {exc}") from exc
    except sqlite3.Error as exc:
        if backend != "sqlite":
            raise
        raise StatusUnavailable(f"cannot read the SQLite store at store.sqlite_path {config.sqlite_path}: "
                                f"{exc}") from exc


def _check_redis(config: FloraConfig, backend: str) -> None:
    """Fail fast, within REDIS_TIMEOUT_S, on a Redis that does not answer."""
    if backend != "redis":
        return
    client = redis.Redis.from_url(config.redis.url, socket_connect_timeout=REDIS_TIMEOUT_S,
                                  socket_timeout=REDIS_TIMEOUT_S)
    try:
        client.ping()
    finally:
        client.close()


def _sum(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for c in counts:
        total.update(c)
    return dict(sorted(total.items()))


def _location(config: FloraConfig, backend: str) -> dict[str, str]:
    where = str(config.sqlite_path) if backend == "sqlite" else _redis_location(config)
    return {"backend": backend, "location": where}


def _redis_location(config: FloraConfig) -> str:
    return f"{_redact(config.redis.url)} (keys {config.loops.redis_prefix}:*)"


def _redact(url: str) -> str:
    """The URL without its password."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(unparsable URL)"
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


# --------------------------------------------------------------------------- caching
class StatusCache:
    """``collect()`` at most once per ``max_age_s``; callers in between get the last answer
    (or the last StatusUnavailable). One collection runs at a time: concurrent callers wait
    for it rather than starting their own."""

    def __init__(self, collect: Callable[[], dict], *, max_age_s: float = DEFAULT_MAX_AGE_S,
                 clock: Callable[[], float] = time.monotonic):
        self._collect, self.max_age_s, self._clock = collect, max_age_s, clock
        self._lock = threading.Lock()
        self._at: float | None = None
        self._value: dict | None = None
        self._error: StatusUnavailable | None = None

    def get(self) -> dict:
        with self._lock:
            if self._at is None or self._clock() - self._at >= self.max_age_s:
                try:
                    self._value, self._error = self._collect(), None
                except StatusUnavailable as exc:
                    self._value, self._error = None, exc
                self._at = self._clock()
            if self._error is not None:
                raise self._error
            assert self._value is not None
            return self._value


# --------------------------------------------------------------------------- rendering
def render_text(status: dict) -> str:
    """A short aligned table for a terminal."""
    rows: list[tuple[str, str, str, str]] = []
    tasks = status["tasks"]
    for tenant, counts in tasks["by_tenant"].items():
        rows += [("tasks", tenant, state, str(n)) for state, n in counts.items()]
    rows += [("tasks", "(all)", state, str(n)) for state, n in tasks["total"].items()]
    if not tasks["total"]:
        rows.append(("tasks", "(all)", "-", "0"))
    rows += [("queue", tenant, QUEUED, str(n)) for tenant, n in status["queues"].items()]
    loops = status["loop_tasks"]
    for tenant, counts in loops["by_tenant"].items():
        rows += [("loop tasks", tenant, state, str(n)) for state, n in counts.items()]
    rows += [("loop tasks", "(all)", state, str(n)) for state, n in loops["total"].items()]
    if not loops["total"]:
        rows.append(("loop tasks", "(all)", "-", "0"))
    rows += [("node", str(node.get("name", "?")), _node_detail(node), "") for node in status["nodes"]]
    rows += [("model", str(model.get("model", "?")), model_line(model), "") for model in status.get("models", [])]
    for name, channel in status.get("channels", {}).items():
        rows += [("channel", name, channel["state"], ""),
                 ("channel", name, "undelivered pending", str(channel["pending"])),
                 ("channel", name, "undelivered failed", str(channel["failed"]))]
    header = ("WHAT", "TENANT/NODE", "STATE", "COUNT")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    lines = [f"store: {status['store']['backend']} {status['store']['location']}",
             f"loop registry: {status['loop_registry']['backend']} {status['loop_registry']['location']}"]
    memory = status.get("memory")
    if memory:
        where = f" {memory['backend']} {memory['location']}".rstrip() if memory["state"] != "off" else ""
        lines.append(f"memory:{where} {memory['state']}")
    tools = status.get("tools")
    if tools:
        detail = tools.get("mechanism") or tools.get("reason", "")
        lines.append(f"tool sandbox: {tools['state']} ({detail})")
    lines.append("")
    for row in [header, *rows]:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3].rjust(5))
    if status.get("nodes_note"):
        lines.append(f"nodes: {status['nodes_note']}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def model_line(model: dict) -> str:
    """``unloaded_idle since 2026-11-24 12:40:03 rss_mb=61.2``."""
    since = model.get("since")
    when = time.strftime(" since %Y-%m-%d %H:%M:%S", time.localtime(since)) if isinstance(since, (int, float)) else ""
    rss = f" rss_mb={model['rss_mb']}" if model.get("rss_mb") is not None else ""
    restarts = f" restarts={model['restarts']}" if model.get("restarts") else ""
    why = f" ({model['reason']})" if model.get("reason") else ""
    return f"{model.get('state', '?')}{when}{rss}{restarts}{why}"


def _node_detail(node: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in node.items() if k != "name" and v not in (None, "")) or "-"


def render_prometheus(status: dict) -> str:
    """The status as Prometheus exposition text (version 0.0.4), one family per count."""
    lines = ["# HELP flora_store_up Whether the task store and loop registry could be read.",
             "# TYPE flora_store_up gauge", "flora_store_up 1",
             "# HELP flora_tasks Tasks in the store by tenant and state.", "# TYPE flora_tasks gauge"]
    for tenant, counts in status["tasks"]["by_tenant"].items():
        lines += [f"flora_tasks{_labels(tenant=tenant, state=state)} {n}" for state, n in counts.items()]
    lines += ["# HELP flora_queue_length Tasks waiting in the queue (state queued) by tenant.",
              "# TYPE flora_queue_length gauge"]
    lines += [f"flora_queue_length{_labels(tenant=tenant)} {n}" for tenant, n in status["queues"].items()]
    lines += ["# HELP flora_loop_tasks Loop tasks by status, all tenants.", "# TYPE flora_loop_tasks gauge"]
    lines += [f"flora_loop_tasks{_labels(status=state)} {n}" for state, n in status["loop_tasks"]["total"].items()]
    lines += ["# HELP flora_nodes Flora nodes known.", "# TYPE flora_nodes gauge", f"flora_nodes {len(status['nodes'])}"]
    memory = status.get("memory")
    if memory and memory["state"] != "off":
        lines += ["# HELP flora_memory_up Whether long-term memory's store can be reached.",
                  "# TYPE flora_memory_up gauge", f"flora_memory_up {int(memory['state'] == 'ok')}"]
    if status.get("models"):  # backend local, running: its model hosts
        lines += ["# HELP flora_model_loaded Whether a model host has its model loaded (0: unloaded while idle).",
                  "# TYPE flora_model_loaded gauge"]
        lines += [f"flora_model_loaded{_labels(model=m.get('model', '?'))} {int(m.get('state') == 'loaded')}"
                  for m in status["models"]]
        lines += ["# HELP flora_model_host_up Whether a model host's process is up (0: it died and is being "
                  "started again).", "# TYPE flora_model_host_up gauge"]
        lines += [f"flora_model_host_up{_labels(model=m.get('model', '?'))} {int(m.get('state') != 'down')}"
                  for m in status["models"]]
        lines += ["# HELP flora_model_host_restarts_total Times a model host was started again after it died.",
                  "# TYPE flora_model_host_restarts_total counter"]
        lines += [f"flora_model_host_restarts_total{_labels(model=m.get('model', '?'))} {int(m.get('restarts') or 0)}"
                  for m in status["models"]]
    if status.get("channels"):
        lines += ["# HELP flora_channel_up Whether a chat channel runs (1), backs off (0.5) or stopped (0).",
                  "# TYPE flora_channel_up gauge"]
        lines += [f"flora_channel_up{_labels(channel=name, state=c['state'])} {_channel_up(c['state'])}"
                  for name, c in status["channels"].items()]
        lines += ["# HELP flora_channel_undelivered Outbox entries of a chat channel not delivered, by state.",
                  "# TYPE flora_channel_undelivered gauge"]
        for name, c in status["channels"].items():
            lines += [f"flora_channel_undelivered{_labels(channel=name, state=state)} {c[state]}"
                      for state in ("pending", "failed")]
    return "\n".join(lines) + "\n"


def _channel_up(state: str) -> str:
    return "1" if state == "running" else "0.5" if state == "retrying" else "0"


def render_prometheus_unavailable() -> str:
    """What ``/metrics`` says about the store when it cannot be read."""
    return ("# HELP flora_store_up Whether the task store and loop registry could be read.\n"
            "# TYPE flora_store_up gauge\nflora_store_up 0\n")


def metrics_text(cache: StatusCache) -> str:
    """The status part of ``/metrics``: the counts, or ``flora_store_up 0`` when unreachable."""
    try:
        return render_prometheus(cache.get())
    except StatusUnavailable as exc:
        log.warning("metrics without store counts: %s", exc)
        return render_prometheus_unavailable()


def _labels(**labels: Any) -> str:
    return "{" + ",".join(f'{name}="{_escape(str(value))}"' for name, value in labels.items()) + "}"


def _escape(value: str) -> str:
    """A label value as the exposition format wants it: backslash, quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
