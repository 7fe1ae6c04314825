"""Paused tasks at scale: hold N paused tasks in the store, resume a sample of them through
Flora (structured answer → ExecutionActor → task_completed; no model), measure the store's
size per paused task and the time from a restart until the paused tasks are resumable —
each beside the raw store operations on the same store in the same run.

    .venv/bin/python bench/pause_resume.py [--tasks 10000] [--resumes 300] [--backend sqlite|redis]

Targets (issue): resume p99 ≤ 20 ms; recovery ≤ 2 s for 10,000 paused tasks.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import main  # noqa: E402
from common import messages as m  # noqa: E402
from common.tasks.models import TaskRecord  # noqa: E402
from common.tasks.store import open_store  # noqa: E402
from config import load_config  # noqa: E402

MISSING = [{"name": "value", "description": "any text", "schema": {"type": "string"}}]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def summary(seconds: list[float]) -> dict:
    return {"p50_ms": statistics.median(seconds) * 1000, "p99_ms": percentile(seconds, 99) * 1000}


def config(data_dir: Path, backend: str, prefix: str) -> dict:
    return {"data_dir": str(data_dir), "log_level": "ERROR", "llm": {"backend": "none"},
            "store": {"backend": backend}, "loops": {"redis_prefix": prefix},
            "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 30},
            "capabilities": {"plugin_modules": ["bench.pause_plugin"]}}


def hold_paused(store, n: int) -> tuple[list[TaskRecord], float]:
    """N paused tasks (a thousand users, as a service would have), written as the pause writes them."""
    tasks, started = [], time.perf_counter()
    for i in range(n):
        task = TaskRecord(task_id=f"task_{uuid.uuid4().hex[:16]}", tenant_id="default", user_id=f"user_{i % 1000}",
                          content="hold it", state="waiting_parameters", intent="task", capability="hold",
                          missing=MISSING, msg_id=f"msg_{i}")
        tasks.append(store.create_task(task))
    return tasks, time.perf_counter() - started


def raw_ops(store, tasks: list[TaskRecord], count: int) -> dict:
    """The store operations a resume is made of, alone: read the task, move it (and back)."""
    reads, moves = [], []
    for task in tasks[:count]:
        t = time.perf_counter()
        store.get_task(task.tenant_id, task.task_id)
        reads.append(time.perf_counter() - t)
        t = time.perf_counter()
        store.transition(task.tenant_id, task.task_id, "running", expect=("waiting_parameters",))
        moves.append(time.perf_counter() - t)
        store.transition(task.tenant_id, task.task_id, "waiting_parameters")
    return {"get_task": summary(reads), "transition": summary(moves)}


def resume(flora, task: TaskRecord) -> float:
    started = time.perf_counter()
    reply = flora.system.ask(flora.interaction, m.user_input(user_id=task.user_id, content="", task_id=task.task_id,
                                                             parameters={"value": "now"}), 30)
    elapsed = time.perf_counter() - started
    if not reply or reply.get("message_type") != "task_completed":
        raise RuntimeError(f"resume of {task.task_id} did not complete: {reply!r}")
    return elapsed


def store_bytes(store, backend: str, data_dir: Path, n: int, prefix: str) -> float:
    if backend == "sqlite":
        db = store._db  # the file's pages in use, WAL included once checkpointed
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
        return pages * db.execute("PRAGMA page_size").fetchone()[0] / n
    import redis

    client = redis.Redis.from_url(load_config(config(data_dir, backend, prefix), env={}).redis.url)
    total = sum(client.memory_usage(key) or 0 for key in client.scan_iter(f"{prefix}:*", count=1000))
    return total / n


def run(tasks_n: int, resumes: int, backend: str) -> dict:
    data_dir = Path(tempfile.mkdtemp(prefix="flora-bench-"))
    prefix = f"bench{uuid.uuid4().hex[:8]}"
    cfg = config(data_dir, backend, prefix)
    store = open_store(load_config(cfg, env={}))
    try:
        tasks, write_s = hold_paused(store, tasks_n + resumes)
        per_task = store_bytes(store, backend, data_dir, len(tasks), prefix)
        raw = raw_ops(store, tasks[-resumes:], resumes)
        flora = main.start_flora(cfg)
        try:
            for task in tasks[:20]:  # warm-up: worker processes, connections
                resume(flora, task)
            sample = tasks[20:20 + resumes]
            flora_resume = summary([resume(flora, t) for t in sample])
        finally:
            flora.shutdown()
        # restart: from start_flora until the last paused task resumes
        started = time.perf_counter()
        flora = main.start_flora(cfg)
        try:
            up_s = time.perf_counter() - started
            resume(flora, tasks[-1])
            recovery_s = time.perf_counter() - started
        finally:
            flora.shutdown()
    finally:
        if backend == "redis":
            import redis

            client = redis.Redis.from_url(load_config(cfg, env={}).redis.url)
            for key in client.scan_iter(f"{prefix}:*", count=1000):
                client.delete(key)
        store.close()
    return {"backend": backend, "paused_tasks": tasks_n, "resumes": resumes, "write_per_task_ms": write_s / len(tasks) * 1000,
            "resume": flora_resume, "raw": raw, "bytes_per_paused_task": per_task, "restart_up_s": up_s,
            "restart_until_resumable_s": recovery_s}


def report(r: dict) -> None:
    raw_resume = r["raw"]["get_task"]["p50_ms"] + r["raw"]["transition"]["p50_ms"]
    print(f"{r['paused_tasks']:,} paused tasks held ({r['backend']}), {r['resumes']} resumed through Flora "
          "(structured answer → ExecutionActor → task_completed, no model)")
    print(f"{'':38}{'p50 ms':>9}{'p99 ms':>9}")
    print(f"{'Flora resume round trip':38}{r['resume']['p50_ms']:9.2f}{r['resume']['p99_ms']:9.2f}   target p99 ≤ 20")
    print(f"{'raw store get_task':38}{r['raw']['get_task']['p50_ms']:9.3f}{r['raw']['get_task']['p99_ms']:9.3f}")
    print(f"{'raw store transition':38}{r['raw']['transition']['p50_ms']:9.3f}{r['raw']['transition']['p99_ms']:9.3f}")
    print(f"Flora resume / raw (get+transition) at p50: {r['resume']['p50_ms'] / raw_resume:.1f}×")
    print(f"store per paused task: {r['bytes_per_paused_task']:.0f} bytes; writing one: {r['write_per_task_ms']:.3f} ms")
    print(f"restart: Flora up in {r['restart_up_s']:.2f} s; the last paused task resumed "
          f"{r['restart_until_resumable_s']:.2f} s after the start began   target ≤ 2 s")


def main_(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--resumes", type=int, default=300)
    parser.add_argument("--backend", choices=["sqlite", "redis"], default="sqlite")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.tasks, args.resumes, args.backend)
    report(result)
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main_())
