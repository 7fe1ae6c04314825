"""What every HTTP channel does with a service's answer: a refusal as a :class:`DeliveryError`
that says whether trying again can help and how long the service asked to wait.

- 429: rate limited; retryable after ``Retry-After`` seconds (1 s when the header is missing);
- 5xx: the service's trouble; retryable, after ``Retry-After`` when it gives one;
- 401: the service refuses the credentials: :class:`CredentialsRefused`, the channel stops;
- any other 4xx: the same call gets the same answer; not retried.

Also the checks of a signed webhook call that several services share: a timestamp within the
replay window, and a constant-time comparison of signatures.
"""

from __future__ import annotations

import email.utils
import hmac
import time

import httpx

from capabilities.channels.model import CredentialsRefused, DeliveryError, Unauthorized

REPLAY_WINDOW_S = 300  # a signed call older (or newer) than this is refused: it may be a replay


def retry_after(response: httpx.Response) -> float | None:
    """The seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date), else None."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def refused(response: httpx.Response, what: str, described: str = "") -> DeliveryError:
    """The DeliveryError for a non-success ``response`` to ``what`` (see the module's rules)."""
    status = response.status_code
    described = described or response.text[:200]
    if status == 401:
        return CredentialsRefused(f"{what}: HTTP 401, the service refuses the credentials ({described})")
    if status == 429:
        return DeliveryError(f"{what}: rate limited ({described})", retry_after=retry_after(response) or 1.0)
    return DeliveryError(f"{what}: HTTP {status} {described}", retryable=status >= 500,
                         retry_after=retry_after(response) if status >= 500 else None)


def post(client: httpx.Client, url: str, what: str, **kwargs) -> httpx.Response:
    """``client.post`` with a transport failure (refused, reset, timed out) as a retryable DeliveryError."""
    try:
        return client.post(url, **kwargs)
    except httpx.HTTPError as exc:
        raise DeliveryError(f"{what}: {type(exc).__name__}: {exc}") from None


def check_fresh(timestamp: str, now: float, *, window_s: float = REPLAY_WINDOW_S, unit: float = 1.0) -> None:
    """Unauthorized unless ``timestamp`` (seconds, or ``unit`` of a second) is within the window of ``now``."""
    try:
        at = float(timestamp) * unit
    except ValueError:
        raise Unauthorized("the call's timestamp is missing or not a number") from None
    if abs(now - at) > window_s:
        raise Unauthorized(f"the call was signed {abs(now - at):.0f} s away from now (a replay?)")


def check_signature(given: str, expected: str) -> None:
    """Unauthorized unless the two signatures are equal (compared in constant time)."""
    if not given or not hmac.compare_digest(given.encode(), expected.encode()):
        raise Unauthorized("the call's signature does not check out")
