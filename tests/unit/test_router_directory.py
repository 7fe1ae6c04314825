"""The RouterActor's directory: one AgentActor per (tenant, node), staleness by heartbeats."""

from agents.router_actor import MISSED_BEATS, AgentDirectory


class Address:  # Thespian addresses compare by value and are not hashable
    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, Address) and other.name == self.name

    __hash__ = None


def test_one_entry_per_tenant_and_node():
    directory = AgentDirectory(interval_s=1.0)
    directory.add("t1", "A", Address("a1"))
    directory.add("t1", "B", Address("b1"))
    assert directory.get("t1", "A").address == Address("a1")
    assert directory.get("t1", "B").address == Address("b1")
    assert directory.get("t2", "A") is None


def test_agent_that_misses_beats_is_stale_and_a_seen_one_is_not():
    directory = AgentDirectory(interval_s=1.0)
    quiet = directory.add("t1", "A", Address("quiet"))
    alive = directory.add("t2", "A", Address("alive"))
    later = quiet.last_seen + MISSED_BEATS * 1.0 + 0.5
    alive.last_seen = later - 0.1
    assert [e.tenant_id for e in directory.stale(now=later)] == ["t1"]


def test_removed_agent_disappears_so_the_next_request_makes_a_new_one():
    directory = AgentDirectory(interval_s=1.0)
    directory.add("t1", "A", Address("a1"))
    gone = directory.remove(Address("a1"))
    assert [e.tenant_id for e in gone] == ["t1"]
    assert directory.get("t1", "A") is None
