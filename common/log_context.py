"""Who and what a log line is about: actor, node, tenant, task and message, on every line.

Two layers feed :class:`ContextFilter`, which ``configure_logging`` installs on the
``flora`` handler:

- the message being handled: :func:`bound` sets ``tenant_id``, ``task_id``, ``msg_id`` (and
  the actor) in context variables for the duration of one handler, so every line logged
  while handling it carries them, wherever in the call stack it is written;
- the process: :func:`claim_process` names the process's owner ("main", or an actor's role
  when the actor has a process of its own) for lines logged outside any message.

A field passed explicitly with ``extra=`` wins over both. The process owner is remembered
with the process id, so a process forked from ``main`` does not speak as "main".
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator, Mapping

FIELDS = ("actor", "actor_addr", "node", "tenant_id", "task_id", "msg_id")
UNKNOWN_ACTOR = "unknown"

_vars: dict[str, ContextVar[str | None]] = {name: ContextVar(f"flora_log_{name}", default=None) for name in FIELDS}
_process: dict[str, Any] = {"pid": None, "fields": {}}


def claim_process(*, force: bool = False, **fields: str | None) -> bool:
    """Make ``fields`` (``actor``, ``node``...) this process's defaults, unless another owner
    claimed this process first and ``force`` is false (under simpleSystemBase every actor
    lives in main's process, which stays "main"). Returns whether the claim was taken."""
    if _process["pid"] == os.getpid() and not force:
        return False
    _process["pid"], _process["fields"] = os.getpid(), _clean(fields)
    return True


def update_process(**fields: str | None) -> None:
    """Add to the defaults of the process's owner (e.g. its node, known once configured)."""
    if _process["pid"] != os.getpid():
        _process["pid"], _process["fields"] = os.getpid(), {}
    _process["fields"] = {**_process["fields"], **_clean(fields)}


def release_process() -> None:
    """Forget the process's owner (tests; a process that hands its logging to another)."""
    _process["pid"], _process["fields"] = None, {}


@contextmanager
def bound(**fields: str | None) -> Iterator[None]:
    """Set the given fields for the lines logged inside the block; None leaves a field as it was."""
    tokens = [(_vars[name], _vars[name].set(value)) for name, value in _clean(fields).items()]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


MAX_FIELD_CHARS = 80  # a malformed message's 1 MB "task_id" must not become a 1 MB log line


def message_fields(message: Any) -> dict[str, str]:
    """The ``tenant_id``, ``task_id`` and ``msg_id`` a protocol message carries (strings only,
    cut at ``MAX_FIELD_CHARS`` with "…")."""
    if not isinstance(message, Mapping):
        return {}
    return {name: cut(message[name]) for name in ("tenant_id", "task_id", "msg_id")
            if isinstance(message.get(name), str) and message[name]}


def cut(value: str) -> str:
    """``value`` cut at ``MAX_FIELD_CHARS`` with "…" (for a log line or an error that names it)."""
    return value if len(value) <= MAX_FIELD_CHARS else value[:MAX_FIELD_CHARS - 1] + "…"


def current() -> dict[str, str]:
    """The fields in force here and now: context first, then the process's defaults."""
    fields = dict(_process["fields"]) if _process["pid"] == os.getpid() else {}
    for name, var in _vars.items():
        value = var.get()
        if value is not None:
            fields[name] = value
    return fields


class ContextFilter(logging.Filter):
    """Copies :func:`current` onto each record, without overwriting a field the call site gave
    (a field given as None is dropped); ``actor`` is always set, to ``unknown`` when nobody
    claimed the line."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in current().items():
            if getattr(record, name, None) is None:
                setattr(record, name, value)
        for name in FIELDS:  # a call site may pass extra={"task_id": None} when there is none yet
            if name in record.__dict__ and record.__dict__[name] is None:
                delattr(record, name)
        if getattr(record, "actor", None) is None:
            record.actor = UNKNOWN_ACTOR
        return True


def text_suffix(record: logging.LogRecord) -> str:
    """The compact ``[actor@node tenant task msg]`` part of a text line."""
    who = str(getattr(record, "actor", UNKNOWN_ACTOR))
    node = getattr(record, "node", None)
    parts = [f"{who}@{node}" if node else who]
    parts += [f"{name}={getattr(record, name)}" for name in ("tenant_id", "task_id", "msg_id")
              if getattr(record, name, None)]
    return "[" + " ".join(parts) + "]"


def _clean(fields: Mapping[str, str | None]) -> dict[str, str]:
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown log context field(s) {sorted(unknown)}; known: {', '.join(FIELDS)}")
    return {name: str(value) for name, value in fields.items() if value is not None}
