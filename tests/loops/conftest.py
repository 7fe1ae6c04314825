"""Loop registries over both real backends, for every loop test: SQLite in a temporary
file, Redis under a key prefix of the test's own. An unreachable Redis fails the test."""

from __future__ import annotations

import os
import uuid

import pytest
import redis

from common.loops.registry import open_loop_registry

REDIS_URL = os.environ.get("FLORA_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def _redis_client() -> redis.Redis:
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        client.ping()
    except redis.ConnectionError as exc:
        pytest.fail(f"Redis at {REDIS_URL} is unreachable ({exc}); the redis backend of the loop "
                    "registry is tested against a real Redis", pytrace=False)
    return client


@pytest.fixture(params=["sqlite", "redis"])
def make(request, tmp_path):
    """A factory of registry objects over one backing store: a second object is a second
    process, or the same one after a restart. Redis keys get a prefix of their own."""
    made = []
    if request.param == "sqlite":
        location = {"sqlite_path": tmp_path / "flora.db"}
    else:
        client = _redis_client()
        location = {"redis_url": REDIS_URL, "prefix": f"flora-test-{uuid.uuid4().hex[:12]}"}

    def factory():
        made.append(open_loop_registry(request.param, **location))
        return made[-1]

    factory.client, factory.prefix = (client, location["prefix"]) if request.param == "redis" else (None, None)
    yield factory
    for registry in made:
        registry.close()
    if factory.client is not None:
        leftover = list(client.scan_iter(f"{factory.prefix}:*"))
        if leftover:
            client.delete(*leftover)
        client.close()


@pytest.fixture
def reg(make):
    return make()
