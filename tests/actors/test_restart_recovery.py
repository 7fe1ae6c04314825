"""kill -9 every Flora process while one task is paused and one runs, then start again on the
same data: the paused task is still there and resumable; the running one is failed with a
clear event and a notification to its user. Nothing vanishes silently."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import main
from common import messages as m

REPO = Path(__file__).resolve().parents[2]


def config(data_dir: Path) -> dict:
    return {"data_dir": str(data_dir),
            "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
            "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 20},
            "capabilities": {"plugin_modules": ["tests.support.sample_plugins"]}}


def kill_9(marker: str, within_s: float = 10.0) -> None:
    """SIGKILL every process whose command line holds ``marker``, again until none is left
    (one may be forked while the first ones die)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
        if not found:
            return
        for pid in map(int, found):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    raise AssertionError(f"processes of {marker} survive SIGKILL")


def alive(pid: int) -> bool:
    """Running; a killed process that nobody reaped yet (a zombie) is not."""
    from common.processes import alive as running

    return running(pid)


def test_after_kill_9_paused_tasks_resume_and_the_interrupted_one_is_failed_and_told(tmp_path):
    user, pid_file = "crash_user", tmp_path / "job.pid"
    (tmp_path / "config.json").write_text(json.dumps(config(tmp_path)))
    first = subprocess.Popen(
        [sys.executable, "-m", "tests.support.flora_process", str(tmp_path / "config.json"), user,
         "add numbers a=2", f"slow job seconds=60 pid_file={pid_file}"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        ready, _, _ = select.select([first.stdout], [], [], 60)
        assert ready and first.stdout.readline().strip() == "READY", "the first Flora did not start its tasks"
        deadline = time.monotonic() + 20
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        worker = int(pid_file.read_text())
    finally:
        kill_9(str(tmp_path / "config.json"))  # the main process and every actor process (forked: same command line)
        first.wait()
    deadline = time.monotonic() + 10
    while alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(worker), "the worker running the task survived kill -9"

    started = time.monotonic()
    flora = main.start_flora(config(tmp_path))
    try:
        restart_s = time.monotonic() - started
        from common.tasks.sqlite_store import SQLiteTaskStore

        store = SQLiteTaskStore(flora.config.sqlite_path)
        tasks = {t.capability: t for t in store.list_tasks("default", user_id=user)}
        assert set(tasks) == {"add_numbers", "slow_job"}
        slow = tasks["slow_job"]
        assert slow.state == "failed" and "did not finish" in slow.error
        last = store.events("default", task_id=slow.task_id)[-1]
        assert (last.event_type, last.source, last.data["reason"]) == ("TASK_FAILED", "recovery", "interrupted")
        notes = flora.notifications(user)
        assert [n["task_id"] for n in notes] == [slow.task_id] and notes[0]["kind"] == "task_interrupted"

        assert tasks["add_numbers"].state == "waiting_parameters"
        done = flora.system.ask(flora.interaction, m.user_input(user_id=user, content="3"), 20)
        assert done["message_type"] == "task_completed" and done["result"] == {"sum": 5}
        assert restart_s < 30
        store.close()
    finally:
        flora.shutdown()


def test_a_second_start_finds_nothing_left_to_recover(tmp_path):
    flora = main.start_flora(config(tmp_path))
    flora.shutdown()
    flora = main.start_flora(config(tmp_path))
    try:
        assert flora.notifications("anyone") == []
    finally:
        flora.shutdown()
