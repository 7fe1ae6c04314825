"""http_request is kept away from loopback, private, link-local and metadata addresses by
default, after DNS resolution and on every redirect; ``allow_private`` opens one; an internal
server's error text never comes back.

A real server listens on 127.0.0.1: a refusal passes only when that server saw no request and
the error is the guard's. A raw TCP listener stands in for an internal service that is not HTTP
(Redis, SSH): its banner must not reach the person.
"""

from __future__ import annotations

import socket
import threading

import httpx
import pytest

from capabilities.base import CapabilityError
from capabilities.tools.address_guard import BlockedAddress, answered_from_inside
from tests.tools.conftest import call
from tests.tools.local_http import LocalHTTPServer, Reply, Request
from tests.tools.test_web_fetch_ssrf import ATTEMPTS, loopback_name

SETTING = "capabilities.settings.http_request.allow_private"


def app(request: Request) -> Reply:
    if request.path == "/hop":
        return Reply(302, b"", {"Location": request.query["to"][0]})
    if request.path == "/fail":
        return Reply(500, b"Traceback: db password=hunter2 at 10.1.2.3",
                     {"Content-Type": "text/plain", "Server": "internal-admin/1.2"})
    return Reply.text("inside", 200)


@pytest.fixture
def server():
    with LocalHTTPServer(app) as running:
        yield running


@pytest.mark.parametrize("url", [u for _, u in ATTEMPTS], ids=[label for label, _ in ATTEMPTS])
def test_internal_address_is_refused_by_default(registry, server, url):
    with pytest.raises(BlockedAddress) as caught:
        call(registry, "http_request", {"url": url.format(port=server.port)})
    assert caught.value.parameter == "url"
    assert SETTING in str(caught.value)
    assert server.requests == []


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_loopback_private_and_metadata_are_refused_for_every_method(registry, server, method):
    for url in (f"http://127.0.0.1:{server.port}/", "http://10.0.0.7/admin", "http://169.254.169.254/latest/"):
        with pytest.raises(BlockedAddress):
            call(registry, "http_request", {"url": url, "method": method, "json": {"x": 1}})
    assert server.requests == []


def test_a_name_that_resolves_to_loopback_is_refused(registry, server):
    name = loopback_name()
    if name is None:
        pytest.skip("this machine has no name other than localhost that resolves to an internal address")
    with pytest.raises(BlockedAddress) as caught:
        call(registry, "http_request", {"url": f"http://{name}:{server.port}/"})
    assert caught.value.host == name and caught.value.address  # refused by the address it resolved to
    assert server.requests == []


def test_a_scripted_dns_answer_pointing_at_loopback_is_refused(registry, server, monkeypatch):
    real = socket.getaddrinfo

    def resolver(host, *args, **kwargs):
        if host == "innocent.flora.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", server.port))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    with pytest.raises(BlockedAddress) as caught:
        call(registry, "http_request", {"url": f"http://innocent.flora.test:{server.port}/"})
    assert caught.value.address == "127.0.0.1"
    assert server.requests == []


@pytest.mark.parametrize("where", ["http://127.0.0.2:{port}/", "http://169.254.169.254/latest/meta-data/",
                                   "http://localhost:{port}/", "http://[::1]:{port}/", "http://10.0.0.1/"])
def test_a_redirect_into_an_internal_address_is_refused(registry, server, where):
    # the first server is allowed (as an operator's intranet host would be); its redirect is not
    with pytest.raises(CapabilityError) as caught:
        call(registry, "http_request", {"url": f"{server.url}/hop", "params": {"to": where.format(port=server.port)}},
             {"allow_private": ["127.0.0.1/32"]})
    assert caught.value.error_type == "forbidden" and "redirected to" in str(caught.value)
    assert [r.path for r in server.requests] == ["/hop"]


def test_a_redirect_to_another_scheme_is_refused(registry, server):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "http_request", {"url": f"{server.url}/hop", "params": {"to": "file:///etc/passwd"}},
             {"allow_private": ["127.0.0.1"]})
    assert caught.value.error_type == "forbidden"


def test_the_allow_list_opens_exactly_what_it_names(registry, server):
    assert call(registry, "http_request", {"url": f"{server.url}/"}, {"allow_private": ["127.0.0.1"]})["body"] \
        == "inside"
    assert call(registry, "http_request", {"url": f"http://localhost:{server.port}/"},
                {"allow_private": ["localhost"]})["body"] == "inside"
    with pytest.raises(BlockedAddress):
        call(registry, "http_request", {"url": f"{server.url}/"}, {"allow_private": ["10.0.0.0/8"]})
    with pytest.raises(BlockedAddress):
        call(registry, "http_request", {"url": f"http://127.0.0.2:{server.port}/"}, {"allow_private": ["127.0.0.1"]})


def test_a_bad_allow_list_is_a_configuration_error(registry, server):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "http_request", {"url": f"{server.url}/"}, {"allow_private": "127.0.0.1"})
    assert caught.value.error_type == "misconfigured" and SETTING in str(caught.value)
    assert server.requests == []


def test_an_internal_servers_error_text_is_withheld(registry, server):
    result = call(registry, "http_request", {"url": f"{server.url}/fail"}, {"allow_private": ["127.0.0.1"]})
    assert (result["status"], result["reason"], result["body"], result["body_kind"]) == \
        (500, "Internal Server Error", None, "withheld")
    assert "hunter2" not in str(result) and "internal-admin" not in str(result)


class BannerService:
    """A TCP service that is not HTTP: it answers every connection with its banner."""

    def __init__(self, banner: bytes):
        self.banner = banner
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(4096)
                conn.sendall(self.banner)

    def close(self):
        self.sock.close()
        self._thread.join(timeout=5)


def test_a_non_http_services_banner_does_not_come_back(registry):
    service = BannerService(b"-ERR wrong password for redis-admin SECRET-BANNER-7781\r\n")
    try:
        with pytest.raises(CapabilityError) as caught:
            call(registry, "http_request", {"url": f"http://127.0.0.1:{service.port}/"},
                 {"allow_private": ["127.0.0.1"]})
    finally:
        service.close()
    assert caught.value.error_type == "unavailable"
    assert "SECRET-BANNER" not in str(caught.value) and "redis" not in str(caught.value)


class _Stream:
    def __init__(self, address: str):
        self.address = address

    def get_extra_info(self, name: str):
        return (self.address, 443) if name == "server_addr" else None


@pytest.mark.parametrize("address, internal", [("93.184.215.14", False), ("2606:4700:4700::1111", False),
                                               ("127.0.0.1", True), ("10.1.2.3", True), ("::1", True),
                                               ("169.254.169.254", True), ("fe80::1%eth0", True)])
def test_what_counts_as_an_answer_from_inside(address, internal):
    # a public server's error text still comes back (a 404 page is something to read)
    response = httpx.Response(404, extensions={"network_stream": _Stream(address)})
    assert answered_from_inside(response) is internal
