"""Cancelling a task and everything it started.

A task that runs a plan keeps its steps' task ids in ``meta["children"]`` (step id → the
record of the step's current attempt; earlier attempts have ended already). Cancelling it
cancels each unfinished step too, so a step still running finds itself cancelled
(``ExecutionContext.cancelled()``) and a result that arrives afterwards is refused by the
store's transition instead of being recorded as done.
"""

from __future__ import annotations

from dataclasses import dataclass

from common.tasks.models import CANCELLED, UNFINISHED_STATES, InvalidTransition, TaskNotFound, TaskRecord
from events.event_bus import EventBus
from events.event_types import EventType


@dataclass(frozen=True)
class Cancelled:
    """What a cancel did: the task as it is now, and the steps it cancelled with it."""

    task: TaskRecord
    steps: tuple[str, ...]


def cancel_task_tree(events: EventBus, store, tenant_id: str, task_id: str, *, source: str, by: str,
                     reason: str = "cancelled by the user") -> Cancelled:
    """Cancel an unfinished task and its unfinished steps. Raises InvalidTransition when the
    task has ended already (its steps are left as they are), TaskNotFound when there is none."""
    task = events.transition(tenant_id, task_id, CANCELLED, source=source, event_type=EventType.TASK_CANCELLED,
                             expect=UNFINISHED_STATES, data={"by": by}, error=reason)
    cancelled = []
    for child_id in dict(task.meta.get("children") or {}).values():
        try:
            events.transition(tenant_id, child_id, CANCELLED, source=source, expect=UNFINISHED_STATES,
                              data={"by": by, "parent": task_id}, error=reason)
        except (InvalidTransition, TaskNotFound):
            continue  # ended (or was never written) before the cancel: nothing to stop
        cancelled.append(child_id)
    return Cancelled(task, tuple(cancelled))
