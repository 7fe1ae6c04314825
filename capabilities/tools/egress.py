"""The only way out of the sandbox for a tool an operator gave network: Flora's egress proxy.

A sandboxed program always runs in an empty network namespace. With ``tools.shell.network`` or
``tools.python.network`` on, the sandbox also gets this process's proxy socket (a Unix socket,
bound at ``kernel_sandbox.EGRESS_SOCKET``) and :mod:`capabilities.tools.egress_bridge` in front of the
program, which listens on the namespace's own ``127.0.0.1:3128`` and carries each connection
to the socket; ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY`` point programs at it. Programs
that ignore proxy variables have no route anywhere.

The proxy speaks HTTP: ``CONNECT host:port`` (HTTPS and any TCP protocol tunnelled through it)
and plain requests in absolute form (``GET http://host/path``). Before it connects it resolves
the host and checks every address with the web tools' :class:`AddressPolicy`: loopback,
private, link-local, carrier-grade NAT and metadata addresses are refused (403) unless
``tools.network_allow_private`` lists them, so Flora's own ports, Redis, RabbitMQ, the model host
and the HTTP API stay out of reach. It connects to the checked address, never to the name again
(no DNS rebinding between check and connect).
"""

from __future__ import annotations

import logging
import os
import socket
import tempfile
import threading
from typing import Any
from urllib.parse import urlsplit

from capabilities.base import CapabilityError
from capabilities.tools.address_guard import AddressPolicy, BlockedAddress
from capabilities.tools.kernel_sandbox import BRIDGE_PORT

log = logging.getLogger("flora.capability.egress")

MAX_HEAD_BYTES = 64 * 1024
CONNECT_TIMEOUT_S = 10.0

_proxies: dict[tuple[str, ...], "EgressProxy"] = {}
_lock = threading.Lock()


def egress_socket(context: Any) -> str:
    """The path of this process's egress proxy for the context's allow-list (started on first use)."""
    from capabilities.tools.workspace import tools_settings

    allowed = tuple(tools_settings(context).network_allow_private)
    with _lock:
        proxy = _proxies.get(allowed)
        if proxy is None or proxy.pid != os.getpid():
            proxy = _proxies[allowed] = EgressProxy(
                AddressPolicy.from_setting(list(allowed), "tools.network_allow_private"))
        return proxy.path


def proxy_environment() -> dict[str, str]:
    url = f"http://127.0.0.1:{BRIDGE_PORT}"
    return {name: url for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                                   "all_proxy")}


class EgressProxy:
    """An HTTP proxy on a Unix socket that connects only where the address policy allows."""

    def __init__(self, policy: AddressPolicy) -> None:
        self.policy = policy
        self.pid = os.getpid()
        self._dir = tempfile.mkdtemp(prefix="flora-egress-")
        self.path = os.path.join(self._dir, "egress.sock")
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._server.bind(self.path)
            os.chmod(self.path, 0o666)  # the sandbox's unprivileged uid connects through its bind mount
            self._server.listen(64)
        except OSError as exc:
            self._server.close()
            raise CapabilityError(f"The egress proxy could not start: {exc.strerror}.",
                                  error_type="unavailable") from exc
        threading.Thread(target=self._accept, name="flora-egress", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = None
        try:
            client.settimeout(CONNECT_TIMEOUT_S)
            head, rest = _read_head(client)
            method, target, version = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            if method.upper() == "CONNECT":
                host, _, port = target.rpartition(":")
                upstream = self._connect(host, int(port))
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            else:
                parts = urlsplit(target)
                if parts.scheme != "http" or not parts.hostname:
                    raise ValueError("only absolute http:// requests and CONNECT are proxied")
                upstream = self._connect(parts.hostname, parts.port or 80)
                path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                first = f"{method} {path} {version}\r\n".encode("latin-1")
                headers = [line for line in head.split(b"\r\n")[1:]
                           if line and not line.lower().startswith((b"proxy-", b"connection:"))]
                upstream.sendall(first + b"\r\n".join(headers + [b"Connection: close", b"", b""]) + rest)
            client.settimeout(None)
            upstream.settimeout(None)
            _pipe(client, upstream)
        except BlockedAddress as exc:
            _refuse(client, 403, str(exc))
        except (OSError, ValueError, UnicodeError) as exc:
            _refuse(client, 502, f"the egress proxy could not connect: {exc}")
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    sock.close()

    def _connect(self, host: str, port: int) -> socket.socket:
        if not 0 < port < 65536:
            raise ValueError(f"bad port {port}")
        try:
            addresses = self.policy.checked_addresses(host, port)
        except BlockedAddress:
            log.warning("egress refused %s:%d", host, port)
            raise
        except Exception as exc:  # httpcore.ConnectError: the name does not resolve
            raise OSError(str(exc)) from exc
        error: OSError | None = None
        for address in addresses:
            try:
                return socket.create_connection((address, port), timeout=CONNECT_TIMEOUT_S)
            except OSError as exc:
                error = exc
        raise error or OSError(f"cannot connect to {host}:{port}")


def _read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ValueError("the request ended before its head")
        data += chunk
        if len(data) > MAX_HEAD_BYTES:
            raise ValueError("the request head is too large")
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _pipe(a: socket.socket, b: socket.socket) -> None:
    def copy(src: socket.socket, dst: socket.socket) -> None:
        try:
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        except OSError:
            pass  # either side closed: the tunnel is over
        finally:
            for sock in (dst, src):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # already closed

    other = threading.Thread(target=copy, args=(b, a), daemon=True)
    other.start()
    copy(a, b)
    other.join()


def _refuse(client: socket.socket, status: int, reason: str) -> None:
    body = reason.encode("utf-8", errors="replace")
    phrase = {403: "Forbidden", 502: "Bad Gateway"}[status]
    try:
        client.sendall(f"HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                       f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    except OSError:
        pass  # the client is gone
