"""One message through ``system.ask`` to a running Flora, as the actor tests send it."""

from __future__ import annotations

from common import messages as m


def ask_flora(flora, user: str, content: str, *, timeout: float, **fields) -> dict:
    """Send ``content`` as ``user``; the reply must come within ``timeout`` and be a valid
    protocol message (returned)."""
    reply = flora.system.ask(flora.interaction, m.user_input(user_id=user, content=content, **fields), timeout)
    assert reply is not None, f"no reply to {content!r} within {timeout} s"
    return m.validate(reply)
