"""MCP tools as Flora capabilities (docs/mcp.md).

- :mod:`~capabilities.mcp.catalogue`: the tools of every configured server, listed once at
  Flora's start into ``<data_dir>/mcp/catalogue.json``, registered from there by every process;
- :mod:`~capabilities.mcp.tools`: one capability per tool (``server.tool``), its approval, its
  results;
- :mod:`~capabilities.mcp.connection`: a process's session with one server, started on first
  use and again after the server ended;
- :mod:`~capabilities.mcp.loop`: the one event loop per process the sessions run on;
- ``guard.py``: how a stdio server is started so that it ends with the process that started it.
"""

from __future__ import annotations

import logging

from capabilities.registry import CapabilityRegistry, RegistryError
from config import FloraConfig

log = logging.getLogger("flora.mcp")

SERVICE = "mcp"


def register_mcp_tools(registry: CapabilityRegistry, config: FloraConfig) -> list[str]:
    """Register the catalogue's tools (listing them first if no catalogue fits the config)
    and the ``mcp`` service that knows them. Returns the capability names registered."""
    from capabilities.mcp import catalogue
    from capabilities.mcp.tools import MCPTools

    tools = MCPTools(config, catalogue.load(config))
    registry.register(SERVICE, tools)
    names = []
    for spec in tools.specs():
        try:
            names.append(registry.register_capability(spec).name)
        except RegistryError as exc:
            tools.tools.pop(spec.name, None)
            tools.skipped[spec.name] = str(exc)
            log.warning("MCP tool %s skipped: %s", spec.name, exc)
    return names


def close_process_sessions() -> None:
    """End this process's MCP sessions (their stdio servers with them)."""
    from capabilities.mcp.loop import process_loop

    process_loop().close()
