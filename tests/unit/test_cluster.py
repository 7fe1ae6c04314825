"""The node registry on the real Redis (entries expire unless refreshed; a name is held by one
live process), the single-node stand-in, the placement check and the multi-node config rules."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import redis

from capability_actors.execution_actor import ExecutionActor
from common.cluster import LocalCluster, NodeBeacon, NodeInfo, NodeNameTaken, RedisCluster, open_cluster
from config import ConfigError, load_config
from tests.conftest import REDIS_URL



@pytest.fixture
def prefix(redis_prefix):
    return redis_prefix


@pytest.fixture
def cluster(prefix):
    cluster = RedisCluster(REDIS_URL, prefix=prefix, ttl_s=0.4)
    yield cluster
    cluster.close()


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_node_that_stops_beating_drops_out_when_its_entry_expires(cluster, prefix):
    a, b = NodeInfo("A", admin_port=1), NodeInfo("B", admin_port=2, role="worker")
    cluster.announce(a)
    cluster.announce(b)
    assert cluster.live_names() == {"A", "B"}
    assert {n.name: n.role for n in cluster.nodes()} == {"A": "node", "B": "worker"}
    for _ in range(4):  # A keeps beating, B does not
        time.sleep(0.15)
        assert cluster.beat(a)
    assert cluster.live_names() == {"A"}
    index = redis.Redis.from_url(REDIS_URL)
    assert index.zrange(f"{prefix}:nodes", 0, -1) == [b"A"]  # the lapsed entry left the index too
    index.close()


def test_a_live_name_cannot_be_taken_by_another_process(cluster):
    cluster.announce(NodeInfo("A", host="elsewhere", pid=1))
    with pytest.raises(NodeNameTaken, match="node name 'A' is already in use by pid 1 on elsewhere"):
        cluster.announce(NodeInfo("A"), wait_s=0.1)


def test_a_name_left_by_a_dead_process_of_this_host_is_taken_over_at_once(cluster):
    earlier = NodeInfo("A", pid=dead_pid())
    cluster.announce(earlier)
    started = time.monotonic()
    cluster.announce(NodeInfo("A"))  # the restarted node: no wait for the old entry to expire
    assert time.monotonic() - started < 0.2
    assert cluster.nodes()[0].pid != earlier.pid


def test_a_name_from_another_host_is_free_once_its_entry_expires(cluster):
    cluster.announce(NodeInfo("A", host="elsewhere", pid=1))
    cluster.announce(NodeInfo("A"), wait_s=2)  # waited out the 0.4 s TTL
    assert cluster.nodes()[0].host != "elsewhere"


def test_beat_reports_a_name_taken_over_and_leave_removes_only_ones_own_entry(cluster):
    first, second = NodeInfo("A", pid=dead_pid()), NodeInfo("A")
    cluster.announce(first)
    cluster.announce(second)
    assert not cluster.beat(first)
    cluster.leave(first)
    assert cluster.live_names() == {"A"}
    cluster.leave(second)
    assert cluster.live_names() == set()


def test_agent_entries_expire_with_their_router(cluster):
    cluster.keep_agents("A", "router-1", ["team-a", "team-b"])
    assert sorted((e["tenant_id"], e["node"]) for e in cluster.agents()) == [("team-a", "A"), ("team-b", "A")]
    cluster.drop_agent("team-b", "A")
    assert [e["tenant_id"] for e in cluster.agents()] == ["team-a"]
    time.sleep(0.5)
    assert cluster.agents() == []


def test_the_beacon_keeps_its_node_alive_and_leaves_on_stop(prefix):
    beacon = NodeBeacon(RedisCluster(REDIS_URL, prefix=prefix, ttl_s=0.3), NodeInfo("A"), interval_s=0.1).start()
    try:
        time.sleep(0.7)  # more than two TTLs
        assert beacon.cluster.live_names() == {"A"}
    finally:
        beacon.stop()
    watcher = RedisCluster(REDIS_URL, prefix=prefix)
    assert watcher.live_names() == set()
    watcher.close()


def test_one_node_on_sqlite_answers_for_itself_alone():
    config = load_config({}, env={})
    local = open_cluster(config)
    assert isinstance(local, LocalCluster) and not local.shared
    local.announce(NodeInfo("local"))
    assert local.live_names() == {"local"}


def test_execution_actors_go_only_where_they_are_accepted_and_to_the_named_node():
    check = ExecutionActor.actorSystemCapabilityCheck
    assert check({"flora_node": "A", "flora_execution": True}, {})
    assert check({}, None)  # a system Flora did not start: no objection
    assert not check({"flora_node": "A", "flora_execution": False}, {})
    assert check({"flora_node": "W", "flora_execution": True}, {"node": "W"})
    assert not check({"flora_node": "A", "flora_execution": True}, {"node": "W"})


def test_several_nodes_need_the_shared_store_and_a_multiprocess_base():
    with pytest.raises(ConfigError, match="set store.backend: redis"):
        load_config({"actors": {"convention_address": "127.0.0.1:19700"}}, env={})
    with pytest.raises(ConfigError, match="set store.backend: redis"):
        load_config({"actors": {"execution_node": "W"}}, env={})
    with pytest.raises(ConfigError, match="needs actors.system_base multiprocTCPBase"):
        load_config({"store": {"backend": "redis"},
                     "actors": {"convention_address": "127.0.0.1:19700", "system_base": "simpleSystemBase"}}, env={})
    with pytest.raises(ConfigError, match="actors.convention_address: .*host:port"):
        load_config({"store": {"backend": "redis"}, "actors": {"convention_address": "19700"}}, env={})
    config = load_config({"store": {"backend": "redis"}}, env={"FLORA_ACTORS__CONVENTION_ADDRESS": "10.0.0.5:19700",
                                                           "FLORA_ACTORS__BIND_ADDRESS": "10.0.0.6"})
    assert config.actors.convention() == ("10.0.0.5", 19700)
