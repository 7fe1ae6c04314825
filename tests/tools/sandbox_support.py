"""Helpers for the workspace-tool tests: a registry with the tools, a context on a temporary
workspace, a local TCP server, and a look at /proc for processes that outlived a run."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from capabilities.base import ExecutionContext
from capabilities.registry import CapabilityRegistry
from capabilities.tools import files, python_exec, shell
from config import load_config


def tools_registry() -> CapabilityRegistry:
    registry = CapabilityRegistry()
    for module in (shell, python_exec, files):
        registry.register_module(module)
    return registry


class Tools:
    """Calls the workspace tools the way ExecutionActor does: schema first, then invoke."""

    def __init__(self, base: Path, **tools: Any) -> None:
        self.config = load_config({"data_dir": str(base.parent / "flora-data"),
                                   "tools": {"workspace": str(base), **tools}})
        self.registry = tools_registry()
        self.cancelled = False

    def context(self, user: str = "alice") -> ExecutionContext:
        context = ExecutionContext(task_id="task-1", user_id=user, tenant_id="acme", config=self.config)
        context.cancelled = lambda: self.cancelled  # type: ignore[method-assign]
        return context

    @property
    def workspace(self) -> Path:
        path = Path(self.config.tools.workspace) / "acme" / "alice"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def __call__(self, tool: str, /, user: str = "alice", **parameters: Any) -> Any:
        spec = self.registry.get_executable(tool)
        Draft202012Validator(spec.parameters).validate(parameters)
        return spec.invoke(parameters, self.context(user))


class TcpServer:
    """A listening TCP socket on loopback that records whether anything connected."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


def processes_with(marker: str) -> list[int]:
    """Pids whose command line holds ``marker`` (what a run left behind, if anything)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def wait_until_gone(marker: str, timeout_s: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        left = processes_with(marker)
        if not left:
            return []
        time.sleep(0.05)
    return processes_with(marker)
