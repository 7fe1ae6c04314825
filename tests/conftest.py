"""Test-wide switches.

- Unit and actor tests never touch the real model: loading it or starting the model host
  fails loudly unless the test is marked ``real_model``.
- ``FLORA_REQUIRE_REAL_MODEL=1`` (set by scripts/test.sh) turns a real-model test that
  would skip for a missing install into a failure, so CI cannot pass without the model.
"""

from __future__ import annotations

import os
import uuid

import pytest
import redis

REDIS_URL = os.environ.get("FLORA_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture(autouse=True)
def _no_real_model(request, monkeypatch):
    if request.node.get_closest_marker("real_model"):
        yield
        return
    from capabilities.llm.local import LocalLlamaLLM
    from capabilities.llm.model_host import ModelHost

    def refuse(*_args, **_kwargs):
        raise AssertionError("a unit test tried to use the real model; mark it real_model or use a fake LLM")

    monkeypatch.setattr(LocalLlamaLLM, "_loaded", refuse)
    monkeypatch.setattr(ModelHost, "start", refuse)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if (os.environ.get("FLORA_REQUIRE_REAL_MODEL") == "1" and report.skipped
            and item.get_closest_marker("real_model")):
        report.outcome = "failed"
        report.longrepr = f"real-model test skipped but FLORA_REQUIRE_REAL_MODEL=1: {report.longrepr}"


@pytest.fixture(autouse=True)
def _default_flora_logging():
    """start_flora configures the ``flora`` logger of the process (its own handler, no
    propagation); put it back to the default before each test, so caplog sees flora records."""
    import logging

    logger = logging.getLogger("flora")
    logger.handlers.clear()
    logger.propagate = True
    logger.setLevel(logging.NOTSET)
    yield


@pytest.fixture
def redis_prefix():
    """A key prefix no other test uses; its keys are deleted after the test."""
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        client.ping()
    except redis.ConnectionError as exc:
        pytest.fail(f"Redis at {REDIS_URL} is unreachable ({exc}); the redis task store is tested against a "
                    "real Redis", pytrace=False)
    prefix = f"flora-test-{uuid.uuid4().hex[:12]}"
    yield prefix
    leftover = list(client.scan_iter(f"{prefix}:*", count=1000))
    if leftover:
        client.delete(*leftover)
    client.close()
