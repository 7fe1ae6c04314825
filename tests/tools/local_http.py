"""A real HTTP server on 127.0.0.1 for tests, answering through a plain Python function.

Tests talk to it over real sockets, so the HTTP client code runs exactly as it would
against a remote service. ``app(request) -> Reply`` decides every answer; the server
records the requests it saw.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait before answering, to provoke client timeouts

    @classmethod
    def json(cls, value: Any, status: int = 200, **kwargs: Any) -> Reply:
        return cls(status, json.dumps(value).encode(), {"Content-Type": "application/json"}, **kwargs)

    @classmethod
    def text(cls, text: str, status: int = 200, content_type: str = "text/plain; charset=utf-8",
             **kwargs: Any) -> Reply:
        return cls(status, text.encode("utf-8"), {"Content-Type": content_type}, **kwargs)


App = Callable[[Request], Reply]


class LocalHTTPServer:
    """``with LocalHTTPServer(app) as server: server.url + "/path"``."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.requests: list[Request] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        # A short poll interval keeps shutdown, and so each test's teardown, quick.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="local-http", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def __enter__(self) -> LocalHTTPServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _handler_for(server: LocalHTTPServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # the status line, headers and body go out in separate writes: with Nagle's algorithm the
        # body waits for the client's delayed ACK of the headers, 40 ms on every keep-alive call
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            parts = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            request = Request(
                method=self.command,
                path=parts.path,
                query=urllib.parse.parse_qs(parts.query),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=self.rfile.read(length) if length else b"",
            )
            server.requests.append(request)
            reply = server.app(request)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            try:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(reply.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up first (a timeout test); nobody is left to answer

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    return Handler
