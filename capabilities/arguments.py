"""A call's arguments read from the request by the model, held to what the request says.

The rules (``TaskRouter.extract_parameters``) take only values whose look or name ties them to
a parameter ("url: https://…", "timeout 9"). A function a person wrote for themselves is asked
for the way people talk — "a car that starts at 10 m/s and speeds up at 2.5 m/s² for 6 s",
"a=1, b=-3, and c=2", "二次方程 x² - 5x + 6 = 0" — and there the rules find little: the task
would pause to ask for what the request already said. :func:`read_arguments` asks the model
once, with its output constrained to the function's own schema (each parameter may be
``null``: not said), and then keeps a value only where the request grounds it
(:func:`grounded`): a number written in it (in digits, in words, in Chinese numerals, or one
of those in another unit: 30 years → 360 months, 5% → 0.05), a text whose words it holds, a
date whose figures it holds, an enum member the request names. What the model invented
(an address, a phone number, a city never named) is dropped, and the person is asked for it as
before.

Errors: a model failure (``LLMError``) is logged and yields nothing: the rules' values stand.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from capabilities.base import CapabilitySpec
from common.i18n import cjk_chars, has_cjk
from common.numerals import ZH_NUMBER, zh_number

log = logging.getLogger("flora.arguments")

MAX_TOKENS = 256
ARGUMENTS, CALL = "Arguments", "Function call"  # the schemas' titles (what a test model tells them by)
# factors a value may differ by from a number the request gives: a percentage, months in a
# year, minutes in an hour, metres in a kilometre, days in a week, hours in a day
UNIT_FACTORS = (1, 100, 12, 60, 1000, 7, 24, 10)
_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
          "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
          "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
          "thousand": 1000, "million": 1_000_000, "half": 0.5, "dozen": 12, "twice": 2, "double": 2,
          "single": 1, "once": 1, "pair": 2, "couple": 2, "quarter": 0.25,
          # how often, as a count a year: "compounded monthly" is 12 times a year
          "monthly": 12, "quarterly": 4, "weekly": 52, "daily": 365, "yearly": 1, "annually": 1}
_WORDS_ZH = {"每月": 12, "按月": 12, "每季度": 4, "按季": 4, "每周": 52, "每天": 365, "按日": 365, "每年": 1, "按年": 1,
             "半": 0.5, "双": 2, "对": 2}
_NUMBER = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?|[-−]?\.\d+")
_EQUATION = re.compile(r"[a-z]\s*(?:\^|²|³)|=")
_LATIN_WORD = re.compile(r"[a-z]+")  # in lower-case text
_FIGURES = re.compile(r"\d+")
_NO_QUOTES = str.maketrans("", "", "'\"“”‘’")

SYSTEM = (
    "You fill in the arguments of a function call from a person's request. For each parameter, give the value the "
    "request states, converted to the parameter's type and unit: numbers written in words or Chinese numerals as "
    "numbers, a percentage as the description asks, dates as the description asks. Copy names, places and texts as "
    "the request writes them. Give null for a parameter the request does not state: never guess or make one up.")


def read_arguments(llm, spec: CapabilitySpec, request: str, given: dict | None = None) -> dict:
    """The values of ``spec``'s parameters not in ``given`` that the model reads from ``request``
    and the request grounds; {} when there is nothing to read or the model fails."""
    from capabilities.llm.base import LLMError, complete_json

    given = given or {}
    wanted = {name: schema for name, schema in spec.properties.items() if name not in given}
    if llm is None or not wanted or not request.strip():
        return {}
    schema = {"title": ARGUMENTS, "type": "object", "properties": {n: nullable(s) for n, s in wanted.items()},
              "required": list(wanted), "additionalProperties": False}
    try:
        answer = complete_json(llm, messages(spec, request, given), schema, max_tokens=MAX_TOKENS)
    except LLMError as exc:
        log.warning("arguments of %s not read by the model: %s", spec.name, exc)
        return {}
    return _kept(spec, answer, wanted, request)


def read_call(llm, specs: list[CapabilitySpec], request: str, given: dict[str, dict] | None = None
              ) -> tuple[str | None, dict]:
    """Which of ``specs`` (the deployment's own functions) ``request`` calls, and the values it
    states — one model call whose output is held to the functions' schemas, as a model is
    asked with tools in its prompt — or (None, {}) when it calls none of them or the model
    fails. ``given``: each function's values the rules read already (kept over the model's)."""
    from capabilities.llm.base import LLMError, complete_json

    given = given or {}
    if llm is None or not specs or not request.strip():
        return None, {}
    wanted = {spec.name: {n: s for n, s in spec.properties.items() if n not in given.get(spec.name, {})}
              for spec in specs}
    options = [{"type": "object", "properties": {
        "function": {"const": spec.name},
        "arguments": {"type": "object", "properties": {n: nullable(s) for n, s in wanted[spec.name].items()},
                      "required": list(wanted[spec.name]), "additionalProperties": False}},
        "required": ["function", "arguments"], "additionalProperties": False} for spec in specs]
    options.append({"type": "object", "properties": {"function": {"const": NONE}}, "required": ["function"],
                    "additionalProperties": False})
    try:
        answer = complete_json(llm, call_messages(specs, request, given), {"title": CALL, "anyOf": options},
                               max_tokens=MAX_TOKENS)
    except LLMError as exc:
        log.warning("the call in a request not read by the model: %s", exc)
        return None, {}
    spec = next((s for s in specs if s.name == answer.get("function")), None)
    if spec is None:
        log.info("the model reads no call of %s in the request", [s.name for s in specs])
        return None, {}
    return spec.name, _kept(spec, answer.get("arguments") or {}, wanted[spec.name], request)


NONE = "none"  # read_call's answer when the request calls none of the functions


def _kept(spec: CapabilitySpec, answer: dict, wanted: dict, request: str) -> dict:
    """The model's values the request grounds, each stated figure filling one parameter only
    (a "0.6 m radius" is no triangle's base and height both)."""
    kept = {n: v for n, v in answer.items() if v is not None and n in wanted and grounded(v, wanted[n], request)}
    said = numbers_in(request)
    for value in {v for v in kept.values() if isinstance(v, (int, float)) and not isinstance(v, bool)}:
        holders = [n for n, v in kept.items() if v == value and not isinstance(v, bool)]
        if len(holders) > max(1, sum(abs(n - value) < 1e-9 for n in said)):
            for name in holders:
                kept.pop(name)
    dropped = sorted(set(n for n, v in answer.items() if v is not None) - set(kept))
    log.info("arguments of %s read by the model: %s%s", spec.name, sorted(kept),
             f"; not in the request, dropped: {dropped}" if dropped else "")
    return kept


def messages(spec: CapabilitySpec, request: str, given: dict) -> list[dict]:
    described = {name: {k: v for k, v in schema.items() if not k.startswith("x-flora")}
                 for name, schema in spec.properties.items()}
    told = f"\nAlready known: {json.dumps(given, ensure_ascii=False)}" if given else ""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Function: {spec.name}: {spec.description}\nParameters: "
                                        f"{json.dumps(described, ensure_ascii=False)}{told}\nRequest: {request}"}]


def call_messages(specs: list[CapabilitySpec], request: str, given: dict[str, dict]) -> list[dict]:
    tools = [{"name": spec.name, "description": spec.description,
              "parameters": {name: {k: v for k, v in schema.items() if not k.startswith("x-flora")}
                             for name, schema in spec.properties.items()},
              **({"already_known": given[spec.name]} if given.get(spec.name) else {})} for spec in specs]
    return [{"role": "system", "content": SYSTEM + f" The request may call one of these functions, or none of "
                                                    f"them (function \"{NONE}\": it asks for no function's work)."},
            {"role": "user", "content": "Functions:\n" + "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
                                        + f"\nRequest: {request}"}]


def nullable(schema: dict) -> dict:
    """``schema`` that also allows null (the model's "not said")."""
    schema = {k: v for k, v in schema.items() if not k.startswith("x-flora") and k != "default"}
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None], **({"type": _with_null(schema["type"])}
                                                             if "type" in schema else {})}
    if "type" in schema:
        return {**schema, "type": _with_null(schema["type"])}
    return {"anyOf": [schema, {"type": "null"}]}


def _with_null(kind):
    kinds = kind if isinstance(kind, list) else [kind]
    return [*kinds, "null"] if "null" not in kinds else kinds


# ------------------------------------------------------------------------------ grounding
def grounded(value: Any, schema: dict, request: str) -> bool:
    """Whether ``request`` states ``value`` (see the module's docstring)."""
    if isinstance(value, bool):
        return True  # a yes/no the request's words decide; there is nothing to invent
    if "enum" in schema:  # one of the listed values, and one the request names: a choice not said is asked
        return value in schema["enum"] and grounded(value, {k: v for k, v in schema.items() if k != "enum"}, request)
    if isinstance(value, (int, float)):
        return number_stated(value, numbers_in(request))
    if isinstance(value, list):
        item = schema.get("items", {}) if isinstance(schema.get("items"), dict) else {}
        return bool(value) and all(grounded(v, item, request) for v in value)
    if isinstance(value, str):
        return text_stated(value, request)
    if isinstance(value, dict):
        return all(isinstance(v, (str, int, float, bool)) and grounded(v, {}, request) for v in value.values())
    return False


def numbers_in(text: str) -> list[float]:
    """The numbers ``text`` writes: digits ("1,200", "-3", "0.6"), English words ("twelve",
    "two hundred"), Chinese numerals ("三点五", "两万"), and the parts of an equation's terms
    ("x² - 5x" holds 2, -5 and, as a bare x, 1)."""
    found = [float(n.replace(",", "").replace("−", "-")) for n in _NUMBER.findall(text)]
    found += [float(zh_number(n)) for n in ZH_NUMBER.findall(text) if zh_number(n) is not None]
    words = _LATIN_WORD.findall(text.lower())
    found += [float(_WORDS[w]) for w in words if w in _WORDS]
    found += [float(n) for w, n in _WORDS_ZH.items() if w in text]
    for a, b in zip(words, words[1:]):
        if a in _WORDS and b in ("hundred", "thousand", "million"):
            found.append(float(_WORDS[a] * _WORDS[b]))  # "three hundred"
        elif _WORDS.get(a, 0) in (20, 30, 40, 50, 60, 70, 80, 90) and 0 < _WORDS.get(b, 0) < 10:
            found.append(float(_WORDS[a] + _WORDS[b]))  # "twenty five"
    if _EQUATION.search(text):  # an equation's terms: "x² - 5x" holds 2, -5 and, as a bare x, 1
        for sign, coefficient in re.findall(r"([-+−]?)\s*(\d*\.?\d*)\s*[a-z](?![a-z])", text.lower()):
            number = float(coefficient) if coefficient and coefficient != "." else 1.0
            found.append(-number if sign in ("-", "−") else number)
    return found


def number_stated(value: float, said: list[float]) -> bool:
    """``value`` is one of ``said``, or one in another unit (``UNIT_FACTORS``), or its negative
    where the request wrote it with words ("零下四十")."""
    for number in said:
        for factor in UNIT_FACTORS:
            for candidate in (number * factor, number / factor, -number * factor):
                if abs(candidate - value) <= 1e-9 * max(1.0, abs(value)):
                    return True
    return False


def text_stated(value: str, request: str, *, across_scripts: bool = True) -> bool:
    """A text the request holds: whole, or by its words (a Latin word of three letters or more
    sharing its first three with one of the request's; a Chinese character); a text with figures,
    an address or a path must have every figure in the request and, with ``@`` or ``/``, stand
    in it whole. ``across_scripts``: a text in the other script than the request's counts as
    its translation ("Shenzhen" for "深圳"), which cannot be checked."""
    text, said = value.strip().lower(), request.lower()
    if not text:
        return False
    if text in said or _squeezed(text) in _squeezed(said):
        return True
    if "@" in text or "/" in text or "\\" in text:
        return False
    figures = _FIGURES.findall(text)
    if figures:
        stated = numbers_in(request)
        return all(number_stated(float(f), stated) for f in figures) and _words_held(_FIGURES.sub(" ", text), said,
                                                                                      across_scripts)
    return _words_held(text, said, across_scripts)


def _words_held(text: str, said: str, across_scripts: bool = True) -> bool:
    latin = [w for w in _LATIN_WORD.findall(text) if len(w) >= 2]
    cjk = cjk_chars(text)
    if not latin and not cjk:
        return True  # punctuation, a separator: nothing that could be made up
    said_words = _LATIN_WORD.findall(said)
    held = sum(any(w[:3] == s[:3] for s in said_words if len(s) >= 2) for w in latin)
    held += sum(c in said for c in cjk)
    if across_scripts and (not has_cjk(said) and cjk or not _LATIN_WORD.search(said) and latin):
        return True  # said in another script: a translation of what the request wrote
    return held >= max(1, (len(latin) + len(cjk)) * 0.6)


def as_written(values: dict, request: str) -> bool:
    """Whether every text among ``values`` stands in ``request`` in its own script: nothing
    translated, so nothing the model could have made up ("Celtics" for "篮球比赛一节打几分钟？")."""
    return all(text_stated(v, request, across_scripts=False) for v in values.values() if isinstance(v, str))


def _squeezed(text: str) -> str:
    return "".join(text.translate(_NO_QUOTES).split())
