"""Structured logs from a real multiprocess Flora: with ``log_format: json`` every Flora line,
from every actor process, is one JSON object naming its actor, and every line about a task
carries that task's ``task_id`` and ``tenant_id``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
THESPIAN_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [A-Z]+ thespian ")  # agents.actor_system.thespian_log_defs

# a task that pauses for a parameter and is resumed by the next message, then completes
DRIVE = """
import json, sys
import main
flora = main.start_flora(json.loads(sys.argv[1]))
try:
    paused = flora.ask("add numbers a=2", user_id="u_logs")
    done = flora.ask("3", user_id="u_logs")
    print(json.dumps({"paused": paused, "done": done}))
finally:
    flora.shutdown()
"""


def test_every_line_is_json_with_its_actor_and_task_lines_carry_task_and_tenant(tmp_path):
    config = {
        "data_dir": str(tmp_path), "log_format": "json", "log_level": "DEBUG",
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 30, "node": "node-logs"},
        "capabilities": {"plugin_modules": ["tests.support.sample_plugins"]},
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLORA_")}
    stderr_path = tmp_path / "stderr.log"
    with open(stderr_path, "w", encoding="utf-8") as stderr:  # a file: actor processes inherit it
        done = subprocess.run([sys.executable, "-c", DRIVE, json.dumps(config)], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=120)
    logs = stderr_path.read_text(encoding="utf-8")
    assert done.returncode == 0, logs[-4000:]
    replies = json.loads(done.stdout)
    assert replies["paused"]["message_type"] == "task_paused" and replies["done"]["message_type"] == "task_completed"
    task_id = replies["done"]["task_id"]

    lines = []
    for raw in logs.splitlines():
        if not raw.strip() or THESPIAN_LINE.match(raw):
            continue
        line = json.loads(raw)  # anything else that is not JSON fails here
        assert line.get("actor") not in (None, "unknown"), raw
        assert line.get("node") == "node-logs", raw
        lines.append(line)

    actors = {line["actor"] for line in lines}
    assert {"main", "router", "agent", "interaction", "execution"} <= actors, actors
    assert len({line["pid"] for line in lines}) >= 5  # the lines did come from separate processes

    about_task = [line for line in lines if task_id in line["message"] or line.get("task_id") == task_id]
    assert {"agent", "interaction", "execution"} <= {line["actor"] for line in about_task}, about_task
    for line in about_task:
        assert line.get("task_id") == task_id and line.get("tenant_id") == "default", line
    events = {line.get("event") for line in about_task}
    assert {"TASK_CREATED", "TASK_PAUSED", "TASK_RESUMED", "TASK_COMPLETED"} <= events, events
