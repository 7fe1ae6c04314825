"""AgentRoutes: which AgentActor serves each tenant, as learned from the RouterActor.

Actors that send work to AgentActors (the InteractionActor, the LoopSchedulerActor) ask the
RouterActor once per tenant, asking to be told (``watch``) when that AgentActor is replaced;
messages for a tenant whose route is not known yet wait and go out when the ``route_reply``
comes. Methods return ``(address, message)`` pairs to send.
"""

from __future__ import annotations

from typing import Any

from common import messages as m


class AgentRoutes:
    def __init__(self, router: Any):
        self.router = router
        self.agents: dict[str, Any] = {}  # tenant -> AgentActor address
        self.queued: dict[str, list[dict]] = {}  # tenant -> messages waiting for a route

    def send(self, tenant_id: str, msg: dict) -> list[tuple[Any, dict]]:
        agent = self.agents.get(tenant_id)
        if agent is not None:
            return [(agent, msg)]
        waiting = self.queued.setdefault(tenant_id, [])
        waiting.append(msg)
        return [self.watch(tenant_id)] if len(waiting) == 1 else []

    def watch(self, tenant_id: str) -> tuple[Any, dict]:
        """Ask for the tenant's route, and for a new one whenever its AgentActor is replaced."""
        return self.router, m.route_request(tenant_id=tenant_id, watch=True)

    def replaced(self, reply: m.RouteReply) -> bool:
        """Whether this ``route_reply`` names another AgentActor than the one known: the known
        one died, with whatever was sent to it."""
        known = self.agents.get(reply["tenant_id"])
        return known is not None and known != reply["agent"]

    def learned(self, reply: m.RouteReply) -> list[tuple[Any, dict]]:
        """A ``route_reply``: remember it and release what waited for it."""
        self.agents[reply["tenant_id"]] = reply["agent"]
        return [(reply["agent"], msg) for msg in self.queued.pop(reply["tenant_id"], [])]

    def is_agent(self, address: Any) -> bool:
        return any(address == agent for agent in self.agents.values())

    def forget(self, address: Any) -> None:
        """That AgentActor failed: the next message for its tenant asks the router again."""
        self.agents = {t: a for t, a in self.agents.items() if a != address}
