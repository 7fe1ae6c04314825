"""The ``http_request`` capability: one HTTP call, with its answer returned as data.

Any HTTP status is a result (a 404 is something the model should see), so only failures
to get an answer at all are errors::

    CapabilityInputError("url")       not http(s), unparsable, or a host outside allow_hosts
    CapabilityInputError("headers")   a name or value HTTP cannot carry (non-ASCII, line breaks)
    CapabilityError(retryable=True)   timeout, connection refused, connection dropped
    CapabilityError("forbidden")      a redirect that leads outside allow_hosts or to a
                                      private address
    BlockedAddress (a CapabilityInputError("url"))  a private, loopback, link-local or
                                      metadata address not in allow_private

Settings (``capabilities.settings.http_request``): ``allow_hosts`` (empty: any host;
``"*.example.com"`` also allows sub-domains) and ``max_response_bytes`` (longer bodies
are cut and flagged), ``allow_private`` (networks such as ``10.0.0.0/8`` or host names the
operator opens). Every connection goes through the address guard of
:mod:`capabilities.tools.address_guard`, the one ``web_fetch`` uses: private, loopback,
link-local and other internal addresses are refused after DNS resolution, on the first
request and on every redirect hop, except those in ``allow_private``. ``block_private:
false`` turns the guard off altogether (a deliberate operator choice, warned about).
Redirects are followed, and every hop is checked against the
allow-list, so a redirect cannot lead to a host the list keeps out. A query string in
the URL is kept; ``params`` are added to it, and replace a name the URL already has.

What comes back from an internal server is kept short: an answer with an error status
(400 and up) from an internal address (one ``allow_private`` opened) is returned as its
status and standard reason only, its body and headers withheld (``body_kind``
``"withheld"``), so a service inside the network cannot be probed through the text of its
errors. A connection that fails says how in Flora's own words (refused, dropped, not HTTP),
never with bytes the other side sent.
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
from capabilities.tools.address_guard import AddressPolicy, BlockedAddress, answered_from_inside, guarded_transport

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
                internal = answered_from_inside(response)  # asked while the connection is open
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
    except httpx.UnsupportedProtocol as exc:
        _log_call(context, method, target, "redirect to another scheme", started)
        raise CapabilityError(f"{target.host} redirected to an address that is not http:// or https://.",
                              error_type="forbidden") from exc
    except httpx.TransportError as exc:
        _log_call(context, method, target, f"failed ({exc.__class__.__name__}: {exc})", started)
        raise CapabilityError(f"Could not get an answer from {target.host}: {_failure(exc)}.",
                              retryable=True, error_type="unavailable") from exc
    _log_call(context, method, target, response.status_code, started)
    if response.status_code >= 400 and internal:
        return {
            "status": response.status_code,
            "reason": httpx.codes.get_reason_phrase(response.status_code),
            "url": str(response.url),
            "headers": {},
            "body": None,
            "body_kind": "withheld",
            "note": "An internal server's error answer is not passed on: only its status.",
            "truncated": False,
            "elapsed_ms": int((time.monotonic() - started) * 1000),
        }
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


def _failure(exc: httpx.TransportError) -> str:
    """How a connection failed, in Flora's words: never the bytes the other side sent (a
    service that is not HTTP answers with its banner or its own error text)."""
    if isinstance(exc, httpx.ConnectError):
        return "could not connect (refused, unreachable or not found)"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "the answer was not valid HTTP, or the connection closed before one came"
    if isinstance(exc, (httpx.ReadError, httpx.WriteError, httpx.CloseError)):
        return "the connection dropped"
    return "the connection failed"


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
    """The address-guarded transport (the default); None, httpx's own, only where the
    operator set ``block_private: false``."""
    block = settings.get("block_private", True)
    if not isinstance(block, bool):
        raise CapabilityError("capabilities.settings.http_request.block_private must be true or false.",
                              error_type="misconfigured")
    if not block:
        log.warning("http_request: block_private is false, so calls may reach loopback, private and "
                    "metadata addresses")
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
