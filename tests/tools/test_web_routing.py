"""Without a model, the rules send web requests to the right tool and read their values."""

from __future__ import annotations

import pytest

from capabilities.routing.task_router import TaskRouter
from config import load_config
from init_plugins import build_registry


@pytest.fixture(scope="module")
def router() -> TaskRouter:
    return TaskRouter(build_registry(load_config({"llm": {"backend": "none"}}, env={})))


@pytest.mark.parametrize("request_text, capability, parameters", [
    ("search the web for Thespian actor tutorials", "web_search", {"query": "Thespian actor tutorials"}),
    ("搜一下杭州明天的天气", "web_search", {"query": "杭州明天的天气"}),
    ("read https://example.com/news and tell me what it says", "web_fetch", {"url": "https://example.com/news"}),
    ("看看这个网页讲了什么 https://example.com", "web_fetch", {"url": "https://example.com"}),
    ("看下 https://status.example.org 现在能不能打开", "http_request", {"url": "https://status.example.org"}),
    ("fetch https://api.example.com/v1/items", "http_request", {"url": "https://api.example.com/v1/items"}),
])
def test_the_rules_pick_the_web_tool_the_request_is_for(router, request_text, capability, parameters):
    chosen = router.confident(request_text)
    assert chosen is not None and chosen.spec.name == capability
    assert router.extract_parameters(chosen.spec, request_text) == parameters
