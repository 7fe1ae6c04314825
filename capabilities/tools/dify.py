"""The ``dify_workflow`` capability: run a published Dify workflow and wait for its result.

It speaks Dify's documented app API, ``POST {base_url}/workflows/run`` in blocking mode,
authenticated with the app's API key. How Dify's answers map onto Flora's errors::

    a key HTTP cannot carry           CapabilityInputError("api_key")   asked again, nothing sent
    (not one ASCII word)
    HTTP 401 / 403                    CapabilityInputError("api_key")   ask for the key again
    HTTP 404                          CapabilityError("misconfigured")  no Dify API at base_url
    HTTP 400 invalid_param            CapabilityInputError("inputs")    Dify refused the inputs
    HTTP 408 / 429 / 5xx, timeouts,   CapabilityError(retryable=True)
    unreachable host
    other 4xx, data.status "failed"   CapabilityError(retryable=False)
    or "stopped", a reply that is
    not a workflow result
    base_url given as a parameter     CapabilityError("forbidden")      nothing sent
    base_url on an internal address   CapabilityError("forbidden")      nothing sent
    not in allow_private

Where it calls is the operator's choice, never the caller's: ``base_url`` comes from
``capabilities.settings.dify_workflow.base_url`` only (default Dify's cloud), and the
connection goes through the address guard of :mod:`capabilities.tools.address_guard`, so a
self-hosted Dify on a private address has to be opened with ``allow_private`` (its address
or name). From such an internal Dify, error answers come back as their status only: the
text of an internal server's errors is not passed on.

The API key is a secret (``x-flora-secret``): the conversation history keeps it masked.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

from capabilities.base import CapabilityError, CapabilityInputError, ExecutionContext, capability
from capabilities.secrets import SECRET
from capabilities.tools.address_guard import AddressPolicy, BlockedAddress, answered_from_inside, guarded_transport

log = logging.getLogger("flora.capability.dify")

SETTINGS_KEY = "capabilities.settings.dify_workflow"
DEFAULT_BASE_URL = "https://api.dify.ai/v1"
DEFAULT_TIMEOUT_S = 60.0

PARAMETERS = {
    "x-flora-description": {"zh": "运行一个 Dify 工作流并返回它的输出"},
    "type": "object",
    "properties": {
        "api_key": {
            "type": "string",
            "minLength": 1,
            "description": "API key of the Dify app that holds the workflow (it starts with app-); "
                           "find it in Dify under the app's API Access page.",
            "x-flora-description": {"zh": "保存这个工作流的 Dify 应用的 API 密钥（以 app- 开头）"},
            "x-flora-value-pattern": r"(?<![\w-])app-[A-Za-z0-9_-]{4,}",
            SECRET: True,
        },
        "inputs": {
            "type": "object",
            "default": {},
            "description": "Values for the workflow's input variables, keyed by variable name as "
                           "shown in the workflow's Start node.",
        },
    },
    "required": ["api_key"],
    "additionalProperties": False,
}


@capability(
    name="dify_workflow",
    description="Run a Dify workflow with the given inputs and return its outputs.",
    parameters=PARAMETERS,
    keywords=("dify", "workflow", "run workflow", "工作流", "运行工作流", "执行工作流"),
    examples=("kick off the onboarding automation", "跑一下我们的审批流程"),
    agent_approval=True,  # sends the inputs out and runs whatever the workflow does
)
def dify_workflow(api_key: str, context: ExecutionContext, inputs: dict | None = None,
                  base_url: str | None = None) -> dict:
    if base_url is not None:  # not in the schema: only a caller that skipped it gets here
        raise CapabilityError(f"Flora calls the Dify configured in {SETTINGS_KEY}.base_url; an address given with "
                              "the call is not used.", error_type="forbidden")
    base_url = str(context.settings.get("base_url") or DEFAULT_BASE_URL).rstrip("/")
    url = f"{base_url}/workflows/run"
    timeout_s = float(context.settings.get("timeout_s", DEFAULT_TIMEOUT_S))
    policy = AddressPolicy.from_setting(context.settings.get("allow_private"), f"{SETTINGS_KEY}.allow_private")
    body = {"inputs": inputs or {}, "response_mode": "blocking", "user": context.user_id}
    if not isinstance(api_key, str) or not _header_word(api_key):
        raise CapabilityInputError("api_key", "That is not an API key: a Dify API key is one word of ASCII "
                                              "letters, digits and punctuation (like app-AbC123), without "
                                              "spaces or other characters.")
    try:
        with httpx.Client(timeout=timeout_s, transport=guarded_transport(policy)) as client:
            with client.stream("POST", url, json=body, headers={"Authorization": f"Bearer {api_key}"}) as response:
                internal = answered_from_inside(response)  # asked while the connection is open
                response.read()
    except BlockedAddress as exc:
        _log_call(context, url, "refused address", None)
        raise CapabilityError(f"The configured Dify address ({SETTINGS_KEY}.base_url) is an internal address: "
                              f"{exc}", error_type="forbidden") from exc
    except httpx.TimeoutException as exc:
        _log_call(context, url, "timeout", None)
        raise CapabilityError(f"Dify did not finish the workflow within {timeout_s:g} s.",
                              retryable=True, error_type="timeout") from exc
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
        raise CapabilityError(f"{SETTINGS_KEY}.base_url: {base_url!r} is not a usable Dify address: "
                              f"{str(exc).rstrip('.')}.", error_type="misconfigured") from exc
    except httpx.TransportError as exc:
        _log_call(context, url, f"unreachable ({exc.__class__.__name__}: {exc})", None)
        raise CapabilityError(f"Could not reach Dify at {base_url} ({exc.__class__.__name__}).", retryable=True,
                              error_type="unavailable") from exc
    reply = _json_or_none(response)
    _log_call(context, url, response.status_code, reply)
    if response.status_code != 200:
        if internal and isinstance(reply, dict):  # its code sorts the error; its text stays inside
            reply = {"code": reply.get("code")}
        raise _http_error(response.status_code, reply, base_url)
    return _workflow_result(reply)


def _header_word(key: str) -> bool:
    """One word of printable ASCII, as a key must be to travel in an HTTP header."""
    return key.split() == [key] and key.isascii() and key.isprintable()


def _http_error(status: int, reply: Any, base_url: str) -> CapabilityError:
    message = reply.get("message") if isinstance(reply, dict) else None
    detail = f"HTTP {status}" + (f": {message}" if message else "")
    if status in (401, 403):
        return CapabilityInputError("api_key", f"Dify refused the API key as invalid or not allowed ({detail}).")
    if status == 404:
        return CapabilityError(f"There is no Dify workflow API at {base_url} ({detail}); check "
                               f"{SETTINGS_KEY}.base_url (the address usually ends in /v1).",
                               error_type="misconfigured")
    if status == 400 and isinstance(reply, dict) and reply.get("code") == "invalid_param":
        return CapabilityInputError("inputs", f"Dify refused the workflow inputs ({detail}).")
    if status in (408, 429) or status >= 500:
        return CapabilityError(f"Dify is unavailable for now ({detail}).", retryable=True, error_type="unavailable")
    return CapabilityError(f"Dify could not run the workflow ({detail}).", error_type="dify_error")


def _workflow_result(reply: Any) -> dict:
    data = reply.get("data") if isinstance(reply, dict) else None
    if not isinstance(data, dict) or "status" not in data:
        raise CapabilityError("Dify answered with something that is not a workflow result.",
                              error_type="bad_response")
    if data["status"] in ("failed", "stopped"):
        reason = data.get("error") or "no reason given"
        raise CapabilityError(f"The Dify workflow {data['status']}: {reason}", error_type="workflow_failed")
    return {
        "workflow_run_id": reply.get("workflow_run_id") or data.get("id"),
        "status": data["status"],
        "outputs": data.get("outputs") or {},
        "elapsed_time": data.get("elapsed_time"),
        "total_tokens": data.get("total_tokens"),
    }


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _log_call(context: ExecutionContext, url: str, outcome: Any, reply: Any) -> None:
    data = reply.get("data") if isinstance(reply, dict) else None
    run_status = data.get("status") if isinstance(data, dict) else None
    log.info("dify POST %s -> %s workflow_status=%s task_id=%s", url, outcome, run_status, context.task_id)
