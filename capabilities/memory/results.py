"""What memory adds to a finished task's result.

A task's dict result carries ``whiteboard`` (its board, when something was written on it:
:mod:`capabilities.memory.whiteboard`) and ``memories_used`` (the ids of the long-term
memories that came with the request that started it, which the task keeps with their facts
in ``meta.memories``). A result that is not a dict is left as it is, and so is a key the
capability set itself.
"""

from __future__ import annotations

from typing import Any

from capabilities.memory import recalled
from capabilities.memory.whiteboard import view
from common.tasks.models import TaskRecord
from common.tasks.store import TaskStore


def memory_meta(request: dict) -> dict:
    """What a task started from ``request`` keeps of its memories: the facts as its prompts
    show them, with their ids (``meta.memories``: the agent loop reads them after a pause or a
    restart too; the ids are named in the task's result)."""
    kept = recalled.facts(request.get("memories"))
    return {"memories": kept} if kept else {}


def memories_used(task: TaskRecord) -> list[str]:
    """The ids of the memories ``task`` was started with (``meta.memories_used`` on a task
    stored before the facts were kept)."""
    return [r["memory_id"] for r in task.meta.get("memories") or [] if r.get("memory_id")] \
        or list(task.meta.get("memories_used") or [])


def with_memory(result: Any, store: TaskStore, task: TaskRecord) -> Any:
    """``result`` of ``task`` with its whiteboard and the memories it used, where it has them."""
    if not isinstance(result, dict):
        return result
    extra: dict[str, Any] = {}
    if "whiteboard" not in result:
        entries = store.whiteboard(task.tenant_id, task.task_id)
        if entries:
            extra["whiteboard"] = view(entries)
    used = memories_used(task)
    if used and "memories_used" not in result:
        extra["memories_used"] = used
    return {**result, **extra} if extra else result
