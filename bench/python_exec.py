"""python_exec round trip beside a raw ``subprocess.run([sys.executable, "-c", code])``.

The Flora side goes through ``CapabilitySpec.invoke`` as ExecutionActor calls it: workspace
resolution, the kernel sandbox (bubblewrap: namespaces, an unprivileged uid, seccomp, rlimits),
the scrubbed environment, the process-group kill, the bootstrap and its audit hook. The raw side
runs the same code with nothing around it. Prints p50/p99 of each and the ratio.

    .venv/bin/python bench/python_exec.py [--runs 100] [--code "print(sum(range(1000)))"] [--isolation kernel|none]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.roundtrip import compare  # noqa: E402
from capabilities.base import ExecutionContext  # noqa: E402
from capabilities.registry import CapabilityRegistry  # noqa: E402
from capabilities.tools import python_exec  # noqa: E402
from config import load_config  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--code", default="print(sum(range(1000)))")
    parser.add_argument("--isolation", choices=["kernel", "none"], default="kernel")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as base:
        config = load_config({"data_dir": base, "tools": {"isolation": args.isolation}})
        registry = CapabilityRegistry()
        registry.register_module(python_exec)
        spec = registry.get_executable("python_exec")
        context = ExecutionContext(task_id="bench", user_id="bench", config=config)

        def flora() -> None:
            result = spec.invoke({"code": args.code}, context)
            assert result["exit_code"] == 0 and result["isolated"] == (args.isolation == "kernel"), result

        def raw() -> None:
            assert subprocess.run([sys.executable, "-c", args.code], capture_output=True, cwd=base).returncode == 0

        compare(f"python_exec round trip, {args.runs} runs of {args.code!r} (isolation: {args.isolation})",
                flora, raw, args.runs)


if __name__ == "__main__":
    main()
