"""One asyncio event loop per process, on a thread of its own, for the MCP sessions.

The SDK is async and Flora's capability handlers are synchronous (they run in an
ExecutionActor's message handler). Every MCP session of a process lives on this loop;
a handler submits a coroutine to it and waits, a little at a time, so that it can stop
waiting when the task is cancelled or the time is up. Sessions hold subprocesses and task
groups that must be entered and left on the same loop, so there is exactly one loop per
process, started on first use (a forked child starts its own).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import threading
import time
from typing import Any, Awaitable, Callable, Coroutine

log = logging.getLogger("flora.mcp")

POLL_S = 0.25  # how often a waiting handler looks at its task's cancellation


class WaitCancelled(Exception):
    """The task was cancelled while its coroutine ran; the coroutine was cancelled too."""


class LoopThread:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._closers: list[Callable[[], Awaitable[None]]] = []
        self._owned: dict[str, Any] = {}

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid() or not self._thread.is_alive():
                self._loop = asyncio.new_event_loop()
                self._pid = os.getpid()
                self._closers, self._owned = [], {}
                self._thread = threading.Thread(target=self._loop.run_forever, name="flora-mcp-loop", daemon=True)
                self._thread.start()
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop())

    def run(self, coro: Coroutine[Any, Any, Any], *, timeout: float,
            cancelled: Callable[[], bool] | None = None) -> Any:
        """Run ``coro`` on the loop and wait for its result, at most ``timeout`` seconds
        (``TimeoutError``) and only while ``cancelled()`` is false (``WaitCancelled``); in
        both cases the coroutine is cancelled on the loop."""
        future = self.submit(coro)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                future.cancel()
                raise TimeoutError(f"no result within {timeout:g} s")
            try:
                return future.result(min(POLL_S, left) if cancelled is not None else left)
            except concurrent.futures.TimeoutError:
                if cancelled is not None and cancelled():
                    future.cancel()
                    raise WaitCancelled() from None

    def owned(self, key: str, make: Callable[[], Any]) -> Any:
        """The object kept under ``key`` for as long as this loop runs (a server's connection),
        made now if there is none; its ``aclose()`` is awaited when the loop closes."""
        self.loop()
        with self._lock:
            found = self._owned.get(key)
            if found is None:
                found = self._owned[key] = make()
                self._closers.append(found.aclose)
            return found

    def close(self, timeout: float = 10.0) -> None:
        """Close what registered a closer (stdio servers get their stdin closed, then are
        ended), then stop the loop. Idempotent; a no-op in a process that never used it."""
        with self._lock:
            loop, thread, closers = self._loop, self._thread, list(self._closers)
            if loop is None or self._pid != os.getpid() or thread is None or not thread.is_alive():
                self._loop = None
                return
            self._loop, self._closers, self._owned = None, [], {}

        async def close_all() -> None:
            await asyncio.gather(*(closer() for closer in closers), return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(close_all(), loop).result(timeout)
        except (concurrent.futures.TimeoutError, RuntimeError) as exc:
            log.warning("MCP sessions did not close within %.0f s: %r", timeout, exc)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)


_PROCESS_LOOP = LoopThread()
atexit.register(_PROCESS_LOOP.close)


def process_loop() -> LoopThread:
    """This process's loop for MCP sessions (started on first use)."""
    return _PROCESS_LOOP
