"""Real MCP servers for the MCP tests: mcp-server-time (PyPI) over stdio, and the SDK server
of tests/support/mcp_server.py over stdio and over streamable HTTP on a free port.

Every stdio server gets ``MCP_TEST_MARK`` passed through (``env`` in its config), so a test
finds its processes in /proc (to kill one, or to check none is left)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from agents.actor_system import free_port
from tests.support.flora_process import pids_with_env

REPO = Path(__file__).resolve().parents[2]
MARK_ENV = "MCP_TEST_MARK"


@dataclass
class HTTPServer:
    url: str
    process: subprocess.Popen


def start_http_server(port: int | None = None) -> HTTPServer:
    port = port or free_port()
    process = subprocess.Popen([sys.executable, "-m", "tests.support.mcp_server", "--transport", "http",
                                "--port", str(port)], cwd=REPO, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO)})
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return HTTPServer(f"http://127.0.0.1:{port}/mcp", process)
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise AssertionError("the test MCP server did not start listening")
            time.sleep(0.05)


def stop_http_server(server: HTTPServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@pytest.fixture(scope="module")
def http_server():
    server = start_http_server()
    yield server
    stop_http_server(server)


@pytest.fixture(scope="session", autouse=True)
def mark() -> str:
    """Set in this process's environment, passed through to every stdio server the tests start."""
    os.environ[MARK_ENV] = os.environ.get(MARK_ENV) or uuid.uuid4().hex
    os.environ["PYTHONPATH"] = str(REPO)  # the test server's module, for stdio servers started anywhere
    return os.environ[MARK_ENV]


def servers(http_url: str | None = None, **extra) -> dict:
    """The ``mcp.servers`` section: time (mcp-server-time), local (the SDK test server over
    stdio) and, given its URL, notes (the same server over streamable HTTP)."""
    found = {
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
                 "env": [MARK_ENV]},
        "local": {"command": sys.executable, "args": ["-m", "tests.support.mcp_server"], "cwd": str(REPO),
                  "env": [MARK_ENV, "PYTHONPATH"]},
    }
    if http_url:
        found["notes"] = {"url": http_url, "transport": "streamable_http"}
    return {**found, **extra}


def config(data_dir, http_url: str | None = None, *, servers_=None, **mcp) -> dict:
    return {"data_dir": str(data_dir), "llm": {"backend": "none"}, "memory": {"enabled": False},
            "mcp": {"servers": servers_ if servers_ is not None else servers(http_url), **mcp}}


def server_pids(mark: str, module: str) -> list[int]:
    """Live stdio servers of this test run running ``module``."""
    found = []
    for pid in pids_with_env(MARK_ENV, mark):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if module.encode() in cmdline:
            found.append(pid)
    return found




@pytest.fixture(autouse=True)
def _close_sessions():
    """End the stdio servers this process started for a test (a later call starts them again)."""
    yield
    from capabilities.mcp import close_process_sessions

    close_process_sessions()
