"""RouterActor: one AgentActor per (tenant, node), their registry, and heartbeats.

Each node runs one RouterActor, which runs the AgentActors of that node. The AgentActors
are its children, so their death reaches it as ChildActorExited and it makes another at
once (or, for one that died within a heartbeat of its start, at the next beat, so a crash at
start does not loop). Whoever asked for the route with ``watch`` (the InteractionActor, the
LoopSchedulerActor) gets the new address as a ``route_reply``. The dead one's own children
(its ExecutionActors and task group, which it reports with ``agent_children``) are asked to
exit: a process killed outright cannot end them itself. Heartbeats catch an AgentActor that
is alive but stuck: one that misses ``MISSED_BEATS`` beats is replaced the same way. With several nodes, each beat also refreshes
this node's entries in the shared registry (common/cluster.py), which expire when the node
dies, and tells the AgentActors which nodes are alive, so work placed on a dead node is
settled within seconds.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from thespian.actors import ActorExitRequest, ChildActorExited, WakeupMessage

from redis.exceptions import RedisError

from agents.base import FloraActor
from common import messages as m
from common.cluster import current_node, open_cluster

MISSED_BEATS = 3


@dataclass
class AgentEntry:
    tenant_id: str
    node: str
    address: Any
    last_seen: float = field(default_factory=time.monotonic)
    started: float = field(default_factory=time.monotonic)
    children: list[Any] = field(default_factory=list)  # its ExecutionActors and task group


class AgentDirectory:
    """Which AgentActor serves which (tenant, node); plain, so it is testable alone."""

    def __init__(self, interval_s: float):
        self.interval_s = interval_s
        self.entries: dict[tuple[str, str], AgentEntry] = {}

    def get(self, tenant_id: str, node: str) -> AgentEntry | None:
        return self.entries.get((tenant_id, node))

    def add(self, tenant_id: str, node: str, address: Any) -> AgentEntry:
        entry = AgentEntry(tenant_id, node, address)
        self.entries[(tenant_id, node)] = entry
        return entry

    def find(self, address: Any) -> AgentEntry | None:
        return next((e for e in self.entries.values() if e.address == address), None)

    def seen(self, address: Any) -> None:
        for entry in self.entries.values():
            if entry.address == address:
                entry.last_seen = time.monotonic()

    def remove(self, address: Any) -> list[AgentEntry]:
        gone = [e for e in self.entries.values() if e.address == address]
        for entry in gone:
            del self.entries[(entry.tenant_id, entry.node)]
        return gone

    def stale(self, now: float | None = None) -> list[AgentEntry]:
        now = time.monotonic() if now is None else now
        return [e for e in self.entries.values() if now - e.last_seen > MISSED_BEATS * self.interval_s]

    def snapshot(self) -> list[dict]:
        return [{"tenant_id": e.tenant_id, "node": e.node, "last_seen_s_ago": round(time.monotonic() - e.last_seen, 2),
                 "children": len(e.children)} for e in self.entries.values()]


class RouterActor(FloraActor):
    role = "router"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.directory: AgentDirectory | None = None
        self.seq = 0
        self.instance = m.new_id("router")
        self.watchers: dict[str, list[Any]] = {}  # tenant -> who asked to hear of a replaced AgentActor
        self.to_respawn: set[tuple[str, str]] = set()  # (tenant, node) whose AgentActor died young

    def handlers(self):
        return {"route_request": self.on_route_request, "heartbeat_ack": self.on_heartbeat_ack,
                "agent_children": self.on_agent_children, "status_request": self.on_status_request}

    def configured(self, message, sender):
        actors = self.runtime.config.actors
        self.directory = AgentDirectory(actors.heartbeat_interval_s)
        self.node = current_node(actors.node)
        self.cluster = open_cluster(self.runtime.config)
        self.config_message = message["config"]
        self.scheduler = message.get("scheduler")
        self.wakeupAfter(actors.heartbeat_interval_s)

    def on_route_request(self, message, sender):
        m.validate(message)
        node = message.get("node") or self.node
        if node != self.node:  # each node's RouterActor runs the AgentActors of its own node
            self.reply_error(sender, message, "invalid_parameter",
                             f"this RouterActor serves node {self.node!r}, not {node!r}")
            return
        if message.get("watch"):
            watching = self.watchers.setdefault(message["tenant_id"], [])
            if sender not in watching:
                watching.append(sender)
        entry = self.directory.get(message["tenant_id"], node)
        if entry is None:
            if (message["tenant_id"], node) in self.to_respawn:  # its watchers hear of this one too
                self._respawn(message["tenant_id"], node)
            entry = self.directory.get(message["tenant_id"], node) or self._spawn(message["tenant_id"], node)
        self.send(sender, m.route_reply(tenant_id=entry.tenant_id, node=entry.node, agent=entry.address))

    def _spawn(self, tenant_id: str, node: str) -> AgentEntry:
        from agents.agent_actor import AgentActor

        address = self.createActor(AgentActor)
        self.send(address, m.configure(config=self.config_message, router=self.myAddress, scheduler=self.scheduler,
                                       role=f"{tenant_id}@{node}"))
        self.log.info("AgentActor created tenant=%s node=%s", tenant_id, node)
        entry = self.directory.add(tenant_id, node, address)
        self.cluster.keep_agents(node, self.instance, [tenant_id])
        return entry

    def _replace(self, gone: list[AgentEntry], reason: str) -> None:
        """AgentActors that died or hung: end their children, make new ones, tell the watchers."""
        for entry in gone:
            for child in entry.children:  # a process killed outright cannot end its own children
                self.send(child, ActorExitRequest())
            self.cluster.drop_agent(entry.tenant_id, entry.node)
            young = time.monotonic() - entry.started < self.directory.interval_s
            self.log.warning("AgentActor tenant=%s %s; %d child actor(s) ended; %s", entry.tenant_id, reason,
                             len(entry.children), "another is made at the next heartbeat" if young
                             else "another is made now")
            if young:
                self.to_respawn.add((entry.tenant_id, entry.node))
            else:
                self._respawn(entry.tenant_id, entry.node)

    def _respawn(self, tenant_id: str, node: str) -> None:
        self.to_respawn.discard((tenant_id, node))
        if self.directory.get(tenant_id, node) is not None:
            return  # a request made one meanwhile
        entry = self._spawn(tenant_id, node)
        for watcher in self.watchers.get(tenant_id, []):
            self.send(watcher, m.route_reply(tenant_id=tenant_id, node=node, agent=entry.address))

    def _beat_registry(self) -> list[str] | None:
        """Refresh this node's AgentActor entries in the shared registry; the nodes alive
        there, for the AgentActors to check their workers' nodes against (None when the
        registry is not shared, so there is nothing to check)."""
        if not self.cluster.shared:
            return None
        try:
            self.cluster.keep_agents(self.node, self.instance, [e.tenant_id for e in self.directory.entries.values()])
            return sorted(self.cluster.live_names())
        except RedisError:
            self.log.warning("node registry unreachable; heartbeats go on without it", exc_info=True)
            return None

    def on_heartbeat_ack(self, message, sender):
        self.directory.seen(sender)

    def on_agent_children(self, message, sender):
        entry = self.directory.find(sender)
        if entry is not None:
            entry.children = list(m.validate(message)["children"])

    def on_status_request(self, message, sender):
        self.send(sender, m.status_reply(status={"node": self.node, "agents": self.directory.snapshot(),
                                                 "tasks": self.runtime.store.count_by_state(),
                                                 "nodes": [asdict(n) for n in self.cluster.nodes()]}))

    def on_system_message(self, message, sender):
        if isinstance(message, WakeupMessage) and self.directory is not None:
            for entry in self.directory.stale():
                self.directory.remove(entry.address)
                self.send(entry.address, ActorExitRequest())
                self._replace([entry], f"missed {MISSED_BEATS} heartbeats")
            for tenant_id, node in sorted(self.to_respawn):
                self._respawn(tenant_id, node)
            self.seq += 1
            live = self._beat_registry()
            for entry in self.directory.entries.values():
                self.send(entry.address, m.heartbeat(seq=self.seq, nodes=live))
            self.wakeupAfter(self.directory.interval_s)
        elif isinstance(message, ChildActorExited) and self.directory is not None:
            self._replace(self.directory.remove(message.childAddress), "exited")
