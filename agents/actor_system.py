"""This node's Thespian actor system: opened with its sockets bound where the configuration says
and its processes tied to the program that started them (``open_actor_system``), told what
this node is (``system_capabilities``), and stopped within a bounded time, whatever is left of
its processes ended (``stop_actor_system``)."""

from __future__ import annotations

import logging
import socket
import threading
from typing import Any

from config import FloraConfig

log = logging.getLogger("flora.node")

STARTUP_TIMEOUT_S = 60.0  # for each actor's configuration at start, and the trigger bridge's first consume
STOP_GRACE_S = 4.0  # Thespian's own stop of the actors; then their processes are ended
END_GRACE_S = 1.0  # between SIGTERM and SIGKILL for actor processes Thespian's stop left


class StartupError(RuntimeError):
    """Flora could not start; the message says which part failed."""


def open_actor_system(config: FloraConfig) -> tuple[Any, int | None, Any]:
    """Start this node's ActorSystem with every actor socket on ``actors.bind_address`` (see
    common/actor_network.py; the admin and the actors it forks inherit the binding). Returns
    the system, the OS process group its admin and actors run in (None when they run here),
    and the lifeline that ends that group when this process ends, however it ends
    (common/lifeline.py): the actors follow the program that started them, never its parent."""
    from thespian.actors import ActorSystem

    from common.actor_network import UnboundAddress, UnsupportedThespian, restrict_actor_sockets
    from common.lifeline import Lifeline
    from common.processes import actor_process_group

    try:
        restrict_actor_sockets(config.actors.bind_address)
    except (UnsupportedThespian, UnboundAddress) as exc:
        raise StartupError(str(exc)) from None
    capabilities = system_capabilities(config)
    lifeline = Lifeline()  # opened before the admin forks, so that it inherits the read end
    try:
        system = ActorSystem(config.actors.system_base, capabilities, logDefs=thespian_log_defs())
        admin_port = capabilities.get("Admin Port")
        group = actor_process_group(admin_port) if admin_port else None
    except BaseException:
        lifeline.release()
        raise
    lifeline.attach(group)
    if admin_port and group is None:
        log.warning("the actor system's process group was not found from its admin port %s: its processes "
                    "will not end by themselves if this program is killed", admin_port)
    return system, group, lifeline


def stop_actor_system(system: Any, group: int | None, config: FloraConfig, lifeline: Any = None) -> None:
    """Thespian's own stop, bounded by STOP_GRACE_S (an actor blocked in a long call does not
    answer it); then whatever is left of the admin's process group is ended, and only then
    the lifeline let go of."""
    from common.processes import end_process_group

    try:
        if group is None:
            system.shutdown()
            return
        stopper = threading.Thread(target=system.shutdown, name="flora-actor-stop", daemon=True)
        stopper.start()
        stopper.join(STOP_GRACE_S)
        if stopper.is_alive():
            log.warning("the actor system did not stop within %.0f s; ending its processes", STOP_GRACE_S)
        left = end_process_group(group, grace_s=END_GRACE_S)
        if left:
            log.warning("ended %d actor process(es) of node %s that outlived the actor system's stop",
                        len(left), config.actors.node)
    finally:
        if lifeline is not None:
            lifeline.release()


def system_capabilities(config: FloraConfig) -> dict:
    """What this node tells Thespian about itself: its admin port, the leader of its
    convention, and Flora's own placement keys (``flora_node``, ``flora_execution``) that
    ExecutionActor.actorSystemCapabilityCheck reads."""
    from common.actor_network import thespian_capabilities

    actors = config.actors
    capabilities: dict[str, Any] = {"flora_node": actors.node, "flora_execution": actors.execution,
                                    **thespian_capabilities()}
    if actors.system_base != "simpleSystemBase":
        capabilities["Admin Port"] = actors.admin_port or free_port()
    convention = actors.convention()
    if convention is not None:
        capabilities["Convention Address.IPv4"] = convention
    return capabilities


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]




def thespian_log_defs() -> dict:
    """Thespian's own log records: warnings and worse, to stderr."""
    return {
        "version": 1,
        "disable_existing_loggers": False,  # keep flora.* loggers created before the system starts
        "formatters": {"plain": {"format": "%(asctime)s %(levelname)s thespian %(message)s"}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain", "level": "WARNING"}},
        "root": {"handlers": ["stderr"], "level": "WARNING"},
    }
