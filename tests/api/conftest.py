"""A real Flora API server for HTTP tests: ``python main.py --api`` in its own process, on a
free port, with the deterministic fake model and API keys for two tenants."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from agents.actor_system import free_port
from tests.support.flora_process import end_marked, marked_env

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-test-team-a"
OTHER_KEY = "sk-test-team-b"
PINNED_KEY = "sk-test-alice"  # team-a, always user alice
START_TIMEOUT_S = 60


@dataclass
class APIServer:
    url: str
    key: str
    other_key: str
    pinned_key: str
    data_dir: Path
    process: subprocess.Popen
    mark: str = ""  # finds the server's whole process family (tests/support/flora_process.py)

    def client(self, key: str | None = None, **kwargs) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key or self.key}"} if key != "" else {}
        headers.update(kwargs.pop("headers", {}))
        return httpx.Client(base_url=self.url, headers=headers, timeout=kwargs.pop("timeout", 30), **kwargs)


def server_config(data_dir: Path) -> dict:
    return {
        "data_dir": str(data_dir),
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": "multiprocTCPBase", "ask_timeout_s": 20, "execution_pool_size": 2},
        "loops": {"tick_s": 0.2, "timezone": "Asia/Shanghai"},
        "capabilities": {"plugin_modules": ["tests.support.sample_plugins"]},
        "http": {"api_keys": {KEY: "team-a", PINNED_KEY: {"tenant": "team-a", "user": "alice"}}},
    }


def start_server(data_dir: Path, *, env_keys: str = f"{OTHER_KEY}=team-b", extra: dict | None = None,
                 args: tuple[str, ...] = ()) -> APIServer:
    data_dir.mkdir(parents=True, exist_ok=True)
    config = {**server_config(data_dir), **(extra or {})}
    (data_dir / "config.json").write_text(json.dumps(config))
    port = free_port()
    env, mark = marked_env({**os.environ, "FLORA_API_KEYS": env_keys, "PYTHONPATH": str(REPO)})
    with open(data_dir / "server.log", "wb") as log:
        process = subprocess.Popen([sys.executable, "main.py", "--api", "--config", str(data_dir / "config.json"),
                                    "--port", str(port), *args], cwd=REPO, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    server = APIServer(f"http://127.0.0.1:{port}", KEY, OTHER_KEY, PINNED_KEY, data_dir, process, mark)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            end_marked(mark)
            raise RuntimeError(f"the API server exited with {process.returncode}:\n"
                               + (data_dir / "server.log").read_text(errors="replace"))
        try:
            if httpx.get(server.url + "/ready", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop_server(server)
    raise RuntimeError("the API server did not become ready:\n" + (data_dir / "server.log").read_text(errors="replace"))


def stop_server(server: APIServer) -> None:
    """SIGTERM the server (Flora stops its actors itself), then end whatever of its process
    family is left: a failing test must not leave processes behind either."""
    server.process.terminate()
    try:
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
    end_marked(server.mark)


@pytest.fixture(scope="session")
def api_server(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp("api"))
    yield server
    stop_server(server)


@pytest.fixture
def user(request) -> str:
    """A user id of its own for each test, so paused tasks of other tests don't interfere."""
    return "u_" + request.node.name.replace("[", "_").replace("]", "")[-40:]
