"""One MCP server as one process sees it: started or reached on first use, kept, and
started again on the next call once it has ended.

A connection is held open by a task on the process's MCP loop (:mod:`capabilities.mcp.loop`)
inside the SDK's ``mcp.Client``; calls come from other tasks on the same loop. The read side
of the transport is watched, so a server that exited between two calls (its stdout closed)
is noticed before the next call is sent, and that call goes to a fresh server.

Exceptions (all :class:`~capabilities.base.CapabilityError`, so a task reports them)::

    CapabilityError
    ├── ServerUnavailable   the server could not be started or reached, or it went away
    │                       during a call (retryable: the next call starts it again)
    └── ServerTimeout       no answer within the time allowed (retryable)

Configuration problems found when the server is resolved (a variable named in ``env`` or
``headers`` is not set, a command that is not there) raise ``config.ConfigError`` naming
the key.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from capabilities.base import CapabilityError
from config import ConfigError, MCPServerConfig

log = logging.getLogger("flora.mcp")

GUARD = Path(__file__).with_name("guard.py")
HTTP_TIMEOUT_S = 30.0  # connect/write for HTTP servers; a tool call has its own timeout
HTTP_READ_TIMEOUT_S = 300.0  # a response stream may stay open while a tool works
CLOSE_TIMEOUT_S = 10.0  # the SDK's own stdio shutdown is bounded at about 6.5 s


class ServerUnavailable(CapabilityError):
    def __init__(self, message: str):
        super().__init__(message, retryable=True, error_type="unavailable")


class ServerTimeout(CapabilityError):
    def __init__(self, message: str):
        super().__init__(message, retryable=True, error_type="timeout")


@dataclass(frozen=True)
class ServerSpec:
    """A configured server with its environment resolved: what a connection needs."""

    name: str
    transport: str  # stdio | streamable_http
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    log_path: Path | None = None
    sandbox_dir: Path | None = None  # set: the server runs in the kernel sandbox, writing only here

    @classmethod
    def resolve(cls, name: str, settings: MCPServerConfig, *, log_dir: Path | None = None,
                environ: dict[str, str] | None = None) -> "ServerSpec":
        """Read the values ``env`` and ``headers`` name from the environment; check the command."""
        environ = dict(os.environ if environ is None else environ)
        key = f"mcp.servers.{name}"
        if settings.transport == "streamable_http":
            headers = {header: _variable(environ, source, f"{key}.headers.{header}")
                       for header, source in settings.headers.items()}
            return cls(name=name, transport="streamable_http", url=settings.url, headers=headers)
        pairs = settings.env.items() if isinstance(settings.env, dict) else ((n, n) for n in settings.env)
        env = {target: _variable(environ, source, f"{key}.env") for target, source in pairs}
        if settings.cwd and not Path(settings.cwd).is_dir():
            raise ConfigError(f"{key}.cwd: {settings.cwd!r} is not a directory")
        path = env.get("PATH", environ.get("PATH", os.defpath))
        found = shutil.which(settings.command, path=path) if os.sep not in settings.command else (
            settings.command if os.path.isfile(settings.command) and os.access(settings.command, os.X_OK) else None)
        if found is None:
            raise ConfigError(f"{key}.command: {settings.command!r} is not an executable found on PATH")
        # absolute: a relative path means Flora's working directory, whatever the server's cwd
        sandbox_dir = (log_dir.parent / "sandbox" / name) if settings.sandbox and log_dir is not None else None
        return cls(name=name, transport="stdio", command=os.path.abspath(found), args=tuple(settings.args), env=env,
                   cwd=settings.cwd, log_path=log_dir / f"{name}.log" if log_dir is not None else None,
                   sandbox_dir=sandbox_dir)

    def describe(self) -> str:
        return self.url if self.transport == "streamable_http" else " ".join([self.command, *self.args])


def _variable(environ: dict[str, str], name: str, key: str) -> str:
    if name not in environ:
        raise ConfigError(f"{key}: environment variable {name} is not set")
    return environ[name]


class ServerConnection:
    """The session with one server in this process. Use only on the process's MCP loop."""

    def __init__(self, spec: ServerSpec, *, connect_timeout_s: float):
        self.spec = spec
        self._connect_timeout_s = connect_timeout_s
        self._client: Any = None
        self._watch: _WatchedReadStream | None = None
        self._holder: asyncio.Task | None = None
        self._stop: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self.starts = 0  # how many times it was started (or reached): 1 + restarts

    @property
    def alive(self) -> bool:
        return self._client is not None and self._watch is not None and not self._watch.ended

    async def client(self) -> Any:
        """The connected ``mcp.Client``: connected now when there is none, or when the
        server's stream has ended since the last call."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if not self.alive:
                if self._client is not None:
                    log.warning("MCP server %s ended since its last call; starting it again", self.spec.name)
                await self.aclose()
                await self._connect()
            return self._client

    async def list_tools(self) -> list:
        client = await self.client()
        tools, cursor = [], None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools

    async def call_tool(self, tool: str, arguments: dict, *, timeout_s: float, repeatable: bool) -> Any:
        """Call ``tool``; a connection found closed is reconnected, and the call sent again
        once when the tool says calling it twice does no harm (``repeatable``)."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
        from pydantic import ValidationError

        for attempt in (1, 2):
            client = await self.client()
            try:
                return await client.call_tool(tool, arguments, read_timeout_seconds=timeout_s)
            except MCPError as exc:
                if exc.code == REQUEST_TIMEOUT:
                    raise ServerTimeout(f"MCP server {self.spec.name} did not answer {tool} within "
                                        f"{timeout_s:g} s") from None
                if exc.code != CONNECTION_CLOSED:
                    raise CapabilityError(f"MCP server {self.spec.name} refused the call to {tool}: "
                                          f"{exc.error.message}") from None
                await self.aclose()
                if attempt == 1 and repeatable:
                    log.warning("MCP server %s closed the connection during %s; calling it again on a new one",
                                self.spec.name, tool)
                    continue
                raise ServerUnavailable(f"MCP server {self.spec.name} stopped during {tool} (the connection "
                                        "closed); it is started again on the next call") from None
            except ValidationError as exc:  # a result outside the protocol: the server's bug, not the call's
                raise CapabilityError(f"MCP server {self.spec.name} answered {tool} with a result that does not "
                                      f"follow the protocol: {_said(exc)}") from None
            except _TRANSPORT_ERRORS as exc:
                await self.aclose()
                raise ServerUnavailable(f"MCP server {self.spec.name} failed during {tool}: {_said(exc)}; it is "
                                        "reached again on the next call") from None
        raise AssertionError("unreachable")

    # -- life --------------------------------------------------------------------------
    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future = loop.create_future()
        self._stop = asyncio.Event()
        self._holder = loop.create_task(self._hold(ready, self._stop), name=f"mcp-{self.spec.name}")
        try:
            self._client = await asyncio.wait_for(asyncio.shield(ready), self._connect_timeout_s)
        except asyncio.TimeoutError:
            await self.aclose()
            if ready.done() and not ready.cancelled():
                ready.exception()  # what the start ended with, read so that it is not reported as lost
            raise ServerTimeout(f"MCP server {self.spec.name} ({self.spec.describe()}) did not start within "
                                f"{self._connect_timeout_s:g} s") from None
        except BaseException as exc:
            await self.aclose()
            if isinstance(exc, (asyncio.CancelledError, CapabilityError)):
                raise
            raise ServerUnavailable(f"MCP server {self.spec.name} ({self.spec.describe()}) could not be "
                                    f"{'reached' if self.spec.url else 'started'}: {_said(exc)}") from None
        self.starts += 1
        log.info("MCP server %s connected (%s) protocol=%s", self.spec.name, self.spec.transport,
                 self._client.protocol_version)

    async def _hold(self, ready: asyncio.Future, stop: asyncio.Event) -> None:
        """Keep the session open until asked to stop: the SDK's task groups and the
        subprocess are entered and left by this one task."""
        from mcp import Client

        errlog = _open_log(self.spec.log_path)
        try:
            async with Client(self._transport(errlog), cache=None) as client:
                if not ready.done():
                    ready.set_result(client)
                await stop.wait()
        except BaseException as exc:  # reported to whoever waits for the connection
            if not ready.done():
                if isinstance(exc, Exception):
                    ready.set_exception(exc)
                else:  # cancelled (given up on) or stopped: nobody waits for it any more
                    ready.cancel()
            elif not isinstance(exc, asyncio.CancelledError):
                log.warning("MCP server %s: session ended with %s", self.spec.name, _said(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if errlog is not sys.stderr:
                errlog.close()

    async def aclose(self) -> None:
        """End the session: a stdio server gets its stdin closed, then SIGTERM and SIGKILL
        (the SDK's shutdown, bounded), an HTTP session is ended with a DELETE."""
        holder, stop, connected = self._holder, self._stop, self._client is not None
        self._client = self._watch = self._holder = self._stop = None
        if holder is None:
            return
        if stop is not None:
            stop.set()
        if not connected:  # still starting (a server that does not answer): no session to end politely
            holder.cancel()
        done, _ = await asyncio.wait({holder}, timeout=CLOSE_TIMEOUT_S)
        if not done:
            log.warning("MCP server %s: its session did not end within %.0f s; abandoning it", self.spec.name,
                        CLOSE_TIMEOUT_S)
            holder.cancel()

    def _transport(self, errlog: TextIO):
        spec = self.spec

        @asynccontextmanager
        async def watched():
            if spec.transport == "streamable_http":
                opened = _http_streams(spec)
            else:
                from mcp import StdioServerParameters
                from mcp.client.stdio import stdio_client

                sandbox = ["--sandbox", str(spec.sandbox_dir)] if spec.sandbox_dir is not None else []
                params = StdioServerParameters(
                    command=sys.executable,
                    args=["-I", "-S", str(GUARD), str(os.getpid()), *sandbox, spec.command, *spec.args],
                    env=spec.env or None, cwd=spec.cwd or None)
                opened = stdio_client(params, errlog=errlog)
            async with opened as (read_stream, write_stream):
                self._watch = _WatchedReadStream(read_stream)
                yield self._watch, write_stream

        return watched()


@asynccontextmanager
async def _http_streams(spec: ServerSpec):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(HTTP_TIMEOUT_S, read=HTTP_READ_TIMEOUT_S)
    async with httpx2.AsyncClient(headers=spec.headers, timeout=timeout) as http:
        async with streamable_http_client(spec.url, http_client=http) as streams:
            yield streams


class _WatchedReadStream:
    """The transport's read stream, noting when it ends (the server exited or hung up)."""

    def __init__(self, inner: Any):
        self._inner = inner
        self.ended = False

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except Exception:
            self.ended = True
            raise

    def __aiter__(self) -> "_WatchedReadStream":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except BaseException:
            self.ended = True
            raise

    async def aclose(self) -> None:
        self.ended = True
        await self._inner.aclose()

    async def __aenter__(self) -> "_WatchedReadStream":
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        self.ended = True
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:  # last_context and whatever else the dispatcher reads
        return getattr(self._inner, name)


def _open_log(path: Path | None) -> TextIO:
    """Where a stdio server's stderr goes: its own file under the data directory."""
    if path is None:
        return sys.stderr
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "a", encoding="utf-8", errors="replace")


def _said(exc: BaseException) -> str:
    """One line for an exception, looking inside the groups anyio raises."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return text if len(text) < 300 else text[:300] + "…"


def _transport_errors() -> tuple[type[BaseException], ...]:
    import anyio
    import httpx2

    return (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError, httpx2.TransportError,
            BaseExceptionGroup)


try:
    _TRANSPORT_ERRORS = _transport_errors()
except ImportError:  # the SDK is not installed: nothing here is used then
    _TRANSPORT_ERRORS = (OSError,)
