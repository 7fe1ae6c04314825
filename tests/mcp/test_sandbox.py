"""An MCP stdio server the operator marks ``sandbox: true`` runs inside the tools' kernel sandbox:
a server that tries to read Flora's files, reach a loopback service or write outside its folder
gets nothing, while the same server unmarked can (so the test can tell the difference)."""

from __future__ import annotations

import sys
import textwrap
import uuid

import pytest

from capabilities.base import ExecutionContext
from config import load_config
from init_plugins import build_registry
from tests.mcp.conftest import config
from tests.tools.sandbox_support import TcpServer

pytestmark = pytest.mark.timeout(120)
TOKEN = f"flora-mcp-canary-{uuid.uuid4().hex[:10]}"

NOSY_SERVER = textwrap.dedent('''
    """A server that does what a hostile one would: reads, connects and writes where it is told."""
    import socket

    from mcp.server.mcpserver import MCPServer

    server = MCPServer("nosy", version="1.0")

    @server.tool(description="Read a file.")
    def read(path: str) -> str:
        try:
            return open(path).read()
        except OSError as exc:
            return f"refused: {exc}"

    @server.tool(description="Connect to a port on this machine.")
    def connect(port: int) -> str:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            return "CONNECTED"
        except OSError as exc:
            return f"refused: {exc}"

    @server.tool(description="Write a file.")
    def write(path: str) -> str:
        try:
            open(path, "w").write("pwned")
            return "WRITTEN"
        except OSError as exc:
            return f"refused: {exc}"

    server.run("stdio")
''')


@pytest.fixture(scope="module")
def estate(tmp_path_factory):
    base = tmp_path_factory.mktemp("mcp-sandbox")
    (base / "keys.yaml").write_text(f"key: {TOKEN}\n")
    script = base / "server" / "nosy_server.py"
    script.parent.mkdir()
    script.write_text(NOSY_SERVER)
    listener = TcpServer()
    registries = {}
    for sandboxed in (True, False):
        entry = {"command": sys.executable, "args": [str(script)], "sandbox": sandboxed}
        data_dir = base / ("data-sandboxed" if sandboxed else "data-open")
        registries[sandboxed] = build_registry(load_config(config(data_dir, servers_={"nosy": entry}), env={}))
    yield base, listener, registries
    listener.close()


def call(registry, tool: str, **arguments) -> str:
    return registry.get_executable(f"nosy.{tool}").invoke(arguments, ExecutionContext(task_id="t", user_id="u"))["text"]


def test_a_sandboxed_server_reads_no_file_of_flora(estate):
    base, _, registries = estate
    assert TOKEN in call(registries[False], "read", path=str(base / "keys.yaml"))  # unmarked: it can
    for path in (base / "keys.yaml", "/proc/1/environ", "/etc/shadow"):
        assert TOKEN not in call(registries[True], "read", path=str(path))


def test_a_sandboxed_server_reaches_no_loopback_service(estate):
    _, listener, registries = estate
    assert call(registries[True], "connect", port=listener.port).startswith("refused")
    assert listener.connections == 0
    assert call(registries[False], "connect", port=listener.port) == "CONNECTED"  # unmarked: it can


def test_a_sandboxed_server_writes_only_its_own_folder(estate):
    base, _, registries = estate
    assert call(registries[True], "write", path=str(base / "pwned")).startswith("refused")
    assert not (base / "pwned").exists()
    assert call(registries[True], "write", path="notes.txt") == "WRITTEN"  # its folder, its working directory
    assert (base / "data-sandboxed" / "mcp" / "sandbox" / "nosy" / "notes.txt").exists()
