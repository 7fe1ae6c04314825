"""The parameter schemas are what a user is asked from: every property explained."""

from __future__ import annotations

import re

import pytest

from tests.tools.conftest import build_registry

BUILT_IN = ["dify_workflow", "http_request", "data_query", "ask_experts", "web_fetch", "web_search"]


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_parameter_is_described_and_nothing_else_is_accepted(name):
    spec = build_registry().get_executable(name)
    assert spec.parameters["additionalProperties"] is False
    assert set(spec.required) <= set(spec.properties)
    for prop, schema in spec.properties.items():
        assert len(schema.get("description", "")) > 20, f"{name}.{prop} needs a description for people"


@pytest.mark.parametrize("name", BUILT_IN)
def test_keywords_cover_english_and_chinese(name):
    keywords = build_registry().get_executable(name).keywords
    assert any(re.fullmatch(r"[a-z ]+", k) for k in keywords)
    assert any(re.search(r"[\u4e00-\u9fff]", k) for k in keywords)
