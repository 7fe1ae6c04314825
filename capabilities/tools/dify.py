"""The ``dify_workflow`` capability: run a published Dify workflow and wait for its result.

It speaks Dify's documented app API, ``POST {base_url}/workflows/run`` in blocking mode,
authenticated with the app's API key. How Dify's answers map onto Flora's errors::

    a key HTTP cannot carry           CapabilityInputError("api_key")   asked again, nothing sent
    (not one ASCII word)
    HTTP 401 / 403                    CapabilityInputError("api_key")   ask for the key again
    HTTP 404                          CapabilityInputError("base_url")  no Dify API there
    HTTP 400 invalid_param            CapabilityInputError("inputs")    Dify refused the inputs
    HTTP 408 / 429 / 5xx, timeouts,   CapabilityError(retryable=True)
    unreachable host
    other 4xx, data.status "failed"   CapabilityError(retryable=False)
    or "stopped", a reply that is
    not a workflow result
"""

from __future__ import annotations

import logging
import re
from typing import Any

import httpx

from capabilities.base import CapabilityError, CapabilityInputError, ExecutionContext, capability

log = logging.getLogger("flora.capability.dify")

DEFAULT_BASE_URL = "https://api.dify.ai/v1"
DEFAULT_TIMEOUT_S = 60.0
_API_KEY = re.compile(r"[!-~]+")  # one word of printable ASCII: it travels in an HTTP header

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
        },
        "inputs": {
            "type": "object",
            "default": {},
            "description": "Values for the workflow's input variables, keyed by variable name as "
                           "shown in the workflow's Start node.",
        },
        "base_url": {
            "type": "string",
            "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://",
            "description": "Address of the Dify API, ending in /v1 (for example "
                           "https://api.dify.ai/v1). Leave it out to use the one configured for Flora.",
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
    base_url = (base_url or context.settings.get("base_url") or DEFAULT_BASE_URL).rstrip("/")
    url = f"{base_url}/workflows/run"
    timeout_s = float(context.settings.get("timeout_s", DEFAULT_TIMEOUT_S))
    body = {"inputs": inputs or {}, "response_mode": "blocking", "user": context.user_id}
    if not isinstance(api_key, str) or not _API_KEY.fullmatch(api_key):
        raise CapabilityInputError("api_key", "That is not an API key: a Dify API key is one word of ASCII "
                                              "letters, digits and punctuation (like app-AbC123), without "
                                              "spaces or other characters.")
    try:
        with httpx.Client(timeout=timeout_s) as client:
            response = client.post(url, json=body, headers={"Authorization": f"Bearer {api_key}"})
    except httpx.TimeoutException as exc:
        _log_call(context, url, "timeout", None)
        raise CapabilityError(f"Dify did not finish the workflow within {timeout_s:g} s.",
                              retryable=True, error_type="timeout") from exc
    except httpx.InvalidURL as exc:
        raise CapabilityInputError("base_url", f"{base_url!r} is not a usable Dify address: "
                                               f"{str(exc).rstrip('.')}.") from exc
    except httpx.TransportError as exc:
        _log_call(context, url, f"unreachable ({exc.__class__.__name__})", None)
        raise CapabilityError(f"Could not reach Dify at {base_url}: {str(exc).rstrip('.')}.", retryable=True,
                              error_type="unavailable") from exc
    reply = _json_or_none(response)
    _log_call(context, url, response.status_code, reply)
    if response.status_code != 200:
        raise _http_error(response.status_code, reply, base_url)
    return _workflow_result(reply)


def _http_error(status: int, reply: Any, base_url: str) -> CapabilityError:
    message = reply.get("message") if isinstance(reply, dict) else None
    detail = f"HTTP {status}" + (f": {message}" if message else "")
    if status in (401, 403):
        return CapabilityInputError("api_key", f"Dify refused the API key ({detail}).")
    if status == 404:
        return CapabilityInputError("base_url", f"There is no Dify workflow API at {base_url} ({detail}); "
                                                "the address usually ends in /v1.")
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
