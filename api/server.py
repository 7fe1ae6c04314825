"""How the HTTP API is served: uvicorn with an h11 connection that guards the request head.

- **Header read timeout** (``http.header_timeout_s``, default 10 s): a client has that long
  from its first byte (or from connecting) to finish sending a request's line and headers; one
  that sends them slowly (slowloris: holding connections open a byte at a time) gets 408 and
  the connection is closed. The clock starts again for each request on a kept-alive connection.
- **Oversized headers** (``http.max_header_bytes``, default 16 KiB): a request line plus headers
  larger than that gets 431 Request Header Fields Too Large, before the application sees it.
- The ``Host`` allow-list is the application's (:class:`api.app.Guard`): it answers 400.

uvicorn's own h11 protocol is kept (its ASGI cycle, keep-alive, flow control); this class only
adds the timer and measures the head before h11 reads it (h11's own limit applies only to a head
still incomplete, and uvicorn answers it with 400).
"""

from __future__ import annotations

import http
import json
import logging
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("flora.api.server")


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for the request head and 431 for a large one."""

    header_timeout_s: float = 10.0
    max_header_bytes: int = 16 * 1024

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer = None
        self._start_head_timer()

    def _start_head_timer(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_too_slow)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE:  # a new request begins (or goes on): its head is timed
            self._start_head_timer()
            if self._head_size(data) > self.max_header_bytes:
                self._stop_head_timer()
                log.warning("refused a request from %s: its head is over %d bytes", self.client, self.max_header_bytes)
                self._refuse(431, "headers_too_large", f"the request line and headers are over "
                                                       f"{self.max_header_bytes} bytes")
                return
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the head is complete (or the connection failed)
            self._stop_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self._start_head_timer()  # the next request's head, which may have come before this moment

    def _head_size(self, data: bytes) -> int:
        """The size of the request head so far: up to its blank line, or all that came."""
        received = self.conn.trailing_data[0] + data
        ends = [i + len(mark) for mark in (b"\r\n\r\n", b"\n\n") if (i := received.find(mark)) >= 0]
        return min(ends) if ends else len(received)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        log.warning("closed a connection from %s: its request head took over %g s", self.client,
                    self.header_timeout_s)
        self._refuse(408, "timeout", f"the request line and headers took longer than {self.header_timeout_s:g} s")

    def _refuse(self, status: int, error_type: str, message: str) -> None:
        """Answer ``status`` and close: written directly, as ``self.conn`` is mid-request or
        failed and cannot send a response of its own."""
        body = json.dumps({"error": {"type": error_type, "message": message}}).encode()
        reason = http.HTTPStatus(status).phrase.encode()
        self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                             b"connection: close\r\n\r\n%s" % (status, reason, len(body), body))
        self.transport.close()


def uvicorn_config(app: Any, settings: Any, **kwargs: Any) -> uvicorn.Config:
    """A uvicorn.Config serving ``app`` with the guarded protocol and the limits of ``settings``
    (the ``http`` section of the configuration)."""
    if settings.host in ("0.0.0.0", "::") and not settings.allowed_hosts:
        log.warning("the API listens on every interface but answers only to localhost, 127.0.0.1 and [::1] in the "
                    "Host header; list the names clients use in http.allowed_hosts")
    protocol = type("FloraH11Protocol", (GuardedH11Protocol,), {"header_timeout_s": settings.header_timeout_s,
                                                                "max_header_bytes": settings.max_header_bytes})
    return uvicorn.Config(app, host=settings.host, port=settings.port, http=protocol,
                          h11_max_incomplete_event_size=settings.max_header_bytes, **kwargs)
