"""What a tool call does beyond reading, as the agent loop weighs it for approval.

The agent reads files, pages and tool results that someone else may have written, and words
planted there can ask the model to send data out or change things. So in the loop a call that
sends data out or changes something needs the person's yes (unless the operator auto-approved
the tool): a tool says which of its calls those are with ``agent_approval`` in ``@capability``.
These are the helpers such rules are written with.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from capabilities.context.answers import mentions


def host_named(url: str, request: str) -> bool:
    """Whether the person's own request names the host ``url`` goes to (its address, or the host
    name as a word: "is example.org up?")."""
    try:
        host = (urlsplit(str(url).strip()).hostname or "").lower()
    except ValueError:
        return False
    return bool(host) and mentions(request.lower(), host)


def sends_out(values: dict, request: str) -> bool:
    """An HTTP call that sends something (a body, a method other than GET/HEAD) or goes to a host
    the person did not name."""
    if str(values.get("method", "GET")).upper() not in ("GET", "HEAD"):
        return True
    if "json" in values or values.get("data") or values.get("body"):
        return True
    return not host_named(str(values.get("url", "")), request)
