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
    "read each result before the next step.\n"
    "Answer with one JSON object and nothing else:\n"
    '- {"tool": "<name>", "arguments": {...}} to call a tool (arguments as its schema says);\n'
    '- {"final": "<answer>"} when you can answer: say what you found or did, briefly;\n'
    '- {"ask": "<question>"} only when a value is needed that only the person knows.\n'
    "Never invent results: use the tools. If a call fails, read the error and correct the call.\n"
    "Tools:\n{tools}\n"
    "Write the final answer and any question in {language}."
)

LANGUAGES = {"en": "English", "zh": "Chinese"}


def catalogue(tools: list[CapabilitySpec]) -> str:
    """The tools as the model reads them: name, what it does, its parameter schema."""
    lines = []
    for spec in tools:
        parameters = {k: v for k, v in spec.parameters.items() if not k.startswith("x-flora")}
        lines.append(f"- {spec.name}: {spec.description}\n  parameters: {json.dumps(parameters, ensure_ascii=False)}")
    return "\n".join(lines) or "(none)"


def output_schema(tools: list[CapabilitySpec]) -> dict:
    """The schema the back end constrains the reply to: one of the tools with its own
    arguments, the final answer, or a question."""
    choices = [{"type": "object",
                "properties": {"tool": {"const": spec.name}, "arguments": _plain(spec.parameters)},
                "required": ["tool", "arguments"], "additionalProperties": False} for spec in tools]
    choices.append({"type": "object", "properties": {"final": {"type": "string"}}, "required": ["final"],
                    "additionalProperties": False})
    choices.append({"type": "object", "properties": {"ask": {"type": "string"}}, "required": ["ask"],
                    "additionalProperties": False})
    return {"title": "Agent step", "anyOf": choices}


def _plain(schema: dict) -> dict:
    """A parameter schema without Flora's own keywords (a grammar compiler need not know them)."""
    if isinstance(schema, dict):
        return {k: _plain(v) for k, v in schema.items() if not (isinstance(k, str) and k.startswith("x-flora"))}
    if isinstance(schema, list):
        return [_plain(v) for v in schema]
    return schema


def messages(tools: list[CapabilitySpec], transcript, *, max_result_chars: int,
             memories: list[dict] | None = None) -> list[dict]:
    """The conversation so far: what is remembered of the person (after the fixed system
    prompt, which the model host keeps evaluated), the request, then each step as the model's
    call and what came of it (a result, an error, the person's answer)."""
    language = LANGUAGES.get(language_of(transcript.request), "English")
    said = [{"role": "system", "content": SYSTEM.replace("{tools}", catalogue(tools)).replace("{language}", language)}]
    known = recalled.block(memories)
    if known:
        said.append({"role": "system", "content": known})
    said.append({"role": "user", "content": transcript.request})
    for entry in transcript.entries:
        if entry["kind"] == "call":
            said.append({"role": "assistant", "content": json.dumps(
                {"tool": entry["tool"], "arguments": entry["arguments"]}, ensure_ascii=False)})
            said.append({"role": "user", "content": outcome(entry, max_result_chars)})
        elif entry["kind"] == "invalid":
            said.append({"role": "assistant", "content": entry["reply"] or "(nothing)"})
            said.append({"role": "user", "content": f"That reply was not usable: {entry['error']}. "
                                                     "Answer with one JSON object as described."})
        elif entry["kind"] == "ask" and entry.get("answer") is not None:
            said.append({"role": "assistant", "content": json.dumps({"ask": entry["question"]}, ensure_ascii=False)})
            said.append({"role": "user", "content": f"The person answered: {entry['answer']}"})
    return said


def outcome(entry: dict, max_chars: int) -> str:
    """What the model is told about a call: its result (cut), its error, or that it is unknown."""
    name = entry["tool"]
    if entry["ok"] is None:
        return (f"The call of {name} was interrupted (Flora restarted while it ran); whether it did its work "
                "is unknown. Do not assume it did.")
    if entry["ok"]:
        return f"Result of {name}:\n{entry['result']}"
    return f"{name} failed: {entry['error']}"


def preview(value, max_chars: int) -> str:
    """A result as text the model (and an event) can hold: JSON, cut at ``max_chars`` with a note."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"… [cut: {len(text) - max_chars} more characters]"
