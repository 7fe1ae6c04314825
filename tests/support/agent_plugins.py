"""Small tools for the agent loop's tests: an echo, a counter that leaves a mark on disk each
time it really runs (so a test can see a call never ran twice), a change that needs approval,
and a job that runs until its task is cancelled."""

from __future__ import annotations

import os
import time
from pathlib import Path

from capabilities.base import CapabilityError, capability


@capability(
    name="echo",
    description="Say the text back.",
    parameters={"type": "object", "properties": {"text": {"type": "string", "description": "what to say"}},
                "required": ["text"], "additionalProperties": False},
    routable=True,
)
def echo(text: str) -> dict:
    return {"text": text}


def _marks(context) -> Path:
    return Path(context.settings.get("dir") or os.environ.get("FLORA_TEST_MARKS", ".")) / f"{context.task_id}.marks"


@capability(
    name="count_mark",
    description="Leave one mark for this task and say how many there are.",
    parameters={"type": "object", "properties": {"label": {"type": "string", "description": "what the mark is"}},
                "required": ["label"], "additionalProperties": False},
)
def count_mark(label: str, context) -> dict:
    path = _marks(context)
    with path.open("a") as f:
        f.write(label + "\n")
    return {"marks": len(path.read_text().splitlines())}


@capability(
    name="write_note",
    description="Write a note into the workspace (a change: asks for approval first).",
    parameters={"type": "object", "properties": {"name": {"type": "string", "description": "the note's name"},
                                                 "text": {"type": "string", "description": "what it says"}},
                "required": ["name", "text"], "additionalProperties": False},
    needs_approval=True,
)
def write_note(name: str, text: str, context) -> dict:
    path = _marks(context)
    with path.open("a") as f:
        f.write(f"note {name}\n")
    return {"written": name, "chars": len(text)}


@capability(
    name="wait_for_cancel",
    description="Work until the task is cancelled (at most `seconds`).",
    parameters={"type": "object", "properties": {"seconds": {"type": "number", "description": "the most to wait"}},
                "required": ["seconds"]},
)
def wait_for_cancel(seconds: float, context) -> dict:
    path = _marks(context)
    path.write_text("started\n")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if context.cancelled():
            raise CapabilityError("cancelled while waiting", error_type="cancelled")
        time.sleep(0.02)
    return {"waited": seconds}


@capability(
    name="run_script",
    description="Run a tiny script: exits with the code given, printing the error given (a program tool's result).",
    parameters={"type": "object", "properties": {"exit_code": {"type": "integer", "description": "the exit status"},
                                                 "error": {"type": "string", "description": "what it prints on stderr"}},
                "required": ["exit_code"], "additionalProperties": False},
)
def run_script(exit_code: int, error: str = "") -> dict:
    return {"exit_code": exit_code, "stdout": "" if exit_code else "done\n", "stderr": error, "timed_out": False}
