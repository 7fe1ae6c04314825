"""Times a tool's round trip beside the raw subprocess call it wraps, interleaved in one run so that
a busy machine slows both alike, and prints p50/p99 of each, the ratios and the targets
(p50 at most 2x raw and at most 60 ms)."""

from __future__ import annotations

import time
from typing import Callable

WARMUP = 5
TARGET_RATIO, TARGET_P50_MS = 2.0, 60.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def compare(title: str, flora: Callable[[], object], raw: Callable[[], object], runs: int) -> bool:
    """Run both ``runs`` times (after a warm-up), print the table; whether the targets are met."""
    timings: dict[str, list[float]] = {"raw": [], "flora": []}
    for index in range(WARMUP + runs):
        for name, call in (("flora", flora), ("raw", raw)):
            started = time.perf_counter()
            call()
            if index >= WARMUP:
                timings[name].append((time.perf_counter() - started) * 1000)
    raw_p50, raw_p99 = percentile(timings["raw"], 50), percentile(timings["raw"], 99)
    p50, p99 = percentile(timings["flora"], 50), percentile(timings["flora"], 99)
    met = p50 <= TARGET_RATIO * raw_p50 and p50 <= TARGET_P50_MS
    print(title)
    print(f"  {'':<14} {'p50 ms':>8} {'p99 ms':>8}")
    print(f"  {'raw':<14} {raw_p50:>8.1f} {raw_p99:>8.1f}")
    print(f"  {'flora':<14} {p50:>8.1f} {p99:>8.1f}")
    print(f"  ratio p50 {p50 / raw_p50:.2f}x, p99 {p99 / raw_p99:.2f}x; target p50 <= {TARGET_RATIO:.0f}x raw and "
          f"<= {TARGET_P50_MS:.0f} ms: {'met' if met else 'MISSED'}")
    return met
