"""What the agent's model is shown and how it must answer.

Each turn the model answers one JSON object: a tool call ``{"tool": name, "arguments": {...}}``,
the final answer ``{"final": "..."}``, or a question only the person can answer
``{"ask": "..."}``. The schema sent to the back end names each tool with its own parameter
schema (a llama.cpp grammar then allows only well-formed calls); the reply is checked
against a looser envelope (``ENVELOPE``) and the arguments against the tool's schema by
the loop, so an error can say exactly what was wrong and go back to the model.
"""

from __future__ import annotations

import json

from capabilities.agent.budget import (
    MEMORIES_SHARE, MESSAGE_OVERHEAD, OLD_RESULT_CHARS, ContextBudget, EstimatingCounter, TokenCounter, TooLong, cut,
    message_tokens,
)
from capabilities.base import CapabilitySpec
from capabilities.memory import recalled
from common.i18n import language_of

ENVELOPE = {
    "title": "Agent step",
    "type": "object",
    "properties": {
        "tool": {"type": "string"},
        "arguments": {"type": "object"},
        "final": {"type": "string"},
        "ask": {"type": "string"},
    },
    "minProperties": 1,
}

SYSTEM = (
    "You are Flora's agent. You do what the person asks by calling tools, one call at a time, and "
    "read each result before the next step. Write code and commands yourself when the person "
    "describes what they want.\n"
    "Answer with one JSON object and nothing else:\n"
    '- {"tool": "<name>", "arguments": {"<parameter>": <value>, ...}} to call a tool; the arguments are '
    "the values of its parameters, never its schema; leave out a parameter the request gives no value for (its default applies);\n"
    '- {"final": "<answer>"} when you can answer: say what you found or did, briefly;\n'
    '- {"ask": "<question>"} only when a value is needed that only the person knows.\n'
    "Never invent results: use the tools. If a call fails, read the error and correct the call.\n"
    "Tools:\n{tools}"
)
# said last, after the steps: a small model heeds the latest instruction best (the system prompt
# above stays the same for every person and language, so the model host keeps it evaluated)
IN_LANGUAGE = "Write the final answer and any question in {language}."
LANGUAGES = {"en": "English", "zh": "Chinese (简体中文)"}
MIN_RESULT_TOKENS = 24  # of the newest result, before the call's own arguments are cut too


DESCRIPTION_CHARS = 160  # of a tool's description in the catalogue
PARAMETER_CHARS = 90  # of a parameter's description
ENUM_VALUES = 12


def catalogue(tools: list[CapabilitySpec]) -> str:
    """The tools as the model reads them: name, what it does, its compact parameter schema."""
    lines = [tool_line(spec) for spec in tools]
    return "\n".join(lines) or "(none)"


def tool_line(spec: CapabilitySpec) -> str:
    """One tool as a line of JSON, the way chat models are taught to read functions."""
    return json.dumps({"name": spec.name, "description": _short(spec.description, DESCRIPTION_CHARS),
                       "parameters": compact(spec.parameters)}, ensure_ascii=False)


def compact(schema: dict) -> dict:
    """A parameter schema as short as the model needs it: each parameter's type, allowed values
    and a trimmed description, and what is required; without Flora's own keywords, defaults,
    lengths, patterns and long descriptions (the grammar and Flora's own check still hold the
    call to the whole schema)."""
    out: dict = {"type": "object"}
    properties = schema.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {name: _compact_value(value) for name, value in properties.items()}
    if schema.get("required"):
        out["required"] = list(schema["required"])
    return out


def _compact_value(schema) -> dict:
    if not isinstance(schema, dict):
        return {}
    out: dict = {}
    for key in ("type", "const"):
        if key in schema:
            out[key] = schema[key]
    if isinstance(schema.get("enum"), list):
        out["enum"] = schema["enum"][:ENUM_VALUES]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            out[key] = [_compact_value(v) for v in schema[key]]
    if isinstance(schema.get("items"), dict):
        out["items"] = _compact_value(schema["items"])
    if isinstance(schema.get("properties"), dict):
        out.update({k: v for k, v in compact(schema).items() if k != "type"})
    said = schema.get("description") or schema.get("title")
    if isinstance(said, str) and said.strip():
        out["description"] = _short(said, PARAMETER_CHARS)
    return out


def _short(text: str, limit: int) -> str:
    """The first sentence of ``text``, at most ``limit`` characters."""
    text = " ".join(str(text).split())
    end = text.find(". ")
    if 0 < end < limit:
        return text[:end + 1]
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def output_schema(tools: list[CapabilitySpec]) -> dict:
    """The schema the back end constrains the reply to: one of the tools with its own
    arguments, the final answer, or a question."""
    choices = [{"type": "object",
                "properties": {"tool": {"const": spec.name}, "arguments": grammar(spec.parameters)},
                "required": ["tool", "arguments"], "additionalProperties": False} for spec in tools]
    choices.append({"type": "object", "properties": {"final": {"type": "string"}}, "required": ["final"],
                    "additionalProperties": False})
    choices.append({"type": "object", "properties": {"ask": {"type": "string"}}, "required": ["ask"],
                    "additionalProperties": False})
    return {"title": "Agent step", "anyOf": choices}


GRAMMAR_KEYS = ("type", "enum", "const", "properties", "required", "items", "additionalProperties", "anyOf",
                "oneOf", "prefixItems")


def grammar(schema):
    """A parameter schema as the output constraint needs it: its structure (types, allowed
    values, properties, what is required) and nothing else. Lengths, patterns and formats are
    left to Flora's own check of the call: llama.cpp writes ``maxLength: 262144`` out as a rule
    nested that deep, which is slow to build and can crash the host."""
    if isinstance(schema, list):
        return [grammar(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key in GRAMMAR_KEYS:
        if key not in schema:
            continue
        value = schema[key]
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: grammar(v) for name, v in value.items()}
        elif key in ("anyOf", "oneOf", "allOf"):
            # alternatives of shape only: rules such as "one of these is required" are Flora's to check
            if isinstance(value, list) and key != "allOf" and all(
                    isinstance(v, dict) and any(k in v for k in ("type", "const", "enum", "properties")) for v in value):
                out[key] = grammar(value)
        elif key in ("items", "additionalProperties", "prefixItems"):
            out[key] = grammar(value)
        else:
            out[key] = value
    return out


def messages(tools: list[CapabilitySpec], transcript, *, max_result_chars: int,
             memories: list[dict] | None = None, budget: ContextBudget | None = None,
             counter: TokenCounter | None = None) -> list[dict]:
    """The conversation so far, fitted to ``budget`` (see :mod:`capabilities.agent.budget`):
    what is remembered of the person (after the fixed system prompt, which the model host keeps
    evaluated), the request, then each step as the model's call and what came of it (a result,
    an error, the person's answer). Raises ``TooLong`` when the instructions and the request
    alone do not fit."""
    counter = counter or EstimatingCounter()
    budget = budget or ContextBudget()
    language = LANGUAGES.get(language_of(transcript.request), LANGUAGES["en"])
    system = {"role": "system", "content": SYSTEM.replace("{tools}", catalogue(tools))}
    request = {"role": "user", "content": transcript.request}
    in_language = {"role": "system", "content": IN_LANGUAGE.format(language=language)}
    available = budget.prompt_tokens
    fixed = message_tokens(counter, [system, request, in_language])
    if fixed > available:
        raise TooLong(fixed, available)
    said = [system]
    known = recalled.block(memories)
    if known:
        room = min(int(available * MEMORIES_SHARE), available - fixed) - MESSAGE_OVERHEAD
        known = cut(known, counter, room) if room > 20 else ""
        if known:
            said.append({"role": "system", "content": known})
    said.append(request)
    left = available - message_tokens(counter, [*said, in_language])
    return said + history(transcript.entries, counter, left, max_result_chars) + [in_language]


def history(entries: list[dict], counter: TokenCounter, tokens: int, max_result_chars: int) -> list[dict]:
    """The steps as messages, in at most ``tokens``: whole when they fit; else the older results
    cut short, then the oldest steps left out (a note says which), then the newest one cut."""
    turns = [_turn(e, max_result_chars) for e in entries]
    turns = [t for t in turns if t]
    if not turns:
        return []
    cost = [message_tokens(counter, t) for t in turns]
    if sum(cost) <= tokens:
        return [m for t in turns for m in t]
    short = [_turn(e, min(max_result_chars, OLD_RESULT_CHARS)) for e in entries]
    short = [t for t in short if t]
    turns = short[:-1] + [turns[-1]]
    cost = [message_tokens(counter, t) for t in turns]
    dropped: list[dict] = []
    note: list[dict] = []
    while sum(cost) + message_tokens(counter, note) > tokens and len(turns) > 1:
        dropped.append(turns.pop(0))
        cost.pop(0)
        note = [_left_out(dropped)]
    room = tokens - message_tokens(counter, note) - sum(cost[:-1])
    last = turns[-1]
    if cost[-1] > room:
        last = _cut_turn(last, counter, room)
    return note + [m for t in turns[:-1] for m in t] + last


def _left_out(dropped: list[list[dict]]) -> dict:
    calls = []
    for turn in dropped:
        try:
            calls.append(json.loads(turn[0]["content"]).get("tool") or "?")
        except (ValueError, AttributeError):
            calls.append("?")
    names = ", ".join(c for c in calls if c and c != "?") or "-"
    return {"role": "user", "content": f"({len(dropped)} earlier steps are left out to fit the model's context; "
                                       f"tools called in them: {names}.)"}


def _cut_turn(turn: list[dict], counter: TokenCounter, room: int) -> list[dict]:
    """The newest step cut to ``room`` tokens: what came of it first, then the call's arguments."""
    asked, told = turn
    asked_tokens = counter.count(asked["content"]) + MESSAGE_OVERHEAD
    share = room - asked_tokens - MESSAGE_OVERHEAD
    if share < MIN_RESULT_TOKENS:
        asked = {**asked, "content": cut(asked["content"], counter, max(room // 2 - MESSAGE_OVERHEAD, 0))}
        share = room - counter.count(asked["content"]) - 2 * MESSAGE_OVERHEAD
    told = {**told, "content": cut(told["content"], counter, max(share, 0))}
    if not told["content"] or not asked["content"]:
        raise TooLong(counter.count(turn[1]["content"]) + asked_tokens, max(room, 0))
    return [asked, told]


def _turn(entry: dict, result_chars: int) -> list[dict]:
    if entry["kind"] == "call":
        return [{"role": "assistant", "content": json.dumps(
                    {"tool": entry["tool"], "arguments": entry["arguments"]}, ensure_ascii=False)},
                {"role": "user", "content": outcome(entry, result_chars)}]
    if entry["kind"] == "invalid":
        return [{"role": "assistant", "content": entry["reply"] or "(nothing)"},
                {"role": "user", "content": f"That reply was not usable: {entry['error']}. "
                                            "Answer with one JSON object as described."}]
    if entry["kind"] == "ask" and entry.get("answer") is not None:
        return [{"role": "assistant", "content": json.dumps({"ask": entry["question"]}, ensure_ascii=False)},
                {"role": "user", "content": f"The person answered: {entry['answer']}"}]
    return []


def outcome(entry: dict, max_chars: int) -> str:
    """What the model is told about a call: its result (cut), its error, or that it is unknown."""
    name = entry["tool"]
    if entry["ok"] is None:
        return (f"The call of {name} was interrupted (Flora restarted while it ran); whether it did its work "
                "is unknown. Do not assume it did.")
    if entry["ok"]:
        return f"Result of {name}:\n{_recut(entry['result'], max_chars)}"
    return f"{name} failed: {_recut(entry['error'], max_chars)}"


CUT_NOTE_CHARS = 48  # "… [cut: N more characters]" a kept result already carries


def _recut(text, max_chars: int) -> str:
    """A kept result (already cut at ``agent.max_result_chars``, with its note) cut shorter."""
    text = str(text)
    return text if len(text) <= max_chars + CUT_NOTE_CHARS else preview(text, max_chars)


def preview(value, max_chars: int) -> str:
    """A result as text the model (and an event) can hold: JSON, cut at ``max_chars`` with a note."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"… [cut: {len(text) - max_chars} more characters]"
