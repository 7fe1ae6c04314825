"""Waiting on a condition, never on a fixed sleep: what a test does while Flora works."""

from __future__ import annotations

import time
from typing import Any, Callable


def wait_until(condition: Callable[[], Any], timeout: float = 20.0, what: str = "", interval_s: float = 0.05) -> Any:
    """Poll ``condition`` until it gives something true and return that; fail naming ``what``
    after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(interval_s)
