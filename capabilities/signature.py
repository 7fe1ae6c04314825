"""A capability's parameter schema read from its function: the signature's type hints and the
docstring's descriptions, the way people write tools for language models::

    @capability
    def triangle_area(base: float, height: float = 1.0) -> float:
        \"\"\"Find the area of a triangle.

        Args:
            base: the length of the base
            height: the height from the base to the opposite corner
        \"\"\"

becomes ``{"type": "object", "properties": {"base": {"type": "number", "description": "the
length of the base"}, "height": {..., "default": 1.0}}, "required": ["base"],
"additionalProperties": false}`` with the description "Find the area of a triangle."

Types: ``int``, ``float``, ``str``, ``bool``, ``list[X]``/``tuple``/``set``, ``dict[str, X]``,
``Literal[...]`` and ``Enum`` subclasses (an ``enum``), ``Optional[X]``/``X | None``,
``Annotated[X, "description"]``, ``datetime.date``/``datetime`` (ISO text). A parameter with a
default is not required. Docstrings in the Google (``Args:``), NumPy (``Parameters`` underlined)
and reST (``:param name:``) styles are read. :func:`converting` wraps the function so that the
JSON values a call brings are turned into what the hints ask for (an ``Enum`` member, a
``date``, a ``float`` from ``3``) before it runs.

Errors: :class:`ValueError` for what cannot be turned into a schema (a type with no JSON form, a
function with neither docstring nor description), raised when the module is loaded.
"""

from __future__ import annotations

import datetime as dt
import enum
import functools
import inspect
import re
import types
import typing
from typing import Any, Callable

_SKIPPED = {"context", "self", "cls"}  # not values of the request: Flora passes ``context`` itself
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|参数)\s*[:：]?\s*$")
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_OTHER_SECTION = re.compile(r"^\s*(Returns?|Yields?|Raises?|Examples?|Notes?|See Also|References|Warnings?|"
                            r"Attributes|Todo|返回|示例)\s*[:：]?\s*$")
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*[:：]\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\w+)\s*(?::\s*(.*))?$")
_REST_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_REST_FIELD = re.compile(r"^\s*:\w+")


def derived_description(fn: Callable[..., Any]) -> str:
    """The docstring's first paragraph, on one line ("" when there is no docstring)."""
    doc = inspect.getdoc(fn) or ""
    summary = []
    for line in doc.splitlines():
        if not line.strip() or _SECTION.match(line) or _REST_FIELD.match(line):
            if summary:
                break
            continue
        summary.append(line.strip())
    return " ".join(summary)


def derived_parameters(fn: Callable[..., Any]) -> dict:
    """The JSON schema (type object) of ``fn``'s parameters, from its hints and docstring."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # a hint naming what the module cannot resolve: the author's to fix
        raise ValueError(f"{fn.__name__}: its type hints cannot be read ({exc})") from exc
    described = parameter_descriptions(inspect.getdoc(fn) or "")
    properties, required = {}, []
    for name, param in inspect.signature(fn).parameters.items():
        if name in _SKIPPED or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        hint = hints.get(name, inspect.Parameter.empty)
        try:
            schema = schema_of(hint, param.default)
        except ValueError as exc:
            raise ValueError(f"{fn.__name__}: parameter {name!r}: {exc}") from exc
        if described.get(name) and "description" not in schema:
            schema["description"] = described[name]
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif _json_value(param.default):
            schema["default"] = _plain(param.default)
        properties[name] = schema
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def schema_of(hint: Any, default: Any = inspect.Parameter.empty) -> dict:
    """The JSON schema of one type hint (from the default's type where there is no hint)."""
    if hint is inspect.Parameter.empty or hint is Any:
        if default is inspect.Parameter.empty or default is None:
            return {} if hint is Any else {"type": "string"}
        hint = type(default)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        schema = schema_of(args[0])
        said = next((a for a in args[1:] if isinstance(a, str)), None)
        return {**schema, "description": said} if said else schema
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        if len(kept) == 1:
            return schema_of(kept[0])
        return {"anyOf": [schema_of(a) for a in kept]}
    if origin is typing.Literal:
        return {**_type_of_values(args), "enum": list(args)}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [member.value for member in hint]
        return {**_type_of_values(values), "enum": values}
    simple = _SIMPLE.get(hint)
    if simple is not None:
        return dict(simple)
    if hint in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset, typing.Sequence):
        items = [a for a in args if a is not Ellipsis]
        if origin is tuple and len(items) > 1 and Ellipsis not in args:
            return {"type": "array", "prefixItems": [schema_of(a) for a in items],
                    "minItems": len(items), "maxItems": len(items)}
        return {"type": "array", "items": schema_of(items[0])} if items else {"type": "array"}
    if hint is dict or origin in (dict, typing.Mapping):
        return {"type": "object", "additionalProperties": schema_of(args[1])} if len(args) == 2 else {"type": "object"}
    raise ValueError(f"the type {hint!r} has no JSON form: use int, float, str, bool, list, dict, Literal or an Enum")


_SIMPLE = {int: {"type": "integer"}, float: {"type": "number"}, str: {"type": "string"},
           bool: {"type": "boolean"}, dt.date: {"type": "string", "format": "date"},
           dt.datetime: {"type": "string", "format": "date-time"}, dt.time: {"type": "string", "format": "time"}}


def _type_of_values(values) -> dict:
    kinds = {type(v) for v in values}
    if kinds <= {str}:
        return {"type": "string"}
    if kinds <= {bool}:
        return {"type": "boolean"}
    if kinds <= {int}:
        return {"type": "integer"}
    if kinds <= {int, float}:
        return {"type": "number"}
    return {}


def _json_value(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool, enum.Enum)) \
        or isinstance(value, (list, tuple, dict)) and all(_json_value(v) for v in
                                                          (value.values() if isinstance(value, dict) else value))


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    return value


# ------------------------------------------------------------------------------- docstrings
def parameter_descriptions(doc: str) -> dict[str, str]:
    """Each parameter's description in a Google, NumPy or reST docstring."""
    lines = doc.splitlines()
    found = _rest(lines)
    found.update({k: v for k, v in _sections(lines).items() if k not in found})
    return found


def _rest(lines: list[str]) -> dict[str, str]:
    found, name = {}, None
    for line in lines:
        match = _REST_PARAM.match(line)
        if match:
            name = match.group(1)
            found[name] = match.group(2).strip()
        elif name and line.strip() and not _REST_FIELD.match(line):
            found[name] = f"{found[name]} {line.strip()}".strip()
        else:
            name = None
    return found


def _sections(lines: list[str]) -> dict[str, str]:
    """Google ``Args:`` and NumPy ``Parameters`` sections: an item at the section's first
    indent, its description after ``:`` (Google) or on the lines indented below (both)."""
    found: dict[str, str] = {}
    i = 0
    while i < len(lines):
        if not _SECTION.match(lines[i]):
            i += 1
            continue
        numpy = i + 1 < len(lines) and bool(_UNDERLINE.match(lines[i + 1]))
        i += 2 if numpy else 1
        indent, name = None, None
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            depth = len(line) - len(line.lstrip())
            if _OTHER_SECTION.match(line) or _SECTION.match(line) or (indent is not None and depth < indent) \
                    or (i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1])):
                break
            if indent is None:
                indent = depth
            if depth == indent:
                match = (_NUMPY_ITEM if numpy else _GOOGLE_ITEM).match(line.strip())
                if match is None:
                    name = None
                else:
                    name = match.group(1).lstrip("*")
                    found[name] = "" if numpy else (match.group(3) or "").strip()
            elif name:
                found[name] = f"{found[name]} {line.strip()}".strip()
            i += 1
    return found


# ------------------------------------------------------------------------------- calls
def converting(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, called with the JSON values of a call turned into what its hints ask for (an Enum
    member from its value, a date from ISO text, a tuple or set from a list, a float from an
    int); the values pass Flora's schema check first, so a conversion here does not fail on a
    value the schema let through. Nothing is wrapped when no hint needs a conversion."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # noqa: BLE001 - derived_parameters reports it
        return fn
    convert = {name: c for name, hint in hints.items() if name != "return" and (c := _converter(hint)) is not None}
    if not convert:
        return fn

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return fn(*args, **{k: convert[k](v) if k in convert and v is not None else v for k, v in kwargs.items()})

    return call


def _converter(hint: Any) -> Callable[[Any], Any] | None:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _converter(args[0])
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        return _converter(kept[0]) if len(kept) == 1 else None
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return lambda value: value if isinstance(value, hint) else hint(value)
    if hint is float:
        return lambda value: float(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if hint in (dt.date, dt.datetime, dt.time):
        return lambda value: hint.fromisoformat(value) if isinstance(value, str) else value
    if hint in (tuple, set, frozenset) or origin in (tuple, set, frozenset):
        kind = origin or hint
        inner = _converter(args[0]) if len({a for a in args if a is not Ellipsis}) == 1 else None
        return lambda value: kind(inner(v) if inner else v for v in value) if isinstance(value, list) else value
    if origin is list and args:
        inner = _converter(args[0])
        return (lambda value: [inner(v) for v in value] if isinstance(value, list) else value) if inner else None
    return None
