"""Loop tasks ("every day at 09:00 remind me to review GRPO") and the runs they start.

A loop task is not an ordinary task: it lives until it is deleted, and each time its
schedule fires the scheduler starts one *run*, which executes as an ordinary task. The
registry keeps both, so after a restart the scheduler knows what is due and which runs
already started (``RunRecord``); a run key is claimed once, ever, so a duplicated or
redelivered trigger cannot run the same scheduled time twice.

Exceptions::

    LoopStoreError
     ├── LoopTaskNotFound   no such loop task in this tenant
     ├── LoopTaskExists     ``add`` of an id that is taken
     ├── Forbidden          another user's loop task
     └── RunNotFound        ``finish_run`` of a run key never claimed

Bad values (an unknown state, overlap or missed policy, an unknown field) are caller bugs
and raise a plain ``ValueError``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields

ACTIVE, PAUSED, DELETED = "active", "paused", "deleted"
DONE = "done"  # its schedule will not fire again (a one-time reminder that fired) and its last run ended
STATES = (ACTIVE, PAUSED, DONE, DELETED)

# What to do when a fire comes while the previous run is still going.
OVERLAP_SKIP, OVERLAP_QUEUE = "skip", "queue"
OVERLAP_POLICIES = (OVERLAP_SKIP, OVERLAP_QUEUE)

# What to do with fires missed while Flora was down; the names of schedule.due_runs' policies.
MISSED_POLICIES = ("catch_up", "skip", "latest")
# One reminder after downtime rather than none (skip) or a flood (catch_up).
DEFAULT_MISSED = "latest"

RUN_RUNNING, RUN_COMPLETED, RUN_FAILED = "running", "completed", "failed"
RUN_STATES = (RUN_RUNNING, RUN_COMPLETED, RUN_FAILED)
RUN_FINAL_STATES = (RUN_COMPLETED, RUN_FAILED)

# The fields ``update`` may change; identity, owner and timestamps are not among them.
MUTABLE_FIELDS = frozenset({"state", "schedule", "parameters", "next_fire_at", "last_fire_at",
                            "content", "overlap", "missed", "channel", "capability"})


class LoopStoreError(Exception):
    """Base of the loop registry's errors."""


class LoopTaskNotFound(LoopStoreError):
    def __init__(self, loop_task_id: str):
        super().__init__(loop_task_id)  # the id in args, so the error survives pickling
        self.loop_task_id = loop_task_id

    def __str__(self) -> str:
        return f"no loop task {self.loop_task_id!r}"


class LoopTaskExists(LoopStoreError):
    def __init__(self, loop_task_id: str):
        super().__init__(loop_task_id)
        self.loop_task_id = loop_task_id

    def __str__(self) -> str:
        return f"loop task {self.loop_task_id!r} already exists"


class Forbidden(LoopStoreError):
    def __init__(self, loop_task_id: str, user_id: str):
        super().__init__(loop_task_id, user_id)
        self.loop_task_id, self.user_id = loop_task_id, user_id

    def __str__(self) -> str:
        return f"loop task {self.loop_task_id!r} does not belong to user {self.user_id!r}"


class RunNotFound(LoopStoreError):
    def __init__(self, run_key: str):
        super().__init__(run_key)
        self.run_key = run_key

    def __str__(self) -> str:
        return f"no run {self.run_key!r}"


@dataclass
class LoopTask:
    """One loop task as stored. ``schedule`` is ``Schedule.to_dict()``; ``next_fire_at`` is
    what the scheduler polls on (None: nothing left to fire, e.g. a past one-shot);
    ``last_fire_at`` the scheduled time of the last run started, which ``due_runs`` needs
    to count the runs missed. ``channel`` says where a run's result is pushed."""

    loop_task_id: str
    tenant_id: str
    user_id: str
    content: str
    schedule: dict
    capability: str = ""
    parameters: dict = field(default_factory=dict)
    state: str = ACTIVE
    overlap: str = OVERLAP_SKIP
    missed: str = DEFAULT_MISSED
    next_fire_at: float | None = None
    last_fire_at: float | None = None
    channel: str = ""
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        check_changes({"state": self.state, "overlap": self.overlap, "missed": self.missed,
                       "schedule": self.schedule, "parameters": self.parameters})

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> LoopTask:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class RunRecord:
    """One run of a loop task, keyed by ``schedule.run_key``. ``task_id`` is the ordinary
    task that executed it, known once it started (may stay "" if it never did)."""

    run_key: str
    loop_task_id: str
    tenant_id: str
    scheduled_at: float
    state: str = RUN_RUNNING
    task_id: str = ""
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def check_changes(changes: dict) -> None:
    """Refuse values no backend should store, before either backend writes anything."""
    unknown = set(changes) - MUTABLE_FIELDS
    if unknown:
        raise ValueError(f"loop task fields that cannot change: {sorted(unknown)}")
    for name, allowed in (("state", STATES), ("overlap", OVERLAP_POLICIES), ("missed", MISSED_POLICIES)):
        if name in changes and changes[name] not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {changes[name]!r}")
    for name in ("schedule", "parameters"):
        if name in changes and not isinstance(changes[name], dict):
            raise ValueError(f"{name} must be a dict; got {type(changes[name]).__name__}")


def check_finish_state(state: str) -> None:
    if state not in RUN_FINAL_STATES:
        raise ValueError(f"a run finishes as one of {', '.join(RUN_FINAL_STATES)}; got {state!r}")
