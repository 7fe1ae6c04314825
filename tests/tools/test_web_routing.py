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
    # an address with no word about a page is a call to it, not a tie with web_fetch
    ("call https://example.com/prices.json", "http_request", {"url": "https://example.com/prices.json"}),
    ("分别获取 https://a.example.com/status", "http_request", {"url": "https://a.example.com/status"}),
])
def test_the_rules_pick_the_web_tool_the_request_is_for(router, request_text, capability, parameters):
    chosen = router.confident(request_text)
    assert chosen is not None and chosen.spec.name == capability
    assert router.extract_parameters(chosen.spec, request_text) == parameters


def test_a_two_address_request_is_planned_by_the_rules_as_two_calls():
    from capabilities.routing.task_planner import TaskPlanner

    registry = build_registry(load_config({"llm": {"backend": "none"}}, env={}))
    plan = TaskPlanner(registry).plan(
        "call https://example.com/prices.json, then post the result to https://hooks.example.com/prices")
    assert plan is not None and plan.source == "rules"
    assert [(s.capability, s.parameters["url"]) for s in plan.steps] == [
        ("http_request", "https://example.com/prices.json"), ("http_request", "https://hooks.example.com/prices")]
    assert plan.steps[1].depends_on == ("s1",)


@pytest.mark.parametrize("text", ["这个符号代表什么意思", "你表达得很清楚", "用表格展示", "帮我发表一篇文章"])
def test_a_word_that_only_contains_a_keywords_character_is_no_evidence(router, text):
    assert "data_query" not in [c.spec.name for c in router.rank(text)]


@pytest.mark.parametrize("text", ["上个月的销售报表", "订单表中有多少条记录", "数据表里有多少行"])
def test_the_database_words_still_point_at_data_query(router, text):
    chosen = router.confident(text)
    assert chosen is not None and chosen.spec.name == "data_query"
