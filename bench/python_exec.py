"""python_exec round trip beside a raw ``subprocess.run([sys.executable, "-c", code])``.

Both run the same code, one call after another, interleaved so that a busy machine slows both
alike. The Flora side goes through ``CapabilitySpec.invoke`` as ExecutionActor calls it: workspace
resolution, the jail (namespaces where available, rlimits, scrubbed environment, process-group
kill), the bootstrap and its audit hook. Prints p50/p99 of each and the ratio.

    .venv/bin/python bench/python_exec.py [--runs 100] [--code "print(sum(range(1000)))"]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from capabilities.base import ExecutionContext  # noqa: E402
from capabilities.registry import CapabilityRegistry  # noqa: E402
from capabilities.tools import python_exec  # noqa: E402
from config import load_config  # noqa: E402

WARMUP = 5


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--code", default="print(sum(range(1000)))")
    parser.add_argument("--isolation", choices=["auto", "namespaces", "none"], default="auto")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as workspace:
        config = load_config({"tools": {"workspace": workspace, "isolation": args.isolation}})
        registry = CapabilityRegistry()
        registry.register_module(python_exec)
        spec = registry.get_executable("python_exec")
        context = ExecutionContext(task_id="bench", user_id="bench", config=config)
        flora, raw = [], []
        isolated = None
        for index in range(WARMUP + args.runs):
            started = time.perf_counter()
            result = spec.invoke({"code": args.code}, context)
            took_flora = time.perf_counter() - started
            assert result["exit_code"] == 0, result["stderr"]
            isolated = result["isolated"]
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", args.code], capture_output=True, cwd=workspace)
            took_raw = time.perf_counter() - started
            assert done.returncode == 0
            if index >= WARMUP:
                flora.append(took_flora * 1000)
                raw.append(took_raw * 1000)

    print(f"python_exec round trip, {args.runs} runs of {args.code!r} (isolated in namespaces: {isolated})")
    print(f"  {'':<12} {'p50 ms':>8} {'p99 ms':>8}")
    print(f"  {'raw':<12} {percentile(raw, 50):>8.1f} {percentile(raw, 99):>8.1f}")
    print(f"  {'python_exec':<12} {percentile(flora, 50):>8.1f} {percentile(flora, 99):>8.1f}")
    print(f"  ratio p50 {percentile(flora, 50) / percentile(raw, 50):.2f}x, "
          f"p99 {percentile(flora, 99) / percentile(raw, 99):.2f}x")


if __name__ == "__main__":
    main()
