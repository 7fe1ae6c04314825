"""An MCP server built with the SDK's MCPServer (FastMCP in mcp 1.x), for the MCP tests.

``python -m tests.support.mcp_server --transport stdio`` or ``--transport http --port N``
(streamable HTTP on 127.0.0.1:N/mcp). Its tools: ``greet`` (a required argument),
``fail`` (answers isError), ``slow`` (takes the seconds it is given), ``delete_note``
(annotated destructive), ``note-count`` (a name a capability cannot hold), ``whoami``
(its process id, so a test can kill it) and ``crash`` (the process exits mid-call).

``--server stock`` serves a small warehouse instead, with data only this server knows (for
bench/agent_tasks.py): ``stock_level`` (how many of an item are on hand, and where) and
``list_items``. An item is found by its English or Chinese name, in any case, singular or plural.
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


# name, Chinese name, on hand, unit, aisle
INVENTORY = (
    ("blue widget", "蓝色小部件", 137, "pieces", "C4"),
    ("copper pipe", "铜管", 42, "metres", "A1"),
    ("screwdriver", "螺丝刀", 58, "pieces", "B2"),
    ("packing tape", "胶带", 23, "rolls", "D7"),
    ("safety glove", "安全手套", 310, "pairs", "B5"),
)


def find_item(name: str) -> tuple | None:
    """The inventory row named ``name`` (English or Chinese, any case, singular or plural)."""
    said = " ".join(name.lower().split()).strip(" .?!'\"")
    forms = {said, said.rstrip("s"), said[:-2] if said.endswith("es") else said}
    for row in INVENTORY:
        if row[0] in said or row[1] in said or any(len(f) >= 4 and f in row[0] for f in forms):
            return row
    return None


def build_stock() -> MCPServer:
    server = MCPServer("flora-test-stock", version="1.0")

    @server.tool(description="Look up the stock level of an item in the warehouse: how many are on hand, "
                             "in which unit, and the aisle where it is kept.", annotations=READ_ONLY)
    def stock_level(item: str) -> dict:
        row = find_item(item)
        if row is None:
            raise ToolError(f"no item {item!r} in the warehouse; items: {', '.join(r[0] for r in INVENTORY)}")
        return {"item": row[0], "on_hand": row[2], "unit": row[3], "aisle": row[4]}

    @server.tool(description="List the items the warehouse keeps.", annotations=READ_ONLY)
    def list_items() -> list[str]:
        return [f"{row[0]} ({row[1]})" for row in INVENTORY]

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--server", choices=["notes", "stock"], default="notes")
    args = parser.parse_args()
    server = build_stock() if args.server == "stock" else build()
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
