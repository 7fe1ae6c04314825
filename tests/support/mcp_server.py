"""An MCP server built with the SDK's MCPServer (FastMCP in mcp 1.x), for the MCP tests.

``python -m tests.support.mcp_server --transport stdio`` or ``--transport http --port N``
(streamable HTTP on 127.0.0.1:N/mcp). Its tools: ``greet`` (a required argument),
``fail`` (answers isError), ``slow`` (takes the seconds it is given), ``delete_note``
(annotated destructive), ``note-count`` (a name a capability cannot hold), ``whoami``
(its process id, so a test can kill it) and ``crash`` (the process exits mid-call).
"""

from __future__ import annotations

import argparse
import os

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)


def build() -> MCPServer:
    server = MCPServer("flora-test-notes", version="1.0")
    notes = {"n1": "buy milk", "n2": "call Ada"}

    @server.tool(description="Greet a person by name with a friendly hello.", annotations=READ_ONLY)
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool(description="Always fails, saying why.", annotations=READ_ONLY)
    def fail(reason: str = "the notebook is locked") -> str:
        raise ToolError(f"cannot do that: {reason}")

    @server.tool(description="Wait for the given number of seconds, then say so.", annotations=READ_ONLY)
    async def slow(seconds: float) -> str:
        await anyio.sleep(seconds)
        return f"waited {seconds} s"

    @server.tool(description="Delete a note from the notebook for good.", annotations=DESTRUCTIVE)
    def delete_note(note_id: str) -> str:
        if notes.pop(note_id, None) is None:
            raise ToolError(f"there is no note {note_id}")
        return f"deleted {note_id}"

    @server.tool(name="note-count", description="How many notes the notebook holds.", annotations=READ_ONLY)
    def note_count() -> dict:
        return {"count": len(notes)}

    @server.tool(description="The process id of this server.", annotations=READ_ONLY)
    def whoami() -> str:
        return str(os.getpid())

    @server.tool(description="Exit the server process in the middle of the call.")
    def crash() -> str:
        os._exit(3)

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = build()
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
