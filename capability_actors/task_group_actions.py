"""What a TaskGroupRunner is given and what it answers with.

Given: a :class:`GroupPolicy` (how failures and coupled units are treated, the config's
``planning`` section) and a :class:`Setting` (how wide the plan runs, from the
ParallelTaskAggregator). Answered: :data:`Action` values the TaskGroupAggregatorActor carries
out — :class:`Dispatch` (messages for one ExecutionActor), :class:`Retry` (call the runner's
``retry`` after a delay), :class:`Aggregate` (a message for the ResultAggregatorActor) and
:class:`Report` (a message for the AgentActor).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FAIL_FAST, CONTINUE = "fail_fast", "continue"


@dataclass(frozen=True)
class GroupPolicy:
    """How a group treats failures and coupled units (``planning.*`` in the config)."""

    max_retries: int = 2
    retry_backoff_s: float = 0.2
    retry_backoff_max_s: float = 10.0
    failure_policy: str = FAIL_FAST
    min_ok: int = 1
    coupled_rounds: int = 2

    def backoff(self, attempt: int) -> float:
        return min(self.retry_backoff_s * 2 ** (attempt - 1), self.retry_backoff_max_s)


@dataclass(frozen=True)
class Setting:
    """How wide one plan runs; ``trial`` is the optimizer's, reported back at the end."""

    concurrency: int
    batch_size: int
    trial: Any = None  # the optimizer's ParallelSetting, or None for a fixed setting
    mode: str = "fixed"  # serial | fixed | tuned: who decided (ParallelTaskAggregator)


@dataclass(frozen=True)
class Dispatch:
    messages: tuple[dict, ...]  # ``execute`` / ``resume_execution``, all for one ExecutionActor


@dataclass(frozen=True)
class Retry:
    task_id: str  # the parent
    step_id: str
    delay_s: float


@dataclass(frozen=True)
class Report:
    message: dict  # ``plan_result`` or ``task_paused``, for the AgentActor


@dataclass(frozen=True)
class Aggregate:
    message: dict  # ``aggregate_plan``, for the ResultAggregatorActor; its answer goes to on_aggregated


Action = Dispatch | Retry | Report | Aggregate
