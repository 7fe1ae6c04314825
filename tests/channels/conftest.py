"""Fixtures for the channel tests: the real task stores of the unit tests (each store test runs
on SQLite and on Redis)."""

from tests.unit.conftest import db_path, make_store, pytest_generate_tests, store, store_config  # noqa: F401
