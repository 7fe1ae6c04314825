"""Server-side request forgery: web_fetch (and http_request, test_http_guard.py) never reach a
private address unless the operator allows it.

A real server listens on 127.0.0.1 in every test, so a refusal is only a pass when the
server saw no request and the error is the guard's (``BlockedAddress``), not a failed
connection. The same addresses, allowed, do reach the server: the refusals are the guard's
doing, not an accident of the network.
"""

from __future__ import annotations

import ipaddress
import socket

import pytest

from capabilities.base import CapabilityError
from capabilities.tools.address_guard import AddressPolicy, BlockedAddress, is_internal
from tests.tools.conftest import call
from tests.tools.local_http import LocalHTTPServer, Reply, Request


def app(request: Request) -> Reply:
    if request.path == "/hop":
        return Reply(302, b"", {"Location": request.query["to"][0]})
    return Reply.text("inside", 200)


@pytest.fixture
def server():
    with LocalHTTPServer(app) as running:
        yield running


def loopback_name() -> str | None:
    """A host name other than localhost that this machine resolves to an internal address
    (its own name, through /etc/hosts on the project's machines)."""
    for name in (socket.gethostname(), socket.getfqdn(), "localhost.localdomain", "ip6-localhost"):
        try:
            infos = socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)
        except socket.gaierror:
            continue
        if name != "localhost" and infos and all(is_internal(ipaddress.ip_address(i[4][0])) for i in infos):
            return name
    return None


# (label, URL with {port} for the local server's port)
ATTEMPTS = [
    ("loopback", "http://127.0.0.1:{port}/"),
    ("localhost", "http://localhost:{port}/"),
    ("localhost with a trailing dot", "http://localhost.:{port}/"),
    ("a name under .localhost", "http://flora.localhost:{port}/"),
    ("unspecified 0.0.0.0 (reaches this host on Linux)", "http://0.0.0.0:{port}/"),
    ("IPv6 loopback", "http://[::1]:{port}/"),
    ("cloud metadata", "http://169.254.169.254/latest/meta-data/"),
    ("10/8", "http://10.0.0.1:{port}/"),
    ("192.168/16", "http://192.168.1.1:{port}/"),
    ("172.16/12", "http://172.16.0.1:{port}/"),
    ("carrier-grade NAT", "http://100.64.0.1:{port}/"),
    ("multicast", "http://224.0.0.1:{port}/"),
    ("decimal IPv4", "http://2130706433:{port}/"),
    ("hex IPv4", "http://0x7f000001:{port}/"),
    ("short IPv4 127.1", "http://127.1:{port}/"),
    ("another loopback address", "http://127.0.0.2:{port}/"),
    ("IPv4-mapped IPv6", "http://[::ffff:127.0.0.1]:{port}/"),
    ("IPv4-mapped IPv6 in hex", "http://[::ffff:7f00:1]:{port}/"),
    ("NAT64 of loopback", "http://[64:ff9b::7f00:1]:{port}/"),
    ("6to4 of loopback", "http://[2002:7f00:1::]:{port}/"),
    ("IPv6 unique local", "http://[fc00::1]:{port}/"),
    ("IPv6 link-local", "http://[fe80::1]:{port}/"),
    ("user-info trick", "http://example.com@127.0.0.1:{port}/"),
    ("user-info with password", "http://example.com:80@127.0.0.1:{port}/"),
]


@pytest.mark.parametrize("url", [u for _, u in ATTEMPTS], ids=[label for label, _ in ATTEMPTS])
def test_internal_address_is_refused_before_any_request(registry, server, url):
    with pytest.raises(BlockedAddress) as caught:
        call(registry, "web_fetch", {"url": url.format(port=server.port)})
    assert caught.value.parameter == "url" and caught.value.error_type == "invalid_parameter"
    assert "capabilities.settings.web_fetch.allow_private" in str(caught.value)
    assert server.requests == []


def test_octal_ipv4_is_refused(registry, server):
    # httpx does not parse 0177.0.0.1; the resolver would read it as 127.0.0.1
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_fetch", {"url": f"http://0177.0.0.1:{server.port}/"})
    assert caught.value.error_type == "invalid_parameter"
    assert server.requests == []


def test_a_name_that_resolves_to_loopback_is_refused(registry, server):
    name = loopback_name()
    if name is None:
        pytest.skip("this machine has no name other than localhost that resolves to an internal address")
    with pytest.raises(BlockedAddress) as caught:
        call(registry, "web_fetch", {"url": f"http://{name}:{server.port}/"})
    assert caught.value.host == name and caught.value.address  # refused by the address it resolved to
    assert server.requests == []


@pytest.mark.parametrize("where", ["http://127.0.0.2:{port}/", "http://169.254.169.254/latest/meta-data/",
                                   "http://localhost:{port}/", "http://[::ffff:127.0.0.2]:{port}/"])
def test_a_redirect_from_an_allowed_server_into_a_private_address_is_refused(registry, server, where):
    target = where.format(port=server.port)
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_fetch", {"url": f"{server.url}/hop?to={target}"}, {"allow_private": ["127.0.0.1/32"]})
    assert caught.value.error_type == "forbidden"
    assert "redirected to" in str(caught.value)
    assert [r.path for r in server.requests] == ["/hop"]


@pytest.mark.parametrize("url, allowed", [
    ("http://127.0.0.1:{port}/", ["127.0.0.1"]),
    ("http://2130706433:{port}/", ["127.0.0.0/8"]),
    ("http://0x7f000001:{port}/", ["127.0.0.1/32"]),
    ("http://example.com@127.0.0.1:{port}/", ["127.0.0.1"]),
    ("http://localhost:{port}/", ["localhost"]),
])
def test_allowed_private_addresses_are_reached(registry, server, url, allowed):
    result = call(registry, "web_fetch", {"url": url.format(port=server.port)}, {"allow_private": allowed})
    assert (result["status"], result["text"]) == (200, "inside")


def test_an_allowed_host_name_lets_its_private_addresses_through(registry, server):
    name = loopback_name()
    if name is None:
        pytest.skip("this machine has no name other than localhost that resolves to an internal address")
    result = call(registry, "web_fetch", {"url": f"http://{name}:{server.port}/"}, {"allow_private": [name]})
    assert result["text"] == "inside"


def test_allowing_one_network_does_not_allow_another(registry, server):
    with pytest.raises(BlockedAddress):
        call(registry, "web_fetch", {"url": f"http://127.0.0.1:{server.port}/"}, {"allow_private": ["10.0.0.0/8"]})
    assert server.requests == []


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "93.184.215.14", "2606:4700:4700::1111",
                                     "2001:4860:4860::8888"])
def test_public_addresses_are_not_internal(address):
    assert not is_internal(ipaddress.ip_address(address))
    assert AddressPolicy().allows("example.com", ipaddress.ip_address(address))


def test_http_request_refuses_internal_addresses_by_default(registry, server):
    for url in (f"{server.url}/", f"http://2130706433:{server.port}/", f"http://localhost:{server.port}/"):
        with pytest.raises(BlockedAddress) as caught:
            call(registry, "http_request", {"url": url})
        assert "capabilities.settings.http_request.allow_private" in str(caught.value)
    assert server.requests == []


def test_http_request_reaches_local_servers_only_where_the_operator_turned_the_guard_off(registry, server):
    assert call(registry, "http_request", {"url": f"{server.url}/"}, {"block_private": False})["body"] == "inside"


def test_http_request_with_block_private_refuses_internal_addresses(registry, server):
    for url in (f"{server.url}/", f"http://2130706433:{server.port}/", f"http://localhost:{server.port}/"):
        with pytest.raises(BlockedAddress) as caught:
            call(registry, "http_request", {"url": url}, {"block_private": True})
        assert "capabilities.settings.http_request.allow_private" in str(caught.value)
    assert server.requests == []


def test_http_request_with_block_private_refuses_a_redirect_inside(registry, server):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "http_request", {"url": f"{server.url}/hop", "params": {"to": "http://169.254.169.254/"}},
             {"block_private": True, "allow_private": ["127.0.0.1"]})
    assert caught.value.error_type == "forbidden"
    assert [r.path for r in server.requests] == ["/hop"]


def test_http_request_with_block_private_reaches_allowed_addresses(registry, server):
    result = call(registry, "http_request", {"url": f"{server.url}/"},
                  {"block_private": True, "allow_private": ["127.0.0.0/8"]})
    assert result["body"] == "inside"


def test_http_request_block_private_must_be_a_boolean(registry, server):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "http_request", {"url": f"{server.url}/"}, {"block_private": "yes"})
    assert caught.value.error_type == "misconfigured"
    assert server.requests == []


def test_the_connection_goes_to_the_address_that_was_checked(registry, server, monkeypatch):
    # A rebinding DNS server: its first answer passes the check, later ones would not. The
    # system resolver cannot be pointed at a test DNS server, so the answers are scripted here.
    answers = [[(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", server.port))]]
    real_getaddrinfo = socket.getaddrinfo

    def rebinding(host, *args, **kwargs):
        if host != "rebind.flora.test":
            return real_getaddrinfo(host, *args, **kwargs)
        if answers:
            return answers.pop()
        raise socket.gaierror(socket.EAI_NONAME, "the second answer would point elsewhere")

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    result = call(registry, "web_fetch", {"url": f"http://rebind.flora.test:{server.port}/"},
                  {"allow_private": ["127.0.0.1"]})
    assert result["text"] == "inside"  # one resolution: the connection used the checked address
    assert server.requests[-1].headers["host"] == f"rebind.flora.test:{server.port}"


def test_a_proxy_from_the_environment_is_not_a_way_around_the_guard(registry, server, monkeypatch):
    # through a proxy the guard would check the (allowed) proxy, not the destination
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, server.url)
    with pytest.raises(BlockedAddress):
        call(registry, "web_fetch", {"url": "http://10.0.0.1/admin"}, {"allow_private": ["127.0.0.1"]})
    assert server.requests == []
