"""Loop registries over both real backends, for every loop test: SQLite in a temporary
file, Redis under a key prefix of the test's own. An unreachable Redis fails the test."""

from __future__ import annotations

import pytest
import redis

from common.loops.registry import open_loop_registry
from tests.conftest import REDIS_URL


@pytest.fixture(params=["sqlite", "redis"])
def make(request, tmp_path):
    """A factory of registry objects over one backing store: a second object is a second
    process, or the same one after a restart. Redis keys get a prefix of their own."""
    made = []
    if request.param == "sqlite":
        location = {"sqlite_path": tmp_path / "flora.db"}
        factory_client, factory_prefix = None, None
    else:
        factory_prefix = request.getfixturevalue("redis_prefix")  # its keys are deleted after the test
        location = {"redis_url": REDIS_URL, "prefix": factory_prefix}
        factory_client = redis.Redis.from_url(REDIS_URL, decode_responses=True)

    def factory():
        made.append(open_loop_registry(request.param, **location))
        return made[-1]

    factory.client, factory.prefix = factory_client, factory_prefix
    yield factory
    for registry in made:
        registry.close()
    if factory_client is not None:
        factory_client.close()


@pytest.fixture
def reg(make):
    return make()
