"""The agent's next step through a server's native function calling (OpenAI ``tools`` and
``tool_calls``), for back ends that have it (``agent.native_tools``).

Each tool is offered as a function with its own parameter schema; a name the API does not
allow (an MCP tool's ``server.tool``) is offered as ``server__tool`` and mapped back. The
question to the person is one more function, ``ask_person``. A reply without a call is the
final answer, unless its text is itself the agent's JSON step (some servers answer that way
when the prompt asks for JSON).
"""

from __future__ import annotations

import json
import re

from capabilities.agent.prompt import DESCRIPTION_CHARS, _short, compact

ASK_TOOL = "ask_person"
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def api_name(name: str) -> str:
    return _NOT_ALLOWED.sub("__", name)[:64]


def offered(specs) -> tuple[list[dict], dict[str, str]]:
    """The functions to offer, and API name → tool name."""
    names = {api_name(spec.name): spec.name for spec in specs}
    functions = [{"name": api_name(spec.name), "description": _short(spec.description, DESCRIPTION_CHARS),
                  "parameters": compact(spec.parameters)} for spec in specs]
    functions.append({"name": ASK_TOOL, "description": "Ask the person for a value only they know.",
                      "parameters": {"type": "object", "properties": {"question": {"type": "string"}},
                                     "required": ["question"]}})
    return functions, names


def step(llm, specs, said: list[dict], max_tokens: int) -> tuple[dict | None, str | None, str, int]:
    """(step, error, raw text, tokens) of one native completion."""
    functions, names = offered(specs)
    reply = llm.complete_tools(said, functions, max_tokens=max_tokens)
    tokens = reply.prompt_tokens + reply.completion_tokens
    if not reply.calls:
        text = reply.text.strip()
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict) and any(k in value for k in ("tool", "final", "ask")):
            return value, None, text, tokens
        return ({"final": text}, None, text, tokens) if text else (None, "the reply was empty", text, tokens)
    name, arguments = reply.calls[0]
    shown = json.dumps({"tool": name, "arguments": arguments}, ensure_ascii=False)
    try:
        values = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return None, f"the arguments of {name} are not JSON ({exc.msg})", shown, tokens
    if not isinstance(values, dict):
        return None, f"the arguments of {name} must be an object", shown, tokens
    if name == ASK_TOOL:
        return {"ask": str(values.get("question", ""))}, None, shown, tokens
    return {"tool": names.get(name, name), "arguments": values}, None, shown, tokens
