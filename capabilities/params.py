"""Checking gathered parameter values against a capability's JSON schema.

Users answer in text, so values are first coerced to the type the schema asks for
("5" → 5 for an integer, "yes" → true for a boolean, a JSON text for an object); then a
real JSON-schema validator (Draft 2020-12) decides. The outcome says what is still missing
and which given values were refused and why, in words a person understands, so the task
can pause and ask for exactly those.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from capabilities.base import CapabilitySpec
from common.messages import MissingParameter

_TRUE = {"true", "yes", "y", "1", "on", "ok", "是", "好", "对", "确认"}
_FALSE = {"false", "no", "n", "0", "off", "否", "不", "不是", "取消"}


@dataclass
class CheckResult:
    values: dict  # the usable values (coerced), refused ones removed
    missing: list[MissingParameter] = field(default_factory=list)
    invalid: list[MissingParameter] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing and not self.invalid

    @property
    def to_ask(self) -> list[MissingParameter]:
        """What the user is asked for: refused values first (with their reason), then the rest."""
        return [*self.invalid, *self.missing]


def check_parameters(spec: CapabilitySpec, given: dict) -> CheckResult:
    """Coerce and validate ``given`` against ``spec.parameters``."""
    properties = spec.properties
    values = {name: coerce(value, properties.get(name, {})) for name, value in given.items()
              if value is not None and value != ""}
    values = _with_defaults(values, properties)
    invalid: dict[str, str] = {}
    missing: set[str] = set()
    for error in Draft202012Validator(spec.parameters).iter_errors(values):
        if error.validator == "required" and not error.path:
            missing.update(name for name in spec.required if name not in values)
        elif error.validator == "additionalProperties" and not error.path:
            extras = [name for name in values if name not in properties]
            for name in extras:  # silently carried extras would surprise the capability
                values.pop(name, None)
        else:
            name = str(error.path[0]) if error.path else ""
            if name:
                invalid.setdefault(name, _reason(error))
    for name in invalid:
        values.pop(name, None)
    return CheckResult(
        values=values,
        missing=[_ask(spec, name) for name in spec.required if name in missing and name not in invalid],
        invalid=[_ask(spec, name, reason) for name, reason in invalid.items()],
    )


def describe_missing(spec: CapabilitySpec, names: list[str]) -> list[MissingParameter]:
    return [_ask(spec, name) for name in names]


def _ask(spec: CapabilitySpec, name: str, reason: str = "") -> MissingParameter:
    item: MissingParameter = {"name": name, "description": spec.describe_parameter(name),
                              "schema": spec.properties.get(name, {})}
    if reason:
        item["reason"] = reason
    return item


def _with_defaults(values: dict, properties: dict) -> dict:
    out = dict(values)
    for name, schema in properties.items():
        if name not in out and "default" in schema:
            out[name] = schema["default"]
    return out


def coerce(value: Any, schema: dict) -> Any:
    """Best-effort conversion of a text answer to the schema's type; unchanged if unsure."""
    if not isinstance(value, str):
        return value
    wanted = schema.get("type")
    types = wanted if isinstance(wanted, list) else [wanted]
    text = value.strip()
    for kind in types:
        if kind == "integer":
            try:
                return int(text)
            except ValueError:
                continue
        if kind == "number":
            try:
                return float(text) if any(c in text for c in ".eE") else int(text)
            except ValueError:
                continue
        if kind == "boolean":
            if text.lower() in _TRUE:
                return True
            if text.lower() in _FALSE:
                return False
        if kind in ("object", "array") and text[:1] in "{[":
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                continue
        if kind == "array" and "," in text:
            return [part.strip() for part in text.split(",") if part.strip()]
        if kind == "string":
            return _unquote(text)
    return _unquote(text)


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        return text[1:-1]
    return text


def _reason(error) -> str:
    kind = error.validator
    if kind == "type":
        wanted = error.validator_value
        names = {"integer": "a whole number", "number": "a number", "boolean": "yes or no",
                 "string": "text", "object": "a JSON object", "array": "a list"}
        if isinstance(wanted, list):
            return "must be " + " or ".join(names.get(w, w) for w in wanted)
        return f"must be {names.get(wanted, wanted)}"
    if kind == "enum":
        return "must be one of: " + ", ".join(map(str, error.validator_value))
    if kind == "pattern":
        return f"does not have the expected form (pattern {error.validator_value})"
    return error.message


# JSON-schema keyword on a parameter that holds what will run (a script, a command line): the
# model may write it from the person's description, and an approval question shows it whole
RUNS = "x-flora-runs"
# JSON-schema keyword on a parameter whose value the model may compose from what the person said
# (a file's new text: "create hello.txt that says hello flora"): missing, it is the agent's to write
WRITTEN = "x-flora-written"
SHOWN_WHOLE_CHARS = 8000  # of a script or command in an approval question
SHOWN_CHARS = 200  # of any other value


def shown_values(spec: CapabilitySpec | None, values: dict) -> str:
    """The values of a call as an approval question shows them: what will run (``x-flora-runs``
    parameters, and any multi-line text) whole, on lines of its own; the rest as ``name=value``."""
    properties = spec.properties if spec is not None else {}
    inline, blocks = [], []
    for name, value in values.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        if isinstance(value, str) and (properties.get(name, {}).get(RUNS) or "\n" in value):
            whole = text if len(text) <= SHOWN_WHOLE_CHARS else \
                text[:SHOWN_WHOLE_CHARS] + f"\n… [{len(text) - SHOWN_WHOLE_CHARS} more characters]"
            blocks.append(f"{name}:\n```\n{whole}\n```")
        else:
            inline.append(f"{name}={text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + '…'}")
    return "\n".join([", ".join(inline)] * bool(inline) + blocks) or "-"


def looks_runnable(kind: str, text: str) -> bool:
    """Whether ``text`` is itself what an ``x-flora-runs`` parameter of ``kind`` takes — Python
    that parses to more than a bare word, a command line whose program exists — rather than a
    description of what to do ("to compute the sha256 of hello"), which the agent writes code for."""
    text = text.strip()
    while len(text) > 1 and text[0] == text[-1] and text[0] in "`'\"":  # `df -h`, ```print(1)```
        text = text[1:-1].strip()
    if text.startswith("python\n"):
        text = text[len("python\n"):]
    if not text:
        return False
    if kind == "python":
        import ast

        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return False
        return not (len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr)
                    and isinstance(tree.body[0].value, (ast.Name, ast.Constant)))
    if kind == "shell":
        import shlex
        import shutil

        try:
            words = shlex.split(text)
        except ValueError:
            return False
        return bool(words) and (shutil.which(words[0]) is not None or "/" in words[0])
    return True
