"""A Flora node's life: start (``start_flora``: capabilities, the actor system, the actors in the
seed's order, recovery, the trigger bridge, the model hosts' warm-up), the running handle
(``Flora``), a worker node (``run_worker``) and the stop (Thespian's, then the actor processes'
group, then the tasks this node was running are failed as a restart would fail them).
main.py is the command line around it."""

from __future__ import annotations

import atexit
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from agents.actor_system import (  # noqa: F401  (StartupError is node's too: main.StartupError)
    END_GRACE_S, STARTUP_TIMEOUT_S, STOP_GRACE_S, StartupError, open_actor_system, stop_actor_system,
)
from agents.recovery import fail_interrupted_at_stop, queue_for_chats, recover_interrupted
from agents.trigger_bridge import start_trigger_bridge
from common import log_context
from common import messages as m
from common.logging_setup import configure_logging
from config import ConfigError, ConfigSource, FloraConfig, load_config

log = logging.getLogger("flora.node")

ROUTER_NAME = "flora-router"
SCHEDULER_NAME = "flora-loop-scheduler"
WARM_UP_THREAD = "flora-warm-up"


class StopRequested(BaseException):
    """SIGTERM or SIGINT arrived: unwind what the main thread was doing and stop Flora.
    A BaseException, like KeyboardInterrupt, so that no ``except Exception`` swallows it."""

    def __init__(self, signum: int):
        super().__init__(f"signal {signum}")
        self.signum = signum


@dataclass
class Flora:
    """A running Flora: ``system`` (the ActorSystem), ``interaction`` (where user_input goes),
    ``router``, ``config``; ``shutdown()`` stops everything it started."""

    system: Any
    interaction: Any
    router: Any
    agent: Any
    config: FloraConfig
    model_host: Any = None
    understanding_host: Any = None  # the understanding model's host, when it has one of its own
    persona_hosts: list = field(default_factory=list)  # hosts of personas' own models
    warming: Any = None  # the thread warming the model hosts up after start (join it to wait)
    scheduler: Any = None
    memory: Any = None  # the MemoryActor, when long-term memory is on
    channels: dict = field(default_factory=dict)  # chat channel name -> the ChannelSupervisorActor of its ChannelActor (docs/channels.md)
    bridge: Any = None
    beacon: Any = None  # keeps this node's entry in the node registry alive
    actor_group: int | None = None  # OS process group of the Thespian admin and the actors
    lifeline: Any = None  # ends that group when this process ends, however (common/lifeline.py)
    _closed: bool = field(default=False, repr=False)
    closing: threading.Event = field(default_factory=threading.Event, repr=False)  # set as the stop begins

    def ask(self, content: str, *, user_id: str = "user_001", timeout: float | None = None, **fields: Any) -> dict:
        """Send one user_input and wait for its reply."""
        msg = m.user_input(user_id=user_id, content=content, **fields)
        reply = self.system.ask(self.interaction, msg, timeout or self.config.actors.ask_timeout_s)
        if reply is None:
            raise TimeoutError(f"no reply to {msg['msg_id']} within the timeout")
        return reply

    def ask_streaming(self, content: str, on_text: Callable[[str], None], *, user_id: str = "user_001",
                      timeout: float | None = None, **fields: Any) -> dict:
        """Send one user_input with ``stream``: ``on_text`` gets each piece of a reply as it
        is written (chat), then the whole reply is returned as from :meth:`ask`."""
        msg = m.user_input(user_id=user_id, content=content, stream=True, **fields)
        deadline = time.monotonic() + (timeout or self.config.actors.ask_timeout_s)
        self.system.tell(self.interaction, msg)
        while (left := deadline - time.monotonic()) > 0:
            got = self.system.listen(left)
            if got is None:
                break
            if not isinstance(got, dict) or got.get("msg_id") != msg["msg_id"]:
                continue  # a late answer to an earlier message that timed out
            if got.get("message_type") == "reply_chunk":
                on_text(got["text"])
                continue
            return got
        raise TimeoutError(f"no reply to {msg['msg_id']} within the timeout")

    def notifications(self, user_id: str = "user_001", *, tenant_id: str | None = None, all: bool = False,
                      mark_read: bool = True, timeout: float = 10.0) -> list[dict]:
        """The user's notifications (loop runs' results) not fetched yet, oldest first."""
        reply = self.system.ask(self.interaction, m.notifications_request(
            user_id=user_id, tenant_id=tenant_id, all=all, mark_read=mark_read), timeout)
        if not isinstance(reply, dict) or reply.get("message_type") != "notifications_reply":
            raise TimeoutError(f"no notifications reply for {user_id}: {reply!r}")
        return reply["notifications"]

    def shutdown(self) -> None:
        """Stop everything this Flora started, within about STOP_GRACE_S + END_GRACE_S: the
        trigger bridge, the actors (Thespian's stop, then their processes are ended), the node's
        registry entry, the model host; then the tasks this node was running are failed as a
        restart would fail them (common/tasks/recovery.py)."""
        if self._closed:
            return
        self._closed = True
        self.closing.set()
        try:
            if self.bridge is not None:
                self.bridge.stop()
            stop_actor_system(self.system, self.actor_group, self.config, self.lifeline)
        finally:
            if self.beacon is not None:
                self.beacon.stop()
            for host in self.hosts():
                host.stop()
            close_mcp_sessions()
            fail_interrupted_at_stop(self.config)

    def force_stop(self) -> None:
        """A second stop signal: end the actor processes and the model hosts now, no waiting."""
        from common.processes import end_process_group

        self._closed = True
        if self.actor_group is not None:
            end_process_group(self.actor_group, grace_s=0)
        if self.lifeline is not None:
            self.lifeline.release()
        for host in self.hosts():
            host.kill()

    def hosts(self) -> list:
        """The model hosts this Flora started."""
        return [h for h in (self.understanding_host, self.model_host, *self.persona_hosts) if h is not None]


def _persona_host(config: FloraConfig, settings: dict, model: str):
    """A started host for a persona's own model; a model that is not installed names the key."""
    from capabilities.llm import ModelError, build_model_host

    try:
        return build_model_host({**settings, "model": model}).start()
    except ModelError as exc:
        index = next(i for i, p in enumerate(config.personas.roster) if p.model == model)
        raise ConfigError(f"personas.roster.{index}.model: {exc}") from exc


def start_flora(config: ConfigSource = None) -> Flora:
    """Start and wire the actors; ``config`` is a path, a dict, a FloraConfig or None."""
    from agents.interaction_actor import InteractionActor
    from agents.router_actor import RouterActor
    from capabilities.llm import build_model_host, persona_models, understanding_settings
    from capability_actors.loop_scheduler_actor import LoopSchedulerActor
    from capabilities.channels.adapters import ChannelSetupError, check_credentials
    from capability_actors.channel_supervisor_actor import ChannelSupervisorActor
    from capability_actors.memory_actor import MemoryActor
    from capabilities.tools.kernel_sandbox import warn_at_start
    from init_plugins import build_registry

    started_at = time.time()  # tasks last changed before this belong to an earlier life of this node
    config = load_config(config)
    configure_logging(config.log_level, config.log_format)
    log_context.claim_process(force=True, actor="main", node=config.actors.node)
    refresh_mcp_catalogue(config)  # 0. MCP servers' tools, listed once for every process (docs/mcp.md)
    registry = build_registry(config)  # 1. capabilities: fail here, with the key's name, before any process starts
    warn_at_start(config, registry)  # what confines the tools that run programs (docs/tools.md)
    try:
        check_credentials(config)  # chat channels' secrets, from the environment
    except ChannelSetupError as exc:
        raise StartupError(str(exc)) from None

    host = understanding_host = None
    persona_hosts: list = []
    if config.llm.backend == "local" and not config.llm.host_url:
        settings = {**config.llm.model_dump(), "data_dir": config.data_dir}
        own = understanding_settings(settings)
        host = build_model_host(settings).start()  # one model process shared by every actor
        urls: dict[str, Any] = {"host_url": host.base_url}
        try:
            if own is not None:  # the understanding step's small model, on a host of its own
                understanding_host = build_model_host(own).start()
                urls["understanding_host_url"] = understanding_host.base_url
            for name in persona_models(settings, [p.model for p in config.personas.roster]):
                persona_hosts.append(_persona_host(config, settings, name))
            urls["persona_host_urls"] = {h.alias: h.base_url for h in persona_hosts}
        except BaseException:
            for started in (host, understanding_host, *persona_hosts):
                if started is not None:
                    started.stop()
            raise
        config = load_config({**config.to_dict(), "llm": {**config.llm.model_dump(), **urls}}, env={})
        registry = build_registry(config)

    base = config.actors.system_base
    try:
        beacon = announce_node(config, role="node")
        system, group, lifeline = open_actor_system(config)  # 2. the actor system
    except Exception:
        for started in (understanding_host, host, *persona_hosts):
            if started is not None:
                started.stop()
        raise
    flora = Flora(system=system, interaction=None, router=None, agent=None, config=config, model_host=host,
                  understanding_host=understanding_host, persona_hosts=persona_hosts, beacon=beacon,
                  actor_group=group, lifeline=lifeline)
    atexit.register(flora.shutdown)
    try:
        wire = config.to_dict()
        # created first, configured last: the others need its address, it needs theirs
        flora.scheduler = system.createActor(LoopSchedulerActor, globalName=SCHEDULER_NAME)
        flora.router = system.createActor(RouterActor, globalName=ROUTER_NAME)  # 3. RouterActor
        _expect(system.ask(flora.router, m.configure(config=wire, role="router", scheduler=flora.scheduler),
                           STARTUP_TIMEOUT_S), "configured", "RouterActor")
        route = _expect(system.ask(flora.router, m.route_request(tenant_id=config.default_tenant),  # 4. AgentActor
                                   STARTUP_TIMEOUT_S), "route_reply", "RouterActor")
        flora.agent = route["agent"]
        if config.memory.enabled:  # long-term memory: one actor owns the store and distils off the reply path
            flora.memory = system.createActor(MemoryActor)
            _expect(system.ask(flora.memory, m.configure(config=wire, role="memory"), STARTUP_TIMEOUT_S),
                    "configured", "MemoryActor")
        # chat channels: their supervisor is created before the InteractionActor (it pushes their
        # notifications there), configured after; it starts each channel's actor, and again if it dies
        enabled = [name for name, settings in config.channels.items() if settings.enabled]
        supervisor = system.createActor(ChannelSupervisorActor) if enabled else None
        flora.channels = {name: supervisor for name in enabled}
        flora.interaction = system.createActor(InteractionActor)  # 5. InteractionActor
        _expect(system.ask(flora.interaction, m.configure(config=wire, router=flora.router, agent=flora.agent,  # 6.
                                                          scheduler=flora.scheduler, memory=flora.memory,
                                                          channels=flora.channels or None, role="interaction"),
                           STARTUP_TIMEOUT_S), "configured", "InteractionActor")
        _expect(system.ask(flora.scheduler, m.configure(config=wire, router=flora.router,  # 7. LoopSchedulerActor
                                                        interaction=flora.interaction, role="loop_scheduler"),
                           STARTUP_TIMEOUT_S), "configured", "LoopSchedulerActor")
        recovered = recover_interrupted(system, flora.scheduler, config, started_at)  # 8. what a crash left behind
        if supervisor is not None:  # 9. the channels, the chats' "interrupted" notices in their outboxes first
            queue_for_chats(config, recovered.notes)
            _expect(system.ask(supervisor, m.configure(config=wire, interaction=flora.interaction,
                                                       role="channel_supervisor"), STARTUP_TIMEOUT_S),
                    "configured", "ChannelSupervisorActor")
        if config.loops.queue == "rabbitmq":
            flora.bridge = start_trigger_bridge(system, flora.scheduler, config)
    except BaseException:
        flora.shutdown()
        raise
    if host is not None:
        flora.warming = warm_up(registry, flora.closing)
    log.info("Flora started base=%s llm=%s", base, config.llm.backend)
    return flora


def refresh_mcp_catalogue(config: FloraConfig) -> None:
    """List the configured MCP servers' tools into the catalogue every actor process registers
    from; a server's ``env``/``headers`` naming an unset variable, or a missing command, stops
    the start with a ConfigError naming the key. A server that cannot be listed only logs."""
    if config.mcp.enabled and config.mcp.servers:
        from capabilities.mcp.catalogue import refresh

        try:
            refresh(config)
        finally:
            close_mcp_sessions()  # no idle loop thread left in this process while it forks the actor system


def close_mcp_sessions() -> None:
    """End the MCP sessions this process opened. Actor processes' stdio servers end with their
    process (capabilities/mcp/guard.py), whichever way it stops."""
    import sys

    if "capabilities.mcp" in sys.modules:
        from capabilities.mcp import close_process_sessions

        close_process_sessions()


def warm_up(registry, closing: threading.Event | None = None) -> threading.Thread:
    """Have the model hosts evaluate the understanding step's and chat's prompt prefixes in the
    background, so the first person does not wait for them (a message that comes meanwhile
    queues behind it at the host). A warm-up a stop cuts off (``closing`` set: "python main.py
    --test" stops before it ends) is not reported as a failure."""
    closing = closing or threading.Event()
    from capabilities.cognition.chat import ChatResponder
    from capabilities.cognition.intent_router import IntentRouter
    from capabilities.llm.base import LLMError
    from capabilities.routing.task_router import TaskRouter

    def run() -> None:
        started = time.perf_counter()
        try:
            IntentRouter(TaskRouter(registry), registry.get_capability("understanding_llm")).warm_up()
            ChatResponder(registry, registry.get_capability("llm")).warm_up()
        except LLMError as exc:
            if not closing.is_set():
                log.warning("warming the model hosts up failed (the first message pays for it): %s", exc)
            return
        log.info("model hosts warmed up in %.1f s", time.perf_counter() - started)

    thread = threading.Thread(target=run, name=WARM_UP_THREAD, daemon=True)
    thread.flora_closing = closing  # type: ignore[attr-defined] - read by _quiet_when_cut_off
    thread.start()
    return thread


def _quiet_when_cut_off(record: logging.LogRecord) -> bool:
    """A model call of the warm-up that a stop cut off is no failure to report."""
    closing = getattr(threading.current_thread(), "flora_closing", None)
    return closing is None or not closing.is_set()


logging.getLogger("flora.llm.openai").addFilter(_quiet_when_cut_off)


def announce_node(config: FloraConfig, *, role: str):
    """Claim this node's name in the node registry (Redis when the store is) and keep it alive;
    actor processes started after this learn their node from the environment."""
    import os

    from common.cluster import NODE_ENV, NodeBeacon, NodeInfo, NodeNameTaken, open_cluster

    os.environ[NODE_ENV] = config.actors.node
    node = NodeInfo(name=config.actors.node, admin_port=config.actors.admin_port, role=role,
                    execution=config.actors.execution)
    try:
        return NodeBeacon(open_cluster(config), node, config.actors.heartbeat_interval_s).start()
    except NodeNameTaken as exc:
        raise StartupError(str(exc)) from None


def run_worker(config: FloraConfig, stop: threading.Event | None = None) -> None:
    """An execution-only node: join the convention, accept the ExecutionActors other nodes
    place here, keep this node's entry alive, until SIGTERM/SIGINT (or ``stop``); a second
    signal ends its actor processes at once."""
    import os

    if config.actors.convention() is None:
        raise StartupError("--worker needs the leader's address: --join HOST:PORT (actors.convention_address)")
    if not config.actors.execution:
        raise StartupError("--worker: this node must accept ExecutionActors (actors.execution: true)")
    from common.processes import StopSignals, end_process_group

    started_at = time.time()
    stop = stop or threading.Event()
    group: list[int | None] = [None]

    def force(signum: int) -> None:
        if group[0] is not None:
            end_process_group(group[0], grace_s=0)
        os._exit(128 + signum)  # the lifeline goes with this process

    signals = StopSignals(lambda _signum: stop.set(), force)
    if threading.current_thread() is threading.main_thread():
        signals.install()
    try:
        beacon = announce_node(config, role="worker")
        system, group[0], lifeline = open_actor_system(config)
        try:
            recover_interrupted(system, None, config, started_at)
            print(f"Flora worker node {config.actors.node} joined {config.actors.convention_address}", flush=True)
            stop.wait()
        finally:
            try:
                stop_actor_system(system, group[0], config, lifeline)
            finally:
                beacon.stop()
                fail_interrupted_at_stop(config)
    finally:
        signals.uninstall()


def _expect(reply: Any, kind: str, who: str) -> dict:
    if not isinstance(reply, dict) or reply.get("message_type") != kind:
        raise StartupError(f"{who} did not start: expected {kind}, got {reply!r}")
    return reply
