"""Capabilities for plan tests: steps that take a while (and stop when their task is
cancelled), fail a given number of times, or read an earlier step's result."""

from __future__ import annotations

import os
import time
from pathlib import Path

from capabilities.base import CapabilityError, capability

TICK_S = 0.02  # how often a slow step looks whether its task was cancelled


@capability(
    name="slow_fetch",
    description="Fetch a labelled record slowly (for plan tests).",
    parameters={
        "type": "object",
        "properties": {
            "label": {"type": "string", "description": "what to fetch"},
            "seconds": {"type": "number", "description": "how long it takes", "default": 0.2},
        },
        "required": ["label"],
    },
    keywords=("slow fetch", "慢速获取"),
    reads_instruction=True,
)
def slow_fetch(label: str, context, seconds: float = 0.2) -> dict:
    started = time.time()
    while time.time() - started < seconds:
        if context.cancelled():
            raise CapabilityError(f"fetching {label} was cancelled", error_type="cancelled")
        time.sleep(TICK_S)
    return {"label": label, "items": [label, label.upper()], "started": started, "ended": time.time(),
            "pid": os.getpid(), "instruction": context.instruction}


@capability(
    name="measure_input",
    description="Measure what an earlier step returned (for plan tests).",
    parameters={
        "type": "object",
        "properties": {"input": {"description": "the earlier step's result"}},
        "required": ["input"],
    },
    keywords=("measure",),
)
def measure_input(input) -> dict:  # noqa: A002 - the planner passes results in a parameter named input
    return {"measured": input.get("label") if isinstance(input, dict) else input,
            "items": len(input.get("items", [])) if isinstance(input, dict) else 0}


@capability(
    name="flaky_fetch",
    description="Fail (retryably) the first `failures` times for a key, then succeed (for plan tests).",
    parameters={
        "type": "object",
        "properties": {
            "key": {"type": "string", "description": "a name for the counter"},
            "failures": {"type": "integer", "description": "how many times to fail first"},
            "counter_dir": {"type": "string", "description": "where the counters live"},
        },
        "required": ["key", "failures", "counter_dir"],
    },
    keywords=("flaky fetch",),
)
def flaky_fetch(key: str, failures: int, counter_dir: str) -> dict:
    counter = Path(counter_dir) / f"{key}.count"
    seen = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(seen + 1))
    if seen < failures:
        raise CapabilityError(f"{key}: temporarily unavailable (try {seen + 1})", retryable=True)
    return {"key": key, "tries": seen + 1}


@capability(
    name="note_finding",
    description="Write a finding on the plan's whiteboard and report what the board holds (for plan tests).",
    parameters={
        "type": "object",
        "properties": {"label": {"type": "string", "description": "what was found"}},
        "required": ["label"],
    },
    keywords=("note finding", "记录发现"),
)
def note_finding(label: str, context) -> dict:
    from capabilities.memory.whiteboard import Whiteboard, task_board

    board_id = task_board(context.store, context.tenant_id, context.task_id)
    board = Whiteboard(context.store)
    board.write(context.tenant_id, board_id, facts=[f"found {label}"], todo=[f"check {label}"],
                author=f"note_finding:{label}", user_id=context.user_id)
    return {"label": label, "board_id": board_id,
            "seen": sorted(e.text for e in board.read(context.tenant_id, board_id) if e.section == "fact")}
