"""What memory adds to a finished task's result.

A task's dict result carries ``whiteboard`` (its board, when something was written on it:
:mod:`capabilities.memory.whiteboard`) and ``memories_used`` (the ids of the long-term
memories that came with the request that started it, recorded on the task as
``meta.memories_used``). A result that is not a dict is left as it is, and so is a key the
capability set itself.
"""

from __future__ import annotations

from typing import Any

from capabilities.memory.whiteboard import view
from common.tasks.models import TaskRecord
from common.tasks.store import TaskStore


def memories_used(request: dict) -> list[str]:
    """The ids of the memories that came with a request (``agent_task``'s ``memories``)."""
    return [r["memory_id"] for r in request.get("memories") or [] if isinstance(r, dict) and r.get("memory_id")]


def with_memory(result: Any, store: TaskStore, task: TaskRecord) -> Any:
    """``result`` of ``task`` with its whiteboard and the memories it used, where it has them."""
    if not isinstance(result, dict):
        return result
    extra: dict[str, Any] = {}
    if "whiteboard" not in result:
        entries = store.whiteboard(task.tenant_id, task.task_id)
        if entries:
            extra["whiteboard"] = view(entries)
    used = task.meta.get("memories_used")
    if used and "memories_used" not in result:
        extra["memories_used"] = list(used)
    return {**result, **extra} if extra else result
