"""Concurrency limits: at most N tasks running at once per tenant, per (tenant, user) and per
(tenant, capability), from ``limits`` in config (0: no limit). Work beyond a limit waits in
the store in state ``queued`` and starts, oldest first, when a slot frees; nothing is dropped
and a restart loses nothing, because the queue *is* the store's ``queued`` tasks.

A slot is a task id in a set: one set for the tenant, one per user, one per capability. A
task takes a slot in all three at once or in none, and gives it back once (removing an id
that is not there changes nothing), so a count can neither leak nor go negative.

- :class:`LocalSlots` keeps the sets in the process: the embedded deployment, where one
  AgentActor serves a tenant (SQLite, one node).
- :class:`RedisSlots` keeps them in Redis, checked and taken by one Lua script, so several
  nodes sharing a tenant never run more than the limit between them.

A slot whose task is no longer running (it ended, or its node died and the restart failed
it, or it waits for its user) is dropped by :meth:`Admission.reclaim`, which runs whenever a
task is refused, so a crashed node's slots come back.

A paused task (waiting for parameters or an approval) holds no slot: its user may answer in
a minute or in a week, and a slot held meanwhile would stop everyone else's work for nothing.
When the answer comes the task takes a slot again, or queues like a new one.

No exceptions of its own: the store's errors (``StoreError`` and below) and Redis's pass
through.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass

from common.tasks.models import FINAL_STATES, PAUSED_STATES, QUEUED, TaskRecord
from common.tasks.store import TaskStore

SCOPES = ("user", "capability", "tenant")  # the order a refusal is reported in: the most specific first
QUEUE_LIMIT = 10_000  # queued tasks read per tenant when looking for the next to start


@dataclass(frozen=True)
class Limits:
    """The configured numbers; 0 means no limit."""

    per_tenant: int = 0
    per_user: int = 0
    per_capability: tuple[tuple[str, int], ...] = ()
    capability_default: int = 0

    @classmethod
    def from_config(cls, section) -> "Limits":
        return cls(per_tenant=section.per_tenant, per_user=section.per_user,
                   per_capability=tuple(sorted(section.per_capability.items())),
                   capability_default=section.capability_default)

    def for_capability(self, capability: str) -> int:
        return dict(self.per_capability).get(capability, self.capability_default)

    def of(self, task: TaskRecord) -> dict[str, int]:
        """scope -> limit for this task's user, capability and tenant."""
        return {"user": self.per_user, "capability": self.for_capability(task.capability),
                "tenant": self.per_tenant}

    @property
    def unlimited(self) -> bool:
        return not (self.per_tenant or self.per_user or self.capability_default
                    or any(n for _, n in self.per_capability))


def key_name(task: TaskRecord, scope: str) -> str:
    """What a scope's slot set is named by: the user id, the capability name, or the tenant."""
    return {"user": task.user_id, "capability": task.capability, "tenant": task.tenant_id}[scope]


@dataclass(frozen=True)
class Refusal:
    """Why a task may not start now: the first full scope, its limit and who holds it."""

    scope: str
    name: str
    limit: int
    running: int

    def describe(self) -> str:
        where = {"user": "per user", "capability": f"for {self.name}", "tenant": "per tenant"}[self.scope]
        return f"limit: {self.limit} running {where}"


class Slots(ABC):
    """The slot sets of every tenant. ``limits`` maps scope -> limit (0: none)."""

    @abstractmethod
    def acquire(self, task: TaskRecord, limits: dict[str, int]) -> str | None:
        """Take a slot for ``task`` in its three sets, or none: None when taken (or held
        already), else the first full scope (in :data:`SCOPES` order)."""

    @abstractmethod
    def release(self, task: TaskRecord) -> bool:
        """Give ``task``'s slot back; True only the first time."""

    @abstractmethod
    def drop(self, tenant_id: str, task_id: str) -> bool:
        """Remove ``task_id`` from every set of the tenant (its record may be gone); True if it held any."""

    @abstractmethod
    def holders(self, tenant_id: str, scope: str, name: str) -> set[str]:
        """Task ids holding a slot in one set."""

    @abstractmethod
    def all_holders(self, tenant_id: str) -> dict[tuple[str, str], set[str]]:
        """(scope, name) -> task ids, every non-empty set of the tenant."""


class LocalSlots(Slots):
    """Slots in this process (one node, one AgentActor per tenant)."""

    def __init__(self):
        self._sets: dict[tuple[str, str, str], set[str]] = {}  # (tenant, scope, name) -> task ids
        self._lock = threading.Lock()

    def acquire(self, task: TaskRecord, limits: dict[str, int]) -> str | None:
        keys = {scope: (task.tenant_id, scope, key_name(task, scope)) for scope in SCOPES}
        with self._lock:
            if task.task_id in self._sets.get(keys["tenant"], ()):
                return None
            for scope in SCOPES:
                if limits.get(scope) and len(self._sets.get(keys[scope], ())) >= limits[scope]:
                    return scope
            for key in keys.values():
                self._sets.setdefault(key, set()).add(task.task_id)
        return None

    def release(self, task: TaskRecord) -> bool:
        with self._lock:
            held = False
            for scope in SCOPES:
                key = (task.tenant_id, scope, key_name(task, scope))
                members = self._sets.get(key)
                if members is not None and task.task_id in members:
                    members.discard(task.task_id)
                    held = True
                    if not members:
                        del self._sets[key]
        return held

    def drop(self, tenant_id: str, task_id: str) -> bool:
        with self._lock:
            held = False
            for key in [k for k, ids in self._sets.items() if k[0] == tenant_id and task_id in ids]:
                self._sets[key].discard(task_id)
                held = True
                if not self._sets[key]:
                    del self._sets[key]
        return held

    def holders(self, tenant_id: str, scope: str, name: str) -> set[str]:
        with self._lock:
            return set(self._sets.get((tenant_id, scope, name), ()))

    def all_holders(self, tenant_id: str) -> dict[tuple[str, str], set[str]]:
        with self._lock:
            return {(scope, name): set(ids) for (tenant, scope, name), ids in self._sets.items() if tenant == tenant_id}


# KEYS: the user's, the capability's and the tenant's slot set (SCOPES order), then the tenant's index of
# sets. ARGV: the task id, then the three limits (0: none), then the three set names for the index.
# Returns 0 when the slot is taken (or was held), else the 1-based position of the first full set.
_ACQUIRE = """
if redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 1 then return 0 end
for i = 1, 3 do
  local limit = tonumber(ARGV[i + 1])
  if limit > 0 and redis.call('SCARD', KEYS[i]) >= limit then return i end
end
for i = 1, 3 do
  redis.call('SADD', KEYS[i], ARGV[1])
  redis.call('SADD', KEYS[4], ARGV[i + 4])
end
return 0
"""
# KEYS: the three sets. ARGV: the task id. Returns how many sets held it (0: released before).
_RELEASE = """
local n = 0
for i = 1, 3 do n = n + redis.call('SREM', KEYS[i], ARGV[1]) end
return n
"""


class RedisSlots(Slots):
    """Slots in Redis, shared by every node; keys under the store's prefix and tenant hash tag::

        <prefix>:{t}:slots:<scope>:<name>   set of the task ids holding a slot
        <prefix>:{t}:slots                  set of "<scope>:<name>" ever used (for all_holders)
    """

    def __init__(self, url: str, prefix: str = "flora"):
        import redis

        self._redis = redis.Redis.from_url(url, decode_responses=True)
        self._prefix = prefix
        self._acquire = self._redis.register_script(_ACQUIRE)
        self._release = self._redis.register_script(_RELEASE)

    def _key(self, tenant_id: str, *parts: str) -> str:
        if not tenant_id or any(c in tenant_id for c in "{}|"):
            raise ValueError(f"tenant id must be non-empty without '{{', '}}' or '|'; got {tenant_id!r}")
        return ":".join((f"{self._prefix}:{{{tenant_id}}}", "slots", *parts))

    def _keys(self, task: TaskRecord) -> list[str]:
        return [self._key(task.tenant_id, scope, key_name(task, scope)) for scope in SCOPES]

    def acquire(self, task: TaskRecord, limits: dict[str, int]) -> str | None:
        full = self._acquire(keys=[*self._keys(task), self._key(task.tenant_id)],
                             args=[task.task_id, *(int(limits.get(s) or 0) for s in SCOPES),
                                   *(f"{s}:{key_name(task, s)}" for s in SCOPES)])
        return SCOPES[int(full) - 1] if full else None

    def release(self, task: TaskRecord) -> bool:
        return int(self._release(keys=self._keys(task), args=[task.task_id])) > 0

    def drop(self, tenant_id: str, task_id: str) -> bool:
        names = sorted(self._redis.smembers(self._key(tenant_id)))
        pipe = self._redis.pipeline(transaction=False)
        for name in names:
            pipe.srem(self._key(tenant_id, name), task_id)
        return any(pipe.execute()) if names else False

    def holders(self, tenant_id: str, scope: str, name: str) -> set[str]:
        return set(self._redis.smembers(self._key(tenant_id, scope, name)))

    def all_holders(self, tenant_id: str) -> dict[tuple[str, str], set[str]]:
        names = sorted(self._redis.smembers(self._key(tenant_id)))
        pipe = self._redis.pipeline(transaction=False)
        for name in names:
            pipe.smembers(self._key(tenant_id, name))
        found = {}
        for name, ids in zip(names, pipe.execute()):
            if ids:
                scope, _, key = name.partition(":")
                found[(scope, key)] = set(ids)
        return found

    def close(self) -> None:
        self._redis.close()


def queue_position(store: TaskStore, task: TaskRecord) -> int:
    """``task``'s place among the queued tasks (1: next), counting only those that share the
    scope it waits on (``meta["queue"]["scope"]``, the whole tenant when none is recorded: a
    retry); 0 when it is not queued. For readers without the limits at hand (the HTTP API)."""
    if task.state != QUEUED:
        return 0
    scope = (task.meta.get("queue") or {}).get("scope") or "tenant"
    queue = sorted(store.list_tasks(task.tenant_id, states=[QUEUED], limit=QUEUE_LIMIT),
                   key=lambda t: (t.created_at, t.task_id))
    ahead = 0
    for other in queue:
        if other.task_id == task.task_id:
            break
        ahead += key_name(other, scope) == key_name(task, scope)
    return ahead + 1


def open_slots(config) -> Slots:
    """Redis slots when the store is Redis (several nodes may serve a tenant), else in-process."""
    if config.store.backend == "redis":
        return RedisSlots(config.redis.url, prefix=config.loops.redis_prefix)
    return LocalSlots()


class Admission:
    """Decides whether a task may start now, and which queued tasks may start when a slot frees.

    ``try_start(task)`` takes the slot or says why not; ``release(task)`` gives it back;
    ``startable(tenant)`` takes slots for the oldest queued tasks that fit now (FIFO per key:
    a task waits only behind older ones of a full scope it shares). ``position`` and
    ``queue_lengths`` are what a user or an operator sees of the queue."""

    def __init__(self, store: TaskStore, slots: Slots, limits: Limits):
        self._store = store
        self._slots = slots
        self.limits = limits

    def try_start(self, task: TaskRecord) -> Refusal | None:
        """Take a slot for ``task``: None when it may start, else why not. A refusal first
        drops the slots of tasks that no longer run, then tries once more."""
        wanted = self.limits.of(task)
        full = self._slots.acquire(task, wanted)
        if full is not None and self.reclaim(task.tenant_id):
            full = self._slots.acquire(task, wanted)
        if full is None:
            return None
        name = key_name(task, full)
        return Refusal(full, name, wanted[full], len(self._slots.holders(task.tenant_id, full, name)))

    def release(self, task: TaskRecord) -> bool:
        return self._slots.release(task)

    def reclaim(self, tenant_id: str) -> int:
        """Drop slots held for tasks that ended, are paused, or are gone; how many were dropped."""
        dropped = 0
        for task_id in sorted(set().union(*self._slots.all_holders(tenant_id).values())):
            task = self._store.get_task(tenant_id, task_id)
            if task is None or task.state in FINAL_STATES or task.state in PAUSED_STATES:
                dropped += self._slots.drop(tenant_id, task_id)
        return dropped

    # -- the queue ------------------------------------------------------------------------
    def queued(self, tenant_id: str) -> list[TaskRecord]:
        """The tenant's queued tasks, oldest first (by when the task was created: a task that
        queued again to be retried keeps its place)."""
        tasks = self._store.list_tasks(tenant_id, states=[QUEUED], limit=QUEUE_LIMIT)
        return sorted(tasks, key=lambda t: (t.created_at, t.task_id))

    def startable(self, tenant_id: str, *, now: float | None = None, skip: set[str] | frozenset = frozenset()
                  ) -> list[TaskRecord]:
        """Take slots for the queued tasks that fit now, oldest first; the caller starts them.
        A task waiting out a retry back-off (``meta["retry"]["not_before"]``), or in ``skip``
        (being started already), is passed over."""
        now = time.time() if now is None else now
        started, reclaimed = [], False
        for task in self.queued(tenant_id):
            if task.task_id in skip or (task.meta.get("retry") or {}).get("not_before", 0) > now:
                continue
            full = self._slots.acquire(task, self.limits.of(task))
            if full is not None and not reclaimed:  # slots of a crashed node's tasks, once per look
                reclaimed = True
                if self.reclaim(tenant_id):
                    full = self._slots.acquire(task, self.limits.of(task))
            if full is None:
                started.append(task)
        return started

    def position(self, task: TaskRecord, queue: list[TaskRecord] | None = None) -> int:
        """1 for the next to start among the queued tasks that share a limited scope with
        ``task``, 0 when it is not queued."""
        if task.state != QUEUED:
            return 0
        queue = self.queued(task.tenant_id) if queue is None else queue
        limited = [s for s, n in self.limits.of(task).items() if n] or list(SCOPES)
        ahead = 0
        for other in queue:
            if other.task_id == task.task_id:
                break
            if any(key_name(other, s) == key_name(task, s) for s in limited):
                ahead += 1
        return ahead + 1

    def queue_lengths(self, tenant_id: str) -> dict[str, int]:
        """How many tasks wait, per key: ``tenant``, ``user:<id>``, ``capability:<name>``."""
        counts: Counter[str] = Counter()
        for task in self.queued(tenant_id):
            counts.update(("tenant", f"user:{task.user_id}", f"capability:{task.capability}"))
        return dict(counts)

    def running_counts(self, tenant_id: str) -> dict[str, int]:
        """How many slots are held, per key, named as in :meth:`queue_lengths`."""
        return {(scope if scope == "tenant" else f"{scope}:{name}"): len(ids)
                for (scope, name), ids in self._slots.all_holders(tenant_id).items()}
