"""Fixtures for long-term memory: the real packaged embedding models, a real embedded Chroma
in a temporary directory, and a real Chroma server started from the chromadb package's CLI."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from capabilities.memory.embedding import DEFAULT_MEMORY_EMBEDDING_MODEL, get_embedder
from capabilities.memory.store import MemoryStore

SERVER_START_S = 60.0


@pytest.fixture(scope="session")
def embedder():
    return get_embedder(DEFAULT_MEMORY_EMBEDDING_MODEL)  # what Flora recalls memories with


@pytest.fixture
def store(embedder, tmp_path):
    return MemoryStore(embedder, path=tmp_path / "memory")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """The URL of a Chroma server (``chroma run``) on a free loopback port, stopped after the session."""
    cli = Path(sys.executable).parent / "chroma"
    assert cli.exists(), f"chromadb's CLI is missing at {cli}: install requirements.txt"
    path = tmp_path_factory.mktemp("chroma-server")
    port = free_port()
    log = open(path / "server.log", "wb")
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    process = subprocess.Popen([str(cli), "run", "--path", str(path / "data"), "--host", "127.0.0.1", "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_heartbeat(url, process, path / "server.log")
        yield url
    finally:
        stop(process)
        log.close()


def wait_for_heartbeat(url: str, process: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"chroma run exited with {process.returncode}: {log_path.read_text(errors='replace')[-2000:]}")
        try:
            if httpx.get(f"{url}/api/v2/heartbeat", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)  # polling the condition, not waiting a fixed time
    pytest.fail(f"chroma run gave no heartbeat within {SERVER_START_S:.0f} s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
