"""No MCP server outlives Flora: the stdio servers that ExecutionActors started end when
Flora stops, and when the actor process that started one is killed outright."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import main
from common import messages as m
from tests.mcp.conftest import server_pids, servers
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(180)


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def ask_time(flora, zone: str) -> dict:
    reply = flora.system.ask(flora.interaction, m.user_input(user_id="stop_user", content=(
        f"what is the current time, timezone={zone}")), 60)
    assert reply is not None and reply["message_type"] == "task_completed", reply
    return reply


def _completed(flora, zone: str) -> bool:
    reply = flora.system.ask(flora.interaction, m.user_input(user_id="stop_user", content=(
        f"what is the current time, timezone={zone}")), 60)
    return reply is not None and reply["message_type"] == "task_completed"


def test_stdio_servers_end_with_their_actor_process_and_with_flora(tmp_path, mark):
    flora = main.start_flora({
        "data_dir": str(tmp_path), "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 60, "execution_pool_size": 1},
        "memory": {"enabled": False}, "mcp": {"servers": {"time": servers()["time"]}},
    })
    try:
        assert server_pids(mark, "mcp_server_time") == []  # listed at start, then ended
        ask_time(flora, "UTC")
        [first] = wait_until(lambda: server_pids(mark, "mcp_server_time"), 10, "the time server runs")
        worker = parent_of(first)
        assert worker != os.getpid()  # started by the ExecutionActor's process, not here
        os.kill(worker, signal.SIGKILL)
        wait_until(lambda: first not in server_pids(mark, "mcp_server_time"), 10,
                 "the server of a killed ExecutionActor ends")
        # a new ExecutionActor starts its own server (a request that reached the dead one before the
        # AgentActor learnt of its death fails, as any task in flight on a lost worker does)
        wait_until(lambda: _completed(flora, "Asia/Tokyo"), 30, "a request runs on the new ExecutionActor")
        wait_until(lambda: server_pids(mark, "mcp_server_time"), 10, "a new time server runs")
    finally:
        flora.shutdown()
    wait_until(lambda: server_pids(mark, "mcp_server_time") == [], 10, "no time server after Flora's stop")
