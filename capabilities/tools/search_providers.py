"""Web search providers behind one interface: SearXNG's JSON API and Brave's Search API.

A provider turns a query into at most ``count`` results, each ``{title, url, snippet}``.
:func:`provider_from_settings` builds the one ``capabilities.settings.web_search`` names::

    provider: searxng          # GET {url}/search?q=...&format=json
    url: http://127.0.0.1:8888 #   (the instance must list json in search.formats)

    provider: brave            # GET {url}/res/v1/web/search?q=...&count=...
    api_key_env: BRAVE_API_KEY #   the key is read from this environment variable
    url: https://api.search.brave.com   (the default)

Errors (all ``CapabilityError``)::

    NotConfigured ("misconfigured")   no provider, an unknown one, a missing url or key
    "misconfigured"                   the service refused the key or the JSON format (401/403)
    "rate_limited", retryable         429
    "timeout" / "unavailable", retryable   no answer, or a 5xx
    "bad_response"                    an answer that is not the documented JSON
"""

from __future__ import annotations

import html
import logging
import os
import re
import time
from dataclasses import dataclass
from typing import Any, Mapping, Protocol

import httpx

from capabilities.base import CapabilityError

log = logging.getLogger("flora.capability.web_search")

SETTINGS_KEY = "capabilities.settings.web_search"
BRAVE_URL = "https://api.search.brave.com"
BRAVE_MAX_COUNT = 20  # the most Brave returns in one page
DEFAULT_TIMEOUT_S = 15.0
USER_AGENT = "Flora-web_search/1.0"
_TAG = re.compile(r"<[^>]+>")


class NotConfigured(CapabilityError):
    """Web search is not set up (or set up wrongly); ``problem`` says what is missing."""

    def __init__(self, problem: str):
        super().__init__(problem, error_type="misconfigured")
        self.problem = problem


class SearchProvider(Protocol):
    name: str

    def search(self, query: str, count: int, *, language: str | None = None) -> list[dict]:
        """At most ``count`` results, each ``{"title", "url", "snippet"}``."""


@dataclass
class SearxngProvider:
    """A SearXNG instance's JSON API (``/search?format=json``)."""

    url: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    name: str = "searxng"

    def search(self, query: str, count: int, *, language: str | None = None) -> list[dict]:
        params = {"q": query, "format": "json", "pageno": 1}
        if language:
            params["language"] = language
        data = _get_json(self.name, f"{self.url.rstrip('/')}/search", params, {}, self.timeout_s,
                         refused="the instance refused JSON output: add json to search.formats in its "
                                 "settings.yml")
        results = data.get("results")
        if not isinstance(results, list):
            raise _bad_response(self.name, "no results list")
        return _clean([(r.get("title"), r.get("url"), r.get("content")) for r in results if isinstance(r, dict)],
                      count)


@dataclass
class BraveProvider:
    """Brave's Web Search API (``/res/v1/web/search``), with the key as ``X-Subscription-Token``."""

    api_key: str
    url: str = BRAVE_URL
    timeout_s: float = DEFAULT_TIMEOUT_S
    name: str = "brave"

    def search(self, query: str, count: int, *, language: str | None = None) -> list[dict]:
        params: dict[str, Any] = {"q": query, "count": min(count, BRAVE_MAX_COUNT)}
        if language:
            params["search_lang"] = language
        headers = {"Accept": "application/json", "X-Subscription-Token": self.api_key}
        data = _get_json(self.name, f"{self.url.rstrip('/')}/res/v1/web/search", params, headers, self.timeout_s,
                         refused="the API key was refused")
        web = data.get("web") or {}  # absent when nothing was found
        results = web.get("results", []) if isinstance(web, dict) else None
        if not isinstance(results, list):
            raise _bad_response(self.name, "no web.results list")
        return _clean([(r.get("title"), r.get("url"), r.get("description")) for r in results if isinstance(r, dict)],
                      count)


def provider_from_settings(settings: Mapping[str, Any], env: Mapping[str, str] | None = None) -> SearchProvider:
    """The provider ``capabilities.settings.web_search`` describes; NotConfigured says what is missing."""
    env = os.environ if env is None else env
    name = settings.get("provider")
    timeout_s = settings.get("timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
        raise NotConfigured(f"{SETTINGS_KEY}.timeout_s must be a positive number of seconds.")
    url = settings.get("url")
    if url is not None and (not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url)):
        raise NotConfigured(f"{SETTINGS_KEY}.url must be an http:// or https:// address, not {url!r}.")
    if not name:
        raise NotConfigured(f"no search provider is configured: set {SETTINGS_KEY}.provider to searxng or brave.")
    if name == "searxng":
        if not url:
            raise NotConfigured(f"{SETTINGS_KEY}.url must give the SearXNG instance's address.")
        return SearxngProvider(url, float(timeout_s))
    if name == "brave":
        key_env = settings.get("api_key_env")
        if not isinstance(key_env, str) or not key_env:
            raise NotConfigured(f"{SETTINGS_KEY}.api_key_env must name the environment variable that holds "
                                "the Brave API key.")
        key = env.get(key_env, "").strip()
        if not key:
            raise NotConfigured(f"the environment variable {key_env} (named by {SETTINGS_KEY}.api_key_env) "
                                "holds no Brave API key.")
        return BraveProvider(key, url or BRAVE_URL, float(timeout_s))
    raise NotConfigured(f"{SETTINGS_KEY}.provider is {name!r}; it must be searxng or brave.")


def _get_json(provider: str, url: str, params: dict, headers: dict, timeout_s: float, *, refused: str) -> dict:
    started = time.monotonic()
    host = httpx.URL(url).host
    try:
        with httpx.Client(timeout=timeout_s, headers={"User-Agent": USER_AGENT, **headers}) as client:
            response = client.get(url, params=params)
    except httpx.TimeoutException as exc:
        _log(provider, url, "timeout", started)
        raise CapabilityError(f"The {provider} search service at {host} did not answer within {timeout_s:g} s.",
                              retryable=True, error_type="timeout") from exc
    except httpx.TransportError as exc:
        _log(provider, url, f"failed ({exc.__class__.__name__})", started)
        raise CapabilityError(f"Could not reach the {provider} search service at {host}: "
                              f"{str(exc).rstrip('.') or exc.__class__.__name__}.", retryable=True,
                              error_type="unavailable") from exc
    _log(provider, url, response.status_code, started)
    status = response.status_code
    if status in (401, 403):
        raise NotConfigured(f"The {provider} search service answered {status}: {refused}.")
    if status == 429:
        raise CapabilityError(f"The {provider} search service is rate-limiting Flora; try again later.",
                              retryable=True, error_type="rate_limited")
    if status >= 500:
        raise CapabilityError(f"The {provider} search service failed ({status}).", retryable=True,
                              error_type="unavailable")
    if status >= 400:
        raise _bad_response(provider, f"HTTP {status}")
    try:
        data = response.json()
    except ValueError:
        raise _bad_response(provider, "the answer is not JSON") from None
    if not isinstance(data, dict):
        raise _bad_response(provider, "the answer is not a JSON object")
    return data


def _clean(rows: list[tuple[Any, Any, Any]], count: int) -> list[dict]:
    """``{title, url, snippet}`` for rows with an http(s) URL, snippets as plain text, at most ``count``."""
    results = []
    for title, url, snippet in rows:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            continue
        results.append({"title": _plain(title) or url, "url": url, "snippet": _plain(snippet)})
        if len(results) == count:
            break
    return results


def _plain(value: Any) -> str:
    """Text without markup: Brave marks matches with <strong>, and both escape entities."""
    return html.unescape(_TAG.sub("", value)).strip() if isinstance(value, str) else ""


def _bad_response(provider: str, what: str) -> CapabilityError:
    return CapabilityError(f"The {provider} search service gave an answer Flora cannot read ({what}).",
                           error_type="bad_response")


def _log(provider: str, url: str, outcome: Any, started: float) -> None:
    # the query is the person's words, and the URL carries no key: log only where the call went
    log.info("web_search %s %s -> %s in %d ms", provider, url, outcome, int((time.monotonic() - started) * 1000))
