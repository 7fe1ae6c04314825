"""A running Flora for actor tests, on simpleSystemBase and on multiprocTCPBase.

The model is the deterministic ``tests.support.fake_llm:respond`` (importable in every actor
process); Dify is a real local HTTP server; the plugin module is a real module.
"""

from __future__ import annotations

import sqlite3

import pytest

import main
from common.tasks.sqlite_store import SQLiteTaskStore
from tests.support.dify_server import dify_server

BASES = ["simpleSystemBase", "multiprocTCPBase"]


@pytest.fixture(scope="module")
def dify():
    with dify_server() as server:
        yield server


@pytest.fixture(scope="module")
def sales_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("db") / "sales.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE sales (month TEXT, amount INTEGER)")
        db.executemany("INSERT INTO sales VALUES (?, ?)", [("2026-10", 120), ("2026-09", 80)])
    return path


def flora_config(data_dir, dify_url: str, sales_db, base: str) -> dict:
    return {
        "data_dir": str(data_dir),
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": base, "ask_timeout_s": 30, "execution_pool_size": 2},
        "loops": {"tick_s": 0.2, "timezone": "Asia/Shanghai"},
        "memory": {"distil_after_idle_s": 0.1},  # the tests' questions come quickly one after another
        "capabilities": {
            "plugin_modules": ["tests.support.sample_plugins"],
            # the fake Dify listens on loopback: opened as an operator opens a self-hosted one
            "settings": {"dify_workflow": {"base_url": dify_url + "/v1", "allow_private": ["127.0.0.1"]},
                         "http_request": {"allow_private": ["127.0.0.1"]},
                         "data_access": {"databases": {"sales": f"sqlite:///{sales_db}"}}},
        },
    }


@pytest.fixture(scope="module", params=BASES)
def flora(request, tmp_path_factory, dify, sales_db):
    data_dir = tmp_path_factory.mktemp(f"flora-{request.param}")
    running = main.start_flora(flora_config(data_dir, dify.url, sales_db, request.param))
    yield running
    running.shutdown()


@pytest.fixture
def store(flora):
    """The running Flora's task store, opened beside it (the ``flora`` of the test's module)."""
    opened = SQLiteTaskStore(flora.config.sqlite_path)
    yield opened
    opened.close()


@pytest.fixture
def user(request) -> str:
    """A user id of its own for each test, so paused tasks of other tests don't interfere."""
    return "u_" + request.node.name.replace("[", "_").replace("]", "")[-40:]
