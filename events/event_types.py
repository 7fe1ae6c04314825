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
    # a task that runs a plan (grouped execution): recorded on the plan's own task
    PLAN_CREATED = "PLAN_CREATED"  # data: the plan
    STEP_STARTED = "STEP_STARTED"  # data: step, task_id of the step's record, capability, attempt
    STEP_COMPLETED = "STEP_COMPLETED"
    STEP_FAILED = "STEP_FAILED"  # the step gave up (no retry left, or not retryable)
    STEP_RETRIED = "STEP_RETRIED"  # data: attempt, delay_s, error
    PLAN_COMPLETED = "PLAN_COMPLETED"  # data: the aggregate
    TASK_COMMENTED = "TASK_COMMENTED"  # a user's comment on a task
    # limits and supervision
    TASK_QUEUED = "TASK_QUEUED"  # data: scope, limit, position, reason
    TASK_RETRY_SCHEDULED = "TASK_RETRY_SCHEDULED"  # data: attempt, delay_s, reason
    POISON_MESSAGE = "POISON_MESSAGE"  # a request that was not a task yet made a worker raise; data: traceback
    # long-term memory (task id "memory"): data names the memories
    MEMORY_WRITTEN = "MEMORY_WRITTEN"  # data: msg_id (the turn distilled), memories [{memory_id, fact}]
    MEMORY_RECALLED = "MEMORY_RECALLED"  # data: memory_ids put into a prompt
    WHITEBOARD_UPDATED = "WHITEBOARD_UPDATED"  # data: author, added [{entry_id, section, text}], done, removed
    MEMORY_FORGOTTEN = "MEMORY_FORGOTTEN"  # data: memory_ids, or all and count
    # personas (docs/personas.md), on the task id of the message's work
    PERSONA_SELECTED = "PERSONA_SELECTED"  # data: persona, how (rule | auto | template | default), rule, capabilities
    # the agent loop (capability ``agent``): one pair per tool call, on the agent's task
    TOOL_CALLED = "TOOL_CALLED"  # data: call_id, step, tool, arguments
    TOOL_RESULT = "TOOL_RESULT"  # data: call_id, step, tool, ok, result (a preview) or error, elapsed_ms


# The event each task state publishes when a task enters it.
STATE_EVENTS = {
    "created": EventType.TASK_CREATED,
    "queued": EventType.TASK_QUEUED,
    "running": EventType.TASK_STARTED,
    "waiting_parameters": EventType.TASK_PAUSED,
    "waiting_approval": EventType.TASK_PAUSED,
    "completed": EventType.TASK_COMPLETED,
    "failed": EventType.TASK_FAILED,
    "cancelled": EventType.TASK_CANCELLED,
}
