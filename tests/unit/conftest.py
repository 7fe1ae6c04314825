"""Fixtures shared by the unit tests: real task stores, one test per backend.

Every test using ``store`` (or ``make_store``) runs twice, on SQLite in a temporary file and
on Redis under a key prefix of the test's own, deleted afterwards. An unreachable Redis
fails the test rather than skipping it. A test that asks for ``db_path`` is about the
SQLite file itself, so it runs on SQLite only.
"""


import pytest

from common.tasks.store import open_store
from config import load_config

from tests.conftest import REDIS_URL  # noqa: F401  (redis_prefix comes from there too)


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", ["sqlite"] if "db_path" in metafunc.fixturenames else ["sqlite", "redis"])


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "flora.db"


@pytest.fixture
def store_config(backend, request, tmp_path):
    """The configuration ``open_store`` reads for this test's backend (picklable: child processes open it)."""
    if backend == "sqlite":
        settings = {"store": {"backend": "sqlite", "sqlite_path": str(request.getfixturevalue("db_path"))}}
    else:
        settings = {"store": {"backend": "redis"}, "redis": {"url": REDIS_URL},
                    "loops": {"redis_prefix": request.getfixturevalue("redis_prefix")}}
    return load_config({"data_dir": str(tmp_path), **settings}, env={})


@pytest.fixture
def make_store(store_config):
    """Opens store objects over one backing store: a second object is another process or node."""
    opened = []

    def open_one():
        opened.append(open_store(store_config))
        return opened[-1]

    yield open_one
    for s in opened:
        s.close()


@pytest.fixture
def store(make_store):
    return make_store()
