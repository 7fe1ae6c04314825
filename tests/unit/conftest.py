"""Fixtures shared by the unit tests: a real SQLite store in a temporary directory."""

import pytest

from common.tasks.sqlite_store import SQLiteTaskStore


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "flora.db"


@pytest.fixture
def store(db_path):
    s = SQLiteTaskStore(db_path)
    yield s
    s.close()
