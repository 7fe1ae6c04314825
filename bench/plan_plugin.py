"""A capability with simulated latency for bench/plan_dag.py: it sleeps ``ms``, longer when
more calls than ``capacity`` run at once (a backend that slows down when overloaded), so
the best concurrency is known: ``capacity``."""

import os
import time
import uuid
from pathlib import Path

from capabilities.base import capability


@capability(name="sim_work", description="Sleep like a remote call (bench).", keywords=("sim work",),
            parameters={"type": "object", "properties": {
                "ms": {"type": "number", "description": "latency when the backend is not overloaded"},
                "capacity": {"type": "integer", "description": "calls the backend serves at full speed (0: any)"},
                "slowdown": {"type": "number", "description": "extra latency per call over capacity, as a fraction"},
                "active_dir": {"type": "string", "description": "a directory counting the calls in progress"}},
                "required": ["ms"]})
def sim_work(ms: float, capacity: int = 0, slowdown: float = 0.0, active_dir: str = "") -> dict:
    marker = Path(active_dir) / uuid.uuid4().hex if capacity and active_dir else None
    if marker is not None:
        marker.touch()
    try:
        active = len(os.listdir(active_dir)) if marker is not None else 1
        over = max(0, active - capacity) if capacity else 0
        time.sleep(ms / 1000 * (1 + slowdown * over))
    finally:
        if marker is not None:
            marker.unlink()
    return {"ms": ms, "active": active}
