"""A loop task kept in Redis, end to end: Flora on multiprocTCPBase with ``loops.registry:
redis`` (under a key prefix of this module's own, removed at the end) and the in-process
trigger queue; the TaskStore stays SQLite. Register → the schedule fires → the capability
runs in an ExecutionActor → the result reaches the user as a notification."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
import redis

from capabilities.loop.schedule import Schedule
from capabilities.loop.service import run_task_id
from common.loops.models import RUN_COMPLETED
from common.tasks.models import COMPLETED
from tests.loop_e2e.plugins import CAPABILITY, runs_of
from tests.loop_e2e.support import TENANT, Inbox, running_flora, wait_stable

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture(scope="module")
def redis_client():
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        client.ping()
    except redis.ConnectionError as exc:
        pytest.fail(f"Redis at {REDIS_URL} is unreachable ({exc}); this test needs the real Redis", pytrace=False)
    yield client
    client.close()


@pytest.fixture(scope="module")
def flora_on_redis(tmp_path_factory, redis_client):
    data_dir = tmp_path_factory.mktemp("flora-redis-e2e")
    prefix = f"flora-test-{uuid.uuid4().hex[:12]}"
    config = {
        "data_dir": str(data_dir),
        "llm": {"backend": "none"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 30},
        "loops": {"registry": "redis", "redis_prefix": prefix, "queue": "memory", "tick_s": 0.2},
        "redis": {"url": REDIS_URL},
        "capabilities": {"plugin_modules": ["tests.loop_e2e.plugins"]},
    }
    count_file = data_dir / "runs.txt"
    try:
        with running_flora(config, count_file) as (flora, runtime):
            yield flora, runtime, prefix, count_file
    finally:
        leftover = list(redis_client.scan_iter(f"{prefix}*"))
        if leftover:
            redis_client.delete(*leftover)


def test_loop_task_in_redis_fires_runs_and_its_result_becomes_a_notification(flora_on_redis, redis_client):
    flora, runtime, prefix, count_file = flora_on_redis
    user, tag = "u_redis", "r" + uuid.uuid4().hex[:10]
    loop = runtime.loops.register(tenant_id=TENANT, user_id=user, content=f"count runs of {tag}",
                                  schedule=Schedule.once(datetime.now(UTC) + timedelta(seconds=1), timezone="UTC"),
                                  capability=CAPABILITY, parameters={"tag": tag})
    assert any(True for _ in redis_client.scan_iter(f"{prefix}*")), "the loop task is not kept in Redis"

    inbox = Inbox(flora, user)
    notes = inbox.wait_for(lambda n: n["loop_task_id"] == loop.loop_task_id, timeout=20)
    assert len(notes) == 1, f"no notification of the run within 20s: {inbox.notes}"
    note = notes[0]
    assert note["kind"] == "loop_run_completed" and note["message"] == f"e2e run {tag} done"
    run_key = note["data"]["run_key"]
    task_id = run_task_id(TENANT, run_key)
    assert note["task_id"] == task_id

    assert wait_stable(lambda: len(runs_of(count_file, tag)), settle_s=1.0, timeout=20) == 1
    assert [(r[1], r[2]) for r in runs_of(count_file, tag)] == [(task_id, run_key)]
    task = runtime.store.get_task(TENANT, task_id)
    assert task is not None and task.state == COMPLETED and task.meta["run"]["loop_task_id"] == loop.loop_task_id
    events = [e.event_type for e in runtime.events.history(TENANT, task_id=task_id)]
    assert events == ["TASK_CREATED", "TASK_TRIGGERED", "TASK_STARTED", "TASK_COMPLETED"], events
    runs = runtime.loops.registry.runs(TENANT, loop.loop_task_id)
    assert [(r.run_key, r.state, r.task_id) for r in runs] == [(run_key, RUN_COMPLETED, task_id)]
    assert runtime.loops.registry.get(TENANT, loop.loop_task_id).next_fire_at is None  # a one-shot is spent
    assert flora.notifications(user) == []
