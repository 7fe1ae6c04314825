"""The ``web_search`` capability: search the web through the configured provider.

The provider (SearXNG or Brave, :mod:`capabilities.tools.search_providers`) comes from
``capabilities.settings.web_search``; with none configured the capability says so plainly,
in the language of the query (``CapabilityError`` with ``error_type="misconfigured"``).
Settings: ``provider``, ``url``, ``api_key_env`` (Brave), ``max_results`` (the most a call
returns, default 10, at most 20), ``timeout_s``, ``language`` (asked of the provider: SearXNG's
``language``, Brave's ``search_lang``; unset: the provider's default).
"""

from __future__ import annotations

from capabilities.base import CapabilityError, ExecutionContext, capability
from capabilities.tools.search_providers import SETTINGS_KEY, NotConfigured, provider_from_settings
from common.i18n import ZH, language_of

MAX_RESULTS_CEILING = 20
DEFAULT_MAX_RESULTS = 10
DEFAULT_COUNT = 5

PARAMETERS = {
    "x-flora-description": {"zh": "在网上搜索，返回若干条结果（标题、网址、摘要）"},
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 400,
            "description": "What to search the web for, in a few words.",
            "x-flora-description": {"zh": "要在网上搜索的内容，几个词即可"},
            "x-flora-request-text": True,
        },
        "count": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_RESULTS_CEILING,
            "default": DEFAULT_COUNT,
            "description": f"How many results to return (1 to {MAX_RESULTS_CEILING}; the configured maximum applies).",
            "x-flora-description": {"zh": "返回多少条结果（1 到 20，不超过配置的上限）"},
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

_NOT_SET_UP = {
    "en": "Web search is not set up, so I cannot search the web: {problem}",
    ZH: "网页搜索还没有配置好，所以我没法上网搜索：{problem}",
}


@capability(
    name="web_search",
    description="Search the web and return the top results, each with a title, address and snippet.",
    parameters=PARAMETERS,
    keywords=("search the web", "search the web for", "web search", "search online", "search online for",
              "look up online", "google", "搜索", "网上搜索", "搜一下", "上网查"),
    examples=("search the web for Thespian actor model tutorials", "搜一下杭州明天的天气"),
)
def web_search(query: str, context: ExecutionContext, count: int = DEFAULT_COUNT) -> dict:
    settings = context.settings
    language = language_of(query)
    try:
        provider = provider_from_settings(settings)
        limit = _max_results(settings)
        results = provider.search(query, min(int(count), limit), language=_language(settings))
    except NotConfigured as exc:
        raise CapabilityError(_NOT_SET_UP.get(language, _NOT_SET_UP["en"]).format(problem=exc.problem),
                              error_type="misconfigured") from exc
    lines = [f"{i}. {r['title']} — {r['url']}" for i, r in enumerate(results, 1)]
    return {
        "query": query,
        "provider": provider.name,
        "results": results,
        "count": len(results),
        "message": "\n".join(lines) if lines else ("没有找到结果。" if language == ZH else "No results found."),
    }


def _language(settings: dict) -> str | None:
    value = settings.get("language")
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise NotConfigured(f"{SETTINGS_KEY}.language must be a language code such as en or zh-CN.")
    return value or None


def _max_results(settings: dict) -> int:
    value = settings.get("max_results", DEFAULT_MAX_RESULTS)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RESULTS_CEILING:
        raise NotConfigured(f"{SETTINGS_KEY}.max_results must be an integer from 1 to {MAX_RESULTS_CEILING}.")
    return value
