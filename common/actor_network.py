"""Where Flora's actor sockets listen: one address, never every interface by accident.

Every Thespian actor, the admin and the logger of a ``multiprocTCPBase`` system each listen on
a TCP port, and Thespian's TCP transport unpickles whatever arrives there: whoever reaches
such a port can run code in Flora. Thespian 4.0.1 binds every one of them to all interfaces
(``thespian/system/transport/IPBase.py``, ``IPActorAddress.__init__``:
``self.bindname = ('', sa[1]) if external else sa``) whatever ``THESPIAN_BASE_IPADDR`` says;
that variable only chooses the address Thespian *tells* other nodes.

Flora listens on ``actors.bind_address`` (127.0.0.1 by default; a private address in a
cluster) and tells other nodes that same address:

- ``THESPIAN_BASE_IPADDR`` is set to it, so every address Thespian advertises is that one;
- one patch, :func:`restrict_actor_sockets`, wraps ``IPActorAddress.__init__`` so that an
  address that Thespian would bind on the wildcard binds on the configured address instead.
  It is the only place Thespian derives a listening address (``bindArgs`` reads
  ``bindname``; ``TCPTransport`` binds nothing else), so one wrapper covers the admin, the
  logger, every actor and every external endpoint (``ActorSystem.private()``).

Which processes have it: the process that starts the ActorSystem applies it first; the admin
is forked from that process and every actor from the admin or its parent actor, so each
inherits the patched class and the environment. Flora pins Thespian's process start method
to ``fork`` (:func:`thespian_capabilities`) so that this stays true: a spawned process would
import Thespian afresh, without the patch.

The patch is written against Thespian's source of one version; another version refuses to
start (:class:`UnsupportedThespian`) rather than run with sockets open to every host.

``0.0.0.0`` leaves Thespian's own behaviour (every interface, advertised address found by
Thespian) and logs a warning at start.
"""

from __future__ import annotations

import logging
import os
import socket
from importlib import metadata

log = logging.getLogger("flora.actor_network")

THESPIAN_VERSION = "4.0.1"  # the source the patch below was written against
ADDRESS_ENV = "THESPIAN_BASE_IPADDR"  # Thespian's own: the address it advertises for this host
EVERY_INTERFACE = "0.0.0.0"

_bind_host: str | None = None  # None: Thespian's own binding (the wildcard)
_original_init = None


class UnsupportedThespian(RuntimeError):
    """The installed Thespian is not the version Flora's socket patch was written for."""


class UnboundAddress(RuntimeError):
    """``actors.bind_address`` names a host that does not resolve."""


def check_thespian_version() -> None:
    try:
        installed = metadata.version("thespian")
    except metadata.PackageNotFoundError:
        raise UnsupportedThespian("Thespian is not installed (pip install -r requirements.txt)") from None
    if installed != THESPIAN_VERSION:
        raise UnsupportedThespian(
            f"Thespian {installed} is installed, but Flora's actor-socket binding (common/actor_network.py) was "
            f"written for Thespian {THESPIAN_VERSION}; install thespian=={THESPIAN_VERSION} (requirements.txt)")


def restrict_actor_sockets(bind_address: str) -> None:
    """Make every Thespian socket opened from now on, in this process and in the processes it
    forks, listen on ``bind_address`` (and advertise it); ``0.0.0.0`` restores every interface."""
    global _bind_host
    check_thespian_version()
    _install_patch()
    bind_address = resolve(bind_address)
    if bind_address == EVERY_INTERFACE:
        _bind_host = None
        if os.environ.get(ADDRESS_ENV) == EVERY_INTERFACE:
            del os.environ[ADDRESS_ENV]  # not an address others can send to
        log.warning("actors.bind_address is 0.0.0.0: every actor port listens on every interface and unpickles "
                    "whatever reaches it; any host that can connect can run code in Flora. Use a private "
                    "address that only Flora's nodes reach (see docs/deployment.md)")
        return
    _bind_host = bind_address
    os.environ[ADDRESS_ENV] = bind_address
    from thespian.system.transport.IPBase import thisSystem

    thisSystem.add_local_addr(bind_address)  # Thespian read the variable at import, maybe before this


def resolve(bind_address: str) -> str:
    """An IPv4 address as it is; a host name (a container's own) to the IPv4 address it has now."""
    try:
        socket.inet_aton(bind_address)
        if bind_address.count(".") == 3:
            return bind_address
    except OSError:
        pass
    try:
        return socket.gethostbyname(bind_address)
    except OSError as exc:
        raise UnboundAddress(f"actors.bind_address {bind_address!r} does not resolve to an IPv4 address of this "
                             f"host: {exc}") from None


def bound_address() -> str | None:
    """The address sockets are bound to now; None for every interface (or before any call)."""
    return _bind_host


def thespian_capabilities() -> dict:
    """What Flora tells Thespian so that the patch reaches every actor process."""
    return {"Process Startup Method": "fork"}


def _install_patch() -> None:
    global _original_init
    if _original_init is not None:
        return
    from thespian.system.transport.IPBase import IPActorAddress

    original = IPActorAddress.__init__

    def __init__(self, af, socktype, proto, baseaddr, port, external=False):
        original(self, af, socktype, proto, baseaddr, port, external)
        # Thespian binds an "external" address on '' (every interface); bind it where asked instead
        if external and _bind_host is not None and af == socket.AF_INET and self.bindname[0] == "":
            self.bindname = (_bind_host, self.bindname[1])

    IPActorAddress.__init__ = __init__
    _original_init = original
