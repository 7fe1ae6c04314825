"""ActorGateway: how the HTTP server's event loop talks to the actor system without blocking.

A Thespian ask blocks its caller, and one ActorSystem endpoint must not be used from two
threads at once. The gateway keeps a pool of worker threads; each opens its own private
endpoint into the running system (``ActorSystem.private()``) the first time it asks, and
an ``await gateway.ask(...)`` runs one ask on one of them. simpleSystemBase runs every actor
inside the caller's ask and cannot give private endpoints, so there the pool has one thread
asking through the system itself.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable


class GatewayTimeout(TimeoutError):
    """The actor system did not answer in time."""


class ActorGateway:
    def __init__(self, system: Any, *, workers: int = 16, private: bool = True):
        self._system = system
        self._private = private
        self._pool = ThreadPoolExecutor(max_workers=workers if private else 1, thread_name_prefix="flora-http-ask")
        self._local = threading.local()
        self._openers: list = []
        self._lock = threading.Lock()
        self._closed = False

    async def ask(self, target: Any, message: dict, timeout: float) -> dict:
        """Send ``message`` to ``target`` and wait for its answer; GatewayTimeout if none comes."""
        reply = await self.run(self._ask, target, message, timeout)
        if reply is None:
            raise GatewayTimeout(f"no answer to {message.get('message_type')} within {timeout:g} s")
        return reply

    async def ask_streaming(self, target: Any, message: dict, timeout: float,
                            on_chunk: Callable[[dict], None]) -> dict:
        """Like :meth:`ask` for a ``user_input`` sent with ``stream``: each ``reply_chunk`` that
        comes first is handed to ``on_chunk`` on the event loop, then the reply is returned."""
        loop = asyncio.get_running_loop()
        reply = await self.run(self._ask_streaming, target, message, timeout,
                               lambda chunk: loop.call_soon_threadsafe(on_chunk, chunk))
        if reply is None:
            raise GatewayTimeout(f"no answer to {message.get('message_type')} within {timeout:g} s")
        return reply

    def _ask_streaming(self, target: Any, message: dict, timeout: float, on_chunk: Callable[[dict], None]) -> Any:
        endpoint = self._endpoint()
        deadline = time.monotonic() + timeout
        endpoint.tell(target, message)
        while (left := deadline - time.monotonic()) > 0:
            got = endpoint.listen(left)
            if got is None:
                return None
            if isinstance(got, dict) and got.get("message_type") == "reply_chunk":
                if got.get("msg_id") == message.get("msg_id"):
                    on_chunk(got)
                continue
            if isinstance(got, dict) and got.get("msg_id") not in (None, message.get("msg_id")):
                continue  # a late answer this endpoint stopped waiting for
            return got
        return None

    async def tell(self, target: Any, message: dict) -> None:
        await self.run(lambda: self._endpoint().tell(target, message))

    async def run(self, fn: Callable, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def _ask(self, target: Any, message: dict, timeout: float) -> Any:
        return self._endpoint().ask(target, message, timeout)

    def _endpoint(self) -> Any:
        if not self._private:
            return self._system
        endpoint = getattr(self._local, "endpoint", None)
        if endpoint is None:
            opener = self._system.private()
            endpoint = self._local.endpoint = opener.__enter__()
            with self._lock:
                self._openers.append(opener)
        return endpoint

    def close(self) -> None:
        """Stop the worker threads and close their endpoints."""
        if self._closed:
            return
        self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            openers, self._openers = self._openers, []
        for opener in openers:
            try:
                opener.__exit__(None, None, None)
            except Exception:  # the system may already be down
                pass
