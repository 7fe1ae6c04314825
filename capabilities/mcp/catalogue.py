"""The catalogue: every configured MCP server's tools, listed once and kept in a JSON file.

Every actor process builds its own registry (``init_plugins.build_registry``), and
ExecutionActors are separate processes. Starting every server in every process to ask
for its tools would cost each process a subprocess per server (and a second copy of each
server's state) before any tool is used. Instead the tools are listed once, when Flora starts
(``agents.node.start_flora`` → :func:`refresh`), into ``<data_dir>/mcp/catalogue.json``; each
process registers from that file and connects to a server only when one of its tools is
called there. The file carries a fingerprint of the ``mcp`` configuration: a process that
finds it missing or made for another configuration lists the tools itself (under a file lock,
so that one process does it and the others read its result).

A server that cannot be listed at start is recorded with its error and contributes no tools
until the next start; Flora itself starts. A server whose ``env`` or ``headers`` name a
variable that is not set, or whose command is not there, stops the start with a
``ConfigError`` naming the key.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from capabilities.base import CapabilityError
from capabilities.mcp.connection import ServerConnection, ServerSpec
from capabilities.mcp.loop import process_loop
from config import FloraConfig

log = logging.getLogger("flora.mcp")

VERSION = 1


def directory(config: FloraConfig) -> Path:
    return Path(config.data_dir) / "mcp"


def catalogue_path(config: FloraConfig) -> Path:
    return directory(config) / "catalogue.json"


def fingerprint(config: FloraConfig) -> str:
    """Of what decides the listing: the servers' settings (not the timeouts)."""
    servers = {name: server.model_dump(mode="json") for name, server in config.mcp.servers.items()}
    return hashlib.sha256(json.dumps(servers, sort_keys=True).encode()).hexdigest()[:16]


def enabled_servers(config: FloraConfig) -> dict[str, ServerSpec]:
    """The enabled servers, resolved (raises ConfigError naming the key)."""
    logs = directory(config) / "logs"
    return {name: ServerSpec.resolve(name, server, log_dir=logs)
            for name, server in config.mcp.servers.items() if server.enabled}


def load(config: FloraConfig) -> dict:
    """The catalogue for this configuration: read from the file, or listed now when the file
    is missing or was made for another configuration."""
    path = catalogue_path(config)
    found = _read(path)
    if found is not None and found.get("fingerprint") == fingerprint(config):
        return found
    with _locked(path):
        found = _read(path)  # another process may have listed them while this one waited
        if found is not None and found.get("fingerprint") == fingerprint(config):
            return found
        return _write(path, discover(config))


def refresh(config: FloraConfig) -> dict:
    """List every enabled server's tools now and write the catalogue (Flora's start)."""
    path = catalogue_path(config)
    with _locked(path):
        return _write(path, discover(config))


def discover(config: FloraConfig) -> dict:
    """Start (or reach) each enabled server, list its tools, end the session. Servers are
    listed at the same time, each within ``mcp.list_timeout_s``."""
    specs = enabled_servers(config)
    timeout = config.mcp.list_timeout_s

    async def list_one(spec: ServerSpec) -> dict:
        connection = ServerConnection(spec, connect_timeout_s=timeout)
        started = time.perf_counter()
        try:
            tools = await asyncio.wait_for(connection.list_tools(), timeout)
        except asyncio.TimeoutError:
            return {"error": f"did not list its tools within {timeout:g} s", "tools": []}
        except CapabilityError as exc:
            return {"error": str(exc), "tools": []}
        except Exception as exc:  # a server that answers nonsense must not stop Flora's start
            return {"error": f"listing its tools failed: {exc!r}"[:500], "tools": []}
        finally:
            await connection.aclose()
        log.info("MCP server %s listed %d tool(s) in %.0f ms", spec.name, len(tools),
                 (time.perf_counter() - started) * 1000)
        return {"error": None, "tools": [_tool_entry(tool) for tool in tools]}

    async def list_all() -> dict:
        results = await asyncio.gather(*(list_one(spec) for spec in specs.values()))
        return dict(zip(specs, results))

    servers = process_loop().run(list_all(), timeout=timeout + 15) if specs else {}
    for name, entry in servers.items():
        if entry["error"]:
            log.warning("MCP server %s contributes no tools until the next start: %s", name, entry["error"])
    return {"version": VERSION, "fingerprint": fingerprint(config), "listed_at": time.time(), "servers": servers}


def _tool_entry(tool: Any) -> dict:
    annotations = tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True) if tool.annotations else {}
    return {"name": tool.name, "title": tool.title or annotations.get("title"),
            "description": tool.description or "", "input_schema": tool.input_schema,
            "annotations": annotations}


def _read(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and data.get("version") == VERSION else None


def _write(path: Path, catalogue: dict) -> dict:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(catalogue, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(partial, path)  # readers see the old file or the new one, never half of one
    return catalogue


class _locked:
    """An exclusive lock on ``<catalogue>.lock`` across processes."""

    def __init__(self, path: Path):
        self._path = path.with_suffix(".lock")
        self._file = None

    def __enter__(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self._path, "a")
        fcntl.flock(self._file, fcntl.LOCK_EX)

    def __exit__(self, *exc: Any) -> None:
        fcntl.flock(self._file, fcntl.LOCK_UN)
        self._file.close()
