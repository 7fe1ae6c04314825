"""The understanding step's prompt: first what never changes — the instructions, the intents
and their worked examples as earlier turns — then the capabilities installed now with their own
examples, the recent conversation, what is known about the person, the question a paused task
waits on and the message.

The model host reuses the evaluated prefix a prompt shares with the one before it (llama.cpp
keeps the longest common prefix of tokens), and everything after the first difference is
evaluated again. So the capabilities come after the fixed part, Flora's own first (they
change only with Flora) and those a deployment installed (plugins, skills, MCP servers'
tools: added and edited while Flora runs) last, each group's list followed by its examples:
installing a skill costs the evaluation of the installed group and the message, not the
whole prompt (bench/prompt_prefix.py measures it). capabilities/cognition/intent_router.py asks it.
"""

from __future__ import annotations

from dataclasses import dataclass

from capabilities.memory import recalled
from capabilities.routing.task_router import is_builtin

HISTORY_TURNS = 4  # earlier messages shown to the understanding step
HISTORY_CHARS = 600
EXAMPLES_PER_CAPABILITY = 2  # worked examples from each capability's own (often one English, one Chinese)
ROUTES = ("chat", "plan", "status", "command", "unsupported", "clarify", "answer")  # beside the capabilities' names


@dataclass(frozen=True)
class Pending:
    """The question a paused task of this person is waiting on."""

    task_id: str
    capability: str
    names: tuple[str, ...]
    description: str = ""


# Worked examples, shown to the model as earlier turns. They teach the intents, not the
# capabilities (those come from the capabilities' own declared examples).
_EXAMPLES: list[tuple[str, str]] = [
    ("Thanks a lot, that was really helpful!", "chat"),
    ("今天心情不太好，有点累", "chat"),
    ("what's 17 times 23?", "chat"),
    ("给我讲个关于猫的笑话", "chat"),
    ("Why is the sky blue?", "chat"),
    ("珠穆朗玛峰有多高", "chat"),
    ("how's your day going?", "chat"),
    ("帮我查一下订单 A-1029 的物流状态", "unsupported"),
    ("is there anything new in my inbox?", "unsupported"),
    ("明天上海会下雨吗", "unsupported"),
    ("which of my reminders are still active?", "status"),
    ("你现在在帮我做什么？", "status"),
    ("please wipe our chat history", "command"),
    ("can you sort out that thing for me", "clarify"),
]
_PENDING_EXAMPLES: list[tuple[str, str]] = [
    ("app-7Fk2x9QpLm", "answer"),
    ("北京明天天气怎么样", "unsupported"),
]
_EXAMPLE_PENDING = Pending("task_example", "a_service", ("api_key",), "the API key of the service")

_INSTRUCTIONS = (
    "You read the messages people send to Flora, an assistant that chats and can run capabilities "
    "(the ones installed now are listed after these examples).\n"
    "Answer with JSON: route is the name of the capability to run now, or one of:\n"
    "chat: conversation Flora answers itself (thanks, feelings, small talk, jokes, general knowledge, maths, "
    "advice, writing, translation).\n"
    "plan: several steps with the installed capabilities (do X, then Y).\n"
    "status: about Flora's own work for this person: their tasks, reminders, loop tasks, what Flora is doing.\n"
    "command: clear the history, switch the model, shut down.\n"
    "unsupported: needs the person's own data or an action no installed capability provides (their orders, "
    "parcels, e-mail, calendar, accounts, tickets, live weather, devices).\n"
    "clarify: a request too vague to tell which capability it needs.\n"
    "answer: gives the value a pending question asks for."
)
CAPABILITIES_INTRO = "Flora can run these capabilities now; route to one by its name:"
INSTALLED_INTRO = "And these, installed here; route to one by its name:"


def prompt(specs, text: str, history: list[dict] | None = None, pending: Pending | None = None,
           memories: list[dict] | None = None) -> list[dict]:
    """The fixed prefix (instructions, intents, their worked examples as earlier turns), then
    Flora's own capabilities with their examples, then those this deployment installed (plugins,
    skills, MCP tools: what changes most) with theirs, a plan example, then the recent turns,
    what is known about the person, the paused question and the message."""
    messages = [{"role": "system", "content": _INSTRUCTIONS}]
    for example, route in _EXAMPLES:
        messages.append({"role": "user", "content": f"Message: {example}"})
        messages.append({"role": "assistant", "content": _reading(route)})
    for example, route in _PENDING_EXAMPLES:
        messages.append({"role": "user", "content": _pending_line(_EXAMPLE_PENDING) + f"Message: {example}"})
        messages.append({"role": "assistant", "content": _reading(route)})
    own = [s for s in specs if is_builtin(s)]
    installed = [s for s in specs if not is_builtin(s)]  # plugins', skills', MCP servers': they change
    for intro, group in ((CAPABILITIES_INTRO, own), (INSTALLED_INTRO, installed)):
        if not group and (intro == INSTALLED_INTRO or installed):
            continue
        messages.append({"role": "system", "content": capability_list(group, intro)})
        for example, route in [(e, s.name) for s in group for e in s.examples[:EXAMPLES_PER_CAPABILITY]]:
            messages.append({"role": "user", "content": f"Message: {example}"})
            messages.append({"role": "assistant", "content": _reading(route)})
    if len(specs) >= 2 and specs[0].examples and specs[1].examples:
        messages.append({"role": "user", "content": f"Message: {specs[0].examples[0]}, then {specs[1].examples[0]}"})
        messages.append({"role": "assistant", "content": _reading("plan")})
    said = _history_lines(history or [])
    known = recalled.block(memories, recalled.SHORT_INTRO)
    messages.append({"role": "user", "content": said + (known + "\n" if known else "")
                     + (_pending_line(pending) if pending else "") + f"Message: {text}"})
    return messages


def capability_list(specs, intro: str = "") -> str:
    """Capabilities as the model reads them: name and what it does, one a line."""
    lines = [f"- {s.name}: {s.description}" for s in specs] or ["(none installed)"]
    return (intro or CAPABILITIES_INTRO) + "\n" + "\n".join(lines)


def _reading(route: str) -> str:
    return f'{{"route": "{route}"}}'


def _pending_line(pending: Pending) -> str:
    what = f" ({pending.description})" if pending.description else ""
    return f"Pending question: {pending.capability} needs {', '.join(pending.names)}{what}\n"


def _history_lines(history: list[dict]) -> str:
    turns = [t for t in history if t.get("role") in ("user", "assistant") and t.get("content")][-HISTORY_TURNS:]
    if not turns:
        return ""
    lines = []
    for turn in turns:
        who = "Person" if turn["role"] == "user" else "Flora"
        content = " ".join(str(turn["content"]).split())
        lines.append(f"{who}: {content[:HISTORY_CHARS // HISTORY_TURNS]}")
    return "Earlier:\n" + "\n".join(lines) + "\n"
