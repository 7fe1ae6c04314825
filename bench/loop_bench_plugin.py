"""A capability that records when a loop run starts, for bench/loop_trigger.py.

It appends one line ``"<sent> <started>\\n"`` (both ``time.time()``, ``repr`` floats) to the
file named by the environment variable ``FLORA_BENCH_FILE``. ExecutionActors run in their own
processes, so the path travels by environment (set before Flora starts) and the times are
wall-clock, comparable across processes.
"""

from __future__ import annotations

import os
import time

from capabilities.base import capability

BENCH_FILE_ENV = "FLORA_BENCH_FILE"


@capability(name="bench_mark", description="records when a loop run starts",
            parameters={"type": "object", "properties": {"sent": {"type": "number"}}}, routable=False)
def bench_mark(sent: float = 0.0, context=None) -> dict:
    started = time.time()
    path = os.environ.get(BENCH_FILE_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{float(sent)!r} {started!r}\n")
            out.flush()
    return {"ok": True, "sent": sent, "started": started}
