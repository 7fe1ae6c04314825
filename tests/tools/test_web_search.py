"""web_search against local servers that speak SearXNG's and Brave's documented JSON APIs."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest
import yaml
from jsonschema import ValidationError

from capabilities.base import CapabilityError
from capabilities.tools.address_guard import AddressPolicy
from capabilities.tools.search_providers import provider_from_settings
from config import load_config
from tests.tools.conftest import call
from tests.tools.local_http import LocalHTTPServer, Reply, Request

BRAVE_KEY = "brave-test-key-123"


def searxng(request: Request) -> Reply:
    """A SearXNG instance with the json format enabled (``/search?q=...&format=json``)."""
    if request.path.startswith("/nojson") or request.query.get("format") != ["json"]:
        # SearXNG answers 403 to a format its settings.yml does not list (html only by default)
        return Reply.text("<html>403 Forbidden</html>", 403, content_type="text/html")
    if not request.path.endswith("/search"):
        return Reply.text("not found", 404)
    query = request.query["q"][0]
    if query == "busy":
        return Reply.text("Too Many Requests", 429)
    if query == "broken":
        return Reply.text("Internal Server Error", 500)
    if query == "garbled":
        return Reply.text("<html>not json</html>", content_type="text/html")
    if query == "slow":
        return Reply.json({"results": []}, delay_s=1.0)
    results = [{"url": f"https://example.org/{i}", "title": f"{query} result {i}",
                "content": f"About {query}, part {i} &amp; more", "engine": "duckduckgo",
                "parsed_url": ["https", "example.org", f"/{i}", "", "", ""], "template": "default.html",
                "engines": ["duckduckgo"], "positions": [i], "score": 1.0 / i, "category": "general"}
               for i in range(1, 9)]
    results.insert(2, {"url": "magnet:?xt=urn:btih:abc", "title": "a torrent", "content": "", "engine": "x"})
    results.append({"url": "https://example.org/untitled", "content": "no title", "engine": "x"})
    return Reply.json({"query": query, "number_of_results": len(results), "results": results, "answers": [],
                       "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []})


def brave(request: Request) -> Reply:
    """Brave's Web Search API (``/res/v1/web/search``, key in ``X-Subscription-Token``)."""
    if request.path != "/res/v1/web/search":
        return Reply.json({"type": "ErrorResponse", "error": {"code": "NOT_FOUND"}}, 404)
    if request.headers.get("x-subscription-token") != BRAVE_KEY:
        return Reply.json({"type": "ErrorResponse", "error": {"status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID",
                                                              "detail": "The provided subscription token is invalid."}},
                          401)
    query, count = request.query["q"][0], int(request.query["count"][0])
    answer = {"type": "search", "query": {"original": query, "more_results_available": True},
              "mixed": {"type": "mixed", "main": []}}
    if query != "nothing at all":
        answer["web"] = {"type": "search", "family_friendly": True, "results": [
            {"type": "search_result", "title": f"{query} &ndash; page {i}", "url": f"https://brave.example/{i}",
             "description": f"The <strong>{query}</strong> page number {i}.", "is_source_local": False,
             "language": "en", "family_friendly": True, "age": "2 days ago"}
            for i in range(1, count + 1)]}
    return Reply.json(answer)


@pytest.fixture
def searxng_server():
    with LocalHTTPServer(searxng) as running:
        yield running


@pytest.fixture
def brave_server():
    with LocalHTTPServer(brave) as running:
        yield running


@pytest.fixture
def brave_settings(brave_server, monkeypatch):
    monkeypatch.setenv("FLORA_TEST_BRAVE_KEY", BRAVE_KEY)
    return {"provider": "brave", "url": brave_server.url, "api_key_env": "FLORA_TEST_BRAVE_KEY"}


def test_searxng_results_become_title_url_and_snippet(registry, searxng_server):
    result = call(registry, "web_search", {"query": "thespian actors", "count": 3},
                  {"provider": "searxng", "url": searxng_server.url})

    assert result["provider"] == "searxng" and result["count"] == 3
    assert result["results"] == [
        {"title": "thespian actors result 1", "url": "https://example.org/1",
         "snippet": "About thespian actors, part 1 & more"},
        {"title": "thespian actors result 2", "url": "https://example.org/2",
         "snippet": "About thespian actors, part 2 & more"},
        # the magnet: link SearXNG also returned is not a web address: skipped
        {"title": "thespian actors result 3", "url": "https://example.org/3",
         "snippet": "About thespian actors, part 3 & more"},
    ]
    assert result["message"].splitlines()[0] == "1. thespian actors result 1 — https://example.org/1"
    sent = searxng_server.requests[-1]
    assert sent.path == "/search" and sent.query["q"] == ["thespian actors"] and sent.query["format"] == ["json"]


def test_searxng_under_a_path_and_with_a_language(registry, searxng_server):
    call(registry, "web_search", {"query": "flora"},
         {"provider": "searxng", "url": f"{searxng_server.url}/searxng/", "language": "zh-CN"})
    sent = searxng_server.requests[-1]
    assert sent.path == "/searxng/search" and sent.query["language"] == ["zh-CN"]


def test_count_is_capped_by_max_results(registry, searxng_server):
    result = call(registry, "web_search", {"query": "many", "count": 20},
                  {"provider": "searxng", "url": searxng_server.url, "max_results": 4})
    assert result["count"] == 4 and len(result["results"]) == 4


def test_a_result_without_a_title_is_named_by_its_address(registry, searxng_server):
    result = call(registry, "web_search", {"query": "all", "count": 20},
                  {"provider": "searxng", "url": searxng_server.url})
    assert result["results"][-1] == {"title": "https://example.org/untitled", "url": "https://example.org/untitled",
                                     "snippet": "no title"}
    assert result["count"] == 9


def test_searxng_without_json_format_says_how_to_enable_it(registry, searxng_server):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_search", {"query": "flora"}, {"provider": "searxng", "url": f"{searxng_server.url}/nojson"})
    assert caught.value.error_type == "misconfigured"
    assert "403" in str(caught.value) and "search.formats" in str(caught.value)


def test_brave_results_are_plain_text_and_the_key_travels_in_its_header(registry, brave_server, brave_settings):
    result = call(registry, "web_search", {"query": "actor model", "count": 2}, brave_settings)

    assert result["provider"] == "brave"
    assert result["results"] == [
        {"title": f"actor model – page {i}", "url": f"https://brave.example/{i}",
         "snippet": f"The actor model page number {i}."} for i in (1, 2)
    ]
    sent = brave_server.requests[-1]
    assert sent.headers["x-subscription-token"] == BRAVE_KEY and sent.headers["accept"] == "application/json"
    assert sent.query["count"] == ["2"] and sent.query["q"] == ["actor model"]


def test_brave_with_nothing_found_returns_no_results(registry, brave_settings):
    result = call(registry, "web_search", {"query": "nothing at all"}, brave_settings)
    assert (result["results"], result["count"], result["message"]) == ([], 0, "No results found.")


def test_brave_refusing_the_key_is_a_configuration_error(registry, brave_settings, monkeypatch):
    monkeypatch.setenv("FLORA_TEST_BRAVE_KEY", "wrong-key")
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_search", {"query": "flora"}, brave_settings)
    assert caught.value.error_type == "misconfigured" and not caught.value.retryable
    assert "401" in str(caught.value) and "key was refused" in str(caught.value)
    assert "wrong-key" not in str(caught.value)


def test_brave_key_missing_from_the_environment_names_the_variable(registry, brave_server, brave_settings,
                                                                    monkeypatch):
    monkeypatch.delenv("FLORA_TEST_BRAVE_KEY")
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_search", {"query": "flora"}, brave_settings)
    assert caught.value.error_type == "misconfigured"
    assert "FLORA_TEST_BRAVE_KEY" in str(caught.value)
    assert brave_server.requests == []


def test_without_a_provider_web_search_says_so_plainly(registry):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_search", {"query": "weather in Paris"})
    assert caught.value.error_type == "misconfigured"
    assert str(caught.value).startswith("Web search is not set up")
    assert "capabilities.settings.web_search.provider" in str(caught.value)


def test_the_configuration_error_is_in_the_language_of_the_query(registry):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_search", {"query": "杭州明天的天气"})
    assert caught.value.error_type == "misconfigured"
    assert str(caught.value).startswith("网页搜索还没有配置好")


@pytest.mark.parametrize("settings, key", [
    ({"provider": "bing"}, "provider"),
    ({"provider": "searxng"}, "url"),
    ({"provider": "searxng", "url": "search.example"}, "url"),
    ({"provider": "brave"}, "api_key_env"),
    ({"provider": "searxng", "url": "http://127.0.0.1:9", "max_results": 50}, "max_results"),
    ({"provider": "searxng", "url": "http://127.0.0.1:9", "timeout_s": 0}, "timeout_s"),
])
def test_bad_settings_name_the_key(registry, settings, key):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_search", {"query": "flora"}, settings)
    assert caught.value.error_type == "misconfigured"
    assert f"capabilities.settings.web_search.{key}" in str(caught.value)


@pytest.mark.parametrize("query, error_type, retryable", [
    ("busy", "rate_limited", True),
    ("broken", "unavailable", True),
    ("garbled", "bad_response", False),
])
def test_service_failures_are_reported_by_kind(registry, searxng_server, query, error_type, retryable):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_search", {"query": query}, {"provider": "searxng", "url": searxng_server.url})
    assert (caught.value.error_type, caught.value.retryable) == (error_type, retryable)


def test_slow_service_times_out_as_retryable(registry, searxng_server):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_search", {"query": "slow"},
             {"provider": "searxng", "url": searxng_server.url, "timeout_s": 0.2})
    assert (caught.value.error_type, caught.value.retryable) == ("timeout", True)


def test_unreachable_service_is_retryable(registry):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_search", {"query": "flora"}, {"provider": "searxng", "url": f"http://127.0.0.1:{port}"})
    assert (caught.value.error_type, caught.value.retryable) == ("unavailable", True)


def test_schema_refuses_an_empty_query_and_too_many_results(registry):
    for bad in ({"query": ""}, {"query": "x", "count": 50}, {"query": "x", "engine": "google"}, {}):
        with pytest.raises(ValidationError):
            call(registry, "web_search", bad)


def test_the_configuration_examples_in_the_docs_load(monkeypatch):
    page = (Path(__file__).resolve().parents[2] / "docs" / "web_tools.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", page, re.S)]
    assert len(blocks) == 4
    monkeypatch.setenv("BRAVE_API_KEY", "k")
    providers = []
    for block in blocks:
        config = load_config(block, env={})
        settings = config.capabilities.settings
        if "web_search" in settings:
            providers.append(provider_from_settings(settings["web_search"]))
        for tool in ("web_fetch", "http_request"):
            if tool in settings:
                AddressPolicy.from_setting(settings[tool]["allow_private"], tool)
    assert [(p.name, p.url) for p in providers] == [("searxng", "http://127.0.0.1:8888"),
                                                    ("brave", "https://api.search.brave.com")]
