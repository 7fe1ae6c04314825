"""The command line as a person uses it: a conversation on stdin, --test, and bad config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_main(args, tmp_path, stdin="", **env):
    environment = {**os.environ, "FLORA_DATA_DIR": str(tmp_path), "FLORA_LLM__BACKEND": "none",
                   "FLORA_CAPABILITIES__PLUGIN_MODULES": '["examples.my_tools"]', **env}
    return subprocess.run([sys.executable, "main.py", *args], cwd=REPO, env=environment, input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_interactive_conversation_pauses_asks_and_resumes(tmp_path):
    done = run_main([], tmp_path, stdin="convert the temperature 100\ncelsius\nexit\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Flora is ready" in out
    assert "- to: the unit to convert to: celsius or fahrenheit" in out
    assert "is waiting for your answer" in out
    assert '{"value": 37.78, "unit": "celsius"}' in out


def test_test_flag_prints_a_reply_and_exits_0(tmp_path):
    done = run_main(["--test"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "flora> " in done.stdout


def test_bad_config_stops_start_up_naming_the_key(tmp_path):
    done = run_main(["--test"], tmp_path, FLORA_ACTORS__EXECUTION_POOL_SIZE="0")
    assert done.returncode == 2
    assert "actors.execution_pool_size" in done.stderr


def test_unknown_plugin_module_stops_start_up_naming_the_key(tmp_path):
    done = run_main(["--test"], tmp_path, FLORA_CAPABILITIES__PLUGIN_MODULES='["no_such_module_here"]')
    assert done.returncode == 2
    assert "capabilities.plugin_modules" in done.stderr and "no_such_module_here" in done.stderr
