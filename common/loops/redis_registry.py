"""Redis backend of the LoopTaskRegistry, for several machines sharing one scheduler state.

Keys, with ``{t}`` the tenant in braces (a Redis Cluster hash tag, so all of one tenant's
keys share a slot and the claim script may touch several of them)::

    <prefix>:{t}:loop:task:<id>        hash, one JSON value per LoopTask field
    <prefix>:{t}:loop:tasks            sorted set of ids by created_at (listing)
    <prefix>:{t}:loop:run:<run_key>    string, the RunRecord as JSON; written with SET NX
    <prefix>:{t}:loop:runs:<id>        sorted set of run keys by scheduled_at
    <prefix>:{t}:loop:running:<id>     the same, only runs not finished yet
    <prefix>:loop:due                  sorted set "tenant|id" by next_fire_at, active only

A tenant's calls build keys from its own name only, so tenant B never reads tenant A's
keys; ``due`` is the one cross-tenant read, as the scheduler needs. Updates run under
WATCH/MULTI on the task's hash, so two concurrent updates cannot leave the hash and the
due set disagreeing, and each writes only the fields it changes. A tenant id may not
contain ``{``, ``}`` or ``|``: they would break the key layout above (ValueError).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from typing import Any, Iterable

import redis

from common.loops.models import (
    ACTIVE, Forbidden, LoopTask, LoopTaskExists, LoopTaskNotFound, RUN_RUNNING, RunNotFound, RunRecord,
    check_changes, check_finish_state,
)
from common.loops.registry import LoopTaskRegistry

log = logging.getLogger("flora.loops")

# Checking the task and claiming the key in one script: a claim for a task that is not in
# this tenant must fail without leaving a run behind, and SET NX alone decides who is first.
_CLAIM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX') then return 0 end
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[3])
return 1
"""


class RedisLoopRegistry(LoopTaskRegistry):
    def __init__(self, client: redis.Redis, *, prefix: str = "flora"):
        if not client.connection_pool.connection_kwargs.get("decode_responses"):
            raise ValueError("RedisLoopRegistry needs a client made with decode_responses=True")
        self._redis = client
        self._prefix = prefix
        self._claim = client.register_script(_CLAIM)

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "flora") -> RedisLoopRegistry:
        return cls(redis.Redis.from_url(url, decode_responses=True), prefix=prefix)

    # -- keys ----------------------------------------------------------------------
    def _tenant(self, tenant_id: str) -> str:
        if not isinstance(tenant_id, str) or not tenant_id or any(c in tenant_id for c in "{}|"):
            raise ValueError(f"tenant id must be non-empty without '{{', '}}' or '|'; got {tenant_id!r}")
        return f"{self._prefix}:{{{tenant_id}}}:loop"

    def _task_key(self, tenant_id: str, loop_task_id: str) -> str:
        return f"{self._tenant(tenant_id)}:task:{loop_task_id}"

    @property
    def _due_key(self) -> str:
        return f"{self._prefix}:loop:due"

    # -- loop tasks ----------------------------------------------------------------
    def add(self, task: LoopTask) -> LoopTask:
        key = self._task_key(task.tenant_id, task.loop_task_id)

        def write(pipe: redis.client.Pipeline) -> None:
            if pipe.exists(key):
                raise LoopTaskExists(task.loop_task_id)
            pipe.multi()
            pipe.hset(key, mapping=_encode(task.to_dict()))
            pipe.zadd(f"{self._tenant(task.tenant_id)}:tasks", {task.loop_task_id: task.created_at})
            self._sync_due(pipe, task)

        self._redis.transaction(write, key)
        return task

    def get(self, tenant_id: str, loop_task_id: str) -> LoopTask | None:
        raw = self._redis.hgetall(self._task_key(tenant_id, loop_task_id))
        return _decode(raw) if raw else None

    def tenants(self) -> list[str]:
        # each tenant's listing key is <prefix>:{<tenant>}:loop:tasks; operators ask rarely, so a SCAN
        head, tail = len(self._prefix) + 2, "}:loop:tasks"
        keys = self._redis.scan_iter(match=f"{_glob_escape(self._prefix)}:{{*{tail}", count=1000)
        return sorted({(k.decode() if isinstance(k, bytes) else k)[head:-len(tail)] for k in keys})

    def list(self, tenant_id: str, *, user_id: str | None = None,
             states: Iterable[str] | None = None) -> list[LoopTask]:
        ids = self._redis.zrange(f"{self._tenant(tenant_id)}:tasks", 0, -1)
        wanted = None if states is None else set(states)
        tasks = self._fetch([(tenant_id, i) for i in ids])
        return [t for t in tasks if (user_id is None or t.user_id == user_id)
                and (wanted is None or t.state in wanted)]

    def update(self, tenant_id: str, loop_task_id: str, *, user_id: str, **changes: Any) -> LoopTask:
        check_changes(changes)
        key = self._task_key(tenant_id, loop_task_id)

        def write(pipe: redis.client.Pipeline) -> LoopTask:
            raw = pipe.hgetall(key)
            if not raw:
                raise LoopTaskNotFound(loop_task_id)
            current = _decode(raw)
            if current.user_id != user_id:
                raise Forbidden(loop_task_id, user_id)
            stamped = {**changes, "updated_at": time.time()}
            merged = replace(current, **stamped)
            pipe.multi()
            pipe.hset(key, mapping=_encode(stamped))
            self._sync_due(pipe, merged)
            return merged

        return self._redis.transaction(write, key, value_from_callable=True)

    def _sync_due(self, pipe: redis.client.Pipeline, task: LoopTask) -> None:
        """Keep ``due`` in step with the hash, in the same MULTI as the hash write."""
        member = f"{task.tenant_id}|{task.loop_task_id}"
        if task.state == ACTIVE and task.next_fire_at is not None:
            pipe.zadd(self._due_key, {member: task.next_fire_at})
        else:
            pipe.zrem(self._due_key, member)

    def due(self, now: float, limit: int = 100) -> list[LoopTask]:
        members = self._redis.zrangebyscore(self._due_key, "-inf", now, start=0, num=limit)
        wanted = [tuple(m.split("|", 1)) for m in members]
        # a member whose hash is gone or no longer active is stale; the scheduler must not fire it
        return [t for t in self._fetch(wanted) if t.state == ACTIVE]

    def _fetch(self, ids: list[tuple[str, str]]) -> list[LoopTask]:
        pipe = self._redis.pipeline(transaction=False)
        for tenant_id, loop_task_id in ids:
            pipe.hgetall(self._task_key(tenant_id, loop_task_id))
        return [_decode(raw) for raw in pipe.execute() if raw]

    # -- runs ----------------------------------------------------------------------
    def claim_run(self, tenant_id: str, loop_task_id: str, run_key: str, scheduled_at: float) -> bool:
        base = self._tenant(tenant_id)
        record = RunRecord(run_key=run_key, loop_task_id=loop_task_id, tenant_id=tenant_id,
                           scheduled_at=float(scheduled_at))
        outcome = self._claim(
            keys=[self._task_key(tenant_id, loop_task_id), f"{base}:run:{run_key}",
                  f"{base}:runs:{loop_task_id}", f"{base}:running:{loop_task_id}"],
            args=[json.dumps(record.to_dict(), ensure_ascii=False), repr(float(scheduled_at)), run_key])
        if outcome == -1:
            raise LoopTaskNotFound(loop_task_id)
        if outcome == 0:
            log.info("run %s of loop task %s already claimed; not running it again", run_key, loop_task_id)
        return outcome == 1

    def finish_run(self, tenant_id: str, run_key: str, state: str, task_id: str = "") -> RunRecord:
        check_finish_state(state)
        base = self._tenant(tenant_id)
        key = f"{base}:run:{run_key}"

        def write(pipe: redis.client.Pipeline) -> RunRecord:
            raw = pipe.get(key)
            if raw is None:
                raise RunNotFound(run_key)
            record = RunRecord(**json.loads(raw))
            if record.state != RUN_RUNNING:
                return record  # the first finish won; a redelivered one changes nothing
            record = replace(record, state=state, task_id=task_id, finished_at=time.time())
            pipe.multi()
            pipe.set(key, json.dumps(record.to_dict(), ensure_ascii=False))
            pipe.zrem(f"{base}:running:{record.loop_task_id}", run_key)
            return record

        return self._redis.transaction(write, key, value_from_callable=True)

    def runs(self, tenant_id: str, loop_task_id: str, limit: int = 100) -> list[RunRecord]:
        base = self._tenant(tenant_id)
        keys = self._redis.zrevrange(f"{base}:runs:{loop_task_id}", 0, limit - 1)
        return self._runs(base, keys)

    def running(self, tenant_id: str, loop_task_id: str) -> list[RunRecord]:
        base = self._tenant(tenant_id)
        return self._runs(base, self._redis.zrange(f"{base}:running:{loop_task_id}", 0, -1))

    def _runs(self, base: str, run_keys: list[str]) -> list[RunRecord]:
        pipe = self._redis.pipeline(transaction=False)
        for run_key in run_keys:
            pipe.get(f"{base}:run:{run_key}")
        return [RunRecord(**json.loads(raw)) for raw in pipe.execute() if raw is not None]

    def close(self) -> None:
        self._redis.close()


def _encode(values: dict) -> dict:
    return {k: json.dumps(v, ensure_ascii=False) for k, v in values.items()}


def _decode(raw: dict) -> LoopTask:
    return LoopTask.from_dict({k: json.loads(v) for k, v in raw.items()})


_GLOB_ESCAPED = str.maketrans({c: "\\" + c for c in "*?[]\\"})


def _glob_escape(text: str) -> str:
    return text.translate(_GLOB_ESCAPED)
