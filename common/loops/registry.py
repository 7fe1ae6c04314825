"""LoopTaskRegistry: where loop tasks and their runs live, so the scheduler keeps no state
of its own and a restart loses neither a loop task nor the memory of a run already started.

Every call is scoped by tenant except ``due``, which the scheduler polls across tenants.
Backends: :class:`~common.loops.sqlite_registry.SQLiteLoopRegistry` (embedded default; may
share the TaskStore's file, in its own tables) and
:class:`~common.loops.redis_registry.RedisLoopRegistry` (several machines).
``open_loop_registry`` picks one. Errors are drawn in :mod:`common.loops.models`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Iterable

from common.loops.models import LoopTask, RunRecord


class LoopTaskRegistry(ABC):
    # -- loop tasks ----------------------------------------------------------------
    @abstractmethod
    def add(self, task: LoopTask) -> LoopTask:
        """Store a new loop task; LoopTaskExists if its id is taken in its tenant."""

    @abstractmethod
    def get(self, tenant_id: str, loop_task_id: str) -> LoopTask | None: ...

    @abstractmethod
    def list(self, tenant_id: str, *, user_id: str | None = None,
             states: Iterable[str] | None = None) -> list[LoopTask]:
        """Oldest first (by ``created_at``); every state, deleted included, unless ``states``."""

    @abstractmethod
    def tenants(self) -> list[str]:
        """The tenants that have loop tasks, sorted (for operators' counts)."""

    @abstractmethod
    def update(self, tenant_id: str, loop_task_id: str, *, user_id: str, **changes) -> LoopTask:
        """Apply ``changes`` (fields in ``MUTABLE_FIELDS``) atomically and return the task.

        Raises LoopTaskNotFound, or Forbidden when ``user_id`` does not own it; deleting is
        ``state="deleted"``: the task and its runs stay for the history."""

    @abstractmethod
    def due(self, now: float, limit: int = 100) -> list[LoopTask]:
        """Active loop tasks of every tenant with ``next_fire_at <= now``, most overdue first."""

    # -- runs: the exactly-once part -------------------------------------------------
    @abstractmethod
    def claim_run(self, tenant_id: str, loop_task_id: str, run_key: str, scheduled_at: float) -> bool:
        """Record the run as running and return True the first time ``run_key`` is seen in
        this tenant; False ever after, so a duplicated trigger does not run twice.
        LoopTaskNotFound if the loop task is not in this tenant."""

    @abstractmethod
    def finish_run(self, tenant_id: str, run_key: str, state: str, task_id: str = "") -> RunRecord:
        """Mark a running run completed or failed. The first finish wins: finishing a run
        that already finished (a redelivered result) changes nothing. RunNotFound if the
        key was never claimed in this tenant."""

    @abstractmethod
    def runs(self, tenant_id: str, loop_task_id: str, limit: int = 100) -> list[RunRecord]:
        """Newest scheduled time first."""

    @abstractmethod
    def running(self, tenant_id: str, loop_task_id: str) -> list[RunRecord]:
        """The runs not finished yet, oldest first: what the overlap policy looks at."""

    def close(self) -> None:
        """Release connections."""


def open_loop_registry(backend: str, *, sqlite_path: str | Path | None = None,
                       redis_url: str | None = None, prefix: str = "flora") -> LoopTaskRegistry:
    """The registry for ``backend`` ("sqlite" or "redis"). Plain values rather than the config
    object, because ``StoreConfig.backend`` does not offer "redis" yet."""
    if backend == "sqlite":
        if sqlite_path is None:
            raise ValueError("the sqlite loop registry needs sqlite_path")
        from common.loops.sqlite_registry import SQLiteLoopRegistry
        return SQLiteLoopRegistry(sqlite_path)
    if backend == "redis":
        if redis_url is None:
            raise ValueError("the redis loop registry needs redis_url")
        from common.loops.redis_registry import RedisLoopRegistry
        return RedisLoopRegistry.from_url(redis_url, prefix=prefix)
    raise ValueError(f"loop registry backend {backend!r} is not supported; use 'sqlite' or 'redis'")
