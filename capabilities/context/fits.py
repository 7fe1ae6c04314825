"""Whether a value the person typed fits what a waiting task asks for.

A paused task waits for named parameters, each with a JSON schema. ``fitting_value`` says whether
a message holds a value that fits by its look (given by name, spotted as the schema describes it:
a key's pattern, an address; a time for a question for a time): only such a value answers a
waiting question when the message may also be about other work. ``fits`` and ``fits_strictly``
check values already read against their schemas; ``takes_free_text`` tells a parameter whose
value is itself a sentence.
"""

from __future__ import annotations

import jsonschema

from capabilities.context import answers
from capabilities.loop.requests import only_a_time
from capabilities.routing.task_router import REQUEST_TEXT
from common.tasks.models import TaskRecord


def fits(values: dict | None, schemas: dict[str, dict]) -> bool:
    """Whether text values satisfy their string schemas (pattern, enum, length) as written."""
    for name, value in (values or {}).items():
        schema = schemas.get(name) or {}
        if isinstance(value, str) and schema.get("type", "string") == "string":
            if not jsonschema.Draft202012Validator(schema).is_valid(value):
                return False
    return True


FREE_TEXT_NAMES = ("question", "prompt", "query", "text", "message", "content", "topic", "instruction")


def takes_free_text(missing: dict) -> bool:
    """A parameter whose value is itself a sentence (a question for the experts): a question
    or a request typed as its answer is the answer."""
    schema = missing.get("schema") or {}
    return bool(schema.get(REQUEST_TEXT)) or missing["name"] in FREE_TEXT_NAMES


def fits_strictly(values: dict | None, schemas: dict[str, dict]) -> bool:
    """Whether values satisfy schemas that say something about their shape (a pattern, an
    enum, a format, a number): such a value is an answer however it is phrased."""
    if not values:
        return False
    for name, value in values.items():
        schema = schemas.get(name) or {}
        if not any(k in schema for k in ("pattern", "enum", "format", "const")) and \
                schema.get("type", "string") == "string":
            return False
        if not jsonschema.Draft202012Validator(schema).is_valid(_typed(value, schema)):
            return False
    return True


def _typed(value, schema: dict):
    if isinstance(value, str) and schema.get("type") in ("number", "integer"):
        try:
            return int(value) if schema["type"] == "integer" else float(value)
        except ValueError:
            return value
    return value


def fitting_value(text: str, task: TaskRecord) -> bool:
    """Whether the message holds a value that fits what ``task`` waits for by its look: given
    by name, or spotted as its schema describes it (a key's pattern, an address), or a time for
    a question for a time."""
    names, schemas = [m["name"] for m in task.missing], {m["name"]: m.get("schema", {}) for m in task.missing}
    if answers.named_values(text, names):
        return True
    if "time" in names and only_a_time(text):
        return True
    return any(answers.spotted(text, schemas.get(name, {}), name) is not None for name in names)
