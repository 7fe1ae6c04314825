"""A capability for the loop end-to-end tests: each run appends one line to a file.

Runs happen in ExecutionActor processes, so the file's path comes from the environment
(``FLORA_E2E_COUNT_FILE``, set before Flora starts) and a test counts the lines carrying
its own ``tag``. ``sleep_s`` keeps a run busy, to make runs overlap.
"""

from __future__ import annotations

import os
import time

from capabilities.base import capability

COUNT_FILE_ENV = "FLORA_E2E_COUNT_FILE"
CAPABILITY = "e2e_count_run"


@capability(
    name=CAPABILITY,
    description="Count one loop run in a file (loop end-to-end tests).",
    parameters={
        "type": "object",
        "properties": {
            "tag": {"type": "string", "description": "what the line says, so a test finds its runs"},
            "sleep_s": {"type": "number", "minimum": 0, "description": "seconds to stay busy"},
        },
        "required": ["tag"],
    },
    routable=False,
)
def e2e_count_run(tag: str, context, sleep_s: float = 0) -> dict:
    path = os.environ[COUNT_FILE_ENV]
    line = f"{tag}\t{context.task_id}\t{context.meta.get('run_key', '')}\t{os.getpid()}\n"
    with open(path, "a", encoding="utf-8") as out:  # one short append: whole lines, even from two processes
        out.write(line)
    if sleep_s:
        time.sleep(sleep_s)
    return {"message": f"e2e run {tag} done", "tag": tag, "task_id": context.task_id}


def runs_of(path: str | os.PathLike, tag: str) -> list[list[str]]:
    """The recorded runs with ``tag``: [tag, task_id, run_key, pid] each."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return []
    return [fields for fields in (line.split("\t") for line in lines) if fields[0] == tag]
