"""MCP tools as Flora capabilities: one :class:`~capabilities.base.CapabilitySpec` per tool,
named ``server.tool``, with the tool's input schema as its parameter schema.

Names: capability names allow letters, digits, ``_`` and ``.``; any other character of a
tool's name becomes ``_`` (``get-time`` → ``clock.get_time``) and the call still uses the
tool's own name. A tool whose name then collides with another, or whose input schema is not
a valid Draft 2020-12 schema of type object, is skipped and the reason logged.

Approval (``mcp.servers.<name>.approve``): ``all``, ``none``, a list of tool names, or, when
unset, what the tool's MCP annotations say: a tool that is not marked read-only, or that is
marked destructive, asks the person first.

Results: the tool's text content (``text``, also the task's ``message``), its structured
content (``structured``) and a summary of any other content (``content``). A result the
tool marks ``isError`` fails the step with the tool's text as the error.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from capabilities.base import CapabilityError, CapabilitySpec, ExecutionContext
from capabilities.mcp.connection import ServerConnection, ServerSpec, ServerTimeout
from capabilities.mcp.loop import WaitCancelled, process_loop
from config import FloraConfig

log = logging.getLogger("flora.mcp")

MAX_KEYWORDS = 12
SMALL_CONTENT_BYTES = 64 * 1024  # an image or audio item up to this size travels whole, base64
_NOT_A_NAME = re.compile(r"[^A-Za-z0-9.]+")  # what a name cannot hold, and "_": each run becomes one "_"
_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")
# words that say nothing about what a tool is for
_STOP = frozenset("""a an and any are as at be by can do does for from get gets given has have how if in into is it
its list lists make may me more my new no not of on one or own run set sets some such than that the their them
then there these this to tool tools use used uses using via was what when where which while who will with you your
specific""".split())


def capability_name(server: str, tool: str) -> str:
    """``server.tool``, with the characters a capability name cannot hold made ``_``."""
    cleaned = _NOT_A_NAME.sub("_", tool).strip("._") or "tool"
    return f"{server}.{cleaned}"


def words(text: str) -> list[str]:
    """The lower-case words of a name or a sentence (``getCurrentTime`` → get, current, time)."""
    return [w.lower() for w in _WORD.findall(text or "")]


def keywords(server: str, tool: str, title: str | None, description: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(words of the tool's name and title, further words of its description): what the MCP
    fallback matches a request against; the first weigh more."""
    named = _significant(words(tool) + words(title or ""))
    described = [w for w in _significant(words(description)) if w not in named]
    return tuple(named), tuple(described[:MAX_KEYWORDS])


def _significant(found: list[str]) -> list[str]:
    seen: list[str] = []
    for word in found:
        if len(word) > 2 and word not in _STOP and word not in seen:
            seen.append(word)
    return seen


def approval(settings_approve: Any, tool: str, capability: str, annotations: dict) -> bool:
    if settings_approve == "all":
        return True
    if settings_approve == "none":
        return False
    if isinstance(settings_approve, list):
        return tool in settings_approve or capability in settings_approve
    return annotations.get("destructiveHint") is True or annotations.get("readOnlyHint") is not True


@dataclass(frozen=True)
class MCPTool:
    """A listed tool as Flora knows it."""

    server: str
    tool: str  # the tool's own name, used in the call
    capability: str
    description: str
    schema: dict
    named: tuple[str, ...]  # name and title words
    described: tuple[str, ...]  # description words
    needs_approval: bool
    repeatable: bool  # read-only or idempotent: safe to send again after a lost connection
    timeout_s: float


class MCPTools:
    """The ``mcp`` service of a registry: the catalogue's tools as capabilities, and the
    calls to them through this process's connections."""

    def __init__(self, config: FloraConfig, catalogue: dict):
        self._config = config
        self._specs: dict[str, ServerSpec] = {}
        self.tools: dict[str, MCPTool] = {}
        self.skipped: dict[str, str] = {}  # "server.tool" -> why it is not a capability
        for server, entry in catalogue.get("servers", {}).items():
            settings = config.mcp.servers.get(server)
            if settings is None or not settings.enabled:
                continue
            for listed in entry.get("tools", []):
                self._add(server, settings, listed)

    def _add(self, server: str, settings, listed: dict) -> None:
        tool = listed["name"]
        name = capability_name(server, tool)
        schema = listed.get("input_schema") or {}
        reason = _schema_problem(schema)
        if reason is None and name in self.tools:
            reason = f"its name becomes {name}, as {self.tools[name].tool!r}'s does"
        if reason is not None:
            self.skipped[f"{server}.{tool}"] = reason
            log.warning("MCP tool %s.%s skipped: %s", server, tool, reason)
            return
        annotations = listed.get("annotations") or {}
        named, described = keywords(server, tool, listed.get("title"), listed.get("description", ""))
        self.tools[name] = MCPTool(
            server=server, tool=tool, capability=name,
            description=listed.get("description") or listed.get("title") or f"{tool} (MCP server {server})",
            schema=schema, named=named, described=described,
            needs_approval=approval(settings.approve, tool, name, annotations),
            repeatable=annotations.get("readOnlyHint") is True or annotations.get("idempotentHint") is True,
            timeout_s=settings.call_timeout_s or self._config.mcp.call_timeout_s)

    def specs(self) -> list[CapabilitySpec]:
        return [CapabilitySpec(name=t.capability, description=t.description, parameters=t.schema,
                               handler=self._handler(t), keywords=t.named, needs_approval=t.needs_approval)
                for t in self.tools.values()]

    def names(self) -> set[str]:
        return set(self.tools)

    def _handler(self, tool: MCPTool):
        if "context" in tool.schema.get("properties", {}):
            # the tool has an argument named like Flora's ExecutionContext: the argument wins,
            # and the call cannot see its task's cancellation
            def call_mcp_tool(**arguments: Any) -> dict:
                return self.call(tool.capability, arguments)
        else:
            def call_mcp_tool(context: ExecutionContext, **arguments: Any) -> dict:
                return self.call(tool.capability, arguments, context)

        call_mcp_tool.__name__ = f"mcp_{tool.capability.replace('.', '_')}"
        return call_mcp_tool

    # -- calls -----------------------------------------------------------------------------
    def call(self, capability: str, arguments: dict, context: ExecutionContext | None = None) -> dict:
        """Call the tool behind ``capability`` and return Flora's result for it."""
        tool = self.tools[capability]
        connection = self._connection(tool.server)
        cancelled = context.cancelled if context is not None and context.store is not None else None
        budget = tool.timeout_s + (0 if connection.alive else self._config.mcp.list_timeout_s) + 5
        task_id = context.task_id if context is not None else "-"
        started = time.perf_counter()
        outcome = "failed"
        try:
            result = process_loop().run(
                connection.call_tool(tool.tool, arguments, timeout_s=tool.timeout_s, repeatable=tool.repeatable),
                timeout=budget, cancelled=cancelled)
            outcome = "error_result" if result.is_error else "ok"
        except WaitCancelled:
            outcome = "cancelled"
            raise CapabilityError(f"{capability} was stopped: the task was cancelled", error_type="cancelled") from None
        except TimeoutError:
            outcome = "timeout"
            raise ServerTimeout(f"MCP server {tool.server} did not answer {tool.tool} within {budget:g} s") from None
        finally:
            log.info("MCP call task_id=%s server=%s tool=%s outcome=%s elapsed_ms=%.1f", task_id, tool.server,
                     tool.tool, outcome, (time.perf_counter() - started) * 1000)
        return tool_result(tool, result)

    def _connection(self, server: str) -> ServerConnection:
        spec = self._specs.get(server)
        if spec is None:
            spec = self._specs[server] = ServerSpec.resolve(
                server, self._config.mcp.servers[server], log_dir=_log_dir(self._config))
        return process_connection(spec, self._config.mcp.list_timeout_s)


def process_connection(spec: ServerSpec, connect_timeout_s: float) -> ServerConnection:
    """This process's connection to a server: one per process and server settings, whichever
    registry asks (a process may build more than one registry), for as long as its loop runs."""
    import hashlib

    key = hashlib.sha256(repr(spec).encode()).hexdigest()
    return process_loop().owned(key, lambda: ServerConnection(spec, connect_timeout_s=connect_timeout_s))


def _log_dir(config: FloraConfig):
    from capabilities.mcp.catalogue import directory

    return directory(config) / "logs"


def _schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "its input schema is not a JSON schema of type object"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"its input schema is not valid JSON Schema (Draft 2020-12): {exc.message}"
    return None


def tool_result(tool: MCPTool, result: Any) -> dict:
    """Flora's result for a ``CallToolResult``; an ``isError`` result raises with its text."""
    texts, other = [], []
    for item in result.content:
        kind = getattr(item, "type", "")
        if kind == "text":
            texts.append(item.text)
        elif kind == "resource" and hasattr(item.resource, "text"):
            texts.append(item.resource.text)
        else:
            other.append(_summary(item))
    text = "\n".join(texts)
    if result.is_error:
        raise CapabilityError(text or f"{tool.capability} reported an error without saying what it was")
    out: dict[str, Any] = {"server": tool.server, "tool": tool.tool, "text": text}
    if result.structured_content is not None:
        out["structured"] = result.structured_content
    if other:
        out["content"] = other
    out["message"] = text or (json.dumps(result.structured_content, ensure_ascii=False)
                              if result.structured_content is not None else f"{tool.capability} done")
    return out


def _summary(item: Any) -> dict:
    data = item.model_dump(mode="json", by_alias=True, exclude_none=True)
    blob = data.get("data") or data.get("resource", {}).get("blob")
    if isinstance(blob, str) and len(blob) > SMALL_CONTENT_BYTES:
        data.pop("data", None)
        data.get("resource", {}).pop("blob", None)
        data["omitted_bytes"] = len(blob) * 3 // 4
    return data
