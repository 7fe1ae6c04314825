"""ContextResolver (the ``context_resolver`` service): one subtask's output as another's input.

A plan step's parameters may hold references to earlier steps' results::

    "${s1.result}"                      the whole result of step s1
    "${s1.result.items[0].name}"        a path into it: ``.key`` for an object member
                                        (``.0`` also indexes a list), ``[n]`` for a list item
                                        (``[-1]`` is the last)

A parameter value that is exactly one reference becomes the referenced value with its own
type (a list stays a list, a number a number). A reference inside a longer string is
replaced by its text: a string as it is, ``null`` as nothing, anything else as JSON. Keys
of objects are never resolved, only values. ``${HOME}`` and other ``${...}`` that do not
start with a step id and ``.result`` are left alone, so shell text passes through; a
``${s1.output}`` that starts like a reference but is not one is reported by
:meth:`ContextResolver.malformed` (a plan holding one is refused).

Exceptions::

    UnresolvedReference (LookupError)   a reference names a step with no result, or a path
                                        that is not in the result; the message names both
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Iterator

STEP_ID = r"[A-Za-z0-9_-]{1,32}"
_SEGMENT = r"(?:\.[^.\[\]{}\s$]+|\[-?\d+\])"
REFERENCE = re.compile(rf"\$\{{({STEP_ID})\.result({_SEGMENT}*)\}}")
# "${s1." opens what can only be meant as a reference; anything else after "${" is ordinary text
_LOOKS_LIKE_REFERENCE = re.compile(rf"\$\{{{STEP_ID}\.[^}}]*\}}")
_PART = re.compile(r"\.([^.\[\]{}\s$]+)|\[(-?\d+)\]")


class UnresolvedReference(LookupError):
    """A reference could not be resolved; ``step`` and ``path`` say which one."""

    def __init__(self, message: str, *, step: str, path: str):
        super().__init__(message)
        self.step = step
        self.path = path

    def __str__(self) -> str:  # LookupError would quote the sentence
        return self.args[0]


class ContextResolver:
    """Finds and fills references; stateless, so one instance serves every task."""

    def references(self, parameters: dict) -> set[str]:
        """The step ids referenced anywhere in ``parameters`` (nested objects, lists, strings)."""
        found: set[str] = set()
        for _, text in _strings(parameters, "parameters"):
            found.update(m.group(1) for m in REFERENCE.finditer(text))
        return found

    def malformed(self, parameters: dict) -> list[tuple[str, str]]:
        """``(where, text)`` for each ``${<id>.…}`` that is not a well-formed reference."""
        bad = []
        for where, text in _strings(parameters, "parameters"):
            for match in _LOOKS_LIKE_REFERENCE.finditer(text):
                if not REFERENCE.fullmatch(match.group(0)):
                    bad.append((where, match.group(0)))
        return bad

    def resolve(self, parameters: dict, results: dict[str, Any], *, missing: str = "error") -> dict:
        """A new dict with every reference replaced; ``parameters`` and ``results`` are not touched.

        ``missing="null"``: a reference to a step not in ``results`` becomes None (a coupled
        step's first round, before its partner has run) instead of raising.
        """
        if missing not in ("error", "null"):
            raise ValueError(f"missing must be 'error' or 'null', not {missing!r}")
        return self._value(parameters, results, missing, "parameters")

    def _value(self, value: Any, results: dict, missing: str, where: str) -> Any:
        if isinstance(value, dict):
            return {k: self._value(v, results, missing, f"{where}.{k}") for k, v in value.items()}
        if isinstance(value, list):
            return [self._value(v, results, missing, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, tuple):
            return tuple(self._value(v, results, missing, f"{where}[{i}]") for i, v in enumerate(value))
        if not isinstance(value, str) or "${" not in value:
            return copy.deepcopy(value)
        whole = REFERENCE.fullmatch(value)
        if whole:
            return copy.deepcopy(_lookup(whole, results, missing, where))
        return REFERENCE.sub(lambda m: _as_text(_lookup(m, results, missing, where)), value)


def _lookup(match: re.Match, results: dict, missing: str, where: str) -> Any:
    step, path = match.group(1), match.group(2)
    if step not in results:
        if missing == "null":
            return None
        raise UnresolvedReference(f"{where}: {match.group(0)}: step {step!r} has no result", step=step, path=path)
    value = results[step]
    walked = "result"
    for part in _PART.finditer(path):
        key, index = part.group(1), part.group(2)
        try:
            if index is not None:
                if not isinstance(value, list):
                    raise TypeError(f"is a {_kind(value)}, not a list")
                value = value[int(index)]
            elif isinstance(value, dict):
                value = value[key]
            elif isinstance(value, list) and key.lstrip("-").isdigit():
                value = value[int(key)]
            else:
                raise TypeError(f"is a {_kind(value)}, which has no member {key!r}")
        except (KeyError, IndexError) as exc:
            what = f"no item {index}" if index is not None else f"no member {key!r}"
            raise UnresolvedReference(f"{where}: {match.group(0)}: step {step!r} {walked} has {what}",
                                      step=step, path=path) from exc
        except TypeError as exc:
            raise UnresolvedReference(f"{where}: {match.group(0)}: step {step!r} {walked} {exc}",
                                      step=step, path=path) from None
        walked += part.group(0)
    return value


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string inside ``value`` with where it is; iterative, so depth is no limit."""
    stack = [(where, value)]
    while stack:
        here, item = stack.pop()
        if isinstance(item, str):
            yield here, item
        elif isinstance(item, dict):
            stack.extend((f"{here}.{k}", v) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{here}[{i}]", v) for i, v in enumerate(item))
