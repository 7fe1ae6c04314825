"""Fixtures for the built-in capabilities, called the way ExecutionActor calls them:
parameters checked against the capability's schema first, then ``CapabilitySpec.invoke``."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from capabilities.base import ExecutionContext
from capabilities.registry import CapabilityRegistry
from capabilities.tools import ask_experts, data_query, dify, http_request, web_fetch, web_search
from capabilities.tools.data_access import DataAccessor
from tests.tools.databases import postgres_database, sqlite_database


def build_registry(data_access: Any = None) -> CapabilityRegistry:
    registry = CapabilityRegistry()
    for module in (dify, http_request, data_query, ask_experts, web_fetch, web_search):
        registry.register_module(module)
    if data_access is not None:
        registry.register("data_access", data_access)
    return registry


def call(registry: CapabilityRegistry, name: str, parameters: dict, settings: dict | None = None) -> Any:
    """Validate ``parameters`` against the capability's schema, then invoke it."""
    spec = registry.get_executable(name)
    Draft202012Validator(spec.parameters).validate(parameters)
    context = ExecutionContext(task_id="task-1", user_id="user-42", settings=settings or {}, registry=registry)
    return spec.invoke(parameters, context)


@pytest.fixture
def registry() -> CapabilityRegistry:
    return build_registry()


@pytest.fixture(scope="session")
def postgres_db():
    with postgres_database() as database:
        yield database


@pytest.fixture
def sqlite_db(tmp_path):
    return sqlite_database(tmp_path)


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request):
    """Each database test runs once on SQLite and once on PostgreSQL."""
    return request.getfixturevalue("sqlite_db" if request.param == "sqlite" else "postgres_db")


@pytest.fixture
def accessor(db):
    """A DataAccessor holding the database under test."""
    data_access = DataAccessor.from_settings({"databases": {db.name: db.url}})
    yield data_access
    data_access.close()


@pytest.fixture
def data_registry(accessor) -> CapabilityRegistry:
    return build_registry(accessor)
