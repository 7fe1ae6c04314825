"""The lifecycle events Flora publishes (names from the seed)."""

from enum import Enum


class EventType(str, Enum):
    TASK_CREATED = "TASK_CREATED"
    TASK_STARTED = "TASK_STARTED"
    TASK_COMPLETED = "TASK_COMPLETED"
    TASK_FAILED = "TASK_FAILED"
    TASK_CANCELLED = "TASK_CANCELLED"
    TASK_PAUSED = "TASK_PAUSED"
    TASK_RESUMED = "TASK_RESUMED"
    LOOP_TASK_REGISTERED = "LOOP_TASK_REGISTERED"
    TASK_TRIGGERED = "TASK_TRIGGERED"


# The event each task state publishes when a task enters it.
STATE_EVENTS = {
    "created": EventType.TASK_CREATED,
    "running": EventType.TASK_STARTED,
    "waiting_parameters": EventType.TASK_PAUSED,
    "waiting_approval": EventType.TASK_PAUSED,
    "completed": EventType.TASK_COMPLETED,
    "failed": EventType.TASK_FAILED,
    "cancelled": EventType.TASK_CANCELLED,
}
