"""The connection to Chroma behind MemoryStore: embedded or a server, and what a failure means.

Backends: ``embedded`` (``PersistentClient`` under a folder) and ``chroma_http``
(``HttpClient`` for a Chroma server shared by several nodes). chromadb's HTTP client waits
without limit: the server's heartbeat is asked first with a short timeout, and every later
request is bounded.

Any failure to reach or use Chroma raises :class:`MemoryUnavailable` (callers reply without
recall). After one, the connection refuses at once for ``retry_after_s`` instead of going back
to the network on every call, then tries again. A collection that is not there
(``NotFoundError``) is an answer, not a failure. ``call_side_by_side`` makes two calls at
once (recall's two queries), the second on a worker thread of the process's own.

Embedded Chroma and fork: its native runtime keeps worker threads, and a process forked
after Chroma was opened inherits the runtime without them; its first write waits forever.
Thespian forks actor processes, so embedded Chroma must be opened only in a process that
forks no MemoryActor afterwards (Flora's start-up never opens it before its actors are up).
A connection asked to open embedded Chroma in a process forked from one that had opened it
refuses at once (``MemoryUnavailable``, naming both processes) instead of hanging.

Exceptions::

    MemoryError_
    └── MemoryUnavailable   Chroma cannot be reached or answered with an error
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Literal
from urllib.parse import urlparse

CONNECT_TIMEOUT_S = 2.0
REQUEST_TIMEOUT_S = 10.0
RETRY_AFTER_S = 5.0

_embedded_opened_in: int | None = None  # the process that opened embedded Chroma, inherited by its forks
# chromadb shares one native system per path among a process's clients, and creates it without
# a lock: two stores opening the same path at once (two actors of one process) can each start
# one, and the loser's clean-up stops the winner's. One opening at a time.
_embedded_opening = threading.Lock()
_beside: tuple[int, ThreadPoolExecutor] | None = None  # the worker of call_side_by_side: (its process, it)
_beside_lock = threading.Lock()


def _after_fork_in_child() -> None:
    """A fork made while another thread held the lock would leave it held in the child forever."""
    global _beside_lock
    _beside_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


class MemoryError_(Exception):  # trailing underscore: MemoryError is a builtin
    """Base of the memory store's errors."""


class MemoryUnavailable(MemoryError_):
    """Chroma is unreachable or failed; the caller replies without memory."""


def embedded_opened_in() -> int | None:
    """The id of the process whose memory image opened embedded Chroma (this one, or the one
    this process was forked from); None if none did."""
    return _embedded_opened_in


class ChromaConnection:
    """One Chroma client, opened on first use and again after a failure (``on_failure`` lets
    its user drop the collection handles it holds)."""

    def __init__(self, backend: Literal["embedded", "chroma_http"], *, path: str | Path = "", url: str = "",
                 retry_after_s: float = RETRY_AFTER_S, on_failure: Callable[[], None] = lambda: None):
        if backend == "embedded" and not path:
            raise ValueError("the embedded memory store needs a path")
        if backend == "chroma_http" and not url:
            raise ValueError("the chroma_http memory store needs a url")
        self._backend = backend
        self._path = Path(path) if path else None
        self._url = url
        self._retry_after_s = retry_after_s
        self._on_failure = on_failure
        self._lock = threading.Lock()
        self._client: Any = None
        self._failed_at: float | None = None
        self._failure = ""

    def client(self):
        """The client; MemoryUnavailable while Chroma cannot be reached."""
        with self._lock:
            if self._client is not None:
                return self._client
            if self._failed_at is not None and time.monotonic() - self._failed_at < self._retry_after_s:
                raise MemoryUnavailable(self._failure)
            try:
                self._client = self._connect()
            except Exception as exc:  # noqa: BLE001 — chromadb raises many types; all mean "no memory now"
                self._failed(exc)
            self._failed_at = None
            return self._client

    def call(self, fn: Callable[[], Any]) -> Any:
        """``fn()``; a failure that means Chroma is gone becomes MemoryUnavailable."""
        try:
            return fn()
        except Exception as exc:
            if not _means_unavailable(exc):
                raise
            with self._lock:
                self._failed(exc)

    def call_side_by_side(self, first: Callable[[], Any], second: Callable[[], Any]) -> tuple[Any, Any]:
        """``call(first)`` and ``call(second)`` at the same time (Chroma lets go of the GIL), the
        second on a worker thread of this process's; both results, or the exception of the one
        that failed (the first's, where both did)."""
        return _side_by_side(lambda: self.call(first), lambda: self.call(second))

    def _connect(self):
        import chromadb
        from chromadb.config import Settings

        settings = Settings(anonymized_telemetry=False, allow_reset=False)
        if self._backend == "embedded":
            global _embedded_opened_in
            if _embedded_opened_in not in (None, os.getpid()):
                raise RuntimeError(f"embedded Chroma was opened in process {_embedded_opened_in} before this "
                                   f"process ({os.getpid()}) was forked from it; Chroma's runtime does not survive "
                                   "a fork and would hang here (open it only after forking, or use "
                                   "memory.backend: chroma_http)")
            self._path.mkdir(parents=True, exist_ok=True)
            with _embedded_opening:
                client = chromadb.PersistentClient(path=str(self._path), settings=settings)
            _embedded_opened_in = os.getpid()
            return client
        import httpx

        parts = urlparse(self._url)
        port = parts.port or (443 if parts.scheme == "https" else 8000)
        # chromadb's client waits without limit; ask the server once with a short one first
        httpx.get(f"{parts.scheme}://{parts.hostname}:{port}/api/v2/heartbeat", timeout=CONNECT_TIMEOUT_S).raise_for_status()
        client = chromadb.HttpClient(host=parts.hostname, port=port, ssl=parts.scheme == "https", settings=settings)
        session = getattr(getattr(client, "_server", None), "_session", None)
        if session is not None:  # chromadb 1.5's FastAPI client: bound every later request too
            session.timeout = httpx.Timeout(REQUEST_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
        return client

    def _failed(self, exc: BaseException):
        where = str(self._path) if self._backend == "embedded" else self._url
        self._failure = f"memory store ({self._backend} at {where}) unavailable: {type(exc).__name__}: {exc}"
        self._failed_at = time.monotonic()
        self._client = None
        self._on_failure()
        raise MemoryUnavailable(self._failure) from exc


def _means_unavailable(exc: Exception) -> bool:
    """A dropped or failing Chroma: transport errors, Chroma's own errors, disk errors, and the
    plain Exception chromadb's HTTP client raises for a 5xx without an error body. A collection
    that is not there is an answer, not a failure."""
    import httpx
    from chromadb.errors import ChromaError, NotFoundError

    if isinstance(exc, NotFoundError):
        return False
    return isinstance(exc, (httpx.HTTPError, ChromaError, OSError)) or type(exc) is Exception


def _side_by_side(first: Callable[[], Any], second: Callable[[], Any]) -> tuple[Any, Any]:
    """``first()`` here and ``second()`` on the worker thread at the same time. The worker is the
    process's own: a forked child (Thespian forks actor processes) makes one of its own, the
    parent's thread not being there."""
    global _beside
    with _beside_lock:
        if _beside is None or _beside[0] != os.getpid():
            _beside = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="flora-memory-recall"))
        worker = _beside[1]
    other = worker.submit(second)
    try:
        return first(), other.result()
    finally:
        other.cancel()
