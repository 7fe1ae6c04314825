"""Which Flora nodes are alive, and which AgentActor serves which (tenant, node).

Several nodes (processes with their own Thespian admin port, joined in one convention) share
one Redis. Each node *announces* itself under its name and keeps the entry alive with a
heartbeat; each RouterActor keeps an entry per AgentActor it runs. Every entry expires
(``ttl_s``, three heartbeats by default) unless refreshed, so a node killed with -9 drops
out of the registry within seconds, long before Thespian's convention notices (which takes
about 22 minutes by default). Keys::

    <prefix>:node:<name>              JSON NodeInfo, with a TTL; ``instance`` tells two
                                      processes using the same name apart
    <prefix>:agent:<tenant>|<node>    JSON {tenant, node, instance, since}, with a TTL
    <prefix>:nodes, <prefix>:agents   sorted sets of those names, scored by when they expire:
                                      listing reads these, never SCANs the keyspace

A single node on SQLite has no shared registry: :class:`LocalCluster` answers for it alone,
so the rest of Flora asks the same questions either way.

Exceptions::

    ClusterError
    └── NodeNameTaken     another live process already announced this node name
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Protocol

from redis.exceptions import RedisError

log = logging.getLogger("flora.cluster")

NODE_ENV = "FLORA_NODE"  # set before the actor system starts: actor processes inherit it
HEARTBEATS_TO_EXPIRE = 3


class ClusterError(Exception):
    pass


class NodeNameTaken(ClusterError):
    def __init__(self, node: "NodeInfo"):
        super().__init__(f"node name {node.name!r} is already in use by pid {node.pid} on {node.host} "
                         f"(admin port {node.admin_port}); give this node another name (--node)")
        self.node = node


@dataclass(frozen=True)
class NodeInfo:
    name: str
    admin_port: int = 0
    role: str = "node"  # "node" (front and agents), "worker" (ExecutionActors only)
    execution: bool = True  # accepts ExecutionActors
    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    instance: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started_at: float = field(default_factory=time.time)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | bytes) -> "NodeInfo":
        return cls(**json.loads(text))


def _earlier_life(held: NodeInfo, node: NodeInfo) -> bool:
    """Whether ``held`` was written by a process of this host that no longer runs (or by an
    earlier process with this very pid, as after a container restart)."""
    if held.host != node.host:
        return False
    if held.pid == node.pid:
        return True
    try:
        os.kill(held.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def current_node(default: str) -> str:
    """The node this process belongs to: the one its node process announced, else ``default``."""
    return os.environ.get(NODE_ENV) or default


class Cluster(Protocol):
    shared: bool

    def announce(self, node: NodeInfo, *, wait_s: float | None = None) -> None: ...
    def beat(self, node: NodeInfo) -> bool: ...
    def leave(self, node: NodeInfo) -> None: ...
    def nodes(self) -> list[NodeInfo]: ...
    def live_names(self) -> set[str]: ...
    def keep_agents(self, node: str, instance: str, tenants: list[str]) -> None: ...
    def drop_agent(self, tenant_id: str, node: str) -> None: ...
    def agents(self) -> list[dict]: ...
    def close(self) -> None: ...


class RedisCluster:
    """The registry on Redis, entries with a TTL of ``ttl_s``."""

    shared = True  # every node sees the same entries

    def __init__(self, url: str, *, prefix: str = "flora", ttl_s: float = 15.0):
        import redis

        self._redis = redis.Redis.from_url(url)
        self._prefix = prefix
        self._ttl_ms = max(1, int(ttl_s * 1000))

    def _node_key(self, name: str) -> str:
        return f"{self._prefix}:node:{name}"

    def _agent_key(self, tenant_id: str, node: str) -> str:
        return f"{self._prefix}:agent:{self._agent_name(tenant_id, node)}"

    @staticmethod
    def _agent_name(tenant_id: str, node: str) -> str:
        return f"{tenant_id}|{node}"

    def _put(self, key: str, value: str, index: str, member: str, *, nx: bool = False) -> bool:
        """Write an entry with its TTL and list it in its index (until it expires)."""
        if not self._redis.set(key, value, nx=nx, px=self._ttl_ms):
            return False
        self._redis.zadd(f"{self._prefix}:{index}", {member: time.time() * 1000 + self._ttl_ms})
        return True

    def _listed(self, index: str, key_of) -> list[bytes]:
        """The values of the live entries of an index; expired members are pruned."""
        index_key = f"{self._prefix}:{index}"
        self._redis.zremrangebyscore(index_key, "-inf", time.time() * 1000)
        members = sorted(m.decode() for m in self._redis.zrange(index_key, 0, -1))
        values = self._redis.mget([key_of(member) for member in members]) if members else []
        return [v for v in values if v is not None]  # the key's own TTL is the truth

    def announce(self, node: NodeInfo, *, wait_s: float | None = None) -> None:
        """Claim the node's name. An entry left by an earlier life of this node on this host
        (its process is gone) is taken over at once; one from elsewhere is waited out for up
        to ``wait_s`` (default: its TTL), then NodeNameTaken."""
        key = self._node_key(node.name)
        deadline = time.monotonic() + (self._ttl_ms / 1000 if wait_s is None else wait_s)
        while True:
            if self._put(key, node.to_json(), "nodes", node.name, nx=True):
                return
            raw = self._redis.get(key)
            held = NodeInfo.from_json(raw) if raw is not None else None
            if held is None or held.instance == node.instance or _earlier_life(held, node):
                self._put(key, node.to_json(), "nodes", node.name)
                return
            if time.monotonic() >= deadline:
                raise NodeNameTaken(held)
            time.sleep(0.2)

    def beat(self, node: NodeInfo) -> bool:
        """Refresh the node's entry; False when another process took the name meanwhile."""
        key = self._node_key(node.name)
        held = self._redis.get(key)
        if held is not None and NodeInfo.from_json(held).instance != node.instance:
            return False
        self._put(key, node.to_json(), "nodes", node.name)
        return True

    def leave(self, node: NodeInfo) -> None:
        key = self._node_key(node.name)
        held = self._redis.get(key)
        if held is not None and NodeInfo.from_json(held).instance == node.instance:
            self._redis.delete(key)
            self._redis.zrem(f"{self._prefix}:nodes", node.name)

    def nodes(self) -> list[NodeInfo]:
        return [NodeInfo.from_json(v) for v in self._listed("nodes", self._node_key)]

    def live_names(self) -> set[str]:
        return {n.name for n in self.nodes()}

    def keep_agents(self, node: str, instance: str, tenants: list[str]) -> None:
        """Write (or refresh) the entries of the AgentActors one RouterActor runs."""
        if not tenants:
            return
        now = time.time()
        expires = now * 1000 + self._ttl_ms
        with self._redis.pipeline(transaction=False) as pipe:
            for tenant in tenants:
                pipe.set(self._agent_key(tenant, node),
                         json.dumps({"tenant_id": tenant, "node": node, "instance": instance, "since": now}),
                         px=self._ttl_ms)
            pipe.zadd(f"{self._prefix}:agents", {self._agent_name(t, node): expires for t in tenants})
            pipe.execute()

    def drop_agent(self, tenant_id: str, node: str) -> None:
        self._redis.delete(self._agent_key(tenant_id, node))
        self._redis.zrem(f"{self._prefix}:agents", self._agent_name(tenant_id, node))

    def agents(self) -> list[dict]:
        return [json.loads(v) for v in self._listed("agents", lambda name: f"{self._prefix}:agent:{name}")]

    def close(self) -> None:
        self._redis.close()


class LocalCluster:
    """One node on its own: no shared registry, the node itself is all there is."""

    shared = False  # each process has its own: it knows only what it announced itself

    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._agents: dict[tuple[str, str], dict] = {}

    def announce(self, node: NodeInfo, *, wait_s: float | None = None) -> None:
        self._nodes[node.name] = node

    def beat(self, node: NodeInfo) -> bool:
        self._nodes[node.name] = node
        return True

    def leave(self, node: NodeInfo) -> None:
        self._nodes.pop(node.name, None)

    def nodes(self) -> list[NodeInfo]:
        return list(self._nodes.values())

    def live_names(self) -> set[str]:
        return set(self._nodes)

    def keep_agents(self, node: str, instance: str, tenants: list[str]) -> None:
        for tenant in tenants:
            self._agents[(tenant, node)] = {"tenant_id": tenant, "node": node, "instance": instance,
                                            "since": time.time()}

    def drop_agent(self, tenant_id: str, node: str) -> None:
        self._agents.pop((tenant_id, node), None)

    def agents(self) -> list[dict]:
        return list(self._agents.values())

    def close(self) -> None:
        pass


def open_cluster(config) -> Cluster:
    """Redis when the store is shared (``store.backend: redis``), else this node alone."""
    if config.store.backend == "redis":
        return RedisCluster(config.redis.url, prefix=config.loops.redis_prefix,
                            ttl_s=HEARTBEATS_TO_EXPIRE * config.actors.heartbeat_interval_s)
    return LocalCluster()


class NodeBeacon:
    """Announces this node and keeps its entry alive from a daemon thread, every
    ``interval_s``, until ``stop()`` (which removes the entry)."""

    def __init__(self, cluster: Cluster, node: NodeInfo, interval_s: float):
        self.cluster = cluster
        self.node = node
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "NodeBeacon":
        self.cluster.announce(self.node)
        self._thread = threading.Thread(target=self._run, name=f"flora-node-{self.node.name}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                if not self.cluster.beat(self.node):
                    log.error("node %s: another process took this node's name", self.node.name)
            except RedisError:  # Redis away for a moment: the next beat tries again, the TTL gives slack
                log.warning("node %s: heartbeat failed", self.node.name, exc_info=True)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            self.cluster.leave(self.node)
        finally:
            self.cluster.close()
