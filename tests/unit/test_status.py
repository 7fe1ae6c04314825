"""Live counts (common/status.py) against the real SQLite file and the real Redis, their
Prometheus text parsed back, and ``main.py --status`` as an operator runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import redis

from capabilities.loop.schedule import Schedule
from common.cluster import NodeInfo, open_cluster
from common.loops.models import LoopTask
from common.loops.registry import open_loop_registry
from common.status import (
    CONFIGURED_NODES_NOTE, StatusCache, StatusUnavailable, collect_status, health_report, metrics_text,
    render_prometheus, render_text,
)
from common.tasks.models import TaskRecord
from common.tasks.store import open_store
from config import load_config
from tests.unit.conftest import REDIS_URL

ROOT = Path(__file__).resolve().parents[2]
EVERY_HOUR = Schedule.on_cron("0 * * * *", timezone="Asia/Shanghai").to_dict()

# one sample line of the exposition format: name, optional {label="value",...}, a number
SAMPLE = re.compile(r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)'
                    r'(?:\{(?P<labels>[a-zA-Z_][a-zA-Z0-9_]*="(?:\\[\\"n]|[^"\\\n])*"'
                    r'(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:\\[\\"n]|[^"\\\n])*")*)\})? '
                    r'(?P<value>-?[0-9.]+(?:e[+-]?[0-9]+)?|\+Inf|-Inf|NaN)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:\\[\\"n]|[^"\\\n])*)"')


@pytest.fixture
def config(store_config, backend):
    """The store's config with the loop registry on the same backend; on Redis its node is
    announced in the node registry, as a running node would be."""
    config = load_config({**store_config.to_dict(), "loops": {**store_config.loops.model_dump(), "registry": backend}},
                         env={})
    if backend != "redis":
        yield config
        return
    cluster, node = open_cluster(config), NodeInfo(name=config.actors.node)
    cluster.announce(node)
    yield config
    cluster.leave(node)
    cluster.close()


def add_task(store, tenant: str, task_id: str, state: str) -> None:
    store.create_task(TaskRecord(task_id=task_id, tenant_id=tenant, user_id="u1", content="x", state=state))


def add_loop(config, tenant: str, loop_task_id: str, state: str = "active") -> None:
    registry = open_loop_registry(config.loops.registry, sqlite_path=config.sqlite_path, redis_url=config.redis.url,
                                  prefix=config.loops.redis_prefix)
    try:
        registry.add(LoopTask(loop_task_id=loop_task_id, tenant_id=tenant, user_id="u1", content="remind me",
                              schedule=EVERY_HOUR, state=state))
    finally:
        registry.close()


def parse_prometheus(text: str) -> dict[tuple[str, frozenset], float]:
    """Every line checked against the format; the samples by (name, labels)."""
    samples, typed = {}, set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            name = line.split()[2]
            assert name not in typed, f"second TYPE line for {name}"
            typed.add(name)
            continue
        if line.startswith("# HELP "):
            continue
        sample = SAMPLE.match(line)
        assert sample, f"not an exposition sample: {line!r}"
        labels = frozenset((name, _unescape(value)) for name, value in LABEL.findall(sample["labels"] or ""))
        key = (sample["name"], labels)
        assert key not in samples, f"duplicate sample {line!r}"
        samples[key] = float(sample["value"])
    return samples


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m[1] == "n" else m[1], value)


# -- collecting ---------------------------------------------------------------------------
def test_status_counts_tasks_per_tenant_and_in_total(store, config):
    add_task(store, "acme", "t1", "completed")
    add_task(store, "acme", "t2", "completed")
    add_task(store, "acme", "t3", "waiting_parameters")
    add_task(store, "beta", "t4", "failed")
    status = collect_status(config)
    assert status["tasks"]["by_tenant"] == {"acme": {"completed": 2, "waiting_parameters": 1},
                                            "beta": {"failed": 1}}
    assert status["tasks"]["total"] == {"completed": 2, "failed": 1, "waiting_parameters": 1}
    assert status["store"]["backend"] == config.store.backend


def test_queue_lengths_count_queued_tasks_per_tenant_and_show_zero_for_none(store, config):
    add_task(store, "acme", "q1", "queued")
    add_task(store, "acme", "q2", "queued")
    add_task(store, "beta", "r1", "running")
    status = collect_status(config)
    assert status["queues"] == {"acme": 2, "beta": 0, config.default_tenant: 0}


def test_loop_tasks_are_counted_by_status_across_tenants(store, config):
    add_loop(config, "acme", "lt1")
    add_loop(config, "acme", "lt2", "paused")
    add_loop(config, "beta", "lt3")
    status = collect_status(config)
    assert status["loop_tasks"]["total"] == {"active": 2, "paused": 1}
    assert status["loop_tasks"]["by_tenant"] == {"acme": {"active": 1, "paused": 1}, "beta": {"active": 1}}


def test_nodes_come_from_the_registry_or_the_config_unless_a_source_is_given(store, config, backend):
    status = collect_status(config)
    if backend == "redis":  # the shared registry: the nodes alive now
        assert [(n["name"], n["role"], n["agents"]) for n in status["nodes"]] == [(config.actors.node, "node", 0)]
        assert status["nodes_note"] == ""
    else:
        assert status["nodes"] == [{"name": config.actors.node}] and status["nodes_note"] == CONFIGURED_NODES_NOTE
    live = collect_status(config, nodes=lambda: [{"name": "n1", "role": "node"}, {"name": "n2", "role": "worker"}])
    assert [n["name"] for n in live["nodes"]] == ["n1", "n2"] and live["nodes_note"] == ""


def test_status_is_json_values_only(store, config):
    add_task(store, "acme", "t1", "completed")
    status = collect_status(config)
    assert json.loads(json.dumps(status)) == status


def test_a_sqlite_store_not_created_yet_reads_as_empty_and_stays_uncreated(tmp_path):
    config = load_config({"data_dir": str(tmp_path / "never")}, env={})
    status = collect_status(config)
    assert status["tasks"] == {"total": {}, "by_tenant": {}} and status["queues"] == {"default": 0}
    assert not (tmp_path / "never").exists()


def test_an_unreachable_redis_is_reported_with_its_key_and_without_the_password(tmp_path):
    config = load_config({"data_dir": str(tmp_path), "store": {"backend": "redis"},
                          "redis": {"url": "redis://:s3cret@127.0.0.1:1/0"}}, env={})
    with pytest.raises(StatusUnavailable) as caught:
        collect_status(config)
    assert "redis.url" in str(caught.value) and "s3cret" not in str(caught.value)


def test_a_malformed_redis_url_is_reported_as_unavailable(tmp_path):
    config = load_config({"data_dir": str(tmp_path), "store": {"backend": "redis"},
                          "redis": {"url": "http://127.0.0.1:6379"}}, env={})
    with pytest.raises(StatusUnavailable, match="redis.url"):
        collect_status(config)


# -- rendering ----------------------------------------------------------------------------
def test_prometheus_text_parses_back_to_the_counts(store, config):
    add_task(store, "acme", "t1", "completed")
    add_task(store, "acme", "q1", "queued")
    add_loop(config, "acme", "lt1")
    samples = parse_prometheus(render_prometheus(collect_status(config)))
    assert samples[("flora_tasks", frozenset({("tenant", "acme"), ("state", "completed")}))] == 1
    assert samples[("flora_queue_length", frozenset({("tenant", "acme")}))] == 1
    assert samples[("flora_queue_length", frozenset({("tenant", config.default_tenant)}))] == 0
    assert samples[("flora_loop_tasks", frozenset({("status", "active")}))] == 1
    assert samples[("flora_nodes", frozenset())] == 1
    assert samples[("flora_store_up", frozenset())] == 1


def test_prometheus_label_values_are_escaped():
    tenant = 'we"ird\\te\nnant'
    status = {"tasks": {"total": {"running": 1}, "by_tenant": {tenant: {"running": 1}}}, "queues": {tenant: 3},
              "loop_tasks": {"total": {}, "by_tenant": {}}, "nodes": []}
    text = render_prometheus(status)
    assert 'flora_queue_length{tenant="we\\"ird\\\\te\\nnant"} 3' in text
    samples = parse_prometheus(text)
    assert samples[("flora_tasks", frozenset({("tenant", tenant), ("state", "running")}))] == 1
    assert samples[("flora_nodes", frozenset())] == 0


def test_every_family_has_help_and_type_before_its_samples(store, config):
    add_task(store, "acme", "t1", "completed")
    text = render_prometheus(collect_status(config))
    seen: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            seen.add(line.split()[2])
        elif not line.startswith("#"):
            assert re.split(r"[{ ]", line)[0] in seen, line
    assert seen == {"flora_store_up", "flora_tasks", "flora_queue_length", "flora_loop_tasks", "flora_nodes",
                    "flora_memory_up"}


def test_text_table_lines_up_and_shows_every_count(store, config):
    add_task(store, "acme", "t1", "completed")
    add_task(store, "acme", "q1", "queued")
    add_loop(config, "beta", "lt1")
    text = render_text(collect_status(config))
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("WHAT"))
    rows = lines[lines.index(header) + 1:][:-1]  # the last line is the note about the nodes
    column = header.index("TENANT/NODE")
    assert rows and all(row[column - 2:column] == "  " and row[column] != " " for row in rows), text
    assert re.search(r"^tasks\s+acme\s+completed\s+1$", text, re.M)
    assert re.search(r"^queue\s+acme\s+queued\s+1$", text, re.M)
    assert re.search(r"^loop tasks\s+\(all\)\s+active\s+1$", text, re.M)
    assert re.search(rf"^node\s+{config.actors.node}\b", text, re.M)


# -- model hosts --------------------------------------------------------------------------
def _status_with(models: list[dict]) -> dict:
    return {"tasks": {"total": {}, "by_tenant": {}}, "queues": {}, "loop_tasks": {"total": {}, "by_tenant": {}},
            "nodes": [], "models": models, "store": {"backend": "sqlite", "location": "x"},
            "loop_registry": {"backend": "sqlite", "location": "x"}}


DOWN = {"model": "qwen", "state": "down", "reason": "killed by SIGSEGV", "since": 1767000000.0, "restarts": 2}
UP = {"model": "small", "state": "loaded", "since": 1767000000.0, "restarts": 0, "rss_mb": 600.0}


def test_health_is_degraded_with_the_reason_while_a_model_host_is_down_and_ok_after():
    report = health_report("ok", [DOWN, UP])
    assert report["status"] == "degraded"
    assert report["reasons"] == ["model host qwen is down: killed by SIGSEGV"]
    assert report["models"] == [DOWN, UP]
    assert health_report("ok", [{**DOWN, "state": "loaded", "reason": None}, UP]) == {
        "status": "ok", "memory": "ok", "models": [{**DOWN, "state": "loaded", "reason": None}, UP]}
    assert health_report("degraded: gone", [])["reasons"] == ["memory degraded: gone"]
    assert health_report("off", [])["status"] == "ok"


def test_metrics_count_model_host_restarts_and_say_which_is_down():
    samples = parse_prometheus(render_prometheus(_status_with([DOWN, UP])))
    assert samples[("flora_model_host_restarts_total", frozenset({("model", "qwen")}))] == 2
    assert samples[("flora_model_host_restarts_total", frozenset({("model", "small")}))] == 0
    assert samples[("flora_model_host_up", frozenset({("model", "qwen")}))] == 0
    assert samples[("flora_model_host_up", frozenset({("model", "small")}))] == 1
    assert samples[("flora_model_loaded", frozenset({("model", "qwen")}))] == 0


def test_the_status_table_shows_a_down_host_its_reason_and_restarts():
    text = render_text(_status_with([DOWN, UP]))
    assert re.search(r"^model\s+qwen\s+down since .* restarts=2 \(killed by SIGSEGV\)$", text, re.M), text
    assert re.search(r"^model\s+small\s+loaded since .* rss_mb=600.0$", text, re.M), text


# -- caching ------------------------------------------------------------------------------
def test_status_cache_collects_at_most_once_per_interval():
    now = [100.0]
    calls = []
    cache = StatusCache(lambda: calls.append(now[0]) or {"n": len(calls)}, max_age_s=1.0, clock=lambda: now[0])
    assert cache.get() == {"n": 1}
    now[0] += 0.5
    assert cache.get() == {"n": 1}
    now[0] += 0.6
    assert cache.get() == {"n": 2} and calls == [100.0, 101.1]


def test_status_cache_lets_one_caller_collect_while_the_others_wait():
    release, calls = threading.Event(), []

    def slow() -> dict:
        calls.append(1)
        release.wait(5)
        return {"n": len(calls)}

    cache = StatusCache(slow, max_age_s=60)
    results: list[dict] = []
    threads = [threading.Thread(target=lambda: results.append(cache.get())) for _ in range(8)]
    for t in threads:
        t.start()
    release.set()
    for t in threads:
        t.join(5)
    assert calls == [1] and results == [{"n": 1}] * 8


def test_metrics_text_says_the_store_is_down_and_remembers_it_for_the_interval(tmp_path):
    config = load_config({"data_dir": str(tmp_path), "store": {"backend": "redis"},
                          "redis": {"url": "redis://127.0.0.1:1/0"}}, env={})
    calls = []

    def collect() -> dict:
        calls.append(1)
        return collect_status(config)

    cache = StatusCache(collect, max_age_s=60)
    for _ in range(3):
        samples = parse_prometheus(metrics_text(cache))
        assert samples == {("flora_store_up", frozenset()): 0}
    assert calls == [1]


# -- main.py --status ---------------------------------------------------------------------
def run_status(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLORA_")}  # only the file configures it
    return subprocess.run([sys.executable, "main.py", "--status", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env=env)


@pytest.fixture
def sqlite_config_file(tmp_path):
    config = load_config({"data_dir": str(tmp_path)}, env={})
    store_path = config.sqlite_path
    store = open_store(config)
    add_task(store, "default", "t1", "completed")
    add_task(store, "default", "q1", "queued")
    add_task(store, "acme", "t2", "waiting_approval")
    store.close()
    add_loop(config, "default", "lt1")
    path = tmp_path / "flora.yaml"
    path.write_text(f"data_dir: {tmp_path}\nactors:\n  node: node-a\n", encoding="utf-8")
    assert store_path.exists()
    return path


def test_status_command_prints_a_table(sqlite_config_file):
    done = run_status("--config", str(sqlite_config_file))
    assert done.returncode == 0, done.stderr
    assert re.search(r"^tasks\s+default\s+completed\s+1$", done.stdout, re.M), done.stdout
    assert re.search(r"^tasks\s+acme\s+waiting_approval\s+1$", done.stdout, re.M), done.stdout
    assert re.search(r"^queue\s+default\s+queued\s+1$", done.stdout, re.M), done.stdout
    assert re.search(r"^queue\s+acme\s+queued\s+0$", done.stdout, re.M), done.stdout
    assert re.search(r"^loop tasks\s+\(all\)\s+active\s+1$", done.stdout, re.M), done.stdout
    assert re.search(r"^node\s+node-a\b", done.stdout, re.M), done.stdout


def test_status_command_prints_json(sqlite_config_file):
    done = run_status("--config", str(sqlite_config_file), "--json")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["tasks"]["total"] == {"completed": 1, "queued": 1, "waiting_approval": 1}
    assert status["queues"] == {"acme": 0, "default": 1}
    assert status["loop_tasks"]["total"] == {"active": 1}
    assert status["nodes"] == [{"name": "node-a"}]


def test_status_command_exits_2_when_redis_cannot_be_reached(tmp_path):
    path = tmp_path / "flora.yaml"
    path.write_text(f"data_dir: {tmp_path}\nstore: {{backend: redis}}\nredis: {{url: 'redis://127.0.0.1:1/0'}}\n",
                    encoding="utf-8")
    done = run_status("--config", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert "cannot read Redis at redis.url redis://127.0.0.1:1/0" in done.stderr, done.stderr


def test_status_command_reads_a_redis_store(redis_prefix, tmp_path):
    config = load_config({"data_dir": str(tmp_path), "store": {"backend": "redis"}, "redis": {"url": REDIS_URL},
                          "loops": {"registry": "redis", "redis_prefix": redis_prefix}}, env={})
    store = open_store(config)
    add_task(store, "acme", "q1", "queued")
    store.close()
    path = tmp_path / "flora.json"
    path.write_text(json.dumps(config.to_dict()), encoding="utf-8")
    done = run_status("--config", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["queues"]["acme"] == 1
    assert redis.Redis.from_url(REDIS_URL).exists(f"{redis_prefix}:tenants")
