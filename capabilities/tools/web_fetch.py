"""The ``web_fetch`` capability: read a web page as text, never reaching into private networks.

HTML becomes readable text (title, main text, optionally the links), JSON is pretty-printed,
plain text is returned as is; binary content (images, PDFs, archives) is refused. What is
read and returned is capped: bytes read (``max_bytes``), characters returned
(``max_chars``) and time (``timeout_s``), and a cut result says so (``truncated``).

Every connection, the first and each redirect hop, goes through the address guard
(:mod:`capabilities.tools.address_guard`): private, loopback, link-local and other internal
addresses are refused after DNS resolution unless ``allow_private`` lists them.

Errors::

    CapabilityInputError("url")       not http(s), unparsable, or a private address (BlockedAddress)
    CapabilityError("forbidden")      a redirect that leads to a private address
    CapabilityError("unsupported_content")  binary content
    CapabilityError(retryable=True)   timeout, connection refused, host not found
    CapabilityError("too_many_redirects"), CapabilityError("misconfigured")

Settings (``capabilities.settings.web_fetch``): ``allow_private`` (networks or host names),
``max_bytes`` (default 2 MiB), ``max_chars`` (the most a call may ask for, default 100000),
``max_redirects`` (5), ``user_agent``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx

from capabilities.base import CapabilityError, CapabilityInputError, ExecutionContext, capability
from capabilities.tools.address_guard import AddressPolicy, BlockedAddress, guarded_transport
from capabilities.tools.page_text import BINARY, declared_kind, read_page, sniffed_kind

log = logging.getLogger("flora.capability.web_fetch")

SETTINGS_KEY = "capabilities.settings.web_fetch"
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
DEFAULT_MAX_CHARS = 20_000
MAX_CHARS_CEILING = 100_000
DEFAULT_TIMEOUT_S = 20.0
MAX_TIMEOUT_S = 60.0
DEFAULT_MAX_REDIRECTS = 5
USER_AGENT = "Flora-web_fetch/1.0"

PARAMETERS = {
    "x-flora-description": {"zh": "读取一个网页，返回标题和正文文字（可选附带链接）；不会访问内网地址"},
    "type": "object",
    "properties": {
        "url": {
            "type": "string",
            "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/]+",
            "description": "The full address of the page to read, starting with http:// or https://.",
            "x-flora-description": {"zh": "要读取的网页完整地址，以 http:// 或 https:// 开头"},
        },
        "max_chars": {
            "type": "integer",
            "minimum": 100,
            "maximum": MAX_CHARS_CEILING,
            "default": DEFAULT_MAX_CHARS,
            "description": "The most characters of page text to return; a longer page is cut and flagged.",
            "x-flora-description": {"zh": "最多返回多少个字符的正文，更长的网页会被截断并标明"},
        },
        "include_links": {
            "type": "boolean",
            "default": False,
            "description": "Whether to also return the page's links (text and absolute address), up to 100.",
            "x-flora-description": {"zh": "是否同时返回网页中的链接（文字和完整地址），最多 100 个"},
        },
        "timeout_s": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": MAX_TIMEOUT_S,
            "default": DEFAULT_TIMEOUT_S,
            "description": f"How many seconds the whole fetch may take (at most {MAX_TIMEOUT_S:g}); "
                           "a page still arriving then is cut.",
            "x-flora-description": {"zh": "整个读取最多用多少秒，超时仍在传输的内容会被截断"},
        },
    },
    "required": ["url"],
    "additionalProperties": False,
}


@capability(
    name="web_fetch",
    description="Read a web page and return its title and main text (HTML turned into readable text, "
                "JSON pretty-printed), optionally with its links.",
    parameters=PARAMETERS,
    keywords=("web page", "webpage", "read the page", "read this page", "what it says", "what does it say",
              "article", "website", "网页内容", "读取网页", "这个网页", "讲了什么", "说了什么", "这篇文章", "网站"),
    examples=("read https://example.com/news and tell me what it says", "看看这个网页讲了什么 https://example.com"),
    # an address alone is a call to it (http_request); reading what a page says takes words
    # about the page, so the address counts half here and "call <url>" is not a tie
    address_evidence=1.0,
    # ...but an article's address ("…/blog/how-to-pack-a-kitchen") is there to be read
    page_evidence=2.5,
)
def web_fetch(url: str, context: ExecutionContext, max_chars: int = DEFAULT_MAX_CHARS,
              include_links: bool = False, timeout_s: float = DEFAULT_TIMEOUT_S) -> dict:
    settings = context.settings
    policy = AddressPolicy.from_setting(settings.get("allow_private"), f"{SETTINGS_KEY}.allow_private")
    max_bytes = _positive_int(settings, "max_bytes", DEFAULT_MAX_BYTES)
    max_chars = min(int(max_chars), _positive_int(settings, "max_chars", MAX_CHARS_CEILING))
    max_redirects = _positive_int(settings, "max_redirects", DEFAULT_MAX_REDIRECTS, minimum=0)
    user_agent = str(settings.get("user_agent") or USER_AGENT)
    timeout_s = min(float(timeout_s), MAX_TIMEOUT_S)
    target = _checked_url(url)

    hops: list[httpx.URL] = []
    started = time.monotonic()
    deadline = started + timeout_s
    try:
        with httpx.Client(transport=guarded_transport(policy), timeout=timeout_s, follow_redirects=True,
                          max_redirects=max_redirects, headers={"User-Agent": user_agent},
                          event_hooks={"request": [lambda request: hops.append(request.url)]}) as client:
            with client.stream("GET", target) as response:
                content_type = response.headers.get("content-type", "")
                kind = declared_kind(content_type)
                if kind != BINARY:  # a declared image or archive is refused unread
                    raw, cut_by = _read_capped(response, max_bytes, deadline)
                    kind = kind or sniffed_kind(raw)
                if kind == BINARY:
                    _log_fetch(context, target, f"refused {content_type or 'binary'} content", started)
                    raise CapabilityError(f"{response.url} is {content_type.split(';')[0] or 'binary content'}, "
                                          "not a page Flora can read as text.", error_type="unsupported_content")
    except BlockedAddress as exc:
        _log_fetch(context, target, "refused address", started)
        if len(hops) > 1:  # the first address passed; a redirect led inside
            raise CapabilityError(f"{target.host} redirected to {hops[-1].host}, which Flora may not call: "
                                  f"{exc}", error_type="forbidden") from exc
        raise
    except httpx.TimeoutException as exc:
        _log_fetch(context, target, "timeout", started)
        raise CapabilityError(f"{target.host} did not answer within {timeout_s:g} s.",
                              retryable=True, error_type="timeout") from exc
    except httpx.TooManyRedirects as exc:
        _log_fetch(context, target, "too many redirects", started)
        raise CapabilityError(f"{target.host} redirected more than {max_redirects} times.",
                              error_type="too_many_redirects") from exc
    except httpx.UnsupportedProtocol as exc:
        _log_fetch(context, target, "redirect to another scheme", started)
        raise CapabilityError(f"{target.host} redirected to an address that is not http:// or https://.",
                              error_type="forbidden") from exc
    except httpx.TransportError as exc:
        _log_fetch(context, target, f"failed ({exc.__class__.__name__})", started)
        reason = str(exc).rstrip(".") or exc.__class__.__name__
        raise CapabilityError(f"Could not read {target.host}: {reason}.", retryable=True,
                              error_type="unavailable") from exc
    _log_fetch(context, target, response.status_code, started)

    page = read_page(kind, raw, response.charset_encoding, str(response.url), whole=cut_by is None)
    text = page.text
    if len(text) > max_chars:
        text, cut_by = text[:max_chars], cut_by or "chars"
    result: dict[str, Any] = {
        "url": str(target),
        "final_url": str(response.url),
        "status": response.status_code,
        "content_type": content_type.split(";")[0].strip().lower() or None,
        "kind": page.kind,
        "title": page.title,
        "text": text,
        "truncated": cut_by is not None,
        "truncated_by": cut_by,
        "bytes_read": len(raw),
        "redirects": [str(hop) for hop in hops[1:]],
        "elapsed_ms": int((time.monotonic() - started) * 1000),
    }
    if include_links:
        result["links"] = page.links
    return result


def _checked_url(url: str) -> httpx.URL:
    try:
        target = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise CapabilityInputError("url", f"{url!r} is not a valid web address: {str(exc).rstrip('.')}.") from exc
    if target.scheme not in ("http", "https") or not target.host:
        raise CapabilityInputError("url", f"{url!r} is not an http:// or https:// address.")
    return target


def _read_capped(response: httpx.Response, max_bytes: int, deadline: float) -> tuple[bytes, str | None]:
    """The body up to ``max_bytes`` or the deadline, and what cut it (``bytes``, ``time`` or None)."""
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:  # stop reading: the rest is never downloaded
            return b"".join(chunks)[:max_bytes], "bytes"
        if time.monotonic() > deadline:
            return b"".join(chunks), "time"
    return b"".join(chunks), None


def _positive_int(settings: dict, key: str, default: int, *, minimum: int = 1) -> int:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise CapabilityError(f"{SETTINGS_KEY}.{key} must be an integer of at least {minimum}.",
                              error_type="misconfigured")
    return value


def _log_fetch(context: ExecutionContext, url: httpx.URL, outcome: Any, started: float) -> None:
    # Only scheme, host and path: a query string may carry a secret.
    log.info("web_fetch %s://%s%s -> %s in %d ms task_id=%s", url.scheme, url.host, url.path, outcome,
             int((time.monotonic() - started) * 1000), context.task_id)
