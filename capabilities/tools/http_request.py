"""The ``http_request`` capability: one HTTP call, with its answer returned as data.

Any HTTP status is a result (a 404 is something the model should see), so only failures
to get an answer at all are errors::

    CapabilityInputError("url")       not http(s), unparsable, or a host outside allow_hosts
    CapabilityInputError("headers")   a name or value HTTP cannot carry (non-ASCII, line breaks)
    CapabilityError(retryable=True)   timeout, connection refused, connection dropped
    CapabilityError("forbidden")      a redirect that leads outside allow_hosts (or, with
                                      block_private, to a private address)
    BlockedAddress (a CapabilityInputError("url"))  with block_private: a private address

Settings (``capabilities.settings.http_request``): ``allow_hosts`` (empty: any host;
``"*.example.com"`` also allows sub-domains) and ``max_response_bytes`` (longer bodies
are cut and flagged), ``block_private`` (off by default: when true, every connection goes
through the address guard of :mod:`capabilities.tools.address_guard`, which refuses private,
loopback and link-local addresses after DNS resolution, except those in ``allow_private``).
Redirects are followed, and every hop is checked against the
allow-list, so a redirect cannot lead to a host the list keeps out. A query string in
the URL is kept; ``params`` are added to it, and replace a name the URL already has.
"""

from __future__ import annotations

import json as jsonlib
import logging
import re
import time
from typing import Any

import httpx

from capabilities.agent.effects import sends_out
from capabilities.base import CapabilityError, CapabilityInputError, ExecutionContext, capability
from capabilities.tools.address_guard import AddressPolicy, BlockedAddress, guarded_transport

log = logging.getLogger("flora.capability.http_request")

DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 120.0
MAX_REDIRECTS = 5
_TEXT_TYPES = ("text/", "application/xml", "application/javascript", "application/x-www-form-urlencoded")
_SCALAR = {"type": ["string", "number", "integer", "boolean"]}
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110 token
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")  # what HTTP/1.1 carries as text, no line breaks

PARAMETERS = {
    "x-flora-description": {"zh": "访问一个网址（GET/POST/PUT/PATCH/DELETE/HEAD），返回状态、响应头和内容"},
    "type": "object",
    "properties": {
        "method": {
            "type": "string",
            "enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"],
            "default": "GET",
            "description": "The HTTP method: GET to read, POST to send, PUT/PATCH to change, DELETE to remove.",
        },
        "url": {
            "type": "string",
            "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/]+",
            "description": "The full web address to call, starting with http:// or https://.",
            "x-flora-description": {"zh": "要访问的完整网址，以 http:// 或 https:// 开头"},
        },
        "headers": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "default": {},
            "description": "Extra request headers, such as Authorization or Accept, as name: value pairs.",
        },
        "params": {
            "type": "object",
            "additionalProperties": {"anyOf": [_SCALAR, {"type": "array", "items": _SCALAR}]},
            "default": {},
            "description": "Query-string parameters to add to the address, as name: value pairs.",
        },
        "json": {
            "description": "A JSON body to send (usually with POST, PUT or PATCH); leave it out for no body.",
        },
        "timeout_s": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": MAX_TIMEOUT_S,
            "default": DEFAULT_TIMEOUT_S,
            "description": f"How many seconds to wait for an answer before giving up (at most {MAX_TIMEOUT_S:g}).",
        },
    },
    "required": ["url"],
    "additionalProperties": False,
}

_NO_BODY = object()  # "json" may legitimately be null, so absence needs its own marker


@capability(
    name="http_request",
    description="Call a web address (HTTP GET/POST/PUT/PATCH/DELETE/HEAD) and return the status, "
                "headers and body (parsed when it is JSON).",
    parameters=PARAMETERS,
    # reachability ("is it up", "能不能打开") is this tool's: it answers with the status;
    # reading what a page says is web_fetch's
    keywords=("http", "api", "url", "request", "fetch", "web", "endpoint", "is it up", "status code",
              "接口", "请求", "网址", "调用接口", "网页", "能不能打开", "能否访问"),
    examples=("download the status page of our server", "把这条消息发到我们的 webhook"),
    needs_approval=lambda values: str(values.get("method", "GET")).upper() not in ("GET", "HEAD"),
    agent_approval=sends_out,  # in the agent loop: a body, or a host the person did not name
)
def http_request(url: str, context: ExecutionContext, method: str = "GET", headers: dict | None = None,
                 params: dict | None = None, json: Any = _NO_BODY, timeout_s: float = DEFAULT_TIMEOUT_S) -> dict:
    allow_hosts = _allow_hosts(context.settings)
    max_bytes = _max_response_bytes(context.settings)
    target = _checked_url(url, allow_hosts)
    headers = checked_headers(headers or {})
    timeout_s = min(float(timeout_s), MAX_TIMEOUT_S)
    transport = _transport(context.settings)
    hops: list[httpx.URL] = []

    def check_hop(request: httpx.Request) -> None:
        hops.append(request.url)
        if not _host_allowed(request.url.host, allow_hosts):
            raise CapabilityError(f"{target.host} redirected to {request.url.host}, which Flora may not call.",
                                  error_type="forbidden")

    started = time.monotonic()
    if params:  # httpx replaces the URL's query with ``params``; merge them instead
        target = target.copy_with(params=_merged_query(target, params))
    request_args: dict[str, Any] = {"headers": headers}
    if json is not _NO_BODY:
        request_args["json"] = json
    try:
        with httpx.Client(timeout=timeout_s, follow_redirects=True, max_redirects=MAX_REDIRECTS,
                          event_hooks={"request": [check_hop]}, transport=transport) as client:
            with client.stream(method, target, **request_args) as response:
                raw, truncated = _read_capped(response, max_bytes)
    except BlockedAddress as exc:
        _log_call(context, method, target, "refused address", started)
        if len(hops) > 1:  # the first address passed; a redirect led inside
            raise CapabilityError(f"{target.host} redirected to {hops[-1].host}, which Flora may not call: {exc}",
                                  error_type="forbidden") from exc
        raise
    except CapabilityError:  # raised by check_hop
        _log_call(context, method, target, "refused redirect", started)
        raise
    except httpx.TimeoutException as exc:
        _log_call(context, method, target, "timeout", started)
        raise CapabilityError(f"{target.host} did not answer within {timeout_s:g} s.",
                              retryable=True, error_type="timeout") from exc
    except httpx.TooManyRedirects as exc:
        _log_call(context, method, target, "too many redirects", started)
        raise CapabilityError(f"{target.host} redirected more than {MAX_REDIRECTS} times.",
                              error_type="too_many_redirects") from exc
    except httpx.TransportError as exc:
        _log_call(context, method, target, f"failed ({exc.__class__.__name__})", started)
        reason = str(exc).rstrip(".") or exc.__class__.__name__
        raise CapabilityError(f"Could not get an answer from {target.host}: {reason}.",
                              retryable=True, error_type="unavailable") from exc
    _log_call(context, method, target, response.status_code, started)
    body, kind = _decode_body(response, raw, truncated)
    return {
        "status": response.status_code,
        "reason": response.reason_phrase,
        "url": str(response.url),
        "headers": dict(response.headers.items()),
        "body": body,
        "body_kind": kind,
        "truncated": truncated,
        "elapsed_ms": int((time.monotonic() - started) * 1000),
    }


def _checked_url(url: str, allow_hosts: list[str]) -> httpx.URL:
    try:
        target = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise CapabilityInputError("url", f"{url!r} is not a valid web address: {str(exc).rstrip('.')}.") from exc
    if target.scheme not in ("http", "https") or not target.host:
        raise CapabilityInputError("url", f"{url!r} is not an http:// or https:// address.")
    if not _host_allowed(target.host, allow_hosts):
        raise CapabilityInputError("url", f"Flora may not call {target.host}; allowed hosts: {', '.join(allow_hosts)}.")
    return target


def checked_headers(headers: dict, parameter: str = "headers") -> dict:
    """``headers`` unchanged if HTTP can carry every name and value; else the first one it
    cannot is refused as ``parameter``, before anything is sent."""
    for name, value in headers.items():
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            raise CapabilityInputError(parameter, f"{name!r} cannot be an HTTP header name: a name is one word of "
                                                  "ASCII letters, digits and - (like X-Api-Key).")
        problem = header_value_problem(value)
        if problem:
            raise CapabilityInputError(parameter, f"The value of the header {name} {problem}.")
    return headers


def header_value_problem(value: object) -> str:
    """Why ``value`` cannot be sent as an HTTP header value ("" when it can)."""
    if not isinstance(value, str):
        return f"must be text, not {type(value).__name__}"
    if not _HEADER_VALUE.fullmatch(value):
        return ("contains characters HTTP headers cannot carry (only ASCII letters, digits, punctuation "
                "and spaces; no line breaks)")
    return ""


def _merged_query(target: httpx.URL, params: dict) -> list[tuple[str, Any]]:
    """The URL's own query items, then ``params``; a name in ``params`` replaces the URL's."""
    kept = [(name, value) for name, value in target.params.multi_items() if name not in params]
    added = [(name, item) for name, value in params.items()
             for item in (value if isinstance(value, list) else [value])]
    return kept + added


def _host_allowed(host: str, allow_hosts: list[str]) -> bool:
    if not allow_hosts:
        return True
    host = host.lower().rstrip(".")
    for allowed in allow_hosts:
        if allowed.startswith("*.") and (host == allowed[2:] or host.endswith(allowed[1:])):
            return True
        if host == allowed:
            return True
    return False


def _read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """At most ``max_bytes`` of the (decoded) body, and whether there was more."""
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:  # stop reading: the rest is never downloaded
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False


def _decode_body(response: httpx.Response, raw: bytes, truncated: bool) -> tuple[Any, str]:
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    text = raw.decode(response.charset_encoding or "utf-8", errors="replace")
    if content_type == "application/json" or content_type.endswith("+json"):
        if not truncated:
            try:
                return jsonlib.loads(text), "json"
            except ValueError:
                pass  # a server that labels non-JSON as JSON: show the text
        return text, "text"
    if not content_type or content_type.startswith(_TEXT_TYPES) or content_type.endswith("+xml"):
        return text, "text"
    return None, "binary"


def _allow_hosts(settings: dict) -> list[str]:
    hosts = settings.get("allow_hosts", [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) and h for h in hosts):
        raise CapabilityError("capabilities.settings.http_request.allow_hosts must be a list of host names.",
                              error_type="misconfigured")
    return [h.lower().rstrip(".") for h in hosts]


def _transport(settings: dict) -> httpx.HTTPTransport | None:
    """The address-guarded transport when ``block_private`` is on; None: httpx's own."""
    block = settings.get("block_private", False)
    if not isinstance(block, bool):
        raise CapabilityError("capabilities.settings.http_request.block_private must be true or false.",
                              error_type="misconfigured")
    if not block:
        return None
    return guarded_transport(AddressPolicy.from_setting(settings.get("allow_private"),
                                                        "capabilities.settings.http_request.allow_private"))


def _max_response_bytes(settings: dict) -> int:
    value = settings.get("max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CapabilityError("capabilities.settings.http_request.max_response_bytes must be a positive integer.",
                              error_type="misconfigured")
    return value


def _log_call(context: ExecutionContext, method: str, url: httpx.URL, outcome: Any, started: float) -> None:
    # Only scheme, host and path: query strings and headers may carry secrets.
    log.info("http %s %s://%s%s -> %s in %d ms task_id=%s", method, url.scheme, url.host, url.path,
             outcome, int((time.monotonic() - started) * 1000), context.task_id)
