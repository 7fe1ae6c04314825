"""RouterActor: one AgentActor per (tenant, node), their registry, and heartbeats.

Each node runs one RouterActor, which runs the AgentActors of that node. The AgentActors
are its children, so their death reaches it as ChildActorExited and the next request for
that tenant gets a fresh one. Heartbeats catch an AgentActor that is alive but stuck: one
that misses ``MISSED_BEATS`` beats is replaced. With several nodes, each beat also refreshes
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
        return [{"tenant_id": e.tenant_id, "node": e.node, "last_seen_s_ago": round(time.monotonic() - e.last_seen, 2)}
                for e in self.entries.values()]


class RouterActor(FloraActor):
    role = "router"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.directory: AgentDirectory | None = None
        self.seq = 0
        self.instance = m.new_id("router")

    def handlers(self):
        return {"route_request": self.on_route_request, "heartbeat_ack": self.on_heartbeat_ack,
                "status_request": self.on_status_request}

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

    def on_status_request(self, message, sender):
        self.send(sender, m.status_reply(status={"node": self.node, "agents": self.directory.snapshot(),
                                                 "tasks": self.runtime.store.count_by_state(),
                                                 "nodes": [asdict(n) for n in self.cluster.nodes()]}))

    def on_system_message(self, message, sender):
        if isinstance(message, WakeupMessage) and self.directory is not None:
            for entry in self.directory.stale():
                self.log.warning("AgentActor tenant=%s missed %d heartbeats; replacing it", entry.tenant_id,
                                 MISSED_BEATS)
                self.directory.remove(entry.address)
                self.send(entry.address, ActorExitRequest())
            self.seq += 1
            live = self._beat_registry()
            for entry in self.directory.entries.values():
                self.send(entry.address, m.heartbeat(seq=self.seq, nodes=live))
            self.wakeupAfter(self.directory.interval_s)
        elif isinstance(message, ChildActorExited) and self.directory is not None:
            for entry in self.directory.remove(message.childAddress):
                self.cluster.drop_agent(entry.tenant_id, entry.node)
                self.log.warning("AgentActor tenant=%s exited; a new one is made on the next request", entry.tenant_id)
