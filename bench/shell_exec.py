"""The shell tool's round trip beside a raw ``subprocess.run`` of the same program.

The Flora side goes through ``CapabilitySpec.invoke`` as ExecutionActor calls it: the command
policy, workspace resolution, the kernel sandbox (bubblewrap: namespaces, an unprivileged uid,
seccomp, rlimits), the scrubbed environment and the process-group kill. The raw side runs the
same argv in the same folder with nothing around it. Prints p50/p99 of each and the ratio.

    .venv/bin/python bench/shell_exec.py [--runs 100] [--command "sha256sum notes.txt"] [--isolation kernel|none]
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.roundtrip import compare  # noqa: E402
from capabilities.base import ExecutionContext  # noqa: E402
from capabilities.registry import CapabilityRegistry  # noqa: E402
from capabilities.tools import shell  # noqa: E402
from capabilities.tools.workspace import Workspace  # noqa: E402
from config import load_config  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--command", default="sha256sum notes.txt")
    parser.add_argument("--isolation", choices=["kernel", "none"], default="kernel")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as base:
        config = load_config({"data_dir": base, "tools": {"isolation": args.isolation}})
        registry = CapabilityRegistry()
        registry.register_module(shell)
        spec = registry.get_executable("shell")
        context = ExecutionContext(task_id="bench", user_id="bench", config=config)
        workspace = Workspace.for_context(context).root
        (workspace / "notes.txt").write_text("buy milk\n" * 100)
        argv = shlex.split(args.command)

        def flora() -> None:
            result = spec.invoke({"command": args.command}, context)
            assert result["exit_code"] == 0 and result["isolated"] == (args.isolation == "kernel"), result

        def raw() -> None:
            assert subprocess.run(argv, capture_output=True, cwd=workspace).returncode == 0

        compare(f"shell round trip, {args.runs} runs of {args.command!r} (isolation: {args.isolation})",
                flora, raw, args.runs)


if __name__ == "__main__":
    main()
