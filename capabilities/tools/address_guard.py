"""Keeps Flora's outgoing HTTP calls away from private networks (server-side request forgery).

A web address a model or a person hands to Flora may point at the machine Flora runs on
(``127.0.0.1``, ``[::1]``), at the cloud metadata service (``169.254.169.254``) or at other
hosts of a private network. :class:`AddressPolicy` says which IP addresses are private;
:func:`guarded_transport` gives an httpx transport that checks every connection it opens.

What is guaranteed: the check runs on the IP address the socket connects to, after DNS
resolution, for the first request and for every redirect hop (each new connection). The name
is resolved once, each address checked, and the socket then connects to a checked address,
never to the name, so a DNS answer that changes between check and connect (DNS rebinding)
cannot slip a private address in. Every way of writing an address (``2130706433``,
``0x7f000001``, ``0177.0.0.1``, ``127.1``, ``[::ffff:127.0.0.1]``, a user-info part as in
``http://example.com@127.0.0.1/``) is read by the resolver the same way the connection would
be, so it meets the same check. A name is refused when *any* of its addresses is private.
``localhost`` and names under ``.localhost`` are refused before they are resolved.

Not covered: environment proxies are ignored by the guarded transport (a proxy would make
the check see the proxy's address, not the destination's); a public server that forwards
requests into a private network is out of reach of any client-side check.

Exceptions::

    CapabilityInputError("url")
    └── BlockedAddress        the host is, or resolves to, an address Flora may not call
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass

import httpcore
import httpx

from capabilities.base import CapabilityError, CapabilityInputError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Not private by Python's tables, yet no public web page lives there.
_ALSO_BLOCKED = tuple(ipaddress.ip_network(n) for n in (
    "100.64.0.0/10",  # carrier-grade NAT (shared address space)
    "192.0.0.0/24",  # IETF protocol assignments
    "198.18.0.0/15",  # benchmarking
))
MAX_CONNECTIONS = 10  # one call at a time per client, plus its redirect hops
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # the well-known NAT64 prefix carries an IPv4 address


class BlockedAddress(CapabilityInputError):
    """The address is private (or resolves to a private address) and not on the allow-list."""

    def __init__(self, host: str, address: str = "", setting: str = "allow_private"):
        where = f"{host} ({address})" if address and address != host else host
        super().__init__("url", f"Flora may not call {where}: it is a private, loopback, link-local or otherwise "
                                f"internal address (an operator can allow it with {setting}).")
        self.host = host
        self.address = address


def is_internal(ip: IPAddress) -> bool:
    """Whether ``ip`` is not a public unicast address: private, loopback, link-local,
    CGNAT, multicast, unspecified, reserved, or an IPv6 form that carries such an IPv4
    address (IPv4-mapped, 6to4, NAT64, Teredo)."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None and is_internal(embedded):
            return True
    return (not ip.is_global or ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast
            or ip.is_unspecified or ip.is_reserved or any(ip in net for net in _ALSO_BLOCKED
                                                          if net.version == ip.version))


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


@dataclass(frozen=True)
class AddressPolicy:
    """Which internal addresses are allowed anyway: networks (``10.0.0.0/8``, ``127.0.0.1``)
    and host names (``intranet.example``: whatever that name resolves to)."""

    networks: tuple[IPNetwork, ...] = ()
    hosts: frozenset[str] = frozenset()
    setting: str = "allow_private"  # the configuration key named in refusals

    @classmethod
    def from_setting(cls, entries: object, key: str) -> AddressPolicy:
        """Read an ``allow_private`` list; a bad entry is a ``misconfigured`` CapabilityError naming ``key``."""
        if entries is None:
            return cls(setting=key)
        if not isinstance(entries, list):
            raise CapabilityError(f"{key} must be a list of networks (10.0.0.0/8) or host names.",
                                  error_type="misconfigured")
        networks, hosts = [], set()
        for entry in entries:
            if not isinstance(entry, str) or not entry.strip():
                raise CapabilityError(f"{key}: {entry!r} is neither a network nor a host name.",
                                      error_type="misconfigured")
            try:
                networks.append(ipaddress.ip_network(entry.strip(), strict=False))
            except ValueError:
                hosts.add(_normal_host(entry))
        return cls(tuple(networks), frozenset(hosts), key)

    def allows(self, host: str, ip: IPAddress) -> bool:
        if not is_internal(ip):
            return True
        if _normal_host(host) in self.hosts:
            return True
        candidates = [ip] + ([_embedded_ipv4(ip)] if isinstance(ip, ipaddress.IPv6Address) else [])
        return any(c in net for c in candidates if c is not None for net in self.networks
                   if net.version == c.version)

    def checked_addresses(self, host: str, port: int) -> list[str]:
        """The addresses ``host`` resolves to, every one of them allowed; else BlockedAddress.

        Raises ``httpcore.ConnectError`` when the name does not resolve (as a failed connect would).
        """
        name = _normal_host(host)
        if (name == "localhost" or name.endswith(".localhost")) and name not in self.hosts:
            raise BlockedAddress(host, setting=self.setting)
        try:
            infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        addresses = []
        for family, _, _, _, sockaddr in infos:
            if family not in (socket.AF_INET, socket.AF_INET6):
                continue
            ip = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])  # drop an IPv6 zone id
            if not self.allows(host, ip):
                raise BlockedAddress(host, str(ip), self.setting)
            if str(ip) not in addresses:
                addresses.append(str(ip))
        if not addresses:
            raise httpcore.ConnectError(f"{host} has no IPv4 or IPv6 address")
        return addresses


def _normal_host(host: str) -> str:
    return host.strip().strip("[]").lower().rstrip(".")


class _GuardedBackend(httpcore.SyncBackend):
    """Connects to a checked IP address of the host, never to the name itself. TLS still
    verifies the certificate against the host name (httpcore passes it separately)."""

    def __init__(self, policy: AddressPolicy):
        self._policy = policy

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable | None = None) -> httpcore.NetworkStream:
        failure: Exception | None = None
        for address in self._policy.checked_addresses(host, port):
            try:
                return super().connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                           socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc  # try the host's next address, as a resolver-driven connect would
        assert failure is not None
        raise failure


class GuardedTransport(httpx.HTTPTransport):
    """An httpx transport whose every connection goes through :class:`AddressPolicy`."""

    def __init__(self, policy: AddressPolicy):
        ssl_context = _ssl_context()
        super().__init__(verify=ssl_context, trust_env=False)
        # httpx builds its connection pool without a way to pass a network backend; the
        # pool is rebuilt here, the same way, with the guarded backend.
        self._pool = httpcore.ConnectionPool(ssl_context=ssl_context, max_connections=MAX_CONNECTIONS,
                                             network_backend=_GuardedBackend(policy))


def guarded_transport(policy: AddressPolicy) -> GuardedTransport:
    return GuardedTransport(policy)


def answered_from_inside(response: httpx.Response) -> bool:
    """Whether ``response`` came over a connection to an internal address (one the operator
    opened with ``allow_private``). Ask while the response is open: the connection's address
    is gone once it is closed. The text of such a server's errors is not passed on."""
    stream = response.extensions.get("network_stream")
    address = stream.get_extra_info("server_addr") if stream is not None else None
    if not address:
        return False
    try:
        return is_internal(ipaddress.ip_address(str(address[0]).split("%", 1)[0]))
    except ValueError:
        return False


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every guarded client: loading the CA bundle takes
    tens of milliseconds, and a context may be shared by many connections."""
    return httpx.create_ssl_context(trust_env=False)
